"""What the two sides' suite records say beside the scores, gathered as fields of the
comparison: the suites without a baseline (:mod:`.suite_baselines`), why the sides may not be
comparable and how their judging differs (:mod:`.comparability`), the gate's changes
(:mod:`.gatechanges`) and the agents' (:mod:`.agentchanges`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adk_eval_action.analysis.agentchanges import agent_changes
from adk_eval_action.analysis.comparability import comparability, judge_changes
from adk_eval_action.analysis.gatechanges import gate_changes
from adk_eval_action.analysis.suite_baselines import suites_without_baseline
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import RunResults

__all__ = ["suite_facts"]


def suite_facts(head: RunResults, baseline: RunResults | None, gate: GateConfig | None,
                directions: Mapping[tuple[str, str], bool]) -> dict[str, Any]:
    """What the sides' suite records say beside the scores, as ``Comparison`` fields
    (``head`` and ``baseline`` may be skeletons; module docstring); ``directions`` is each
    (suite, metric)'s direction, which the gate's changes are read in."""
    without = suites_without_baseline(head, baseline)
    if baseline is None:
        return {"suites_without_baseline": without}
    return {
        "suites_without_baseline": without,
        "comparability": comparability(head, baseline),
        "judge_changes": judge_changes(head, baseline),
        "gate_changes": gate_changes(head, baseline, gate, directions),
        "agent_changes": agent_changes(head, baseline, [w.suite for w in without]),
    }

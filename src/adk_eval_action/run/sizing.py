"""The ``num_runs`` and the gate ``init`` writes: enough runs for the regression gate to call
one eval case that collapses from all-pass to all-fail, by the estimate ``plan`` prints.

``init`` counts each suite's eval cases and gated metrics from its files, read as JSON
(without importing google-adk, which ``plan`` needs to load eval sets and agents): the eval
cases with turns or a conversation scenario of every eval set (a legacy list of turns is
one eval case, as ADK's AgentEvaluator reads it), and the criteria of the eval config other
than ADK's efficiency metrics (ADK's default criteria: its two metrics). The runs are then
:func:`adk_eval_action.analysis.sample.runs_to_call_collapse` of those counts, the function
behind ``plan``'s "N runs would call it", so ``plan`` on the written file says every suite
would call one (``tests/integration/test_init.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from adk_eval_action.analysis.paired import DEFAULT_ALPHA, DEFAULT_RESAMPLES, WITHIN_CASES_UP_TO
from adk_eval_action.analysis.sample import (
    Detectable,
    SuiteSample,
    runs_to_call_collapse,
    suites_detectable,
)
from adk_eval_action.files import MAX_DATA_BYTES, FileLimitError, read_bytes
from adk_eval_action.project.discovery import Suite
from adk_eval_action.project.layout import DEFAULT_METRICS, EFFICIENCY_METRICS

FALLBACK_RUNS = 3
"""The runs written when no suite is tested within its cases (more than
:data:`~adk_eval_action.analysis.paired.WITHIN_CASES_UP_TO` eval cases each: a collapse
of one case cannot be called over whole cases), or when more than
:data:`~adk_eval_action.analysis.sample.MAX_RUNS` would be needed: what repeats buy there is
a less noisy mean per case (docs/gating.md, "What decides an inconclusive call")."""


class RunsChoice(BaseModel):
    """The runs ``init`` writes and why: ``sized`` when ``init`` chose them (not
    ``--num-runs``); per suite, ``plan``'s sentence on what they can call."""

    runs: int
    sized: bool
    lines: dict[str, str]


def _read_json(path: Path) -> Any:
    """The JSON of ``path``, or None when it cannot be read or parsed (``run`` says why)."""
    try:
        return json.loads(read_bytes(path, MAX_DATA_BYTES).decode("utf-8-sig"))
    except (OSError, FileLimitError, ValueError, RecursionError):
        return None


def _has_turns(case: Any) -> bool:
    """Whether an eval case would run: ``adk web`` saves a case created before any chat
    with an empty ``conversation`` and no conversation scenario."""
    return not (isinstance(case, dict) and case.get("conversation") == []
                and not {"conversation_scenario", "conversationScenario"} & set(case))


def eval_cases_in(path: Path) -> int | None:
    """How many eval cases the eval set file ``path`` holds to run: of ``eval_cases``
    (``evalCases``), those with turns or a scenario; a legacy list of eval cases (each
    with ``data``) counts them, a legacy list of turns is one case (ADK's AgentEvaluator),
    an empty list none. None when the file cannot be read or has neither shape."""
    data = _read_json(path)
    if isinstance(data, dict):
        cases = data.get("eval_cases", data.get("evalCases"))
        return sum(1 for c in cases if _has_turns(c)) if isinstance(cases, list) else None
    if not isinstance(data, list):
        return None
    if all(isinstance(i, dict) and "data" in i for i in data):
        return len(data)
    return 1 if all(isinstance(i, dict) and "query" in i for i in data) else None


def gated_metrics_in(eval_config: Path | None) -> int:
    """How many gated metrics an eval config's ``criteria`` name (ADK's efficiency metrics
    are informational); ADK's default criteria without one, or when it cannot be read."""
    data = _read_json(eval_config) if eval_config is not None else None
    criteria = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(criteria, dict):
        return len(DEFAULT_METRICS)
    return sum(1 for name in criteria if name not in EFFICIENCY_METRICS)


def suite_sample(suite: Suite, runs: int) -> SuiteSample:
    """``suite``'s sample as its files hold it, at ``runs`` runs a side."""
    cases = sum(eval_cases_in(p) or 0 for p in suite.eval_set_paths)
    return SuiteSample(suite.name, cases, runs, gated_metrics_in(suite.eval_config_path))


def choose_runs(suites: list[Suite], asked: int | None) -> RunsChoice:
    """The runs to write: ``asked`` (``--num-runs``), else the fewest with which every
    suite calls one eval case's collapse (module docstring), else :data:`FALLBACK_RUNS`;
    with ``plan``'s sentence for each suite at those runs."""
    runs = asked
    if runs is None:
        runs = runs_to_call_collapse(
            [suite_sample(s, 1) for s in suites], alpha=DEFAULT_ALPHA,
            n_resamples=DEFAULT_RESAMPLES, within_cases_up_to=WITHIN_CASES_UP_TO)
    runs = runs if runs is not None else FALLBACK_RUNS
    found: dict[str, Detectable] = suites_detectable(
        [suite_sample(s, runs) for s in suites], alpha=DEFAULT_ALPHA,
        n_resamples=DEFAULT_RESAMPLES, within_cases_up_to=WITHIN_CASES_UP_TO)
    return RunsChoice(runs=runs, sized=asked is None,
                      lines={name: d.line for name, d in found.items()})

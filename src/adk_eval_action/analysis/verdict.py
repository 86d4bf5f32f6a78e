"""Compare and gate in one pure step: the head's and the baseline's scores, what the
default branch's history says, what adaptive repeats spent and the gate's rules in; a
frozen :class:`Verdict` (the :class:`~.models.Comparison` and the
:class:`~.gate.GateResult` the comment, the summary, the outputs and the exit code read)
out. Nothing is assigned to either afterwards, and nothing here reads or writes a file.

The order, each step a function of the last (docs/gating.md):

1. the baseline's runs pooled with earlier recorded runs of the same inputs, when
   ``gate.pool_runs`` asks (:func:`~.history.pooled_runs`);
2. :func:`~.compare.compare` with the gate's ``min_effect`` rules and its changes since
   the baseline;
3. the history's facts (trends, known flaky eval cases, what was pooled:
   :func:`~.history.history_facts`) and the baseline's trust record set on the comparison
   (a new value, ``model_copy``);
4. :func:`~.gate.decide`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from adk_eval_action.analysis.compare import compare
from adk_eval_action.analysis.comparison import AdaptiveRuns, Comparison
from adk_eval_action.analysis.gate import GateResult, decide
from adk_eval_action.analysis.pooling import PoolKey
from adk_eval_action.analysis.trend_models import BaselineTrust, PoolNote
from adk_eval_action.analysis.trends import history_facts, pooled_runs
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.history_file import History
from adk_eval_action.results.scoretable import ScoreTable

__all__ = ["HistoryInput", "Verdict", "compare_and_gate", "compare_for_gate"]


class HistoryInput(BaseModel):
    """What a run knows of the default branch's history and its baseline: the ``history``
    (None: none), where it came from or why there is none (``note``), the baseline's
    ``trust`` record, and the suites whose baseline was re-scored under the head's eval
    config (``rescored``: their recorded scores are another eval config's, never pooled)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    history: History | None = None
    note: str | None = None
    trust: BaselineTrust | None = None
    rescored: tuple[str, ...] = ()


class Verdict(BaseModel):
    """The comparison and the gate's decision on it, made together by
    :func:`compare_and_gate`."""

    model_config = ConfigDict(frozen=True)

    comparison: Comparison
    gate: GateResult


def compare_for_gate(
    head: ScoreTable, baseline: ScoreTable | None, baseline_note: str, gate: GateConfig,
    pool: dict[PoolKey, list[float]] | None = None,
) -> Comparison:
    """:func:`~.compare.compare` as the gate reads it: with the gate's ``min_effect``
    rules (and ``pool``'s extra baseline runs: :mod:`~.pooling`) and the gate's changes
    since the baseline's (``Comparison.gate_changes``). Adaptive repeats compare with
    this between rounds."""
    return compare(
        head,
        baseline,
        baseline_note,
        min_effect=gate.min_effect_for,
        informational_min_effect=gate.informational_min_effect_for,
        pool=pool,
        gate=gate,
    )


def compare_and_gate(
    head: ScoreTable,
    baseline: ScoreTable | None,
    baseline_note: str,
    gate: GateConfig,
    *,
    history: HistoryInput | None = None,
    adaptive: AdaptiveRuns | None = None,
) -> Verdict:
    """The verdict on ``head`` against ``baseline`` (None: thresholds only) under the
    ``gate`` rules (module docstring). ``history``: the default branch's history and the
    baseline's trust record (None: none known); ``adaptive``: what adaptive repeats
    spent, shown with the comparison (None: they were off).

    Raises:
        ValueError: as :func:`~.compare.compare` (a negative ``min_effect``).
    """
    pool: dict[PoolKey, list[float]] = {}
    pool_note: PoolNote | None = None
    recorded = history.history if history is not None else None
    if recorded is not None and baseline is not None and gate.pool_runs:
        pool, pool_note = pooled_runs(recorded, baseline.skeleton, gate.pool_runs,
                                      history.rescored if history is not None else ())
    comparison = compare_for_gate(head, baseline, baseline_note, gate, pool=pool or None)
    if pool_note is not None:
        pool_note = pool_note.model_copy(update={"case_runs": comparison.pooled_scores})
    facts = None if history is None else history_facts(
        recorded, comparison, note=history.note, pooled=pool_note)
    comparison = comparison.model_copy(update={
        "adaptive": adaptive,
        "history": facts,
        "baseline_trust": history.trust if history is not None else None,
    })
    return Verdict(comparison=comparison, gate=decide(comparison, gate))

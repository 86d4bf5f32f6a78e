"""One status rule for a run of an eval case and for an eval case over its runs, used by the
results file (``adk.files.convert`` records it), by compare (``analysis``, which re-applies it to
files recorded under another rule), and so by the gate, the console and the comment.

google-adk derives a case's status from its metrics but skips NOT_EVALUATED ones
(``LocalEvalService._generate_final_eval_status``): a case with a passing metric and one
that was not evaluated (or errored) is PASSED there, although nothing says the second would
have passed. Here a run is, in this order of precedence:

1. ``error`` when the run itself failed (no metrics: inference or evaluation raised), but
   ``failed`` when what raised was the agent's own code (``adk.runtime.case_failures`` tells them
   apart and names file and line): that is the agent's behaviour, not the harness's;
2. ``failed`` when any gated (non-informational) metric failed: a computed failure is never
   hidden behind an error of another metric;
3. ``error`` when any gated metric errored (raised, or a non-finite score);
4. ``not_evaluated`` when any gated metric was not evaluated (ADK's NOT_EVALUATED, a rubric
   without a verdict), or no gated metric passed or failed;
5. ``passed`` otherwise.

A case over its runs: ``failed`` if any run failed, else ``error`` if any errored, else
``not_evaluated`` if any was not evaluated, else ``passed`` (``error`` with no runs).
Whether ``error`` and ``not_evaluated`` fail their case is the gate's ``not_evaluated``
setting (fail by default, or warn); neither is ever counted as a pass.

A case was *evaluated* when it has a computed verdict (``passed`` or ``failed``); an
``error`` or ``not_evaluated`` case could not be evaluated, so the headline counts the
passes among the evaluated cases only and says how many could not be evaluated, never
"0/5 passed" of cases that never ran (:func:`was_evaluated`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from adk_eval_action.results.model import CaseStatus, MetricResult, MetricStatus
from adk_eval_action.results.scoretable import CASE_STATUSES, METRIC_STATUSES, ScoreTable

_PRECEDENCE = (CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.NOT_EVALUATED)
_EVALUATED = frozenset({CaseStatus.PASSED, CaseStatus.FAILED})


def was_evaluated(status: CaseStatus | None) -> bool:
    """Whether a case (or run) with this status has a computed verdict: ``passed`` or
    ``failed``; ``error`` and ``not_evaluated`` could not be evaluated (module docstring)."""
    return status in _EVALUATED


def run_status(
    metrics: Iterable[MetricResult], run_error: str | None = None, agent_raised: bool = False
) -> CaseStatus:
    """The status of one run from its metrics (module docstring, rules 1-5); ``run_error`` is
    why the run itself failed, and ``agent_raised`` whether that was the agent's own code."""
    if run_error:
        return CaseStatus.FAILED if agent_raised else CaseStatus.ERROR
    gated = {m.status for m in metrics if not m.informational}
    if MetricStatus.FAILED in gated:
        return CaseStatus.FAILED
    if MetricStatus.ERROR in gated:
        return CaseStatus.ERROR
    if MetricStatus.NOT_EVALUATED in gated or MetricStatus.PASSED not in gated:
        return CaseStatus.NOT_EVALUATED
    return CaseStatus.PASSED


def case_status(runs: Iterable[CaseStatus]) -> CaseStatus:
    """The status of an eval case from the statuses of its runs (module docstring)."""
    seen = set(runs)
    if not seen:
        return CaseStatus.ERROR
    return next((s for s in _PRECEDENCE if s in seen), CaseStatus.PASSED)


def _run_any(table: ScoreTable, mask: np.ndarray) -> np.ndarray:
    """Per run row: whether any of its gated metric rows is in ``mask``."""
    out = np.zeros(len(table.run_case), dtype=bool)
    out[table.m_run[mask & ~table.m_informational]] = True
    return out


def table_case_statuses(table: ScoreTable) -> tuple[list[CaseStatus], np.ndarray, np.ndarray]:
    """:func:`run_status` and :func:`case_status` applied to a whole table at once: per case
    row, its status, how many runs passed, how many runs it has.

    Each run's status is re-derived from its metric rows and its recorded status together, so
    a file recorded under ADK's rule (which passes a run over a metric that was not
    evaluated) is read under this one; a run recorded by this rule keeps its status.
    """
    code = {s: CASE_STATUSES.index(s) for s in CaseStatus}
    metric = {s: METRIC_STATUSES.index(s) for s in MetricStatus}
    recorded, m_status = table.run_status, table.m_status
    failed = _run_any(table, m_status == metric[MetricStatus.FAILED])
    errored = _run_any(table, m_status == metric[MetricStatus.ERROR])
    unsure = _run_any(table, m_status == metric[MetricStatus.NOT_EVALUATED])
    runs_code = np.select(
        [failed | (recorded == code[CaseStatus.FAILED]),
         errored | (recorded == code[CaseStatus.ERROR]),
         unsure | (recorded == code[CaseStatus.NOT_EVALUATED])],
        [code[CaseStatus.FAILED], code[CaseStatus.ERROR], code[CaseStatus.NOT_EVALUATED]],
        default=code[CaseStatus.PASSED],
    )
    n = len(table.case_keys)

    def count(mask: np.ndarray | None = None) -> np.ndarray:
        rows = table.run_case if mask is None else table.run_case[mask]
        return np.bincount(rows, minlength=n)[:n]

    runs = count()
    cases = np.select(
        [runs == 0, *(count(runs_code == code[s]) > 0 for s in _PRECEDENCE)],
        [code[CaseStatus.ERROR], *(code[s] for s in _PRECEDENCE)],
        default=code[CaseStatus.PASSED],
    )
    passes = count(runs_code == code[CaseStatus.PASSED])
    return [CASE_STATUSES[c] for c in cases.tolist()], passes, runs

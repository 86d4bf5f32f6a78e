"""Adaptive repeats: which eval cases get another head run when calls are undecided.

After the planned runs, a metric or rubric whose call is ``inconclusive`` may be decided by
more runs of the cases that carry its change. A matched eval case is picked when, on some
such metric (informational metrics aside: their wall-clock noise would take every case),
its mean over head runs differs from its mean over baseline runs, and it has fewer than
``max_runs`` head runs. Cases with the largest difference go first; one round gives each
picked case one more run, up to the remaining budget of case runs. The baseline's runs
are reused as they are (a re-run baseline is re-run as a whole, never per case).

The pipeline repeats: compare, plan, run the planned cases once more, until nothing is
planned (every call decided, every picked case at ``max_runs``) or the budget is spent.
``benchmarks/bench_calibration.py`` measures what this buys (power) and what it costs
(false alarms, model calls).
"""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_action.analysis.comparison import CaseComparison, Comparison
from adk_eval_action.results.scoretable import CaseKey

UNDECIDED = "inconclusive"


def undecided_metrics(comparison: Comparison) -> set[tuple[str, str]]:
    """(suite, metric name) of every gated metric, or rubric's metric, called
    inconclusive."""
    names = {
        (m.suite, m.metric_name)
        for m in comparison.metrics
        if m.classification == UNDECIDED and not m.informational
    }
    gated = {(m.suite, m.metric_name) for m in comparison.metrics if not m.informational}
    names |= {
        (r.suite, r.metric_name)
        for r in comparison.rubrics
        if r.classification == UNDECIDED and (r.suite, r.metric_name) in gated
    }
    return names


def _difference(case: CaseComparison, metrics: set[tuple[str, str]]) -> float:
    """The case's largest |head − baseline| on ``metrics`` (0: none differs)."""
    return max(
        (
            abs(row.delta)
            for row in case.metrics
            if row.delta is not None and (case.suite, row.metric_name) in metrics
        ),
        default=0.0,
    )


def plan_repeats(comparison: Comparison, *, max_runs: int, budget: int) -> list[CaseKey]:
    """The eval cases to run once more on the head (module docstring), at most
    ``budget``, largest difference first (then in case order).

    Raises:
        ValueError: ``max_runs`` below 1 or ``budget`` below 0.
    """
    if max_runs < 1:
        raise ValueError(f"max_runs must be >= 1, got {max_runs}")
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if not comparison.has_baseline or budget == 0:
        return []
    metrics = undecided_metrics(comparison)
    if not metrics:
        return []
    ranked: list[tuple[float, int, CaseKey]] = []
    for index, case in enumerate(_matched(comparison.cases)):
        if case.head_runs >= max_runs:
            continue
        difference = _difference(case, metrics)
        if difference > 0.0:
            ranked.append((-difference, index, case.key))
    ranked.sort()
    return [key for _, _, key in ranked[:budget]]


def _matched(cases: Iterable[CaseComparison]) -> Iterable[CaseComparison]:
    """Cases on both sides that ran (new, removed and errored cases carry no change)."""
    return (
        c
        for c in cases
        if c.baseline_status is not None and c.head_status is not None and c.change != "errored"
    )

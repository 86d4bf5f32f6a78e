"""The threshold rule's reason in ``mode: status`` (docs/gating.md), naming the thresholds
the failing eval cases missed.

An eval case fails when one of its metrics failed by the status ADK's evaluator gave it
(google.adk.evaluation.local_eval_service: a score on the wrong side of its threshold), and
the gate fails when the share of passing cases is below ``min_pass_rate``. At the default
of 1.0 any failing case fails the gate, so the rule that failed is the metric's threshold,
and the reason says which (``threshold: 1 of 4 eval case(s) failed:
`tool_trajectory_avg_score` below its threshold 1 in 1 (`weather_paris`)``); only a
``min_pass_rate`` below 1 (which the user set) is named as the rule, with the pass rate,
beside the same thresholds. Cases that could not be evaluated are counted once, as such
(``not_evaluated: fail``), never again among the failed ones; a rule of them alone reads
``not_evaluated: …``. Quarantined cases (known flaky) are not counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_action.analysis.compare import CaseComparison, Comparison
from adk_eval_action.results.model import CaseStatus, MetricStatus
from adk_eval_action.text import visible

__all__ = ["MAX_NAMED", "failing_text", "status_reason"]

MAX_NAMED = 4
"""Metrics, and eval cases per metric, the reason names; the others are counted."""


def failing_text(failing: Sequence[CaseComparison], cases_total: int) -> str:
    """What the rule counts as failing, in the headline's terms: ``1 of 4 eval case(s)
    failed and 2 could not be evaluated (not_evaluated: fail)``."""
    failed = sum(c.head_status == CaseStatus.FAILED for c in failing)
    unsure = len(failing) - failed
    parts = [f"{failed} of {cases_total} eval case(s) failed"] if failed or not unsure else []
    if unsure:
        total = "" if parts else f" of {cases_total}"
        parts.append(f"{unsure}{total} could not be evaluated (not_evaluated: fail)")
    return " and ".join(parts)


def _missed(comparison: Comparison, failing: Sequence[CaseComparison]) -> list[str]:
    """Each (suite, metric) threshold the failed cases missed: ```m` below its threshold 1
    in 2 (`a`, `b`)``, the suite named when the run has several; the cases that failed
    with no metric failed (the agent's own code raised) last."""
    suites = len({c.suite for c in comparison.cases}) > 1
    rows = {(r.suite, r.metric_name): r for r in comparison.metrics}
    missed: dict[tuple[str, str], list[str]] = {}
    raised = []
    for case in failing:
        if case.head_status != CaseStatus.FAILED:
            continue
        names = [m.metric_name for m in case.metrics if m.head_status == MetricStatus.FAILED]
        shown = _shown(case.eval_id)
        if not names:
            raised.append(shown)
        for name in names:
            missed.setdefault((case.suite, name), []).append(shown)
    parts = []
    for (suite, name), cases in list(missed.items())[:MAX_NAMED]:
        row = rows.get((suite, name))
        head = row.head if row is not None else None
        where = f" ({visible(suite, keep='')})" if suites else ""
        if head is not None and head.threshold is not None:
            side = "below" if head.higher_is_better else "above"
            rule = f"{side} its threshold {head.threshold:g}"
        else:
            rule = "failed"
        parts.append(f"{_shown(name)}{where} {rule} in {len(cases)} ({_named(cases)})")
    if len(missed) > MAX_NAMED:
        parts.append(f"and {len(missed) - MAX_NAMED} more metric(s)")
    if raised:
        parts.append(f"{len(raised)} failed in the agent's own code ({_named(raised)})")
    return parts


def _shown(name: str) -> str:
    """An eval id or metric name as a code span, its control and bidi characters written
    as escapes and backticks as quotes (the reason reaches the console, the comment and the
    HTML report; each escapes what it must beside that)."""
    return "`" + visible(name, keep="").replace("`", "'") + "`"


def _named(cases: list[str]) -> str:
    more = len(cases) - MAX_NAMED
    return ", ".join(cases[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")


def status_reason(
    comparison: Comparison,
    failing: Sequence[CaseComparison],
    cases_total: int,
    pass_rate: float,
    min_pass_rate: float,
) -> str:
    """The reason of a gate that ``mode: status`` failed (module docstring): ``failing``
    are the failing cases that count (quarantined ones left out), ``pass_rate`` the share
    of cases that passed (or only warned), below ``min_pass_rate``."""
    counted = failing_text(failing, cases_total)
    missed = _missed(comparison, failing)
    detail = f"{counted}: {'; '.join(missed)}" if missed else counted
    if min_pass_rate < 1.0:
        return (f"min_pass_rate: {detail}; pass rate {pass_rate:.0%} is below min_pass_rate "
                f"{min_pass_rate:.0%}")
    if any(c.head_status == CaseStatus.FAILED for c in failing):
        return f"threshold: {detail}"
    return f"not_evaluated: {detail}"

"""The pass/fail decision, with reasons.

Default (``mode: status``, ``fail_on: threshold``), as ``adk eval`` decides
(google.adk.evaluation.local_eval_service._generate_final_eval_status): an eval case fails
when any of its metrics failed by the status that metric's evaluator gave it (so a
lower-is-better custom metric works), and the run fails when any case fails.

* ``min_pass_rate`` lets a fraction of eval cases fail (passing cases / all head cases).
* ``mode: mean`` instead compares each metric's mean over cases and runs with its
  threshold, in the metric's direction.
* NOT_EVALUATED and metric errors fail the case by default (``not_evaluated: fail``) or only
  warn (``warn``); they are never counted as passes.
* Informational metrics (efficiency) never fail.
* ``fail_on: regression`` fails when a metric's mean drops by more than ``max_regression``
  (metric units) against the baseline (with ``require_significance``, only when the whole
  bootstrap interval lies beyond it); ``any`` applies both rules; ``none`` never fails.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .compare import CaseComparison, Comparison
from .config import GateConfig
from .noise import regression_fails
from .results import CaseStatus


class GateResult(BaseModel):
    """The decision. ``reasons`` say which rule failed and by how much; ``failing_cases``
    are worst first (for annotations)."""

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    failing_cases: list[CaseComparison] = Field(default_factory=list)
    pass_rate: float | None = None
    cases_total: int = 0
    cases_passed: int = 0


def _case_fails(case: CaseComparison, config: GateConfig) -> bool:
    if case.head_status == CaseStatus.FAILED:
        return True
    unknown = case.head_status in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED)
    return unknown and config.not_evaluated == "fail"


def _severity(case: CaseComparison) -> float:
    """Larger is worse: errors first, then by the largest score drop."""
    drops = [-(m.delta or 0.0) for m in case.metrics]
    base = 10.0 if case.head_status == CaseStatus.ERROR else 0.0
    return base + (1.0 if case.change == "newly_failing" else 0.0) + max(drops, default=0.0)


def _threshold_rules(comparison: Comparison, config: GateConfig, result: GateResult) -> None:
    head_cases = [c for c in comparison.cases if c.head_status is not None]
    failing = [c for c in head_cases if _case_fails(c, config)]
    unknown = [c for c in head_cases if c.head_status in (CaseStatus.ERROR,
                                                         CaseStatus.NOT_EVALUATED)]
    if config.not_evaluated == "warn" and unknown:
        result.warnings.append(
            f"{len(unknown)} eval case(s) not evaluated or errored (not_evaluated: warn)"
        )
    result.cases_total = len(head_cases)
    result.cases_passed = sum(c.head_status == CaseStatus.PASSED for c in head_cases)
    result.failing_cases = sorted(failing, key=_severity, reverse=True)
    ok_cases = len(head_cases) - len(failing)
    result.pass_rate = ok_cases / len(head_cases) if head_cases else None
    if config.mode == "status":
        if result.pass_rate is not None and result.pass_rate < config.min_pass_rate:
            result.reasons.append(
                f"{len(failing)} of {len(head_cases)} eval case(s) failed: pass rate "
                f"{result.pass_rate:.0%} is below min_pass_rate {config.min_pass_rate:.0%}"
            )
        return
    for row in comparison.metrics:
        head = row.head
        if head is None or head.informational or head.threshold is None:
            continue
        if head.mean is None:
            if config.not_evaluated == "fail":
                result.reasons.append(f"`{row.metric_name}` ({row.suite}) has no score")
            continue
        ok = head.mean >= head.threshold if head.higher_is_better else head.mean <= head.threshold
        if not ok:
            sign = "below" if head.higher_is_better else "above"
            result.reasons.append(
                f"`{row.metric_name}` ({row.suite}) mean {head.mean:.3f} is {sign} its threshold "
                f"{head.threshold:g} by {abs(head.mean - head.threshold):.3f}"
            )


def _regression_rules(comparison: Comparison, config: GateConfig, result: GateResult) -> None:
    if not comparison.has_baseline:
        return
    budget = config.max_regression if config.max_regression is not None else 0.0
    for row in comparison.metrics:
        if row.delta is None or row.informational:
            continue
        higher = row.head.higher_is_better if row.head else True
        if regression_fails(
            row.interval, row.delta, max_regression=budget,
            require_significance=config.require_significance, higher_is_better=higher,
        ):
            result.reasons.append(
                f"`{row.metric_name}` ({row.suite}) regressed by {abs(row.delta):.3f} "
                f"(max_regression {budget:g})"
            )


def decide(comparison: Comparison, config: GateConfig) -> GateResult:
    """Applies the gate rules (module docstring) to a comparison."""
    result = GateResult(passed=True)
    if config.fail_on in ("threshold", "any"):
        _threshold_rules(comparison, config, result)
    else:
        # Failing cases are still listed (annotations, comment) when they do not gate.
        probe = GateResult(passed=True)
        _threshold_rules(comparison, config, probe)
        result.failing_cases = probe.failing_cases
        result.cases_total, result.cases_passed = probe.cases_total, probe.cases_passed
        result.pass_rate = probe.pass_rate
    if config.fail_on in ("regression", "any"):
        _regression_rules(comparison, config, result)
    result.passed = not result.reasons
    return result

"""The pass/fail decision, with reasons (the rules in full: ``docs/gating.md``).

``fail_on`` picks the rules that can fail the gate:

* ``threshold`` (default), as ``adk eval`` decides
  (google.adk.evaluation.local_eval_service._generate_final_eval_status): in ``mode:
  status`` an eval case fails when any of its metrics failed by the status that metric's
  evaluator gave it (so a lower-is-better custom metric works), and the run fails when the
  share of passing cases is below ``min_pass_rate`` (1.0: any failing case fails the run;
  the reason names the thresholds missed: :mod:`adk_eval_action.analysis.failed_thresholds`).
  ``mode: mean`` instead compares each metric's mean over cases and runs with its threshold,
  in the metric's direction. NOT_EVALUATED and metric errors fail their case by default
  (``not_evaluated: fail``) or only warn (``warn``); they are never counted as passes.
* ``regression``: an eval case that passed on the baseline and crashed (the agent raised,
  or with ``not_evaluated: fail`` a run errored or a metric got no verdict:
  :func:`adk_eval_action.analysis.drops.crashed_cases`) fails, as ``newly failing``; its
  scores are missing, so no metric delta shows it. A metric whose mean got worse than the
  baseline's by more than
  ``max_regression`` (metric units; unset: ``min_effect``) fails; with
  ``require_significance`` only when its whole corrected interval lies beyond
  ``max_regression`` (:func:`adk_eval_action.analysis.noise.regression_fails`). ``gate.metrics``
  overrides ``max_regression``, ``min_effect`` and ``require_significance`` per metric
  (:meth:`adk_eval_action.project.config.GateConfig.rule_for`).
* ``any``: both; ``none``: nothing fails (reasons become warnings, so the comment still
  says what would have failed).

Informational metrics (tokens, duration, tool calls) never fail by these rules. Only
``max_token_increase`` looks at one of them: when ``token_usage_v1`` grows by more than that
fraction of its baseline mean, it warns, or fails with ``on_token_increase: fail``.

Every reason starts with the rule's name and says by how much the rule was missed.
Whatever the rules decide, the gated metrics and rubrics that got worse than the baseline
are kept with the eval cases behind them (``drops``, ``dropped_cases``:
:mod:`adk_eval_action.analysis.drops`), so a pass never hides a drop.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import CaseComparison, Comparison, MetricComparison
from adk_eval_action.analysis.drops import (
    CaseCrash,
    CaseDrop,
    MetricDrop,
    crashed_cases,
    dropped_cases,
    find_drops,
)
from adk_eval_action.analysis.failed_thresholds import status_reason
from adk_eval_action.analysis.noise import DeltaInterval, regression_fails
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, CaseStatus
from adk_eval_action.results.status import was_evaluated

TOKEN_METRIC = "token_usage_v1"
"""ADK's informational token count metric (google.adk.evaluation: tokens per invocation)."""


UNSURE_REASONS = {
    "credentials": "no model credentials",
    "model": "model unreachable",
    "judge": "judge setup",
    "config": "configuration error",
    "eval_set": "eval set error",
    "agent": "agent setup",
    "custom_metric": "custom metric setup",
    "inference": "inference error",
    "internal": "internal error",
    "interrupted": "stopped by a signal",
    "metric": "a metric or rubric without a score",
    "metric_code": "a metric's code failed",
    "judge_answer": "the judge model answered off-format",
    "output": "files not written",
    "budget": "over budget",
}
"""Words for the error kinds (:data:`adk_eval_action.results.model.ErrorKind`) that keep an
eval case from being evaluated, as the headline names them; ``baseline`` never does."""


class GateResult(BaseModel):
    """The decision. ``reasons`` say which rule failed and by how much; ``warnings`` what
    did not fail but should be read; ``failing_cases`` are worst first (for annotations).
    ``pass_rate`` is passing (or, with ``not_evaluated: warn``, not failing) head cases over
    all head cases. ``cases_unsure`` counts the head cases that could not be evaluated
    (``error`` or ``not_evaluated``: :func:`adk_eval_action.results.status.was_evaluated`),
    ``unsure_kinds`` the error kinds that say why (:data:`UNSURE_REASONS`), in order."""

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    failing_cases: list[CaseComparison] = Field(default_factory=list)
    pass_rate: float | None = None
    cases_total: int = 0
    cases_passed: int = 0
    cases_unsure: int = 0
    unsure_kinds: list[str] = Field(default_factory=list)
    not_evaluated: Literal["fail", "warn"] = "fail"
    #: ``fail_on: none``: nothing could fail the gate, so a pass is no verdict on the agent.
    report_only: bool = False
    #: Why nothing could fail the gate when the rule chosen is ``fail_on: regression`` but
    #: no score could be compared (no baseline, or no eval case scored on both sides); the
    #: gate is then ``report_only``. None otherwise.
    unchecked: str | None = None
    #: Gated metrics and rubrics worse than the baseline, failing the gate or not
    #: (:mod:`adk_eval_action.analysis.drops`).
    drops: list[MetricDrop] = Field(default_factory=list)
    #: The eval cases that drove them, each with its own drops, largest drop first.
    dropped_cases: list[tuple[CaseComparison, list[CaseDrop]]] = Field(default_factory=list)
    #: Eval cases that passed on the baseline and crashed, failing the gate or not.
    crashes: list[CaseCrash] = Field(default_factory=list)
    #: Failing eval cases that ``quarantine: flaky`` kept from failing the gate (known
    #: flaky from the default branch's history); still among ``failing_cases``.
    quarantined: list[CaseComparison] = Field(default_factory=list)
    #: Suites that could not be evaluated, as in the baseline run (the base branch's own
    #: breakage, :attr:`Comparison.known_broken`): left out of the counts, never unsaid.
    broken_on_base: list[str] = Field(default_factory=list)

    @property
    def warned(self) -> bool:
        """Whether a pass is one "with warnings": some head cases could not be evaluated,
        or some suites were broken on the base branch as on the head."""
        return bool(self.cases_unsure or self.broken_on_base)

    @property
    def broken_note(self) -> str:
        """The headline's clause for :attr:`broken_on_base` (markdown code spans), e.g.
        ``suite `billing` could not be evaluated, as on the base branch (not decided
        here)``; "" when there is none."""
        if not self.broken_on_base:
            return ""
        names = ", ".join(f"`{n}`" for n in self.broken_on_base[:5]) + (
            f" and {len(self.broken_on_base) - 5} more" if len(self.broken_on_base) > 5 else "")
        subject = "suite" if len(self.broken_on_base) == 1 else "suites"
        return (f"{subject} {names} could not be evaluated, as on the base branch (not "
                "decided here)")

    @property
    def ungated_drops(self) -> list[MetricDrop]:
        """The drops the gate did not fail on: what the headline adds, so a pass never
        hides a drop (:mod:`adk_eval_action.report.headline`)."""
        return [d for d in self.drops if not d.gated]

    @property
    def ungated_crashes(self) -> list[CaseCrash]:
        """The crashed eval cases the gate did not fail on: named in the headline too."""
        return [c for c in self.crashes if not c.gated]

    @property
    def cases_evaluated(self) -> int:
        """Head cases with a computed verdict (passed or failed)."""
        return self.cases_total - self.cases_unsure

    @property
    def count_text(self) -> str:
        """The headline's count: ``4/5 eval cases passed`` when every case was evaluated,
        ``3/4 evaluated eval cases passed`` when some could not be, ``0 of 5 eval cases
        could be evaluated (model unreachable)`` when none was, ``no eval case was
        evaluated`` when there were none: passes are counted among evaluated cases only,
        so cases that never ran do not read as failures."""
        if not self.cases_total:
            return "no eval case was evaluated"
        if not self.cases_unsure:
            return f"{self.cases_passed}/{self.cases_total} eval cases passed"
        if self.cases_evaluated:
            return f"{self.cases_passed}/{self.cases_evaluated} evaluated eval cases passed"
        cases = "eval case" if self.cases_total == 1 else "eval cases"
        return f"0 of {self.cases_total} {cases} could be evaluated ({self._why()})"

    @property
    def unsure_note(self) -> str:
        """The cases that could not be evaluated, why, and what they count as in the run's
        mode, e.g. ``1 of 5 could not be evaluated (model unreachable), only warned about
        (not_evaluated: warn)``, or ``so the run is incomplete`` when every reason is one
        that makes the run incomplete (:data:`INCOMPLETE_ERROR_KINDS`: a metric's code, the
        model, a judge's setup), whatever ``not_evaluated`` says; only the mode, as a clause
        of its own after the count's ``;``, when :attr:`count_text` said the rest (no case
        evaluated: ``the run is incomplete``, ``they are counted as failing
        (not_evaluated: fail)``); "" when every case was evaluated."""
        if not self.cases_unsure:
            return ""
        counted = "only warned about" if self.not_evaluated == "warn" else "counted as failing"
        mode = f"{counted} (not_evaluated: {self.not_evaluated})"
        incomplete = bool(self.unsure_kinds) and INCOMPLETE_ERROR_KINDS.issuperset(
            self.unsure_kinds)
        if not self.cases_evaluated:
            subject = "it is" if self.cases_total == 1 else "they are"
            return "the run is incomplete" if incomplete else f"{subject} {mode}"
        if incomplete:
            # Not the agent's doing (docs/gating.md): the run is incomplete, never failed.
            mode = "so the run is incomplete"
        return (
            f"{self.cases_unsure} of {self.cases_total} could not be evaluated "
            f"({self._why()}), {mode}"
        )

    def _why(self) -> str:
        words = [UNSURE_REASONS.get(kind, kind) for kind in self.unsure_kinds]
        return ", ".join(words) or "not evaluated or errored"


def _unsure_kinds(comparison: Comparison, unsure: list[CaseComparison]) -> list[str]:
    """The kinds of the head errors that concern the cases that could not be evaluated:
    run-wide ones (no eval case named) and those naming one of them, in first-seen order."""
    ids = {c.eval_id for c in unsure}
    kinds = [
        e.kind for e in comparison.errors
        if e.kind in UNSURE_REASONS and (e.eval_id is None or e.eval_id in ids)
    ]
    return list(dict.fromkeys(kinds))


def _case_fails(case: CaseComparison, config: GateConfig) -> bool:
    if case.head_status == CaseStatus.FAILED:
        return True
    unknown = case.head_status in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED)
    return unknown and config.not_evaluated == "fail"


def _severity(case: CaseComparison) -> tuple[bool, bool, float]:
    """Larger is worse: errored first, then newly failing, then by the largest worsening
    (:attr:`CaseComparison.largest_drop`, a fraction of the metric's range when known)."""
    errored = case.head_status == CaseStatus.ERROR
    return errored, case.change == "newly_failing", case.largest_drop


def _case_counts(comparison: Comparison, config: GateConfig, result: GateResult) -> None:
    """Fills the case counts, pass rate and failing cases (shown whatever ``fail_on``)."""
    broken = comparison.known_broken  # the base branch's own breakage: not this run's
    head_cases = [c for c in comparison.cases if c.head_status is not None
                  and c.suite not in broken]
    result.broken_on_base = sorted(broken)
    result.warnings += [f"suite `{name}` could not be evaluated, as in the baseline run: the "
                        "base branch's own breakage, which does not decide this check"
                        for name in result.broken_on_base]
    failing = [c for c in head_cases if _case_fails(c, config)]
    result.cases_total = len(head_cases)
    result.cases_passed = sum(c.head_status == CaseStatus.PASSED for c in head_cases)
    result.failing_cases = sorted(failing, key=_severity, reverse=True)
    result.not_evaluated = config.not_evaluated
    result.quarantined = _quarantined(comparison, config, failing)
    result.warnings += [_quarantine_note(comparison, c) for c in result.quarantined]
    ok_cases = len(head_cases) - len(failing) + len(result.quarantined)
    result.pass_rate = ok_cases / len(head_cases) if head_cases else None
    unknown = [c for c in head_cases if not was_evaluated(c.head_status)]
    result.cases_unsure = len(unknown)
    result.unsure_kinds = _unsure_kinds(comparison, unknown) if unknown else []
    if config.not_evaluated == "warn" and unknown:
        result.warnings.append(
            f"{len(unknown)} eval case(s) not evaluated or errored (not_evaluated: warn)"
        )


def _quarantined(comparison: Comparison, config: GateConfig,
                 failing: list[CaseComparison]) -> list[CaseComparison]:
    """The failing cases ``quarantine: flaky`` keeps from failing the gate: those the
    default branch's history knows as flaky (:mod:`adk_eval_action.analysis.trends`) that
    failed on their scores (an errored case is not quarantined: that is no flake)."""
    facts = comparison.history
    if config.quarantine != "flaky" or facts is None or not facts.flaky:
        return []
    return [c for c in failing
            if c.head_status == CaseStatus.FAILED and facts.flaky_case(c.key) is not None]


def _quarantine_note(comparison: Comparison, case: CaseComparison) -> str:
    facts = comparison.history
    known = facts.flaky_case(case.key) if facts is not None else None
    why = known.text if known is not None else "known flaky"
    return (f"quarantine: eval case `{case.eval_id}` ({case.suite}) failed but is known "
            f"flaky ({why}): it does not fail the gate (gate.quarantine: flaky)")


def _threshold_reasons(comparison: Comparison, config: GateConfig, result: GateResult) -> list[str]:
    if config.mode == "status":
        if result.pass_rate is not None and result.pass_rate < config.min_pass_rate:
            quarantined = {id(c) for c in result.quarantined}
            failing = [c for c in result.failing_cases if id(c) not in quarantined]
            return [status_reason(comparison, failing, result.cases_total, result.pass_rate,
                                  config.min_pass_rate)]
        return []
    reasons = []
    for row in comparison.metrics:
        head = row.head
        if head is None or head.informational or head.threshold is None:
            continue
        if head.mean is None:
            if config.not_evaluated == "fail":
                reasons.append(f"threshold: `{row.metric_name}` ({row.suite}) has no score")
            continue
        ok = head.mean >= head.threshold if head.higher_is_better else head.mean <= head.threshold
        if not ok:
            sign = "below" if head.higher_is_better else "above"
            reasons.append(
                f"threshold: `{row.metric_name}` ({row.suite}) mean {head.mean:.3f} is {sign} "
                f"its threshold {head.threshold:g} by {abs(head.mean - head.threshold):.3f}"
            )
    return reasons


def _interval_text(interval: DeltaInterval | None, scale: float | None = None) -> str:
    """``corrected interval [-0.519, -0.009]`` in metric units, or in % of ``scale``: the
    interval of :mod:`adk_eval_action.analysis.paired`, whose ends are the corrected
    one-sided bounds (no single two-sided level describes both)."""
    if interval is None or not interval.has_interval:
        return "no interval"
    if interval.low is None or interval.high is None:
        end = "≤" if interval.low is None else "≥"
        value = interval.high if interval.low is None else interval.low
        assert value is not None
        shown = f"{value / scale:+.0%}" if scale else f"{value:+.3f}"
        return f"one-sided corrected interval {end} {shown}"
    if scale:
        return f"corrected interval [{interval.low / scale:+.0%}, {interval.high / scale:+.0%}]"
    return f"corrected interval [{interval.low:+.3f}, {interval.high:+.3f}]"


def _case_beyond(row: MetricComparison, budget: float) -> str | None:
    """How an eval case's own runs prove a drop beyond ``budget`` when the metric's
    interval does not (``interval.case_calls``); None when the interval does or no case."""
    interval = row.interval
    if interval is None or not interval.case_calls:
        return None
    sign = 1.0 if row.higher_is_better else -1.0
    if interval.high is not None and row.higher_is_better and interval.high < -budget:
        return None
    if interval.low is not None and not row.higher_is_better and interval.low > budget:
        return None
    beyond = [c for c in interval.case_calls if c.bound is not None and sign * c.bound < -budget]
    if not beyond:
        return None
    c = beyond[0]
    return (
        f"eval case `{c.eval_id}` alone {c.baseline:.3f} → {c.head:.3f}, its own runs "
        f"prove it beyond (p = {c.p_worse:.3g} ≤ {c.level:.3g})"
    )


def _regression(row: MetricComparison, config: GateConfig) -> tuple[str | None, str | None]:
    """(reason, warning) of the regression rule for one metric; both None when it holds.

    The decision is :func:`adk_eval_action.analysis.noise.regression_fails` (its float
    tolerance included); this only words it. With ``require_significance`` the interval
    alone decides, as it decides the metric's call.
    """
    rule = config.rule_for(row.suite, row.metric_name)
    budget = rule.max_regression or 0.0
    significance = bool(rule.require_significance)
    higher = row.higher_is_better
    assert row.delta is not None

    def fails(with_significance: bool) -> bool:
        return regression_fails(
            row.interval,
            row.delta or 0.0,
            max_regression=budget,
            require_significance=with_significance,
            higher_is_better=higher,
        )

    over_budget = fails(False)
    significant = significance and fails(True)
    if not over_budget and not significant:
        return None, None
    worse = -row.delta if higher else row.delta
    name = f"`{row.metric_name}` ({row.suite})"
    moved = "dropped" if higher else "rose"
    beyond = f", {worse - budget:.3f} beyond max_regression {budget:g}" if budget else ""
    limit = "" if budget else "max_regression 0; "
    what = f"{name} {moved} by {worse:.3f}{beyond} ({limit}{_interval_text(row.interval)})"
    if not significance:
        return f"max_regression: {what}", None
    if significant:
        # The same interval end and comparison as the metric's call: a failing metric is
        # always called regressed when max_regression is min_effect.
        by_case = _case_beyond(row, budget)
        if by_case:
            return f"max_regression: {what}; {by_case}", None
        return f"max_regression: {what}; the whole interval lies beyond it", None
    # The point drop is over budget but the interval reaches back within it: noise could
    # explain the drop, so require_significance lets it pass.
    return None, (
        f"max_regression: {what}, but the interval reaches within max_regression "
        "(require_significance): not failing"
    )


def _regression_rules(comparison: Comparison, config: GateConfig) -> tuple[list[str], list[str]]:
    reasons: list[str] = []
    warnings: list[str] = []
    if not comparison.has_baseline:
        return reasons, warnings
    for row in comparison.metrics:
        if row.delta is None or row.informational:
            continue
        reason, warning = _regression(row, config)
        reasons += [reason] if reason else []
        warnings += [warning] if warning else []
    return reasons, warnings


MAX_CRASHES_NAMED = 5
"""Crashed eval cases a ``newly failing`` reason names; the others are counted."""


def crash_reason(crashes: list[CaseCrash]) -> str | None:
    """The ``newly failing`` reason of the crashed eval cases the gate fails on, e.g.
    ``newly failing: 2 eval cases passed on the baseline and crashed: `a` (suite): the
    agent raised …; `b` (suite): …``; None when there is none."""
    if not crashes:
        return None
    named = "; ".join(f"`{c.eval_id}` ({c.suite}): {_cut(c.why, 160)}"
                      for c in crashes[:MAX_CRASHES_NAMED])
    more = len(crashes) - MAX_CRASHES_NAMED
    cases = "eval case" if len(crashes) == 1 else "eval cases"
    return (f"newly failing: {len(crashes)} {cases} passed on the baseline and crashed: "
            f"{named}" + (f"; and {more} more" if more > 0 else ""))


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _beyond_budget(delta: float, base: float, budget: float) -> bool:
    """Whether growth ``delta`` over a baseline mean ``base`` (>= 0) exceeds the relative
    ``budget``. From a baseline of 0 any increase is infinite growth, beyond every budget
    (docs/gating.md); no increase never is."""
    return delta > 0 if base == 0 else delta / base > budget


def _token_rule(comparison: Comparison, config: GateConfig) -> list[str]:
    """Messages for each suite whose token usage grew beyond ``max_token_increase``
    (:func:`_beyond_budget`; with ``require_significance`` the interval's lower end too)."""
    budget = config.max_token_increase
    if budget is None or not comparison.has_baseline:
        return []
    messages = []
    for row in comparison.metrics:
        if row.metric_name != TOKEN_METRIC or row.delta is None:
            continue
        # Matched cases on both sides, as the delta: a new eval case moves neither.
        base, head = row.baseline_matched, row.head_matched
        if base is None or base < 0 or head is None or not _beyond_budget(row.delta, base, budget):
            continue
        significance = config.rule_for(row.suite, row.metric_name).require_significance
        interval = row.interval
        low = interval.low if interval else None
        if significance and low is not None and not _beyond_budget(low, base, budget):
            continue
        name = f"max_token_increase: `{TOKEN_METRIC}` ({row.suite})"
        if base == 0:
            messages.append(
                f"{name} grew from 0.0 to {head:.1f}: growth from zero is beyond any "
                f"max_token_increase ({budget:.0%}) ({_interval_text(interval)})"
            )
            continue
        growth = row.delta / base
        messages.append(
            f"{name} grew {growth:.0%} ({base:.1f} → {head:.1f}), {growth - budget:.0%} beyond "
            f"max_token_increase {budget:.0%} ({_interval_text(interval, base)})"
        )
    return messages


def _unused_overrides(comparison: Comparison, config: GateConfig) -> list[str]:
    """Warnings for ``gate.metrics`` keys that match no metric (a typo gates nothing)."""
    names = {m.metric_name for m in comparison.metrics}
    names |= {f"{m.suite}/{m.metric_name}" for m in comparison.metrics}
    return [
        f"gate.metrics.{key} matches no metric of this run"
        for key in config.metrics
        if key not in names
    ]


def _unchecked(comparison: Comparison, config: GateConfig) -> str | None:
    """Why ``fail_on: regression`` could check nothing: the baseline is missing or has no
    gated metric scored on the same eval cases as the head; None when it could, or when
    another rule gates."""
    if config.fail_on != "regression":
        return None
    if not comparison.has_baseline:
        return "fail_on: regression, and there is no baseline to compare with"
    if not any(m.delta is not None for m in comparison.metrics if not m.informational):
        return ("fail_on: regression, and no gated metric was scored on the same eval cases "
                "as the baseline")
    return None


def decide(comparison: Comparison, config: GateConfig) -> GateResult:
    """Applies the gate rules (module docstring) to a comparison."""
    result = GateResult(passed=True, report_only=config.fail_on == "none")
    _case_counts(comparison, config, result)
    threshold = _threshold_reasons(comparison, config, result)
    regression, regression_warnings = _regression_rules(comparison, config)
    result.crashes = crashed_cases(comparison, config)
    crashed = crash_reason([c for c in result.crashes if c.gated])
    regression = ([crashed] if crashed else []) + regression
    tokens = _token_rule(comparison, config)
    gating = {
        "threshold": threshold,
        "regression": regression,
        "any": threshold + regression,
        "none": [],
    }[config.fail_on]
    if config.on_token_increase == "fail" and config.fail_on != "none":
        gating = gating + tokens
    # A rule that does not gate still shows in the comment, as a warning; the regression
    # rule only when a budget was set, else every small drop would warn.
    budget_set = config.max_regression is not None or any(
        o.max_regression is not None for o in config.metrics.values()
    )
    shown = threshold + tokens + (regression + regression_warnings if budget_set else [])
    if config.fail_on in ("regression", "any"):
        shown += regression_warnings
    result.reasons = gating
    result.warnings += [m for m in dict.fromkeys(shown) if m not in gating]
    result.warnings += _unused_overrides(comparison, config)
    result.passed = not result.reasons
    result.unchecked = _unchecked(comparison, config)
    result.report_only = result.report_only or (result.unchecked is not None and result.passed)
    result.drops = find_drops(comparison, config)
    result.dropped_cases = dropped_cases(comparison, result.drops)
    return result


def failed_on_scores(gate: GateResult) -> bool:
    """Whether the gate failed on scores that were computed: a case that failed its metrics,
    or a rule on metric means; not only cases that errored or never ran (an incomplete run
    says so instead of calling them failures)."""
    if gate.passed:
        return False
    scored_case = any(c.head_status == CaseStatus.FAILED for c in gate.failing_cases)
    # A crashed case the agent's own code failed is among the failing cases; one that
    # errored or got no verdict is no computed score.
    unscored = ("min_pass_rate", "not_evaluated", "newly failing")
    return scored_case or any(not r.startswith(unscored) for r in gate.reasons)

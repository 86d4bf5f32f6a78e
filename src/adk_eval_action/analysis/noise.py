"""Calls and the regression rule from a delta and its interval; flaky cases.

Pure functions, no I/O and no global state. The interval itself is the paired permutation
test of :mod:`adk_eval_action.analysis.paired` (runs exchanged within eval cases,
:mod:`adk_eval_action.analysis.stratified`, or whole cases,
:mod:`adk_eval_action.analysis.signflip`), computed for every metric and rubric of a run at
once by :mod:`adk_eval_action.analysis.compare`.

The "region of practical equivalence" decision rule used by :func:`classify` follows
Kruschke, *Rejecting or Accepting Parameter Values in Bayesian Estimation* (2018): an
interval entirely inside ``[-min_effect, +min_effect]`` accepts "no meaningful change"; one
that straddles a boundary decides nothing. Because each end of the interval is the
inversion of the corrected one-sided test, "wholly beyond ``-min_effect``" is the same
statement as "the corrected test rejects no worsening beyond ``min_effect``".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "CaseCall",
    "CaseKey",
    "Classification",
    "DeltaInterval",
    "NO_CASES_REASON",
    "ONE_CASE_REASON",
    "ONE_SIDED_REASON",
    "TOO_FEW_REASON",
    "classify",
    "disagree",
    "flaky_cases",
    "regression_fails",
]

CaseKey = Hashable
"""Identifies one eval case; a ``(suite, eval_set_id, eval_id)`` tuple in practice."""

K = TypeVar("K", bound=Hashable)

Classification = Literal["regressed", "improved", "unchanged", "inconclusive"]
"""Outcome of comparing one metric between baseline and head (see :func:`classify`)."""

NO_CASES_REASON = "no interval: no eval case has scores on both baseline and head"
ONE_CASE_REASON = (
    "no interval with one paired case and one run a side: the test needs at least 2 cases "
    "or 2 runs"
)
TOO_FEW_REASON = (
    "no interval: {sample} {verb} too few for the corrected level (all {total} patterns "
    "leave p ≥ {p_min:.3g})"
)
ONE_SIDED_REASON = (
    "one-sided: no bound on a {word}, as {sample} {verb} too few for that side's corrected "
    "level {level:.3g} (all {total} patterns leave p ≥ {p_min:.3g})"
)

# Score differences closer than this count as equal (metric units).
_TOLERANCE = 1e-9


class CaseCall(BaseModel):
    """An eval case whose own runs prove it worse by more than ``min_effect``: its test
    (its runs exchanged between the sides, :mod:`adk_eval_action.analysis.case_calls`)
    rejected at the worse direction's corrected level, so its metric (or rubric) is called
    🔴 regressed by it. Values in metric units: the case's means over its runs on each
    side, their difference, the p-value, the level it was within, and ``bound``, the
    worse-side end of the case's own change at that level (its upper end when higher is
    better, else its lower end; None when out of reach)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    eval_set_id: str
    eval_id: str
    baseline: float
    head: float
    delta: float
    p_worse: float
    level: float
    bound: float | None = None


class DeltaInterval(BaseModel):
    """The mean per-case change ``head − baseline`` over matched eval cases, its interval,
    and the test behind both (:mod:`adk_eval_action.analysis.signflip`).

    All values are in the metric's score units, signed as ``head − baseline`` whatever the
    metric's direction (direction is applied by :func:`classify`).

    Attributes:
        delta: Mean over matched cases of ``mean(head runs) − mean(baseline runs)``;
            ``0.0`` when ``n_cases == 0``.
        low: Lower end: a one-sided bound at level ``level_low`` (the level the correction
            left the direction this end decides); ``None`` when the test cannot reach that
            level (then ``reason`` says why: both ends None, no interval; one, a one-sided
            interval, which still decides its own side).
        high: Upper end, at ``level_high``; ``None`` likewise.
        n_cases: Matched cases (scored on both sides).
        n_resamples: Sign patterns the p-values count among (``2**n_cases`` when
            ``exact``); ``0`` when no interval.
        confidence: Nominal one-sided level of each end before correction, in ``(0, 1)``
            (0.95: at most 5% false calls per direction).
        reason: Why an end is missing (``None`` iff ``low`` and ``high`` are both set).
        p_worse: p-value of "worse by more than ``min_effect``" (metric's direction).
        p_better: p-value of "better by more than ``min_effect``".
        level_low, level_high: One-sided levels of the ends after correction.
        exact: Every pattern was counted (else ``n_resamples`` were drawn).
        seed: Seed the patterns were drawn from.
        to_decide: For a change beyond ``min_effect`` the test left undecided, what sample
            would decide one of its size (:mod:`adk_eval_action.analysis.sample`), e.g.
            "5 runs per case would decide a drop this size; with 3 the smallest possible p
            is 0.05 (a call needs p ≤ 0.048)"; None otherwise.
        case_calls: The eval cases whose own runs prove them worse (:class:`CaseCall`),
            largest drop first; any makes the change 🔴 regressed (:func:`classify`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    delta: float
    low: float | None
    high: float | None
    n_cases: int = Field(ge=0)
    n_resamples: int = Field(ge=0)
    confidence: float = Field(gt=0.0, lt=1.0)
    reason: str | None = None
    p_worse: float | None = None
    p_better: float | None = None
    level_low: float | None = None
    level_high: float | None = None
    exact: bool = False
    seed: int | None = None
    to_decide: str | None = None
    case_calls: list[CaseCall] = Field(default_factory=list)

    @model_validator(mode="after")
    def _bounds_consistent(self) -> DeltaInterval:
        if (self.low is None or self.high is None) and self.reason is None:
            raise ValueError("an interval without both bounds must give a reason")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")
        return self

    @property
    def has_interval(self) -> bool:
        """True when an end is set (a one-sided interval decides its side)."""
        return self.low is not None or self.high is not None

    @property
    def one_sided(self) -> bool:
        """True when exactly one end is set."""
        return (self.low is None) != (self.high is None)


def _goodness_bounds(
    interval: DeltaInterval | None, sign: float
) -> tuple[float | None, float | None] | None:
    """Interval bounds in goodness units (``sign`` is +1 or -1), ordered low..high, a
    missing end None (unbounded on that side); None when there is no end at all."""
    if interval is None or not interval.has_interval:
        return None
    a = None if interval.low is None else sign * interval.low
    b = None if interval.high is None else sign * interval.high
    return (a, b) if sign > 0 else (b, a)


def classify(
    interval: DeltaInterval | None,
    delta: float,
    *,
    min_effect: float,
    higher_is_better: bool = True,
) -> Classification:
    """Classify a metric's change from its interval.

    Rule (region of practical equivalence, Kruschke 2018), in goodness units ``g`` where
    ``g = delta`` if ``higher_is_better`` else ``-delta`` (bounds are negated and swapped
    the same way):

    * With an interval ``[g_low, g_high]``:
        - ``g_high < -min_effect`` (wholly below) -> ``"regressed"``;
        - ``g_low > +min_effect`` (wholly above) -> ``"improved"``;
        - ``-min_effect <= g_low`` and ``g_high <= +min_effect`` (wholly within) ->
          ``"unchanged"``;
        - otherwise it straddles ``-min_effect`` or ``+min_effect`` -> ``"inconclusive"``.
    * An eval case its own runs prove worse (``interval.case_calls``) -> ``"regressed"``,
      whatever the interval says of the mean.
    * With a one-sided interval (one end missing: unbounded that way), only the side of
      its end can be called: ``g_high < -min_effect`` -> ``"regressed"``, ``g_low >
      +min_effect`` -> ``"improved"``, else ``"inconclusive"``.
    * Without an interval (``interval`` is ``None`` or has no bounds: one matched case,
      too few for the corrected level, or differences too large to compute with) nothing
      is established: ``"inconclusive"``. The point delta alone calls nothing; at 200
      cases x 1 run it called 47% of unchanged metrics regressed
      (``benchmarks/bench_calibration.py``).

    Args:
        interval: The change's :class:`DeltaInterval`, or ``None``.
        delta: Observed ``head - baseline`` in score units (normally ``interval.delta``).
        min_effect: Smallest change that matters, in score units, ``>= 0``.
        higher_is_better: ``False`` for metrics where lower scores are better.

    Raises:
        ValueError: If ``min_effect`` is negative or not finite.
    """
    if not (math.isfinite(min_effect) and min_effect >= 0.0):
        raise ValueError(f"min_effect must be a finite number >= 0, got {min_effect}")
    sign = 1.0 if higher_is_better else -1.0
    if interval is not None and interval.case_calls:
        return "regressed"
    bounds = _goodness_bounds(interval, sign)
    if bounds is None:
        return "inconclusive"
    g_low, g_high = bounds
    if g_high is not None and g_high < -min_effect:
        return "regressed"
    if g_low is not None and g_low > min_effect:
        return "improved"
    if g_low is not None and g_high is not None and -min_effect <= g_low and g_high <= min_effect:
        return "unchanged"
    return "inconclusive"


def regression_fails(
    interval: DeltaInterval | None,
    delta: float,
    *,
    max_regression: float,
    require_significance: bool,
    higher_is_better: bool,
) -> bool:
    """Whether a metric's change should fail the gate.

    In goodness units ``g`` (``delta``, negated when lower is better), a drop larger than
    the budget fails: ``g < -max_regression``. With ``require_significance`` the drop must
    be established by the interval instead: the whole goodness interval must lie below
    ``-max_regression`` (``g_high < -max_regression``), so noise alone cannot fail a PR.
    Without an interval significance is not established, so with
    ``require_significance`` nothing fails (as :func:`classify` calls it inconclusive); an
    interval over zero paired cases never fails (there is nothing to compare). With
    ``require_significance`` an eval case whose own runs prove it worse fails it too when
    its own bound lies beyond ``-max_regression`` (``interval.case_calls``).

    Args:
        interval: The change's :class:`DeltaInterval`, or ``None``.
        delta: Observed ``head - baseline`` in score units (normally ``interval.delta``).
        max_regression: Allowed drop in score units, ``>= 0``.
        require_significance: Also require the interval to exclude drops within budget.
        higher_is_better: ``False`` for metrics where lower scores are better.

    Raises:
        ValueError: If ``max_regression`` is negative or not finite.
    """
    if not (math.isfinite(max_regression) and max_regression >= 0.0):
        raise ValueError(f"max_regression must be a finite number >= 0, got {max_regression}")
    if interval is not None and interval.n_cases == 0:
        return False
    sign = 1.0 if higher_is_better else -1.0
    if require_significance:
        # The interval decides, compared exactly as classify compares it: a significant
        # failure is a "regressed" call whenever max_regression is min_effect.
        bounds = _goodness_bounds(interval, sign)
        if bounds is not None and bounds[1] is not None and bounds[1] < -max_regression:
            return True
        return interval is not None and any(
            c.bound is not None and sign * c.bound < -max_regression for c in interval.case_calls
        )
    # A drop equal to the budget is within it; the tolerance absorbs float rounding of means
    # (1.0 - 0.7 is 0.30000000000000004).
    return sign * delta < -max_regression - _TOLERANCE


def flaky_cases(statuses: Mapping[K, Sequence[bool]]) -> dict[K, tuple[int, int]]:
    """Cases whose pass/fail status differs between runs.

    Args:
        statuses: Per-case pass (``True``) / fail (``False``) of each run.

    Returns:
        ``{case: (passes, runs)}`` for every case with at least one pass and one fail, in
        input order; e.g. ``[True, False, True]`` gives ``(2, 3)``. Cases with a single
        run, or all runs agreeing, are omitted.
    """
    flaky: dict[K, tuple[int, int]] = {}
    for key, runs in statuses.items():
        passes = sum(1 for ok in runs if ok)
        if disagree(passes, len(runs)):
            flaky[key] = (passes, len(runs))
    return flaky


def disagree(passes: Any, runs: Any) -> Any:
    """The flaky rule: some runs passed and some did not (``0 < passes < runs``). Works on
    ints and, element-wise, on numpy arrays (compare applies it to every case at once)."""
    return (passes > 0) & (passes < runs)

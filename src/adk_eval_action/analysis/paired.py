"""Every metric's and rubric's paired test of a run, as one family: deltas over matched
eval cases, intervals, p-values and the corrected levels.

A test's inputs are per-case means on each side and the scores run by run, indexed by a
case id shared by both sides (runs 0: the case has no score on that side). Only *matched*
cases, scored on both sides, enter: a new or removed eval case never moves a delta.
``delta`` is the mean over matched cases of ``head − baseline`` (each case's runs averaged
first), the statistic the test and the interval are about; ``baseline_mean``/``head_mean``
are the two sides' means over the same cases, so ``delta == head_mean − baseline_mean`` up
to rounding.

The test permutes what an unchanged agent leaves exchangeable: with at most
:data:`WITHIN_CASES_UP_TO` matched cases, the runs within each case
(:mod:`adk_eval_action.analysis.stratified`; with one run a side that is the sign flip of
:mod:`adk_eval_action.analysis.signflip`, which is used as such); with more, whole cases
(the sign flip over per-case means). A change beyond ``min_effect`` it leaves undecided
gets what sample would decide it (:mod:`adk_eval_action.analysis.sample`).

Each direction (worse, better; in the metric's direction) is corrected separately at
``alpha`` across every test that can reject (finite differences, some case whose scores
differ, and more than one case or run), so an unchanged agent gets a false 🔴 on at most
``alpha`` of runs whatever the number of metrics and rubrics (``benchmarks/bench_calibration.py``).
Informational metrics (durations, tokens) are corrected as a family of their own: the
two-stage correction loosens its level as more tests in the family reject, so wall-clock
noise in the same family would loosen the level of the gated metrics' calls
(docs/gating.md, "The correction").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from adk_eval_action.analysis.case_calls import (
    CaseCallResult,
    CaseInput,
    candidates,
    case_calls,
    case_p_values,
)
from adk_eval_action.analysis.noise import (
    NO_CASES_REASON,
    ONE_CASE_REASON,
    ONE_SIDED_REASON,
    TOO_FEW_REASON,
    DeltaInterval,
    classify,
)
from adk_eval_action.analysis.sample import Undecided, out_of_reach, sample_text, to_decide
from adk_eval_action.analysis.signflip import (
    CORRECTION,
    FlipDistribution,
    SignFlips,
    flip_distributions,
    sign_flips,
    two_stage_level,
)
from adk_eval_action.analysis.stratified import (
    Drawn,
    Strata,
    SubsetTables,
    draw,
    drawn_distributions,
    exact_distribution,
    strata,
)
from adk_eval_action.results.scoretable import exact_mean

TOO_LARGE_REASON = "no interval: the per-case differences are too large to compute with"
DEFAULT_RESAMPLES = 2000
DEFAULT_ALPHA = 0.05
METHOD = "paired permutation test"
WITHIN_CASES_UP_TO = 100
"""The most matched eval cases at which a test exchanges runs within cases (the stratified
test); with more it exchanges whole cases (the sign flip over per-case means), which needs
no assumption about a case's runs and, there, has nearly the same power at a fraction of
the cost (``benchmarks/bench_calibration.py``)."""


class TestMethod(BaseModel):
    """How the calls were made, recorded so that ``compare`` reproduces every interval:
    the test and correction, the per-direction level ``alpha``, the ``seed`` and the
    number of random patterns (``n_resamples``; up to :attr:`exact_up_to` matched cases
    every pattern is counted when it can be), the most matched cases a test exchanges runs
    within cases at (``within_cases_up_to``; whole cases beyond), how many tests each
    direction's correction covered (``tests`` metric and rubric tests in each), and the
    one-sided level it left (None: no test); the eval cases' own tests of the worse
    direction (:mod:`.case_calls`: ``case_tests`` of them and their family's
    ``case_level``; with any, the worse side's first stage is split in halves between
    the two families); the same for the informational metrics' own family
    (``informational_*``)."""

    method: str = METHOD
    correction: str = CORRECTION
    alpha: float = DEFAULT_ALPHA
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    within_cases_up_to: int = WITHIN_CASES_UP_TO
    tests: int = 0
    case_tests: int = 0
    case_level: float | None = None
    level_worse: float | None = None
    level_better: float | None = None
    informational_tests: int = 0
    informational_level_worse: float | None = None
    informational_level_better: float | None = None

    @property
    def exact_up_to(self) -> int:
        """The most matched cases whose patterns are all counted (``2**n <= n_resamples``;
        with several runs per case, also when the distribution has few enough distinct
        points: :mod:`adk_eval_action.analysis.stratified`)."""
        return max(0, self.n_resamples.bit_length() - 1)

    @property
    def description(self) -> str:
        """The method in one clause, for the comment's footnote."""
        return (
            f"{self.method}: each eval case's baseline and head runs exchanged within the "
            f"case (up to {self.within_cases_up_to} matched cases; whole cases beyond, a "
            f"sign flip), every pattern counted up to {self.exact_up_to} cases, else "
            f"{self.n_resamples} random patterns, seed {self.seed}"
        )


@dataclass(frozen=True, slots=True)
class RunScores:
    """One side's scores of one metric or rubric, run by run, loaded on first use:
    ``load()`` gives ``(values, start)`` and case id ``i``'s scored runs are
    ``values[start[offset + i]:start[offset + i + 1]]`` (metric units)."""

    load: Callable[[], tuple[np.ndarray, np.ndarray]]
    offset: int = 0

    def of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, runs)`` of the case ids ``ids``, in that order."""
        values, start = self.load()
        first = start[self.offset + ids]
        runs = start[self.offset + ids + 1] - first
        offsets = np.arange(int(runs.sum())) - np.repeat(np.cumsum(runs) - runs, runs)
        return values[np.repeat(first, runs) + offsets], runs


@dataclass(frozen=True, slots=True)
class PairedInput:
    """One test: per case id, each side's mean and scored runs, and (for the stratified
    test, when a case has more than one run on a side) the scores run by run; the smallest
    change that matters (metric units, or ``relative_min_effect`` of the baseline's matched
    mean when that is larger: informational metrics such as durations) and the
    direction."""

    baseline_mean: np.ndarray
    baseline_runs: np.ndarray
    head_mean: np.ndarray
    head_runs: np.ndarray
    baseline_scores: RunScores | None = None
    head_scores: RunScores | None = None
    min_effect: float = 0.0
    relative_min_effect: float = 0.0
    higher_is_better: bool = True
    informational: bool = False


@dataclass(frozen=True, slots=True)
class CaseDrop:
    """An eval case its own runs prove worse (:mod:`.case_calls`): its case id, its means
    on each side and its change (metric units), its p-value, the worse family's level
    and the case's worse-side bound at it (None: out of reach)."""

    case: int
    baseline: float
    head: float
    delta: float
    p_worse: float
    level: float
    bound: float | None


@dataclass(frozen=True, slots=True)
class PairedResult:
    """One test's outcome: the interval (its ``delta`` over matched cases), the matched
    means of each side (None without matched cases), the min_effect used, and the eval
    cases its worse direction's case tests called (``case_drops``, largest drop first)."""

    interval: DeltaInterval
    baseline_mean: float | None
    head_mean: float | None
    min_effect: float
    case_drops: tuple[CaseDrop, ...] = ()


@dataclass(slots=True)
class _Prepared:
    paired: np.ndarray
    diffs: np.ndarray
    baseline_mean: float | None
    head_mean: float | None
    min_effect: float
    higher: bool
    informational: bool = False
    means: tuple[np.ndarray, np.ndarray] | None = None
    runs: tuple[int, int] = (1, 1)
    strata: Strata | None = None
    dist: FlipDistribution | None = None
    reason: str | None = None
    case_drops: list[CaseCallResult] = field(default_factory=list)


def paired_tests(
    inputs: list[PairedInput],
    order: np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[list[PairedResult], TestMethod]:
    """Tests every input as one family (module docstring).

    ``order`` lists the case ids in a canonical order (sorted case keys), so the sign
    patterns fall on the same cases whatever order the results were written in; one draw
    per distinct number of matched cases is shared by every test. Cost: one matrix
    product per block of patterns for all tests over the same cases (~0.1 s for 10,000
    cases x 10 tests x 2000 patterns).

    Raises:
        ValueError: ``n_resamples`` below 1 or ``alpha`` outside (0, 1).
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    prepared = [_prepare(one, order) for one in inputs]
    tables = SubsetTables()
    _distribute(prepared, seed, n_resamples, tables)
    gated, informational = (
        [p for p in prepared if p.dist is not None and p.informational == flag]
        for flag in (False, True)
    )
    within = [p for p in gated if p.strata is not None]
    case_inputs = [CaseInput(p.strata, p.higher, p.min_effect) for p in within if p.strata]
    # With case tests counted, the worse side's first stage is split in halves between
    # the mean tests and the case tests (analysis/case_calls.py).
    chosen = candidates(case_inputs, alpha / (1.0 + alpha) / 2)
    worse_alpha = _halved(alpha) if chosen else alpha
    case_ps = case_p_values(case_inputs, chosen, tables)
    case_level = two_stage_level(case_ps, worse_alpha) if chosen else None
    if case_level is not None:
        for call in case_calls(case_inputs, chosen, case_ps, case_level, tables):
            within[call.test].case_drops.append(call)
    method = TestMethod(
        alpha=alpha,
        seed=seed,
        n_resamples=n_resamples,
        tests=len(gated),
        case_tests=len(chosen),
        case_level=case_level,
        level_worse=_level(gated, _p_worse, worse_alpha),
        level_better=_level(gated, _p_better, alpha),
        informational_tests=len(informational),
        informational_level_worse=_level(informational, _p_worse, alpha),
        informational_level_better=_level(informational, _p_better, alpha),
    )
    results = [_result(p, method, tables) for p in prepared]
    return results, method


def _halved(alpha: float) -> float:
    """The ``alpha`` whose two-stage first stage is half ``alpha``'s: ``q' = q / 2`` with
    ``q = alpha / (1 + alpha)`` (:func:`.signflip.two_stage_level`)."""
    half = alpha / (1.0 + alpha) / 2.0
    return half / (1.0 - half)


def _level(
    family: list[_Prepared], p_value: Callable[[_Prepared], float], alpha: float
) -> float | None:
    """The two-stage corrected one-sided level of a family (None: no test in it)."""
    return two_stage_level([p_value(p) for p in family], alpha) if family else None


def _prepare(one: PairedInput, order: np.ndarray) -> _Prepared:
    paired = order[(one.baseline_runs[order] > 0) & (one.head_runs[order] > 0)]
    with np.errstate(over="ignore", invalid="ignore"):
        diffs = one.head_mean[paired] - one.baseline_mean[paired]
    base = exact_mean(one.baseline_mean[paired].tolist()) if paired.size else None
    head = exact_mean(one.head_mean[paired].tolist()) if paired.size else None
    effect = one.min_effect
    if base is not None and math.isfinite(base) and one.relative_min_effect:
        effect = max(effect, one.relative_min_effect * abs(base))
    out = _Prepared(paired, diffs, base, head, effect, one.higher_is_better, one.informational)
    out.means = (one.head_mean[paired], one.baseline_mean[paired])
    if paired.size:
        counts = np.concatenate([one.head_runs[paired], one.baseline_runs[paired]])
        out.runs = (int(counts.min()), int(counts.max()))
    out.strata = _strata(one, paired)
    if paired.size == 0:
        out.reason = NO_CASES_REASON
    elif not np.isfinite(diffs).all() or (
        out.strata is not None and not np.isfinite(out.strata.values).all()
    ):
        out.reason = TOO_LARGE_REASON
    elif out.strata is None and paired.size < 2 and bool(np.any(diffs != 0.0)):
        # A case that scored exactly the same on both sides gets [0, 0] as any number of
        # such cases does (every sign pattern gives 0: _result): one rule for a zero delta.
        out.reason = ONE_CASE_REASON
    return out


def _strata(one: PairedInput, paired: np.ndarray) -> Strata | None:
    """The matched cases' runs as strata when some case has more than one run on a side
    (and the runs were given); None: one run each, the sign-flip test's shape."""
    if one.baseline_scores is None or one.head_scores is None:
        return None
    if not 0 < paired.size <= WITHIN_CASES_UP_TO:
        return None
    if not (np.any(one.baseline_runs[paired] > 1) or np.any(one.head_runs[paired] > 1)):
        return None
    return strata(one.head_scores.of(paired), one.baseline_scores.of(paired))


def _moves(p: _Prepared) -> bool:
    """Whether any labelling changes the statistic: some case's scores differ."""
    if p.strata is None:
        return bool(np.any(p.diffs != 0.0))
    s = p.strata
    lows = np.minimum.reduceat(s.values, s.start[:-1])
    highs = np.maximum.reduceat(s.values, s.start[:-1])
    return bool(np.any(highs > lows))


def _distribute(
    prepared: list[_Prepared], seed: int, n_resamples: int, tables: SubsetTables
) -> None:
    """Sets ``dist`` of every test that can reject: one product per shared case set for
    the sign flip; for the stratified test, exact when it can be, else one draw per shape
    of cases and runs."""
    groups: dict[bytes, list[_Prepared]] = {}
    for p in prepared:
        if p.reason is None and _moves(p):
            key = p.paired.tobytes() + (b"" if p.strata is None else b"|" + p.strata.shape_key)
            groups.setdefault(key, []).append(p)
    flips: dict[int, SignFlips] = {}
    draws: dict[bytes, Drawn] = {}
    exact_up_to = max(0, n_resamples.bit_length() - 1)
    for members in groups.values():
        n = members[0].paired.size
        if members[0].strata is not None:
            _distribute_strata(members, tables, draws, exact_up_to, seed, n_resamples)
            continue
        if n not in flips:
            flips[n] = sign_flips(n, n_resamples=n_resamples, seed=seed)
        columns = np.column_stack([p.diffs for p in members])
        for p, dist in zip(members, flip_distributions(columns, flips[n]), strict=True):
            p.dist = dist


def _distribute_strata(
    members: list[_Prepared],
    tables: SubsetTables,
    draws: dict[bytes, Drawn],
    exact_up_to: int,
    seed: int,
    n_resamples: int,
) -> None:
    """The stratified test of tests over the same cases and runs: each exact when it has
    at most ``exact_up_to`` cases and few enough distinct points, the rest from one
    shared draw per shape of cases and runs."""
    drawn: list[tuple[_Prepared, Strata]] = []
    for p in members:
        assert p.strata is not None
        if p.strata.size <= exact_up_to:
            p.dist = exact_distribution(p.strata, exact_mean(p.diffs.tolist()), tables)
        if p.dist is None:
            drawn.append((p, p.strata))
    if not drawn:
        return
    first = drawn[0][1]
    if first.shape_key not in draws:
        draws[first.shape_key] = draw(first, n_resamples=n_resamples, seed=seed, tables=tables)
    dists = drawn_distributions(
        [s for _, s in drawn],
        [exact_mean(p.diffs.tolist()) for p, _ in drawn],
        draws[first.shape_key],
        tables,
    )
    for (p, _), dist in zip(drawn, dists, strict=True):
        p.dist = dist


def _p_worse(p: _Prepared) -> float:
    assert p.dist is not None
    if p.higher:
        return p.dist.p_less(-p.min_effect)
    return p.dist.p_greater(p.min_effect)


def _p_better(p: _Prepared) -> float:
    assert p.dist is not None
    if p.higher:
        return p.dist.p_greater(p.min_effect)
    return p.dist.p_less(-p.min_effect)


def _result(p: _Prepared, method: TestMethod, tables: SubsetTables) -> PairedResult:
    n = int(p.paired.size)
    confidence = 1.0 - method.alpha
    delta = exact_mean(p.diffs.tolist()) if n and p.reason != TOO_LARGE_REASON else 0.0
    if p.reason == TOO_LARGE_REASON:
        with np.errstate(over="ignore", invalid="ignore"):
            delta = float(np.mean(p.diffs))
    fields = {"delta": delta, "n_cases": n, "confidence": confidence, "seed": method.seed}
    if p.reason is not None:
        interval = DeltaInterval(low=None, high=None, n_resamples=0, reason=p.reason, **fields)
    elif p.dist is None:
        # Every matched case (one or more) scored exactly the same on both sides.
        interval = DeltaInterval(
            low=0.0, high=0.0, n_resamples=0, p_worse=1.0, p_better=1.0, exact=True, **fields
        )
    else:
        interval = _bounded(p, p.dist, method, fields)
    drops = _case_drops(p, method)
    advice = None if drops else _advice(p, interval, method, tables)
    if advice is not None:
        interval = interval.model_copy(update={"to_decide": advice})
    return PairedResult(interval, p.baseline_mean, p.head_mean, p.min_effect, drops)


def _case_drops(p: _Prepared, method: TestMethod) -> tuple[CaseDrop, ...]:
    """The eval cases of ``p`` its case tests called, largest drop first."""
    if not p.case_drops or p.means is None or method.case_level is None:
        return ()
    head, base = p.means
    drops = [
        CaseDrop(
            case=int(p.paired[c.position]),
            baseline=float(base[c.position]),
            head=float(head[c.position]),
            delta=c.delta,
            p_worse=c.p,
            level=method.case_level,
            bound=c.bound,
        )
        for c in p.case_drops
    ]
    return tuple(sorted(drops, key=lambda d: (d.delta if p.higher else -d.delta, d.case)))


def _bounded(
    p: _Prepared, dist: FlipDistribution, method: TestMethod, fields: dict[str, Any]
) -> DeltaInterval:
    """The interval of a test in the family: each end at its direction's corrected level."""
    worse, better = (
        (method.informational_level_worse, method.informational_level_better)
        if p.informational
        else (method.level_worse, method.level_better)
    )
    assert worse is not None and better is not None
    level_low, level_high = (better, worse) if p.higher else (worse, better)
    low, high = dist.lower(level_low), dist.upper(level_high)
    common = {
        "n_resamples": dist.total,
        "p_worse": _p_worse(p),
        "p_better": _p_better(p),
        "level_low": level_low,
        "level_high": level_high,
        "exact": dist.exact,
    }
    if not all(math.isfinite(end) for end in (low, high) if end is not None):
        return DeltaInterval(low=None, high=None, reason=TOO_LARGE_REASON, **common, **fields)
    sample = {
        "sample": sample_text(int(p.paired.size), p.runs),
        "verb": "is" if p.paired.size == 1 else "are",
        "total": dist.total,
        "p_min": dist.p_min,
    }
    if low is None and high is None:
        reason = TOO_FEW_REASON.format(**sample)
        return DeltaInterval(low=None, high=None, reason=reason, **common, **fields)
    if low is None or high is None:
        # One side reaches its level, the other not (the correction leaves the sides
        # different levels): the end there is still a corrected bound, and decides its side.
        missing_low = low is None
        word = "gain" if missing_low == p.higher else "drop"
        level = level_low if missing_low else level_high
        reason = ONE_SIDED_REASON.format(word=word, level=level, **sample)
        return DeltaInterval(low=low, high=high, reason=reason, **common, **fields)
    return DeltaInterval(low=low, high=high, **common, **fields)


def _advice(
    p: _Prepared, interval: DeltaInterval, method: TestMethod, tables: SubsetTables
) -> str | None:
    """What sample would decide a gated change the test left ❔ inconclusive: for a change
    beyond ``min_effect``, one of its size called (:func:`.sample.to_decide`); for one
    within it, its interval brought within ``±min_effect`` (⚪ unchanged; with a
    ``min_effect`` of 0 no sample does, and the sentence says what would); when no sample
    within the limits would, how far off it is (:func:`.sample.out_of_reach`). None for
    any other change (called, informational, or without matched cases)."""
    if p.informational or p.means is None or p.reason == NO_CASES_REASON:
        return None
    call = classify(interval, interval.delta, min_effect=p.min_effect, higher_is_better=p.higher)
    if call != "inconclusive":
        return None
    if p.reason == TOO_LARGE_REASON:
        return "no sample would: the scores are too large to compute with (check its values)"
    goodness = interval.delta if p.higher else -interval.delta
    if abs(goodness) > p.min_effect:
        worse = goodness < 0
        level = _side_level(method, worse)
        value = interval.p_worse if worse else interval.p_better
        less = worse == p.higher
        word = "drop" if worse else "gain"
        theta = -p.min_effect if less else p.min_effect
        undecided = _undecided(p, method, (less, theta, level, value), word)
        return to_decide(undecided, tables) or out_of_reach(undecided)
    if p.min_effect == 0.0:
        return (
            f"a change this small ({interval.delta:+.3g}) is never called ⚪ unchanged with "
            "min_effect 0: set gate.min_effect to the smallest change worth a call"
        )
    # Within min_effect: each end beyond ±min_effect (or missing) must come within it; the
    # side further from its level is named.
    sides: list[tuple[bool, float, float, float | None]] = []
    if interval.low is None or interval.low < -p.min_effect:
        value = p.dist.p_greater(-p.min_effect) if p.dist is not None else None
        sides.append((False, -p.min_effect, _side_level(method, not p.higher), value))
    if interval.high is None or interval.high > p.min_effect:
        value = p.dist.p_less(p.min_effect) if p.dist is not None else None
        sides.append((True, p.min_effect, _side_level(method, p.higher), value))
    side = max(sides, key=lambda one: 0.5 if one[3] is None else one[3] / one[2])
    undecided = _undecided(
        p, method, side, "change", goal=f"that this change is within ±{p.min_effect:.3g}"
    )
    return to_decide(undecided, tables) or out_of_reach(undecided)


def _side_level(method: TestMethod, worse: bool) -> float:
    """The corrected level of the worse (or better) side of the gated family; alone outside
    the family (no test in it), that of a family of one more test."""
    level = method.level_worse if worse else method.level_better
    if level is None:
        level = method.alpha / (1.0 + method.alpha) / (method.tests + 1)
    return level


def _undecided(
    p: _Prepared,
    method: TestMethod,
    side: tuple[bool, float, float, float | None],
    word: str,
    goal: str = "",
) -> Undecided:
    """One undecided side of a test: ``side`` is (below the null value or above it, the
    null value in metric units, the level that side needs, its p-value or None)."""
    less, theta, level, value = side
    one_run = p.strata is None and p.paired.size <= method.within_cases_up_to
    return Undecided(
        strata=strata(*[(m, np.ones(m.size, dtype=np.int64)) for m in p.means])
        if one_run and p.means is not None
        else p.strata,
        diffs=p.diffs,
        theta=theta,
        less=less,
        level=level,
        p=0.5 if value is None else value,
        p_min=p.dist.p_min if p.dist is not None else 0.5,
        seed=method.seed,
        n_resamples=method.n_resamples,
        exact_up_to=method.exact_up_to,
        word=word,
        goal=goal,
    )

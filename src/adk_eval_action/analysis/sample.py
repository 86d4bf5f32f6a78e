"""What sample a test has, and what sample would decide a change it left undecided.

**An undecided change.** A change beyond ``min_effect`` that the corrected test did not
call (❔ inconclusive) gets a sentence on what would decide one of its size, computed from
the test itself: with the eval cases' results taken as they are (each case keeping the
share of its runs at each score: a case's runs are stretched to ``r`` runs a side by
their quantiles, so 2 of 3 runs passing becomes 3 of 5), the smallest number of runs per
case, up to :data:`MAX_RUNS`, whose test reaches the level the correction left; where no
such count does (or the test is over whole cases, beyond
:data:`~adk_eval_action.analysis.paired.WITHIN_CASES_UP_TO` matched cases), how many times
the eval cases would, by the normal approximation of the test (its z-score grows with the
square root of the number of cases). A projected test is computed exactly where it can be
(up to :attr:`~adk_eval_action.analysis.paired.TestMethod.exact_up_to` cases), else by
the normal approximation of its permutation distribution. Both are "if the results hold",
never a promise: another sample of the same agent moves them.

**A planned sample** (``plan``): before any run, what ``n`` eval cases × ``r`` runs a side
can call at a family of ``tests`` tests: the smallest p-value their labellings allow, and
whether one case collapsing from all-pass to all-fail (the others steady) would be called.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from adk_eval_action.analysis.stratified import (
    MAX_SUBSETS,
    Strata,
    SubsetTables,
    exact_distribution,
    positions,
)

MAX_RUNS = 8
"""The most runs per case a suggestion names (C(16, 8) labellings per case still fit the
test's tables; more runs than that are rarely the cheaper way)."""
MAX_CASES_FACTOR = 20
"""The most "times the eval cases" a suggestion names."""
_HOPELESS = 20.0
#: Below this natural logarithm a float underflows to 0.0 (the smallest subnormal is
#: about e^-744.4).
_SMALLEST_EXPONENT = -745.0
#: Integers of at most this many bits convert to a float (the largest is about 2^1024).
_FLOAT_BITS = 1023


def sample_text(cases: int, runs: tuple[int, int]) -> str:
    """``4 paired cases x 3 runs a side`` (``runs``: fewest and most runs of any case on
    either side, ``2-5 runs`` when they differ)."""
    low, high = runs
    count = f"{low}" if low == high else f"{low}-{high}"
    return (
        f"{cases} paired case{'s' if cases != 1 else ''} x {count} "
        f"run{'s' if high != 1 else ''} a side"
    )


def projected(s: Strata, runs: int) -> Strata:
    """``s`` with each side of each case stretched (or shrunk) to ``runs`` scores: the
    side's sorted scores at the quantiles ``(j + 0.5) / runs``."""
    layout = np.empty((s.size, 2, runs))
    case = np.arange(s.size)
    for side, (first, count) in enumerate(
        ((s.start[:-1], s.head_runs), (s.start[:-1] + s.head_runs, s.base_runs))
    ):
        scores = s.values[positions(first, count)]
        ordered = scores[np.lexsort((scores, np.repeat(case, count)))]
        offsets = np.cumsum(count) - count
        steps = np.floor((np.arange(runs) + 0.5)[None, :] * count[:, None] / runs)
        layout[:, side, :] = ordered[offsets[:, None] + steps.astype(np.int64)]
    full = np.full(s.size, runs, dtype=np.int64)
    start = np.arange(s.size + 1, dtype=np.int64) * 2 * runs
    return Strata(head_runs=full, base_runs=full.copy(), values=layout.ravel(), start=start)


@dataclass(frozen=True, slots=True)
class Undecided:
    """One undecided change: its cases (as strata, or the per-case differences of a test
    over whole cases), the null value ``theta`` its direction is tested at and whether
    that direction is below it (``less``), the level the correction left that direction,
    the test's p-value there and smallest possible p-value, and the draws' settings;
    ``word`` names the change (``drop``), ``goal`` what deciding it shows (default: "a
    drop this size")."""

    strata: Strata | None
    diffs: np.ndarray
    theta: float
    less: bool
    level: float
    p: float
    p_min: float
    seed: int
    n_resamples: int
    exact_up_to: int
    word: str
    goal: str = ""

    @property
    def aim(self) -> str:
        """What deciding it would show: ``a drop this size`` unless ``goal`` says."""
        return self.goal or f"a {self.word} this size"


def to_decide(u: Undecided, tables: SubsetTables | None = None) -> str | None:
    """The sentence on what would decide ``u`` (module docstring); None when no sample
    within the limits would. ``tables``: the comparison's labelling tables, to share."""
    tables = tables if tables is not None else SubsetTables()
    need = f"a call needs p ≤ {u.level:.3g}"
    if u.strata is not None:
        runs = int(max(u.strata.head_runs.max(), u.strata.base_runs.max()))
        found = _runs_to_decide(u, runs, tables)
        if found is not None:
            now = f"with {runs} the smallest possible p is {u.p_min:.3g}"
            if u.p_min <= u.level:
                now += f" and this {u.word}'s is {u.p:.3g}"
            return f"{found} runs per case would decide {u.aim}; {now} ({need})"
    factor = _cases_factor(u)
    if factor is None:
        return None
    cases = u.diffs.size
    return (
        f"about {factor}× the eval cases ({factor * cases}) would decide {u.aim}; "
        f"with {cases} this {u.word}'s p is {u.p:.3g} ({need})"
    )


def out_of_reach(u: Undecided) -> str:
    """The sentence for a change no sample within the limits decides (:func:`to_decide`
    gave None): the normal approximation's number of times the eval cases, past
    :data:`MAX_CASES_FACTOR`, or, where the change does not point the way it would have
    to, that more of the same results would not decide it."""
    need = f"a call needs p ≤ {u.level:.3g}"
    factor = _cases_factor(u, cap=False)
    if factor is None:
        return (
            f"no number of runs or cases would decide {u.aim} as the results stand: "
            f"this {u.word}'s p is {u.p:.3g} ({need})"
        )
    return (
        f"no sample within {MAX_RUNS} runs per case or {MAX_CASES_FACTOR}× the eval cases "
        f"would decide {u.aim} (about {factor}× the eval cases would): it is small against "
        f"the runs' noise; this {u.word}'s p is {u.p:.3g} ({need})"
    )


def _runs_to_decide(u: Undecided, runs: int, tables: SubsetTables) -> int | None:
    """The fewest runs per case in ``runs + 1 .. MAX_RUNS`` whose projected test rejects
    (a bisection: more runs of the same results never raise the p-value much), or None.
    A change whose normal approximation at :data:`MAX_RUNS` is far from the level
    (:data:`_HOPELESS` times it) is not computed exactly."""
    assert u.strata is not None
    low, high = runs + 1, MAX_RUNS
    if low > high or _normal_p(u, projected(u.strata, high)) > _HOPELESS * u.level:
        return None
    if not _decides(u, u.strata, high, tables):
        return None
    while low < high:
        middle = (low + high) // 2
        if _decides(u, u.strata, middle, tables):
            high = middle
        else:
            low = middle + 1
    return low


def _normal_p(u: Undecided, s: Strata) -> float:
    """The normal approximation of the stratified test's p-value of ``s`` in ``u``'s
    direction (the statistic's permutation mean is 0, its variance
    :func:`_permutation_variance`)."""
    spread = math.sqrt(_permutation_variance(s, u.theta))
    centred = float(np.sum(s.diffs() - u.theta))
    z = (-centred if u.less else centred) / spread if spread > 0 else 0.0
    return NormalDist().cdf(-z)


def _decides(u: Undecided, s: Strata, runs: int, tables: SubsetTables) -> bool:
    """Whether the test of ``s`` projected to ``runs`` runs a side rejects at ``u.level``:
    exactly with at most ``u.exact_up_to`` cases, else by :func:`_normal_p`, never below
    the smallest possible p."""
    if math.comb(2 * runs, runs) > MAX_SUBSETS:
        return False
    p = projected(s, runs)
    dist = None
    if p.size <= u.exact_up_to:
        dist = exact_distribution(p, float(np.mean(p.diffs())), tables)
    if dist is not None:
        value = dist.p_less(u.theta) if u.less else dist.p_greater(u.theta)
        return bool(value <= u.level)
    floor = max(math.comb(2 * runs, runs) ** -float(p.size), 1.0 / (u.n_resamples + 1))
    return bool(max(_normal_p(u, p), floor) <= u.level)


def _cases_factor(u: Undecided, *, cap: bool = True) -> int | None:
    """How many times the eval cases the normal approximation of the test needs to reject
    at ``u.level`` with every case repeated as it is (at least 2); None beyond
    :data:`MAX_CASES_FACTOR` (with ``cap``) or when the change does not point that way."""
    if u.strata is not None:
        centred = float(np.sum(u.strata.diffs() - u.theta))
        spread = math.sqrt(_permutation_variance(u.strata, u.theta))
    else:
        shifted = u.diffs - u.theta
        centred, spread = float(shifted.sum()), float(np.sqrt(np.sum(shifted**2)))
    z = centred / spread if spread > 0 else 0.0
    z = -z if u.less else z
    if not (math.isfinite(z) and z > 0.0):
        return None
    ratio = (NormalDist().inv_cdf(1.0 - u.level) / z) ** 2
    if not cap:
        return max(2, math.ceil(ratio)) if ratio < 1e9 else None
    factor = math.ceil(ratio)
    return factor if 2 <= factor <= MAX_CASES_FACTOR else None


def _permutation_variance(s: Strata, theta: float) -> float:
    """The variance of the stratified statistic's sum over random labellings, with
    ``theta`` taken off the head scores: per case ``σ² L / (L − 1) (1/m + 1/n)``, ``σ²``
    the variance of its ``L = m + n`` pooled scores."""
    z = s.values.copy()
    z[positions(s.start[:-1], s.head_runs)] -= theta
    size = s.head_runs + s.base_runs
    mean = np.add.reduceat(z, s.start[:-1]) / size
    spread = np.add.reduceat((z - np.repeat(mean, size)) ** 2, s.start[:-1]) / size
    weight = np.where(size > 1, size / np.maximum(size - 1, 1), 0.0)
    return float(np.sum(spread * weight * (1.0 / s.head_runs + 1.0 / s.base_runs)))


@dataclass(frozen=True, slots=True)
class Detectable:
    """What ``cases`` eval cases x ``runs`` runs a side can call in a family of ``tests``:
    ``p_min`` the smallest p-value possible; ``level`` the level a lone drop must reach
    (Benjamini-Hochberg's first rank of the correction's first stage); ``collapse_p`` the
    p-value of one case collapsing from all-pass to all-fail, the others steady, and
    ``collapse_runs`` the fewest runs a side that call it (None: more than
    :data:`MAX_RUNS`)."""

    cases: int
    runs: int
    tests: int
    p_min: float
    level: float
    collapse_p: float
    collapse_runs: int | None

    @property
    def line(self) -> str:
        """``plan``'s sentence."""
        called = self.collapse_p <= self.level
        collapse = (
            f"one case collapsing from all-pass to all-fail would be called "
            f"({_p_equals(self.collapse_p)})"
            if called
            else f"one case collapsing from all-pass to all-fail would not be called "
            f"({_p_equals(self.collapse_p)})"
            + (f"; {self.collapse_runs} runs would call it" if self.collapse_runs else "")
        )
        return (
            f"{sample_text(self.cases, (self.runs, self.runs))}: the smallest possible p is "
            f"{_p_text(self.p_min)}; a call needs p ≤ {self.level:.3g} with the run's "
            f"{self.tests} gated test{'s' if self.tests != 1 else ''} (every suite's; more "
            f"with rubrics); {collapse}"
        )


def _p_text(p: float) -> str:
    """``p`` as ``.3g``; one that underflowed to 0.0 (:func:`_power_of_inverse`) as
    ``below 1e-300``, never a p-value of 0."""
    return f"{p:.3g}" if p > 0.0 else "below 1e-300"


def _p_equals(p: float) -> str:
    """``p = 0.0952``, or ``p < 1e-300`` for one that underflowed."""
    return f"p = {p:.3g}" if p > 0.0 else "p < 1e-300"


def _power_of_inverse(count: int, power: int) -> float:
    """``count ** -power`` as a float, 0.0 where it underflows. ``C(2r, r)`` at the
    largest ``--num-runs`` (1000) has 600 digits, past any float (``float()`` of it raised
    OverflowError): such a count is taken in logarithms (``math.log`` reads integers of
    any size); a smaller one exactly as before, since the result is compared with a level
    it may equal."""
    if count.bit_length() <= _FLOAT_BITS:
        return 1.0 / count if power == 1 else float(count) ** -power
    exponent = -power * math.log(count)
    return math.exp(exponent) if exponent > _SMALLEST_EXPONENT else 0.0


def detectable(
    cases: int, runs: int, tests: int, *, alpha: float, n_resamples: int, within_cases_up_to: int
) -> Detectable:
    """What a planned sample can call (module docstring). A collapse of one case in a
    steady suite is the one labelling of ``C(2r, r)`` that puts every failing run on the
    head (``1/2`` over whole cases, beyond ``within_cases_up_to`` cases); with more cases
    than are enumerated (``2**cases > n_resamples``), no p-value is below ``1 /
    (n_resamples + 1)``."""
    level = alpha / (1.0 + alpha) / max(1, tests)
    within = cases <= within_cases_up_to
    per_case = math.comb(2 * runs, runs) if within else 2
    floor = 1.0 / (n_resamples + 1) if cases > max(0, n_resamples.bit_length() - 1) else 0.0
    p_min = max(_power_of_inverse(per_case, cases), floor) if cases else 1.0
    collapse_p = max(_power_of_inverse(per_case, 1), floor) if cases else 1.0
    collapse_runs = next(
        (r for r in range(1, MAX_RUNS + 1) if 1.0 / math.comb(2 * r, r) <= level), None
    )
    return Detectable(
        cases=cases,
        runs=runs,
        tests=tests,
        p_min=p_min,
        level=level,
        collapse_p=collapse_p,
        collapse_runs=collapse_runs if within and cases else None,
    )


@dataclass(frozen=True, slots=True)
class SuiteSample:
    """One suite's planned sample: its ``cases`` eval cases (over all its eval sets), the
    ``runs`` of each, and its ``gated`` metrics (ADK's efficiency metrics are not)."""

    name: str
    cases: int
    runs: int
    gated: int


def suites_detectable(
    suites: list[SuiteSample], *, alpha: float, n_resamples: int, within_cases_up_to: int
) -> dict[str, Detectable]:
    """What each suite with a case and a gated metric can call (:func:`detectable`), in
    one family of every suite's gated metrics, as ``compare`` tests them: what ``plan``
    prints and what ``init`` writes beside ``num_runs``."""
    tests = sum(s.gated for s in suites)
    return {
        s.name: detectable(
            s.cases, s.runs, tests, alpha=alpha, n_resamples=n_resamples,
            within_cases_up_to=within_cases_up_to,
        )
        for s in suites
        if s.cases and s.gated
    }


def runs_to_call_collapse(
    suites: list[SuiteSample], *, alpha: float, n_resamples: int, within_cases_up_to: int
) -> int | None:
    """The fewest runs a side with which every suite's test within cases calls one eval
    case collapsing from all-pass to all-fail (:attr:`Detectable.collapse_runs`, the same
    for every suite of one run: the family is the run's); None when no suite is tested
    within cases or :data:`MAX_RUNS` runs are too few for the family."""
    found = suites_detectable(
        suites, alpha=alpha, n_resamples=n_resamples, within_cases_up_to=within_cases_up_to
    )
    runs = [d.collapse_runs for d in found.values() if d.collapse_runs is not None]
    return max(runs) if runs else None

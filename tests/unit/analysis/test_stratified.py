"""The stratified permutation test (runs exchanged within eval cases), its bounds and its
draws, against independent computations: an enumeration of every joint labelling written
from the definition (tests/permutation_oracle.py) and scipy.stats.permutation_test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from adk_eval_action.analysis.signflip import flip_distributions, sign_flips
from adk_eval_action.analysis.stratified import (
    Strata,
    SubsetTables,
    draw,
    drawn_distributions,
    exact_distribution,
    strata,
)
from conftest import examples
from support.permutation_oracle import Case, enumerated_p, smallest_p


def make(cases: list[Case]) -> Strata:
    head = np.array([x for h, _ in cases for x in h], dtype=float)
    base = np.array([x for _, b in cases for x in b], dtype=float)
    return strata((head, np.array([len(h) for h, _ in cases])),
                  (base, np.array([len(b) for _, b in cases])))


def exact(cases: list[Case]):
    s = make(cases)
    dist = exact_distribution(s, float(s.diffs().mean()))
    assert dist is not None
    return dist


def drawn(cases: list[Case], n_resamples: int, seed: int = 0):
    s, tables = make(cases), SubsetTables()
    labellings = draw(s, n_resamples=n_resamples, seed=seed, tables=tables)
    return drawn_distributions([s], [float(s.diffs().mean())], labellings, tables)[0]


# One case collapsing from all-pass to all-fail over 5 runs per side, two that do not move;
# a case with unequal runs (an adaptive head); a case of continuous scores.
COLLAPSE: list[Case] = [([0] * 5, [1] * 5), ([1] * 5, [1] * 5), ([1] * 5, [1] * 5)]
MIXED: list[Case] = [
    ([0.0, 1.0, 0.0, 0.0], [1.0, 1.0]),
    ([1.0], [0.0, 1.0, 1.0]),
    ([0.2, 0.9], [0.7, 0.75]),
]


def test_a_collapse_of_one_case_in_three_has_p_one_in_252() -> None:
    dist = exact(COLLAPSE)
    assert dist.exact and dist.total == 252**3
    assert dist.p_less(0.0) == pytest.approx(1 / 252) == pytest.approx(
        enumerated_p(COLLAPSE[:1], 0.0, less=True)
    )
    assert dist.p_greater(0.0) == 1.0
    assert dist.delta == pytest.approx(-1 / 3)


@pytest.mark.parametrize("theta", [0.0, -0.1, 0.15, -1 / 3, -0.5])
def test_exact_p_values_equal_the_enumeration(theta: float) -> None:
    dist = exact(MIXED)
    for less, p in ((True, dist.p_less(theta)), (False, dist.p_greater(theta))):
        assert p == pytest.approx(enumerated_p(MIXED, theta, less=less), abs=1e-12)
    assert dist.p_min == pytest.approx(smallest_p(MIXED))


lattice = st.integers(-6, 6).map(lambda k: k / 6)
runs = st.lists(lattice, min_size=1, max_size=3)
small_cases = st.lists(st.tuples(runs, runs), min_size=1, max_size=3)


@given(small_cases, st.sampled_from([0.0, -1 / 6, 1 / 3, -0.25, 0.1]))
@settings(max_examples=examples(60), deadline=None)
def test_exact_p_values_equal_the_enumeration_on_lattice_scores(
    cases: list[Case], theta: float
) -> None:
    """Scores on a lattice of sixths tie often: ties count against the observed labelling,
    as the enumeration counts them."""
    s = make(cases)
    dist = exact_distribution(s, float(s.diffs().mean()))
    assert dist is not None
    assert dist.p_less(theta) == pytest.approx(enumerated_p(cases, theta, less=True), abs=1e-9)
    assert dist.p_greater(theta) == pytest.approx(enumerated_p(cases, theta, less=False), abs=1e-9)


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_one_case_equals_scipy_permutation_test(alternative: str) -> None:
    """One eval case is a two-sample permutation test of the difference in means, which
    scipy enumerates exactly (C(9, 4) = 126 labellings)."""
    head, base = [0.3, 0.1, 0.45, 0.2], [0.5, 0.35, 0.6, 0.4, 0.3]
    result = stats.permutation_test(
        (head, base),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        alternative=alternative,
        n_resamples=10**6,
    )
    dist = exact([(head, base)])
    p = dist.p_less(0.0) if alternative == "less" else dist.p_greater(0.0)
    assert p == pytest.approx(result.pvalue, abs=1e-12)


def test_one_run_per_side_is_the_sign_flip() -> None:
    """With one run on each side a case has two labellings, the observed one and the swap:
    the stratified distribution is the sign flip's, bound for bound."""
    cases: list[Case] = [([0.2], [0.9]), ([0.5], [0.4]), ([0.1], [0.7]), ([1.0], [1.0])]
    ours = exact(cases)
    diffs = np.array([h[0] - b[0] for h, b in cases])
    flips = flip_distributions(diffs[:, None], sign_flips(4, n_resamples=2000, seed=0))[0]
    for theta in (-0.6, -0.3, 0.0, 0.2):
        assert ours.p_less(theta) == pytest.approx(flips.p_less(theta))
        assert ours.p_greater(theta) == pytest.approx(flips.p_greater(theta))
    for alpha in (0.1, 0.2, 0.4):  # equal up to the tie tolerances (a billionth)
        assert ours.upper(alpha) == pytest.approx(flips.upper(alpha), abs=1e-8)
        assert ours.lower(alpha) == pytest.approx(flips.lower(alpha), abs=1e-8)


@given(small_cases, st.sampled_from([0.01, 0.05, 0.1, 0.3]), st.floats(-1, 1, allow_nan=False))
@settings(max_examples=examples(80), deadline=None)
def test_exact_bounds_are_the_inverted_test(cases: list[Case], alpha: float, theta: float) -> None:
    """A bound beyond theta <=> the test rejects at theta (one statement, never two)."""
    dist = exact(cases)
    upper, lower = dist.upper(alpha), dist.lower(alpha)
    assert (dist.p_less(theta) <= alpha) == (upper is not None and theta > upper)
    assert (dist.p_greater(theta) <= alpha) == (lower is not None and theta < lower)


def test_drawn_bounds_are_the_inverted_test() -> None:
    dist = drawn(MIXED * 4, n_resamples=999)
    assert not dist.exact and dist.total == 1000
    for alpha in (0.01, 0.05, 0.2):
        upper, lower = dist.upper(alpha), dist.lower(alpha)
        for theta in np.linspace(-1, 1, 81):
            assert (dist.p_less(theta) <= alpha) == (upper is not None and theta > upper)
            assert (dist.p_greater(theta) <= alpha) == (lower is not None and theta < lower)


@pytest.mark.parametrize("theta", [0.0, -0.2, 0.1])
def test_drawn_p_values_agree_with_the_enumeration(theta: float) -> None:
    """20,000 drawn labellings estimate the exact p-value within their Monte-Carlo error
    (4.5 standard errors: a false failure once in ~150,000 runs of this test)."""
    n = 20_000
    dist = drawn(MIXED, n_resamples=n, seed=3)
    for less, p in ((True, dist.p_less(theta)), (False, dist.p_greater(theta))):
        truth = enumerated_p(MIXED, theta, less=less)
        assert abs(p - truth) <= 4.5 * math.sqrt(truth * (1 - truth) / n) + 2 / n


def test_draws_repeat_with_the_seed_and_count_the_observed_labelling() -> None:
    a, b, c = (drawn(MIXED * 5, 500, seed) for seed in (4, 4, 5))
    assert np.array_equal(a.high, b.high) and not np.array_equal(a.high, c.high)
    # p is never below 1 / (draws + 1): the observed labelling is counted too.
    big = drawn([([0.0] * 3, [1.0] * 3)] * 12, 500)
    assert big.p_less(0.0) == pytest.approx(1 / 501)


def test_nine_runs_a_side_exact_and_drawn() -> None:
    """9 runs a side: C(18, 9) = 48,620 labellings, more than the draws' table holds (they
    are drawn by sorting random keys); pass/fail scores tie, so the exact distribution
    stays small."""
    cases: list[Case] = [([0.0] * 9, [1.0] * 9), ([1.0] * 9, [1.0] * 9)]
    s = make(cases)
    assert exact_distribution(s, 0.0).p_less(0.0) == pytest.approx(1 / 48_620)
    dist = drawn(cases, n_resamples=2000)
    # A draw as extreme as the collapse has chance 1 / 48,620: none of these 2000 is.
    assert dist.p_less(0.0) == pytest.approx(1 / 2001)
    assert dist.p_greater(0.0) == 1.0


def test_scores_near_the_float_limit_stay_finite() -> None:
    big = 1.5e308
    dist = exact([([big, big], [big / 2, big / 2]), ([big, -big / 4], [big, -big / 4])])
    assert dist.delta == pytest.approx(big / 4)
    assert dist.p_greater(0.0) == pytest.approx(enumerated_p_scaled())
    assert dist.upper(0.4) is not None and math.isfinite(dist.upper(0.4))


def enumerated_p_scaled() -> float:
    """The same cases scaled down (a permutation p-value does not depend on the unit)."""
    return enumerated_p([([1, 1], [0.5, 0.5]), ([1, -0.25], [1, -0.25])], 0.0, less=False)

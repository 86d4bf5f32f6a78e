"""The sign-flip test, its bounds and the corrections, against independent computations:
an exact enumeration written here, scipy.stats.permutation_test, and
scipy.stats.false_discovery_control."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from adk_eval_action.analysis.signflip import (
    benjamini_hochberg,
    flip_distributions,
    sign_flips,
    two_stage_level,
)

DIFFS = np.array([-0.5, -1 / 3, 0.0, -2 / 3, 1 / 3, -1 / 3, 0.0, -1.0, 1 / 3])


def enumerated_p(diffs: np.ndarray, theta: float, less: bool) -> float:
    """The exact sign-flip p-value by brute force, ties counted (what the test claims)."""
    shifted = diffs - theta
    observed = shifted.mean()
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        flipped = (np.array(signs) * shifted).mean()
        hits += flipped <= observed + 1e-12 if less else flipped >= observed - 1e-12
    return hits / 2 ** len(diffs)


def distribution(diffs: np.ndarray, n_resamples: int = 2000, seed: int = 0):
    flips = sign_flips(len(diffs), n_resamples=n_resamples, seed=seed)
    return flip_distributions(np.asarray(diffs, dtype=float)[:, None], flips)[0]


@pytest.mark.parametrize("theta", [0.0, -0.1, 0.1, -0.25])
def test_exact_p_values_equal_the_enumeration(theta: float) -> None:
    dist = distribution(DIFFS)  # 2**9 = 512 <= 2000: every sign vector
    assert dist.p_less(theta) == pytest.approx(enumerated_p(DIFFS, theta, less=True), abs=1e-12)
    assert dist.p_greater(theta) == pytest.approx(enumerated_p(DIFFS, theta, less=False), abs=1e-12)


def test_exact_p_value_equals_scipy_permutation_test() -> None:
    result = stats.permutation_test(
        (DIFFS,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        alternative="less",
        n_resamples=10**6,  # more than 2**9: scipy enumerates too
    )
    assert distribution(DIFFS).p_less(0.0) == pytest.approx(result.pvalue, abs=1e-12)


def test_random_vectors_count_the_observed_one() -> None:
    """Above 2**n > n_resamples the vectors are drawn; p = (1 + hits) / (1 + R)."""
    rng = np.random.default_rng(7)
    diffs = rng.normal(-0.2, 0.5, 40)
    flips = sign_flips(40, n_resamples=999, seed=3)
    assert not flips.exact and flips.total == 1000
    flipped = (flips.signs.astype(float) @ diffs) / 40
    hits = int((flipped <= diffs.mean() + 1e-12).sum())
    dist = flip_distributions(diffs[:, None], flips)[0]
    assert dist.p_less(0.0) == pytest.approx((1 + hits) / 1000)


def test_ties_from_zero_differences_are_counted() -> None:
    """Flipping a zero difference gives the observed mean again, whatever rounding
    says: with zeros the smallest p-value is not reached."""
    diffs = np.array([-1 / 3, -2 / 3, 0.0, -1 / 3, -1 / 3, -1.0, -1 / 3, -2 / 3])
    assert distribution(diffs).p_less(0.0) == pytest.approx(2 / 256)


@given(
    st.lists(
        st.floats(-1, 1, allow_nan=False).map(lambda x: round(x * 6) / 6),
        min_size=2,
        max_size=9,
    ),
    st.sampled_from([0.01, 0.05, 0.1, 0.2]),
    st.floats(-0.6, 0.6, allow_nan=False),
)
@settings(max_examples=80, deadline=None)
def test_bounds_are_the_inverted_test(diffs: list[float], alpha: float, theta: float) -> None:
    """A bound beyond theta <=> the test rejects at theta (one statement, never two)."""
    dist = distribution(np.array(diffs))
    upper, lower = dist.upper(alpha), dist.lower(alpha)
    rejects_less = dist.p_less(theta) <= alpha
    rejects_greater = dist.p_greater(theta) <= alpha
    assert rejects_less == (upper is not None and theta > upper)
    assert rejects_greater == (lower is not None and theta < lower)


def test_identical_sides_are_never_significant() -> None:
    dist = distribution(np.zeros(30))
    assert dist.delta == 0.0
    assert dist.p_less(0.0) == 1.0 and dist.p_greater(0.0) == 1.0
    assert dist.upper(0.05) == 0.0 and dist.lower(0.05) == 0.0


def test_seeded_draws_repeat() -> None:
    a = sign_flips(50, n_resamples=500, seed=11).signs
    assert np.array_equal(a, sign_flips(50, n_resamples=500, seed=11).signs)
    assert not np.array_equal(a, sign_flips(50, n_resamples=500, seed=12).signs)


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30))
@settings(max_examples=100, deadline=None)
def test_benjamini_hochberg_rejects_what_scipy_adjusts_below_alpha(p: list[float]) -> None:
    level = benjamini_hochberg(p, 0.05)
    ours = [x <= level * (1 + 1e-9) for x in p]
    adjusted = stats.false_discovery_control(p, method="bh")
    assert ours == [a <= 0.05 * (1 + 1e-9) for a in adjusted]


def test_two_stage_level_by_hand() -> None:
    """Benjamini, Krieger & Yekutieli's definition 6 applied by hand (q = 0.05 / 1.05)."""
    q = 0.05 / 1.05
    p = [0.001, 0.004, 0.019, 0.03, 0.2, 0.5]
    # Stage one, BH at q: 0.001 <= q/6, 0.004 <= 2q/6, 0.019 > 3q/6 = 0.0238? no: <=.
    # Ranks 1-3 pass (0.019 <= 0.0238), rank 4: 0.03 > 4q/6 = 0.0317? no: 0.03 <= 0.0317.
    assert [x <= k * q / 6 for k, x in enumerate(p, 1)] == [True] * 4 + [False] * 2
    # r = 4 of 6: stage two at q * 6 / 2 = 3q; 0.2 > 5 * 3q / 6, so k = 4.
    assert two_stage_level(p, 0.05) == pytest.approx(4 * (3 * q) / 6)
    assert two_stage_level([0.5, 0.9], 0.05) == pytest.approx(q / 2)  # nothing rejected
    assert two_stage_level([0.001, 0.002], 0.05) == pytest.approx(q)  # all rejected

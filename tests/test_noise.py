"""Property and example tests for :mod:`adk_eval_action.analysis.noise`."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from adk_eval_action.analysis.noise import (
    NO_CASES_REASON,
    ONE_CASE_REASON,
    ONE_RUN_REASON,
    DeltaInterval,
    bootstrap_counts,
    classify,
    flaky_cases,
    paired_bootstrap,
    regression_fails,
)

Key = tuple[str, str, str]
Scores = dict[Key, list[float]]

# Few resamples keep hypothesis fast; the properties hold for any count.
FAST = 200
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

score = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
runs = st.lists(score, min_size=1, max_size=4)
case_key = st.tuples(
    st.sampled_from(["suite_a", "suite_b"]),
    st.sampled_from(["set1", "set2"]),
    st.text(alphabet="abcdef0123456789", min_size=1, max_size=6),
)
score_maps = st.dictionaries(case_key, runs, min_size=0, max_size=25)
effects = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
bounds = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False)


def _interval(low: float, high: float, delta: float | None = None) -> DeltaInterval:
    """A hand-made interval for rule tests (delta defaults to the midpoint)."""
    mid = (low + high) / 2 if delta is None else delta
    return DeltaInterval(
        delta=mid, low=low, high=high, n_cases=30, n_resamples=FAST, confidence=0.95
    )


def _mirror(interval: DeltaInterval) -> DeltaInterval:
    """The same interval for the negated metric (head - baseline flips sign)."""
    assert interval.low is not None and interval.high is not None
    return _interval(-interval.high, -interval.low, -interval.delta)


def _noisy(
    n_cases: int, n_runs: int, shift: float, noise: float, seed: int
) -> tuple[Scores, Scores]:
    """Baseline ~ U(0.5, 0.7) per case; head = baseline + shift, each run ± ``noise``."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5, 0.7, n_cases)
    baseline: Scores = {}
    head: Scores = {}
    for i, level in enumerate(base):
        key = ("suite", "set", f"case{i:03d}")
        baseline[key] = (level + rng.uniform(-noise, noise, n_runs)).tolist()
        head[key] = (level + shift + rng.uniform(-noise, noise, n_runs)).tolist()
    return baseline, head


# --- identical inputs ---------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(baseline=score_maps, min_effect=effects, max_regression=effects, data=st.data())
def test_identical_inputs_are_exactly_zero_and_never_regress(
    baseline: Scores, min_effect: float, max_regression: float, data: st.DataObject
) -> None:
    # Re-ordering runs must not matter either: per-case means are correctly rounded sums.
    head = {k: data.draw(st.permutations(v)) for k, v in reversed(list(baseline.items()))}
    interval = paired_bootstrap(baseline, head, n_resamples=FAST)

    assert interval.delta == 0.0
    if interval.has_interval:
        assert interval.low == 0.0 and interval.high == 0.0
        assert interval.low <= 0.0 <= interval.high
    for higher in (True, False):
        verdict = classify(interval, interval.delta, min_effect=min_effect, higher_is_better=higher)
        assert verdict != "regressed"
        for significant in (True, False):
            assert not regression_fails(
                interval,
                interval.delta,
                max_regression=max_regression,
                require_significance=significant,
                higher_is_better=higher,
            )


def test_identical_large_input_has_no_float_residue() -> None:
    # Scores such as 0.1 + 0.2 are where naive summation leaves -1e-17 residues.
    baseline = {("s", "e", str(i)): [0.1, 0.2, 0.7 / (i + 1)] for i in range(500)}
    head = {k: list(reversed(v)) for k, v in baseline.items()}
    interval = paired_bootstrap(baseline, head)
    assert (interval.delta, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert classify(interval, interval.delta, min_effect=0.0) == "unchanged"


# --- detection ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_uniform_drop_is_regressed(seed: int) -> None:
    baseline, head = _noisy(n_cases=30, n_runs=3, shift=-0.3, noise=0.02, seed=seed)
    interval = paired_bootstrap(baseline, head, seed=seed)

    assert interval.n_cases == 30 and interval.has_interval
    assert interval.low is not None and interval.high is not None
    assert interval.low <= -0.3 + 0.02 and interval.high >= -0.3 - 0.02
    assert abs(interval.delta + 0.3) < 0.02
    assert classify(interval, interval.delta, min_effect=0.05) == "regressed"
    # The same numbers for a lower-is-better metric are an improvement.
    assert classify(interval, interval.delta, min_effect=0.05, higher_is_better=False) == (
        "improved"
    )
    assert regression_fails(
        interval,
        interval.delta,
        max_regression=0.1,
        require_significance=True,
        higher_is_better=True,
    )


def test_interval_covers_zero_shift_at_about_the_nominal_rate() -> None:
    # Sanity check of the percentile interval itself, deterministic via fixed seeds.
    trials = 200
    covered = 0
    for seed in range(trials):
        baseline, head = _noisy(n_cases=40, n_runs=2, shift=0.0, noise=0.1, seed=seed)
        interval = paired_bootstrap(baseline, head, n_resamples=1000, seed=seed)
        assert interval.low is not None and interval.high is not None
        covered += interval.low <= 0.0 <= interval.high
    assert 0.88 * trials <= covered <= 0.99 * trials


# --- determinism --------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    baseline=score_maps,
    head=score_maps,
    seed=st.integers(min_value=0, max_value=2**63),
    min_effect=effects,
)
def test_same_inputs_and_seed_give_equal_results(
    baseline: Scores, head: Scores, seed: int, min_effect: float
) -> None:
    first = paired_bootstrap(baseline, head, n_resamples=FAST, seed=seed)
    # Insertion order must not change which column a case occupies.
    again = paired_bootstrap(
        dict(reversed(list(baseline.items()))), dict(head), n_resamples=FAST, seed=seed
    )
    assert first == again
    assert classify(first, first.delta, min_effect=min_effect) == classify(
        again, again.delta, min_effect=min_effect
    )


def test_different_seeds_may_differ() -> None:
    baseline, head = _noisy(n_cases=30, n_runs=3, shift=0.0, noise=0.2, seed=7)
    results = {paired_bootstrap(baseline, head, seed=s) for s in range(5)}
    assert len({(r.low, r.high) for r in results}) > 1
    assert len({r.delta for r in results}) == 1  # the point estimate does not use the seed


@settings(max_examples=30, deadline=None)
@given(
    n_cases=st.integers(min_value=2, max_value=300),
    n_resamples=st.integers(min_value=1, max_value=600),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_precomputed_counts_reproduce_a_seeded_call(
    n_cases: int, n_resamples: int, seed: int
) -> None:
    baseline, head = _noisy(n_cases=n_cases, n_runs=2, shift=0.01, noise=0.1, seed=seed)
    counts = bootstrap_counts(n_cases, n_resamples=n_resamples, seed=seed)

    assert counts.shape == (n_resamples, n_cases)
    assert (counts.sum(axis=1) == n_cases).all()
    assert paired_bootstrap(baseline, head, n_resamples=n_resamples, seed=seed) == paired_bootstrap(
        baseline, head, counts=counts
    )


# --- no interval --------------------------------------------------------------------------


def test_fewer_than_two_cases_gives_no_interval() -> None:
    empty = paired_bootstrap({}, {("s", "e", "x"): [1.0]})
    assert (empty.n_cases, empty.low, empty.high, empty.reason) == (0, None, None, NO_CASES_REASON)
    # No evidence at all is not "unchanged".
    assert classify(empty, empty.delta, min_effect=0.05) == "inconclusive"

    one = paired_bootstrap({("s", "e", "x"): [0.9, 0.8]}, {("s", "e", "x"): [0.1, 0.2]})
    assert (one.n_cases, one.low, one.high, one.reason) == (1, None, None, ONE_CASE_REASON)
    assert one.delta == pytest.approx(-0.7)
    assert one.n_resamples == 0
    assert classify(one, one.delta, min_effect=0.05) == "regressed"


def test_require_repeats_only_withholds_the_interval_when_every_case_has_one_run() -> None:
    baseline = {("s", "e", str(i)): [0.5] for i in range(10)}
    head = {("s", "e", str(i)): [0.4] for i in range(10)}
    single = paired_bootstrap(baseline, head, require_repeats=True)
    assert single.reason == ONE_RUN_REASON and not single.has_interval
    assert single.delta == pytest.approx(-0.1)
    # Point rule without an interval.
    assert classify(single, single.delta, min_effect=0.05) == "regressed"
    assert classify(single, single.delta, min_effect=0.2) == "unchanged"
    assert classify(None, single.delta, min_effect=0.05, higher_is_better=False) == "improved"

    assert paired_bootstrap(baseline, head).has_interval  # default: bootstrap over cases
    head[("s", "e", "0")] = [0.4, 0.45]
    assert paired_bootstrap(baseline, head, require_repeats=True).has_interval


def test_unpaired_and_empty_cases_are_ignored() -> None:
    baseline = {("s", "e", "a"): [0.5], ("s", "e", "b"): [0.5], ("s", "e", "gone"): [1.0]}
    head = {("s", "e", "a"): [0.6], ("s", "e", "b"): [], ("s", "e", "new"): [0.0]}
    interval = paired_bootstrap(baseline, head)
    assert interval.n_cases == 1 and interval.delta == pytest.approx(0.1)


# --- classification rule ------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(m=effects, a=bounds, b=bounds)
def test_straddling_interval_is_inconclusive(m: float, a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    straddles_low = low < -m <= high
    straddles_high = low <= m < high
    assume(straddles_low or straddles_high)
    for higher in (True, False):
        verdict = classify(_interval(low, high), 0.0, min_effect=m, higher_is_better=higher)
        assert verdict == "inconclusive"


@PROPERTY_SETTINGS
@given(m=effects, a=bounds, b=bounds)
def test_interval_rule_regions(m: float, a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    verdict = classify(_interval(low, high), 0.0, min_effect=m)
    if high < -m:
        assert verdict == "regressed"
    elif low > m:
        assert verdict == "improved"
    elif -m <= low and high <= m:
        assert verdict == "unchanged"
    else:
        assert verdict == "inconclusive"


FLIP = {"regressed": "improved", "improved": "regressed"}


@PROPERTY_SETTINGS
@given(m=effects, a=bounds, b=bounds, delta=bounds, with_interval=st.booleans())
def test_lower_is_better_flips_direction(
    m: float, a: float, b: float, delta: float, with_interval: bool
) -> None:
    interval = _interval(min(a, b), max(a, b), delta) if with_interval else None
    up = classify(interval, delta, min_effect=m, higher_is_better=True)
    down = classify(interval, delta, min_effect=m, higher_is_better=False)
    assert down == FLIP.get(up, up)
    if interval is not None:
        # Equivalently: a lower-is-better metric behaves like its negation.
        mirrored = classify(_mirror(interval), -delta, min_effect=m, higher_is_better=True)
        assert down == mirrored


def test_straddling_examples() -> None:
    # Clearly negative but possibly smaller than the effect that matters.
    assert classify(_interval(-0.30, -0.02), -0.16, min_effect=0.05) == "inconclusive"
    assert classify(_interval(-0.02, 0.30), 0.14, min_effect=0.05) == "inconclusive"
    assert classify(_interval(-0.04, 0.04), 0.0, min_effect=0.05) == "unchanged"
    # For a lower-is-better metric (e.g. latency) a rise is a regression.
    assert classify(_interval(0.1, 0.2), 0.15, min_effect=0.05, higher_is_better=False) == (
        "regressed"
    )


@given(delta=bounds)
def test_point_rule_without_interval(delta: float) -> None:
    verdict = classify(None, delta, min_effect=0.05)
    expected = "regressed" if delta < -0.05 else "improved" if delta > 0.05 else "unchanged"
    assert verdict == expected


def test_invalid_thresholds_raise() -> None:
    with pytest.raises(ValueError, match="min_effect"):
        classify(None, 0.0, min_effect=-0.1)
    with pytest.raises(ValueError, match="max_regression"):
        regression_fails(
            None,
            0.0,
            max_regression=float("nan"),
            require_significance=False,
            higher_is_better=True,
        )


# --- regression gate ----------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(a=bounds, b=bounds, delta=bounds, budget=effects, higher=st.booleans())
def test_regression_fails_rule(
    a: float, b: float, delta: float, budget: float, higher: bool
) -> None:
    interval = _interval(min(a, b), max(a, b), delta)
    sign = 1.0 if higher else -1.0
    tolerance = 1e-9  # noise._TOLERANCE: a drop equal to the budget is within it
    point_fails = sign * delta < -budget - tolerance
    g_high = max(sign * interval.low, sign * interval.high)  # type: ignore[operator]

    loose = regression_fails(
        interval,
        delta,
        max_regression=budget,
        require_significance=False,
        higher_is_better=higher,
    )
    strict = regression_fails(
        interval,
        delta,
        max_regression=budget,
        require_significance=True,
        higher_is_better=higher,
    )
    assert loose == point_fails
    assert strict == (point_fails and g_high < -budget - tolerance)
    assert not strict or loose  # significance can only make the gate more lenient
    if sign * delta >= 0:
        assert not loose  # an improvement never fails


def test_a_drop_equal_to_the_budget_does_not_fail() -> None:
    # 1.0 - 0.7 is 0.30000000000000004 in floating point.
    assert not regression_fails(
        None, 0.7 - 1.0, max_regression=0.3, require_significance=False, higher_is_better=True
    )


def test_regression_fails_examples() -> None:
    straddling = _interval(-0.25, -0.05, -0.15)
    below = _interval(-0.25, -0.15, -0.2)
    kwargs = {"max_regression": 0.1, "higher_is_better": True}
    assert regression_fails(straddling, -0.15, require_significance=False, **kwargs)
    assert not regression_fails(straddling, -0.15, require_significance=True, **kwargs)
    assert regression_fails(below, -0.2, require_significance=True, **kwargs)
    assert not regression_fails(
        below, -0.2, require_significance=True, max_regression=0.3, higher_is_better=True
    )
    # Lower-is-better: a rise of 0.2 is a drop in goodness.
    assert regression_fails(
        _interval(0.15, 0.25, 0.2),
        0.2,
        max_regression=0.1,
        require_significance=True,
        higher_is_better=False,
    )
    # Without an interval significance cannot be shown; the point rule applies.
    assert regression_fails(None, -0.2, require_significance=True, **kwargs)
    assert not regression_fails(None, -0.05, require_significance=True, **kwargs)


# --- flaky cases --------------------------------------------------------------------------


def test_flaky_counts_passes() -> None:
    statuses = {
        "mixed": [True, False, True],
        "all_pass": [True, True, True],
        "all_fail": [False, False],
        "single": [True],
        "empty": [],
        "one_pass": [False, False, True, False],
    }
    assert flaky_cases(statuses) == {"mixed": (2, 3), "one_pass": (1, 4)}


@given(st.dictionaries(st.integers(), st.lists(st.booleans(), max_size=6)))
def test_flaky_property(statuses: dict[int, list[bool]]) -> None:
    flaky = flaky_cases(statuses)
    assert set(flaky) == {k for k, v in statuses.items() if len(set(v)) == 2}
    for key, (passes, total) in flaky.items():
        assert (passes, total) == (sum(statuses[key]), len(statuses[key]))
        assert 0 < passes < total


# --- validation ---------------------------------------------------------------------------


def test_invalid_inputs_raise() -> None:
    baseline = {("s", "e", str(i)): [0.5, 0.6] for i in range(5)}
    with pytest.raises(ValueError, match="non-finite head score"):
        paired_bootstrap(baseline, {**baseline, ("s", "e", "0"): [float("nan")]})
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap(baseline, baseline, confidence=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap(baseline, baseline, n_resamples=0)
    with pytest.raises(ValueError, match="shape"):
        paired_bootstrap(baseline, baseline, counts=bootstrap_counts(4, n_resamples=10))
    with pytest.raises(ValueError, match="integer"):
        paired_bootstrap(baseline, baseline, counts=np.ones((10, 5)))
    with pytest.raises(ValueError):
        DeltaInterval(delta=0.0, low=None, high=None, n_cases=3, n_resamples=0, confidence=0.9)
    with pytest.raises(ValueError):
        DeltaInterval(delta=0.0, low=0.1, high=-0.1, n_cases=3, n_resamples=5, confidence=0.9)


def test_unorderable_keys_fall_back_to_baseline_order() -> None:
    keys: list[object] = [("s", "e", "a"), 3, frozenset({1})]
    rnd = random.Random(0)
    baseline = {k: [rnd.random(), rnd.random()] for k in keys}
    head = {k: [rnd.random()] for k in keys}
    interval = paired_bootstrap(baseline, head, n_resamples=50)
    assert interval.n_cases == 3 and interval.has_interval

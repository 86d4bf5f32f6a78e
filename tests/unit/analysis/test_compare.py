"""Tests of :mod:`adk_eval_action.analysis.compare`: matched deltas, intervals, calls, the
gate's agreement with them, flaky cases.

Property tests run the whole ``compare`` on hand-built results (tests/results_builder.py),
so they cover the indexing and the batched permutation tests as well as the noise rules;
the tests themselves are checked against enumerations written here and in
tests/permutation_oracle.py.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_action.analysis.gate import decide
from adk_eval_action.analysis.noise import ONE_CASE_REASON, classify
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import CaseStatus, MetricStatus, RunResults
from conftest import examples
from support.permutation_oracle import enumerated_p
from support.results_builder import metric, results, scores_side, tokens
from support.tables import compare

PROPERTY = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FAST = 300  # resamples: the properties hold for any count

score = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
run_scores = st.lists(score, min_size=1, max_size=3)
sides = st.dictionaries(
    st.text(alphabet="abcdefgh0123", min_size=1, max_size=5), run_scores, min_size=0, max_size=20
)


def _row(comparison, name="response_match_score"):
    return next(m for m in comparison.metrics if m.metric_name == name)


@PROPERTY
@given(sides, st.integers(0, 2**32 - 1))
def test_identical_sides_never_regress_and_centre_on_zero(scores, seed) -> None:
    side = scores_side(scores)
    comparison = compare(side, side, "same", seed=seed, n_resamples=FAST)
    steady = all(len(set(runs)) == 1 for runs in scores.values())
    for row in comparison.metrics:
        assert row.classification not in ("regressed", "improved")
        assert row.delta == 0.0
        if row.interval is not None and row.interval.has_interval:
            assert row.interval.low <= 0.0 <= row.interval.high
        if steady and scores:
            # Every run of every case the same on both sides: no labelling moves anything.
            assert (row.interval.low, row.interval.high) == (0.0, 0.0)
            assert row.classification == "unchanged"


@PROPERTY
@given(st.integers(0, 2**32 - 1), st.integers(2, 3))
def test_uniform_drop_of_0_3_on_30_cases_is_regressed(seed, runs) -> None:
    rnd = random.Random(seed)
    levels = {f"case_{i:02d}": rnd.uniform(0.45, 0.65) for i in range(30)}

    def side(shift: float) -> dict[str, list[float]]:
        return {k: [v + shift + rnd.gauss(0, 0.02) for _ in range(runs)] for k, v in levels.items()}

    comparison = compare(
        scores_side(side(-0.3)), scores_side(side(0.0)), "b", min_effect=0.05, seed=seed
    )
    row = _row(comparison)
    assert row.classification == "regressed"
    assert row.interval is not None and row.interval.high is not None
    assert row.interval.high < -0.05


@PROPERTY
@given(sides, sides, st.integers(0, 2**32 - 1))
def test_same_seed_same_numbers_whatever_the_case_order(base, head, seed) -> None:
    first = compare(scores_side(head), scores_side(base), "b", seed=seed, n_resamples=FAST)
    shuffled_base = dict(reversed(list(base.items())))
    shuffled_head = dict(reversed(list(head.items())))
    again = compare(
        scores_side(shuffled_head), scores_side(shuffled_base), "b", seed=seed, n_resamples=FAST
    )
    for one, two in zip(first.metrics, again.metrics, strict=True):
        assert one.classification == two.classification
        assert one.interval == two.interval or (
            math.isclose(one.interval.delta, two.interval.delta, abs_tol=1e-12)
            and one.interval.low == two.interval.low
        )


def _enumerated_p_worse(diffs: list[float], min_effect: float) -> float:
    """The exact one-sided sign-flip p-value of "worse by more than min_effect", by
    brute force over every sign pattern (ties counted), independent of signflip.py."""
    shifted = [d + min_effect for d in diffs]
    observed = sum(shifted) / len(shifted)
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(shifted)):
        flipped = sum(s * d for s, d in zip(signs, shifted, strict=True)) / len(shifted)
        hits += flipped <= observed + 1e-12
    return hits / 2 ** len(shifted)


@pytest.mark.parametrize(
    ("head_runs", "min_effect"),
    [
        ([[0.4, 0.5], [0.7], [0.2, 0.3], [0.6, 0.6], [0.1]], 0.0),
        ([[0.4, 0.5], [0.7], [0.2, 0.3], [0.6, 0.6], [0.1]], 0.05),
        ([[0.2], [0.1], [0.3], [0.25], [0.4], [0.1]], 0.0),
    ],
)
def test_one_metric_against_an_enumeration_and_the_correction_by_hand(
    head_runs: list[list[float]], min_effect: float
) -> None:
    """One metric is a family of one: Benjamini-Krieger-Yekutieli at 5% rejects exactly
    when p <= 0.05 / 1.05 (stage one at q = alpha / (1 + alpha) rejects all of m = 1). The
    p-value is the stratified test's, every labelling of every case's runs enumerated."""
    base = {f"c{i}": [0.5, 0.6] for i in range(len(head_runs))}
    head = {f"c{i}": runs for i, runs in enumerate(head_runs)}
    row = _row(compare(scores_side(head), scores_side(base), "b", min_effect=min_effect))
    cases = [(head[k], base[k]) for k in sorted(base)]
    p = enumerated_p(cases, -min_effect, less=True)
    assert row.interval.exact and row.interval.p_worse == pytest.approx(p, abs=1e-12)
    diffs = [sum(h) / len(h) - sum(b) / len(b) for h, b in cases]
    assert row.delta == pytest.approx(sum(diffs) / len(diffs))
    assert (row.classification == "regressed") == (p <= 0.05 / 1.05)


@pytest.mark.parametrize("min_effect", [0.0, 0.05])
def test_one_run_per_side_is_the_sign_flip_test(min_effect: float) -> None:
    """With one run on each side the only labellings of a case are the observed one and the
    swap: the test is the paired sign-flip test, p-value for p-value."""
    head_runs = [0.2, 0.1, 0.3, 0.2, 0.4, 0.1, 0.3, 0.2, 0.1]
    base = {f"c{i}": [0.5] for i in range(len(head_runs))}
    head = {f"c{i}": [x] for i, x in enumerate(head_runs)}
    row = _row(compare(scores_side(head), scores_side(base), "b", min_effect=min_effect))
    p = _enumerated_p_worse([x - 0.5 for x in head_runs], min_effect)
    assert row.interval.exact and row.interval.n_resamples == 2**9
    assert row.interval.p_worse == pytest.approx(p, abs=1e-12)
    assert (row.classification == "regressed") == (p <= 0.05 / 1.05)


def test_one_run_per_case_is_tested_like_any_other() -> None:
    """With one run per case the sign-flip test is still exact for an unchanged agent, so
    the interval is given, not withheld (the point delta alone called 47% of unchanged
    metrics regressed at 200 cases x 1 run)."""
    base = scores_side({f"c{i}": [0.9] for i in range(12)})
    head = scores_side({f"c{i}": [0.5] for i in range(12)})
    row = _row(compare(head, base, "b"))
    assert row.interval.has_interval and row.classification == "regressed"


def test_too_few_cases_for_the_corrected_level_say_so() -> None:
    """4 cases x 1 run: 16 sign patterns, p >= 1/16 > 0.05 / 1.05."""
    base = scores_side({f"c{i}": [0.9] for i in range(4)})
    head = scores_side({f"c{i}": [0.5] for i in range(4)})
    comparison = compare(head, base, "b")
    row = _row(comparison)
    assert not row.interval.has_interval
    assert "4 paired cases x 1 run a side are too few" in row.interval.reason
    assert "16 patterns" in row.interval.reason
    assert row.classification == "inconclusive"
    assert comparison.no_interval_reason == row.interval.reason


def test_runs_decide_what_cases_alone_cannot() -> None:
    """The same 4 cases with 2 runs a side: each case's 6 labellings, p = 1/6**4."""
    base = scores_side({f"c{i}": [0.9, 0.9] for i in range(4)})
    head = scores_side({f"c{i}": [0.5, 0.5] for i in range(4)})
    row = _row(compare(head, base, "b"))
    assert row.interval.p_worse == pytest.approx(1 / 6**4)
    assert row.classification == "regressed"


def test_one_paired_case() -> None:
    """One case with one run a side cannot be tested; with 2 runs a side its 6 labellings
    leave p >= 1/6; with 5 runs a side a collapse from all-pass to all-fail has p = 1/252."""
    comparison = compare(scores_side({"a": [0.2]}), scores_side({"a": [0.9]}), "b")
    assert _row(comparison).interval.reason == ONE_CASE_REASON
    comparison = compare(scores_side({"a": [0.2, 0.3]}), scores_side({"a": [0.9, 0.8]}), "b")
    assert "1 paired case x 2 runs a side is too few" in _row(comparison).interval.reason
    collapse = compare(scores_side({"a": [0.0] * 5}), scores_side({"a": [1.0] * 5}), "b")
    row = _row(collapse)
    assert row.interval.p_worse == pytest.approx(1 / 252)
    assert row.classification == "regressed" and row.delta == -1.0


def test_a_zero_delta_of_identical_scores_reads_the_same_for_one_case_or_many() -> None:
    """Every run of every matched case scored the same on both sides: no labelling moves
    the mean, so the interval is [0, 0] and the call unchanged, with one case as with five
    (the example's 1.000 → 1.000 rubrics read alike)."""
    for cases in (["a"], ["a", "b", "c", "d", "e"]):
        same = scores_side({c: [1.0, 1.0] for c in cases})
        row = _row(compare(same, scores_side({c: [1.0] for c in cases}), "b"))
        assert (row.delta, row.interval.low, row.interval.high) == (0.0, 0.0, 0.0)
        assert row.classification == "unchanged" and row.interval.reason is None
    # One case whose means match but whose runs differ is tested like any other.
    row = _row(compare(scores_side({"a": [0.2, 0.4]}), scores_side({"a": [0.4, 0.2]}), "b"))
    assert row.delta == 0.0 and row.interval.p_worse == pytest.approx(5 / 6)
    assert row.classification == "inconclusive"


def test_no_baseline_has_no_interval_or_call() -> None:
    comparison = compare(scores_side({"a": [0.2, 0.3], "b": [1, 1]}), None, "none")
    row = _row(comparison)
    assert row.interval is None and row.classification is None and row.delta is None
    assert comparison.no_interval_reason is None


def test_three_runs_give_an_interval_around_the_delta() -> None:
    base = scores_side({f"c{i}": [0.8, 0.82, 0.78] for i in range(10)})
    head = scores_side({f"c{i}": [0.8 + (i % 3) * 0.01, 0.81, 0.79] for i in range(10)})
    row = _row(compare(head, base, "b", min_effect=0.05))
    assert row.interval.low <= row.delta <= row.interval.high
    # 10 cases x 3 runs: C(6, 3) = 20 labellings each, all counted (scores on a lattice).
    assert row.interval.n_cases == 10 and row.interval.n_resamples == 20**10
    assert row.interval.exact
    assert row.classification == "unchanged"


def test_improved_and_inconclusive_calls() -> None:
    base = scores_side({f"c{i}": [0.5, 0.5] for i in range(12)})
    better = scores_side({f"c{i}": [0.8, 0.8] for i in range(12)})
    assert _row(compare(better, base, "b", min_effect=0.05)).classification == "improved"
    swings = scores_side({f"c{i}": [0.9, 0.9] if i % 2 else [0.0, 0.1] for i in range(12)})
    assert _row(compare(swings, base, "b", min_effect=0.05)).classification == "inconclusive"


def test_lower_is_better_metric_direction() -> None:
    kwargs: dict[str, Any] = {
        "name": "brevity", "threshold": 40.0, "higher_is_better": False, "max_value": 1e3}
    base = scores_side({f"c{i}": [10.0, 11.0] for i in range(8)}, **kwargs)
    head = scores_side({f"c{i}": [30.0, 31.0] for i in range(8)}, **kwargs)
    row = _row(compare(head, base, "b", min_effect=1.0), "brevity")
    assert row.delta == pytest.approx(20.0)
    assert row.classification == "regressed"


def test_per_metric_min_effect_is_used() -> None:
    base = scores_side({f"c{i}": [0.80, 0.80] for i in range(10)})
    head = scores_side({f"c{i}": [0.75, 0.75] for i in range(10)})
    strict = compare(head, base, "b", min_effect=lambda s, m: 0.01)
    lenient = compare(head, base, "b", min_effect=lambda s, m: 0.1)
    assert _row(strict).classification == "regressed"
    assert _row(lenient).classification == "unchanged"


def test_informational_metrics_get_intervals_and_calls() -> None:
    base = results({f"c{i}": [[tokens(100 + i)], [tokens(102 + i)]] for i in range(10)})
    head = results({f"c{i}": [[tokens(150 + i)], [tokens(149 + i)]] for i in range(10)})
    row = _row(compare(head, base, "b", min_effect=1.0), "token_usage_v1")
    assert row.informational and row.interval.has_interval
    assert row.classification == "regressed"  # more tokens: lower is better


def test_rubrics_are_tested_over_cases() -> None:
    def side(value: float) -> dict:
        return {
            f"c{i}": [[metric("rubric_metric", value, rubrics={"polite": value, "short": 1.0})]] * 3
            for i in range(10)
        }

    comparison = compare(results(side(0.0)), results(side(1.0)), "b", min_effect=0.1)
    polite = next(r for r in comparison.rubrics if r.rubric_id == "polite")
    short = next(r for r in comparison.rubrics if r.rubric_id == "short")
    assert polite.interval.has_interval and polite.interval.n_cases == 10
    assert polite.classification == "regressed" and polite.delta == -1.0
    assert short.classification == "unchanged"
    assert short.interval.low == short.interval.high == 0.0


def test_flaky_cases_on_both_sides_with_metric_and_pass_count() -> None:
    def runs(*scores: float) -> list:
        return [
            [metric("response_match_score", s), metric("tool_trajectory_avg_score", 1.0)]
            for s in scores
        ]

    base = results({"steady": runs(0.9, 0.9, 0.9), "wobbly": runs(0.9, 0.1, 0.1)})
    head = results({"steady": runs(0.9, 0.2, 0.9), "wobbly": runs(0.9, 0.9, 0.9)})
    cases = {c.eval_id: c for c in compare(head, base, "b").cases}
    assert cases["steady"].flaky_head == {"overall": (2, 3), "response_match_score": (2, 3)}
    assert cases["steady"].flaky_baseline == {}
    assert cases["wobbly"].flaky_baseline == {"overall": (1, 3), "response_match_score": (1, 3)}
    assert cases["wobbly"].flaky_head == {}
    assert [c.eval_id for c in compare(head, base, "b").flaky_cases] == ["steady", "wobbly"]


def test_errors_and_not_evaluated_are_never_averaged_in() -> None:
    good = metric("response_match_score", 0.9)
    broken = metric("response_match_score", 0.0, status=MetricStatus.ERROR)
    head = results({"a": [[good], [broken]], "b": [[good], [good]]})
    row = _row(compare(head, head, "b"))
    assert row.head.mean == pytest.approx(0.9) and row.head.errors == 1
    assert row.head.scored == 3 and row.head.passed == 3


def test_added_and_removed_cases_are_not_paired() -> None:
    base = scores_side({"a": [0.5, 0.5], "b": [0.5, 0.5], "gone": [0.0, 0.0]})
    head = scores_side({"a": [0.6, 0.6], "b": [0.6, 0.6], "new": [1.0, 1.0]})
    comparison = compare(head, base, "b")
    row = _row(comparison)
    assert row.interval.n_cases == 2 and row.interval.delta == pytest.approx(0.1)
    changes = {c.eval_id: c.change for c in comparison.cases}
    assert changes["gone"] == "removed" and changes["new"] == "new"


def test_classification_agrees_with_noise_classify() -> None:
    base = scores_side({f"c{i}": [0.5 + i / 100, 0.5] for i in range(15)})
    head = scores_side({f"c{i}": [0.45 + (i % 4) / 50, 0.5] for i in range(15)})
    row = _row(compare(head, base, "b", min_effect=0.02))
    assert row.classification == classify(row.interval, row.delta, min_effect=0.02)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_non_finite_score_is_a_metric_error_never_averaged(bad) -> None:
    base = scores_side({"a": [0.5, 0.5], "b": [0.5, 0.5]})
    head = scores_side({"a": [bad, 0.7], "b": [0.5, 0.5]})
    comparison = compare(head, base, "b")
    row = _row(comparison)
    assert row.head.errors == 1 and row.head.scored == 3
    assert row.head.mean == pytest.approx((0.7 + 0.5 + 0.5) / 3)
    assert "non-finite score" in row.head.reasons[0]
    case = next(c for c in comparison.cases if c.eval_id == "a")
    # error, or failed when the run's own status says so (a failed run decides first)
    assert case.head_status in (CaseStatus.ERROR, CaseStatus.FAILED)
    assert case.metrics[0].head == 0.7 and "non-finite" in case.metrics[0].reason


def test_bad_confidence_is_an_error() -> None:
    side = scores_side({"a": [0.5]})
    with pytest.raises(ValueError, match="confidence"):
        compare(side, side, "b", confidence=1.0)


def test_largest_drop_is_direction_aware_scaled_and_ignores_informational_metrics() -> None:
    base = results(
        {
            "lost_metric": [[metric("m_a", 0.2), metric("m_b", 0.9)]],
            "small_drop": [[metric("m_a", 0.6), tokens(500)]],
            "longer": [[metric("words", 10, higher_is_better=False, max_value=100.0)]],
        }
    )
    head = results(
        {
            "lost_metric": [[metric("m_a", 0.6)]],
            "small_drop": [[metric("m_a", 0.45), tokens(400)]],
            "longer": [[metric("words", 30, higher_is_better=False, max_value=100.0)]],
        }
    )
    cases = {c.eval_id: c for c in compare(head, base, "b").cases}
    # improved m_a, lost m_b (no delta): nothing got worse
    assert cases["lost_metric"].largest_drop == 0.0
    assert [d.metric_name for d in cases["lost_metric"].metrics] == ["m_a", "m_b"]
    # 0.15 of a [0, 1] range; 100 fewer tokens is informational (and better), not a drop
    assert cases["small_drop"].largest_drop == pytest.approx(0.15)
    # lower is better: 10 -> 30 words is 20 worse on a 0..100 range
    assert cases["longer"].largest_drop == pytest.approx(0.2)


def test_a_nan_score_on_a_not_evaluated_metric_is_just_no_score() -> None:
    skipped = metric("m", math.nan, status=MetricStatus.NOT_EVALUATED)
    head = results({"a": [[skipped]], "b": [[metric("m", 0.8)]]})
    base = results({"a": [[metric("m", 0.9)]], "b": [[metric("m", 0.8)]]})
    row = _row(compare(head, base, "b"), "m")
    assert row.head.not_evaluated == 1 and row.head.errors == 0 and row.head.reasons == []
    assert row.head.mean == 0.8


# --- matched cases, and the gate agreeing with the calls (issue 11) -----------------------

binary_runs = st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=3)
agents = st.dictionaries(
    st.text(alphabet="abcdefgh0123", min_size=1, max_size=4), binary_runs, min_size=0, max_size=14
)


@PROPERTY
@given(agents, agents, agents, st.integers(0, 2**16))
def test_added_or_removed_cases_never_move_a_delta_nor_fail_the_gate(
    shared, added, removed, seed
) -> None:
    """An unchanged agent (the same runs on both sides for every shared case) with cases
    added on the head and removed from it: Δ stays exactly 0, and ``fail_on: regression``
    never fails, with or without require_significance."""
    added = {f"new_{k}": v for k, v in added.items()}
    removed = {f"old_{k}": v for k, v in removed.items()}
    base = scores_side({**shared, **removed})
    head = scores_side({**shared, **added})
    comparison = compare(head, base, "b", seed=seed, n_resamples=FAST)
    for row in comparison.metrics:
        assert row.delta in (None, 0.0)
        assert row.classification in (None, "unchanged", "inconclusive")
    for significance in (False, True):
        config = GateConfig(fail_on="regression", require_significance=significance)
        assert decide(comparison, config).passed
    assert len(comparison.new_cases) == len(added)
    assert len(comparison.removed_cases) == len(removed)


@PROPERTY
@given(agents, agents, st.sampled_from([0.0, 0.05, 0.2]), st.integers(0, 2**16))
def test_the_regression_gate_fails_exactly_the_metrics_called_regressed(
    base, head, min_effect, seed
) -> None:
    """With require_significance (max_regression unset: min_effect) the gate and the call
    read the same interval the same way: a metric fails the gate iff it is 🔴 regressed."""
    comparison = compare(
        scores_side(head),
        scores_side(base),
        "b",
        min_effect=min_effect,
        seed=seed,
        n_resamples=FAST,
    )
    config = GateConfig(fail_on="regression", min_effect=min_effect, require_significance=True)
    result = decide(comparison, config)
    failing = {r.split("`")[1] for r in result.reasons if r.startswith("max_regression")}
    regressed = {
        m.metric_name
        for m in comparison.metrics
        if m.classification == "regressed" and not m.informational
    }
    assert failing == regressed


def test_matched_means_and_all_case_means_are_kept_apart() -> None:
    base = scores_side({"a": [0.5, 0.5], "b": [0.7, 0.7]})
    head = scores_side({"a": [0.6, 0.6], "b": [0.7, 0.7], "new": [0.0, 0.0]})
    row = _row(compare(head, base, "b"))
    assert row.delta == pytest.approx(0.05)
    assert (row.baseline_matched, row.head_matched) == (pytest.approx(0.6), pytest.approx(0.65))
    assert row.head.mean == pytest.approx((0.6 + 0.7 + 0.0) / 3)


def test_recorded_seed_and_count_reproduce_every_interval() -> None:
    rnd = random.Random(3)
    base = scores_side({f"c{i:02d}": [rnd.random(), rnd.random()] for i in range(40)})
    head = scores_side({f"c{i:02d}": [rnd.random(), rnd.random()] for i in range(40)})
    first = compare(head, base, "b", seed=17, n_resamples=500)
    method = first.tests
    assert method is not None and (method.seed, method.n_resamples) == (17, 500)
    again = compare(head, base, "b", seed=method.seed, n_resamples=method.n_resamples)
    assert [m.interval for m in again.metrics] == [m.interval for m in first.metrics]
    assert first.metrics[0].interval.seed == 17 and not first.metrics[0].interval.exact


def test_informational_metrics_get_a_relative_min_effect() -> None:
    """Durations and tokens move on noise alone: by default a change within 10% of the
    matched baseline mean is not called; 0 turns that off."""
    base = results({f"c{i}": [[tokens(100 + i)], [tokens(100 + i)]] for i in range(12)})
    head = results({f"c{i}": [[tokens(105 + i)], [tokens(105 + i)]] for i in range(12)})
    row = _row(compare(head, base, "b"), "token_usage_v1")
    assert row.min_effect == pytest.approx(0.1 * (100 + 5.5))
    assert row.classification == "unchanged"
    strict = _row(compare(head, base, "b", informational_min_effect=0.0), "token_usage_v1")
    assert strict.min_effect == 0.0 and strict.classification == "regressed"


def test_an_explicit_min_effect_of_an_informational_metric_applies_as_given() -> None:
    base = results({f"c{i}": [[tokens(100 + i)], [tokens(100 + i)]] for i in range(12)})
    head = results({f"c{i}": [[tokens(105 + i)], [tokens(105 + i)]] for i in range(12)})
    config = GateConfig(metrics={"token_usage_v1": {"min_effect": 1.0}})
    row = _row(
        compare(
            head,
            base,
            "b",
            min_effect=config.min_effect_for,
            informational_min_effect=config.informational_min_effect_for,
        ),
        "token_usage_v1",
    )
    assert row.min_effect == 1.0 and row.classification == "regressed"
    assert GateConfig(informational_min_effect=0.25).informational_min_effect_for("s", "m") == 0.25


def test_wall_clock_noise_never_loosens_a_gated_call() -> None:
    """Informational metrics are corrected apart: the two-stage level of the gated family
    loosens with every rejection in its family (0.048 alone, 0.095 with one more rejection:
    ``signflip.two_stage_level``), so a duration that rose on a loaded machine must not turn
    a gated metric's ❔ into 🔴 (4 of 12 cases dropped by 1: exact p = 1/16)."""
    wrong = {"c01", "c04", "c07", "c10"}
    ids = [f"c{i:02d}" for i in range(12)]

    def side(head: bool, durations: bool) -> RunResults:
        def one(case: str) -> list:
            score = 0.0 if head and case in wrong else 1.0
            extra = [metric("invocation_duration_v1", 2.0 if head else 1.0,
                            informational=True)] if durations else []
            return [[metric("response_match_score", score), *extra]]
        return results({case: one(case) for case in ids})

    alone = compare(side(True, False), side(False, False), "b")
    noisy = compare(side(True, True), side(False, True), "b")
    assert _row(alone).classification == _row(noisy).classification == "inconclusive"
    assert _row(noisy, "invocation_duration_v1").classification == "regressed"
    assert _row(noisy).interval == _row(alone).interval
    assert noisy.tests is not None and alone.tests is not None
    assert (noisy.tests.tests, noisy.tests.informational_tests) == (1, 1)
    assert noisy.tests.level_worse == alone.tests.level_worse == pytest.approx(0.05 / 1.05)


def test_runs_without_a_score_are_left_out_of_the_labellings() -> None:
    """A run whose metric was not evaluated (a judge without a verdict) or errored has no
    score: the case is tested on the runs that have one (unequal runs a side), as the
    enumeration of those runs alone gives; rubric verdicts are tested over their own runs."""
    def run(score: float | None, status: MetricStatus | None = None):
        return [metric("response_match_score", score, status=status)]

    head = results({
        "a": [run(0.1), run(None), run(0.2)],
        "b": [run(0.9), run(0.3, MetricStatus.ERROR), run(0.8)],
        "c": [run(0.4)],
    })
    base = results({
        "a": [run(0.6), run(0.7), run(0.5)],
        "b": [run(0.9), run(1.0)],
        "c": [run(0.6), run(None), run(0.7)],
    })
    row = _row(compare(head, base, "b"))
    cases = [([0.1, 0.2], [0.6, 0.7, 0.5]), ([0.9, 0.8], [0.9, 1.0]), ([0.4], [0.6, 0.7])]
    assert row.interval.n_cases == 3 and row.interval.exact
    assert row.interval.n_resamples == 10 * 6 * 3  # C(5, 2) x C(4, 2) x C(3, 1)
    assert row.interval.p_worse == pytest.approx(enumerated_p(cases, 0.0, less=True))
    assert row.interval.p_better == pytest.approx(enumerated_p(cases, 0.0, less=False))


def test_a_collapse_too_small_for_a_two_sided_interval_is_called_on_its_side() -> None:
    """2 cases x 2 runs, both metrics 1.000 → 0.000 in every head run (the thresholds all
    met): each test has 6**2 = 36 labellings and p_worse = 1/36. Both worse p-values pass
    the first stage (1/36 <= 2 q / 2), so the worse side's level is q = 0.05 / 1.05; no
    better p-value does, so that side's is q / 2 = 0.0238 < 1/36: no lower end. The upper
    end is still the corrected bound of its side, and decides it: 🔴 regressed, and the
    gate with require_significance fails."""
    def side(score: float) -> RunResults:
        return results({
            case: [[metric("tool_trajectory_avg_score", score, threshold=0.0),
                    metric("response_match_score", score, threshold=0.0)]] * 2
            for case in ("a", "b")
        })

    comparison = compare(side(0.0), side(1.0), "b")
    q = 0.05 / 1.05
    oracle = enumerated_p([([0.0, 0.0], [1.0, 1.0])] * 2, 0.0, less=True)
    for name in ("tool_trajectory_avg_score", "response_match_score"):
        row = _row(comparison, name)
        assert row.interval.p_worse == pytest.approx(oracle) == pytest.approx(1 / 36)
        assert row.interval.level_high == pytest.approx(q)
        assert row.interval.level_low == pytest.approx(q / 2)
        assert row.interval.low is None and row.interval.high == pytest.approx(-1.0)
        assert row.interval.one_sided and row.interval.has_interval
        assert row.interval.reason == (
            "one-sided: no bound on a gain, as 2 paired cases x 2 runs a side are too few "
            "for that side's corrected level 0.0238 (all 36 patterns leave p ≥ 0.0278)"
        )
        assert row.classification == "regressed" and row.interval.to_decide is None
    assert comparison.no_interval_reason is None
    gate = decide(comparison, GateConfig(fail_on="regression", require_significance=True))
    assert not gate.passed

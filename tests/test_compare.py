"""Tests of :mod:`adk_eval_action.analysis.compare`: intervals, classifications, flaky cases.

Property tests run the whole ``compare`` on hand-built results (tests/results_builder.py),
so they cover the indexing and the batched bootstrap as well as the noise rules.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_action.analysis.compare import compare
from adk_eval_action.analysis.noise import (
    ONE_CASE_REASON,
    ONE_RUN_REASON,
    classify,
    paired_bootstrap,
)
from adk_eval_action.results.model import CaseStatus, MetricStatus
from results_builder import metric, results, scores_side, tokens

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
    for row in comparison.metrics:
        assert row.classification != "regressed"
        assert row.delta == 0.0
        if row.interval is not None and row.interval.has_interval:
            assert row.interval.low == row.interval.high == 0.0
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


@PROPERTY
@given(sides, sides, st.integers(0, 2**32 - 1))
def test_batched_bootstrap_matches_noise_paired_bootstrap(base, head, seed) -> None:
    comparison = compare(scores_side(head), scores_side(base), "b", seed=seed, n_resamples=FAST)
    if not comparison.metrics or comparison.metrics[0].interval is None:
        return
    got = comparison.metrics[0].interval
    key = ("travel", "smoke")
    want = paired_bootstrap(
        {(*key, k): v for k, v in base.items()},
        {(*key, k): v for k, v in head.items()},
        n_resamples=FAST,
        seed=seed,
        require_repeats=True,
    )
    assert got.n_cases == want.n_cases and got.reason == want.reason
    assert math.isclose(got.delta, want.delta, abs_tol=1e-12)
    if want.has_interval:
        assert math.isclose(got.low, want.low, abs_tol=1e-12)
        assert math.isclose(got.high, want.high, abs_tol=1e-12)


def test_one_run_has_no_interval_and_says_so() -> None:
    base = scores_side({f"c{i}": [0.9] for i in range(5)})
    head = scores_side({f"c{i}": [0.5] for i in range(5)})
    comparison = compare(head, base, "b")
    row = _row(comparison)
    assert row.interval is not None and not row.interval.has_interval
    assert row.interval.reason == ONE_RUN_REASON
    assert comparison.no_interval_reason == ONE_RUN_REASON
    assert "no interval with one run" in ONE_RUN_REASON
    # The call then comes from the point delta, as noise.classify documents.
    assert row.classification == "regressed"


def test_one_paired_case_has_no_interval() -> None:
    comparison = compare(scores_side({"a": [0.2, 0.3]}), scores_side({"a": [0.9, 0.8]}), "b")
    assert _row(comparison).interval.reason == ONE_CASE_REASON


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
    assert row.interval.n_cases == 10 and row.interval.n_resamples == 2000
    assert row.classification == "unchanged"


def test_improved_and_inconclusive_calls() -> None:
    base = scores_side({f"c{i}": [0.5, 0.5] for i in range(12)})
    better = scores_side({f"c{i}": [0.8, 0.8] for i in range(12)})
    assert _row(compare(better, base, "b", min_effect=0.05)).classification == "improved"
    swings = scores_side({f"c{i}": [0.9, 0.9] if i % 2 else [0.0, 0.1] for i in range(12)})
    assert _row(compare(swings, base, "b", min_effect=0.05)).classification == "inconclusive"


def test_lower_is_better_metric_direction() -> None:
    kwargs = {"name": "brevity", "threshold": 40.0, "higher_is_better": False, "max_value": 1e3}
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


def test_rubrics_use_the_case_bootstrap() -> None:
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

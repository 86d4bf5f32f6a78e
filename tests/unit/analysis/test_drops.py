"""The drop rules (analysis/drops.py) on hand-built results, each expectation worked out by
hand from the rule in docs/gating.md ("Drops the gate does not fail on")."""

from __future__ import annotations

import pytest

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig, MetricGateRule
from adk_eval_action.report.headline import drops_text, regressed_output
from support.results_builder import metric, results, tokens
from support.tables import compare


def _gate(head: dict, base: dict, config: GateConfig):
    comparison = compare(results(head), results(base), "b", min_effect=config.min_effect_for)
    return comparison, decide(comparison, config)


def _side(scores: list[float], name: str = "m", **kw) -> dict:
    return {f"c{i}": [[metric(name, s, threshold=0.1, **kw), tokens(100)]]
            for i, s in enumerate(scores)}


def test_a_drop_the_thresholds_pass_is_named_with_why_it_did_not_fail() -> None:
    # Two cases 1 -> 0.7 and 1 -> 0.5: delta -0.4, no interval (2 cases): inconclusive.
    comparison, gate = _gate(_side([0.7, 0.5]), _side([1.0, 1.0]), GateConfig())
    assert gate.passed
    (drop,) = gate.drops
    assert (drop.metric_name, drop.delta, drop.classification, drop.gated, drop.note) == (
        "m", pytest.approx(-0.4), "inconclusive", False, "not gated: fail_on threshold")
    assert drops_text(gate, comparison) == (
        "⚠️ `m` −0.400 vs baseline (not gated: fail\\_on threshold)")
    assert drops_text(gate, comparison, markdown=False) == (
        "m −0.400 vs baseline (not gated: fail_on threshold)")
    # The informational token count never counts, even when it grows.
    assert [d["metric"] for d in regressed_output(gate)] == ["m"]
    # The cases behind it: both, the larger drop first.
    assert [(c.eval_id, d[0].worse) for c, d in gate.dropped_cases] == [
        ("c1", pytest.approx(0.5)), ("c0", pytest.approx(0.3))]


def test_the_regression_rule_decides_what_is_gated() -> None:
    head, base = _side([0.7, 0.5]), _side([1.0, 1.0])
    _, gate = _gate(head, base, GateConfig(fail_on="regression"))
    assert not gate.passed and gate.drops[0].gated and gate.ungated_drops == []
    # Over budget but not significant (no interval with 2 cases): not failing, and named.
    _, gate = _gate(head, base, GateConfig(fail_on="any", require_significance=True))
    assert gate.passed
    assert gate.drops[0].note == "not significant: require_significance"
    # Within its budget and not called regressed: no drop at all.
    _, gate = _gate(head, base, GateConfig(max_regression=0.5))
    assert gate.drops == []


def test_a_called_regression_within_budget_is_still_named() -> None:
    # 12 cases each 1 -> 0.7: the exact test calls it regressed (interval [-0.3, -0.3]);
    # max_regression 0.5 lets it through.
    config = GateConfig(fail_on="any", max_regression=0.5)
    comparison, gate = _gate(_side([0.7] * 12), _side([1.0] * 12), config)
    assert gate.passed
    (drop,) = gate.drops
    assert drop.classification == "regressed" and drop.note == "within max_regression 0.5"
    assert drops_text(gate, comparison) == (
        "⚠️ `m` −0.300 🔴 vs baseline (within max\\_regression 0.5)")


def test_direction_range_and_order() -> None:
    # A lower-is-better metric that rose (brevity-like, range [0, 100]) and a [-1, 1] one
    # that fell by 1: as shares of their ranges, 0.2 and 0.5, so the second comes first.
    head = {"c0": [[metric("words", 30.0, threshold=50.0, higher_is_better=False,
                           max_value=100.0),
                    metric("polite", 0.0, threshold=-1.0, min_value=-1.0)]]}
    base = {"c0": [[metric("words", 10.0, threshold=50.0, higher_is_better=False,
                           max_value=100.0),
                    metric("polite", 1.0, threshold=-1.0, min_value=-1.0)]]}
    comparison, gate = _gate(head, base, GateConfig())
    assert [(d.metric_name, d.scaled) for d in gate.drops] == [
        ("polite", pytest.approx(0.5)), ("words", pytest.approx(0.2))]
    assert drops_text(gate, comparison) == (
        "⚠️ `polite` −1.000, `words` +20.0 vs baseline (not gated: fail\\_on threshold)")


def test_a_case_counts_when_its_own_drop_exceeds_min_effect() -> None:
    config = GateConfig(min_effect=0.1, max_regression=0.1)
    _, gate = _gate(_side([0.95, 0.4, 0.8]), _side([1.0, 1.0, 1.0]), config)
    # Delta -0.283 > 0.1; cases: c1 (0.6) and c2 (0.2), not c0 (0.05 <= min_effect).
    assert [c.eval_id for c, _ in gate.dropped_cases] == ["c1", "c2"]


def test_a_rubric_that_dropped_while_its_metric_did_not() -> None:
    head = {f"c{i}": [[metric("judge", 0.5, rubrics={"a": 1.0, "b": 0.0})]] for i in range(2)}
    base = {f"c{i}": [[metric("judge", 0.5, rubrics={"a": 0.0, "b": 1.0})]] for i in range(2)}
    comparison, gate = _gate(head, base, GateConfig(fail_on="any"))
    assert gate.passed
    (drop,) = gate.drops
    assert (drop.metric_name, drop.rubric_id, drop.note) == ("judge", "b",
                                                             "rubrics are not gated")
    assert drops_text(gate, comparison) == (
        "⚠️ `judge` rubric `b` −1.000 vs baseline (rubrics are not gated)")
    assert regressed_output(gate)[0]["rubric"] == "b"


def test_no_baseline_no_drop_and_several_suites_are_named() -> None:
    comparison = compare(results(_side([0.5])), None, "none")
    assert decide(comparison, GateConfig()).drops == []
    head = results(_side([0.5, 0.5]))
    other = results(_side([0.5, 0.5]), suite="other")
    head.suites += other.suites
    base = results(_side([1.0, 1.0]))
    base.suites += results(_side([1.0, 1.0]), suite="other").suites
    comparison = compare(head, base, "b")
    gate = decide(comparison, GateConfig(metrics={"other/m": MetricGateRule(
        max_regression=0.6)}))
    assert drops_text(gate, comparison, markdown=False) == (
        "m (travel) −0.500 vs baseline (not gated: fail_on threshold)")

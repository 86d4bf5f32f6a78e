"""Tests of the gate rules (:mod:`adk_eval_action.analysis.gate`, docs/gating.md) on hand-built
results, their config (``gate:`` in adk-eval.yaml) and their CLI flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import decide, failed_on_scores
from adk_eval_action.cli import main
from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import GateConfig, load_project_config
from adk_eval_action.results.io import save_results
from adk_eval_action.results.model import (
    CaseStatus,
    ErrorRecord,
    MetricStatus,
    RunRecord,
    RunResults,
)
from support.results_builder import metric, results, scores_side, tokens
from support.tables import compare

N = 12


def _side(
    level: float,
    spread: float = 0.0,
    name: str = "response_match_score",
    runs: tuple[float, ...] = (0.0, 0.01, -0.01),
) -> RunResults:
    """N cases, a run per entry of ``runs`` (offsets) each, around ``level``; ``spread``
    alternates cases up and down."""
    return scores_side(
        {
            f"c{i:02d}": [level + (spread if i % 2 else -spread) + d for d in runs]
            for i in range(N)
        },
        name=name,
        threshold=0.3,
    )


def _gate(head: RunResults, base: RunResults | None, **config: object):
    gate_config = GateConfig.model_validate(config)
    comparison = compare(head, base, "b", min_effect=gate_config.min_effect_for)
    return decide(comparison, gate_config), comparison


def test_threshold_is_the_default_and_ignores_regressions() -> None:
    result, _ = _gate(_side(0.5), _side(0.9))
    assert result.passed and not result.reasons
    failing = scores_side({"a": [0.1]}, threshold=0.5)
    result, _ = _gate(failing, None)
    assert not result.passed
    # The default min_pass_rate (1.0) is not what the user set: the threshold missed is.
    assert result.reasons == [
        "threshold: 1 of 1 eval case(s) failed: `response_match_score` below its threshold "
        "0.5 in 1 (`a`)"
    ]


def test_a_min_pass_rate_the_user_set_is_named_beside_the_thresholds_missed() -> None:
    head = scores_side({"a": [0.1], "b": [0.2, 0.9], "c": [0.9], "d": [0.9], "e": [0.9]},
                       threshold=0.5)
    result, _ = _gate(head, None, min_pass_rate=0.8)
    assert result.reasons == [
        "min_pass_rate: 2 of 5 eval case(s) failed: `response_match_score` below its "
        "threshold 0.5 in 2 (`a`, `b`); pass rate 60% is below min_pass_rate 80%"
    ]
    # At 1.0 the same cases fail their threshold, the rule named.
    result, _ = _gate(head, None, min_pass_rate=1.0)
    assert result.reasons[0].startswith("threshold: 2 of 5 eval case(s) failed: ")


@pytest.mark.parametrize("not_evaluated", ["fail", "warn"])
def test_the_min_pass_rate_reason_counts_as_the_headline_does(not_evaluated: str) -> None:
    """A case that could not be evaluated is counted once, as such, never again among the
    cases that failed: 1 failed (0.1 < 0.5), 1 not evaluated, 2 passed."""
    head = scores_side({"a": [0.1], "b": [0.9], "c": [0.9]}, threshold=0.5)
    unsure = scores_side({"d": [0.9]}, threshold=0.5).suites[0].eval_sets[0].eval_cases[0]
    unsure.runs[0].metrics[0].status = MetricStatus.NOT_EVALUATED
    unsure.runs[0].metrics[0].score = None
    unsure.runs[0].status = CaseStatus.NOT_EVALUATED
    head.suites[0].eval_sets[0].eval_cases.append(unsure)
    result, _ = _gate(head, None, not_evaluated=not_evaluated)
    assert (result.cases_passed, result.cases_unsure, result.cases_total) == (2, 1, 4)
    assert result.count_text == "2/3 evaluated eval cases passed"
    if not_evaluated == "fail":  # 2 of 4 count as passing
        assert result.reasons == [
            "threshold: 1 of 4 eval case(s) failed and 1 could not be evaluated "
            "(not_evaluated: fail): `response_match_score` below its threshold 0.5 in 1 "
            "(`a`)"]
    else:  # the case that could not be evaluated only warns: 3 of 4
        assert result.reasons == [
            "threshold: 1 of 4 eval case(s) failed: `response_match_score` below its "
            "threshold 0.5 in 1 (`a`)"]


def test_regression_beyond_max_regression_fails_and_says_by_how_much() -> None:
    result, _ = _gate(_side(0.7), _side(0.9), fail_on="regression", max_regression=0.05)
    assert not result.passed
    (reason,) = result.reasons
    assert reason.startswith(
        "max_regression: `response_match_score` (travel) dropped by 0.200, 0.150 beyond "
        "max_regression 0.05 (corrected interval ["
    )


def test_drop_within_max_regression_passes() -> None:
    result, _ = _gate(_side(0.85), _side(0.9), fail_on="regression", max_regression=0.1)
    assert result.passed and not result.reasons


def test_max_regression_defaults_to_min_effect() -> None:
    result, _ = _gate(_side(0.88), _side(0.9), fail_on="regression", min_effect=0.05)
    assert result.passed
    result, _ = _gate(_side(0.88), _side(0.9), fail_on="regression")
    assert not result.passed and "(max_regression 0; corrected interval" in result.reasons[0]


def test_require_significance_fails_only_when_the_whole_interval_is_beyond() -> None:
    # A clear drop of 0.3: the interval lies wholly beyond max_regression 0.1.
    result, _ = _gate(
        _side(0.6), _side(0.9), fail_on="regression", max_regression=0.1, require_significance=True
    )
    assert not result.passed
    assert result.reasons[0].endswith("; the whole interval lies beyond it")
    # The same mean drop with large case-to-case swings, one run a case (so the test is
    # over whole cases): the interval reaches back within.
    noisy, comparison = _gate(
        _side(0.6, spread=0.5, runs=(0.0,)),
        _side(0.9, runs=(0.0,)),
        fail_on="regression",
        max_regression=0.1,
        require_significance=True,
    )
    row = comparison.metrics[0]
    assert row.interval.high > -0.1 > row.delta
    assert noisy.passed
    assert any("require_significance): not failing" in w for w in noisy.warnings)


def test_per_metric_override_and_suite_precedence() -> None:
    def both(level: float) -> RunResults:
        return results(
            {
                f"c{i}": [
                    [metric("response_match_score", level), metric("safety", level)],
                    [metric("response_match_score", level), metric("safety", level)],
                ]
                for i in range(N)
            }
        )

    config: dict[str, Any] = {
        "fail_on": "regression",
        "max_regression": 0.05,
        "metrics": {"response_match_score": {"max_regression": 0.5}},
    }
    result, _ = _gate(both(0.7), both(0.9), **config)
    assert [r.split("`")[1] for r in result.reasons] == ["safety"]
    config["metrics"]["travel/response_match_score"] = {"max_regression": 0.1}
    result, _ = _gate(both(0.7), both(0.9), **config)
    assert [r.split("`")[1] for r in result.reasons] == ["response_match_score", "safety"]
    rule = GateConfig.model_validate(config).rule_for("travel", "response_match_score")
    assert rule.max_regression == 0.1 and rule.require_significance is False
    assert GateConfig.model_validate(config).rule_for("other", "response_match_score") == (
        rule.model_copy(update={"max_regression": 0.5})
    )


def test_override_naming_no_metric_warns() -> None:
    result, _ = _gate(_side(0.9), _side(0.9), metrics={"respons_match_score": {"min_effect": 1}})
    assert "gate.metrics.respons_match_score matches no metric of this run" in result.warnings


def test_lower_is_better_metric_regresses_upwards() -> None:
    def brevity(level: float) -> RunResults:
        return scores_side(
            {f"c{i}": [level, level + 1] for i in range(N)},
            name="brevity",
            threshold=100.0,
            higher_is_better=False,
            max_value=1000.0,
        )

    result, _ = _gate(brevity(20), brevity(10), fail_on="regression", max_regression=5)
    assert result.reasons[0].startswith("max_regression: `brevity` (travel) rose by 10.000")
    result, _ = _gate(brevity(5), brevity(10), fail_on="regression", max_regression=5)
    assert result.passed


def test_fail_on_none_never_fails_but_still_warns() -> None:
    result, _ = _gate(_side(0.1), _side(0.9), fail_on="none", max_regression=0.0)
    assert result.passed and not result.reasons
    assert any(w.startswith("threshold:") for w in result.warnings)
    assert any(w.startswith("max_regression:") for w in result.warnings)


def test_fail_on_any_applies_both_rules() -> None:
    head = results(
        {
            **{f"c{i}": [[metric("response_match_score", 0.4)]] * 2 for i in range(N)},
            "broken": [[metric("response_match_score", 0.1)]] * 2,
        }
    )
    result, _ = _gate(head, _side(0.9), fail_on="any", max_regression=0.1)
    rules = [r.split(":")[0] for r in result.reasons]
    assert rules == ["threshold", "max_regression"]


def test_informational_metrics_never_fail_the_regression_rule() -> None:
    base = results({f"c{i}": [[tokens(100)], [tokens(101)]] for i in range(N)})
    head = results({f"c{i}": [[tokens(300)], [tokens(301)]] for i in range(N)})
    result, _ = _gate(head, base, fail_on="regression")
    assert result.passed


@pytest.mark.parametrize(("action", "passes"), [("warn", True), ("fail", False)])
def test_max_token_increase_warns_or_fails(action: str, passes: bool) -> None:
    base = results({f"c{i}": [[tokens(100)], [tokens(102)]] for i in range(N)})
    head = results({f"c{i}": [[tokens(130)], [tokens(132)]] for i in range(N)})
    result, _ = _gate(head, base, max_token_increase=0.2, on_token_increase=action)
    assert result.passed is passes
    messages = result.warnings if passes else result.reasons
    (message,) = [m for m in messages if m.startswith("max_token_increase")]
    assert "`token_usage_v1` (travel) grew 30% (101.0 → 131.0), 10% beyond " in message
    assert "max_token_increase 20%" in message
    ok, _ = _gate(head, base, max_token_increase=0.5, on_token_increase=action)
    assert ok.passed and not any(w.startswith("max_token_increase") for w in ok.warnings)


@pytest.mark.parametrize("significance", [False, True])
def test_max_token_increase_from_a_zero_baseline_is_beyond_any_budget(significance: bool) -> None:
    """From 0 tokens any increase is infinite growth: it fails with on_token_increase: fail,
    as the comment calls it regressed; 0 to 0 is no growth."""
    from adk_eval_action.report.render import CommentContext, render_comment

    base = results({f"c{i}": [[tokens(0)], [tokens(0)]] for i in range(N)})
    head = results({f"c{i}": [[tokens(51)], [tokens(52)]] for i in range(N)})
    options = {"max_token_increase": 0.2, "on_token_increase": "fail",
               "require_significance": significance}
    result, comparison = _gate(head, base, **options)
    assert not result.passed
    # By hand: head mean (51 + 52) / 2 = 51.5 per case, baseline 0.
    (reason,) = [r for r in result.reasons if r.startswith("max_token_increase")]
    assert reason.startswith(
        "max_token_increase: `token_usage_v1` (travel) grew from 0.0 to 51.5: growth from zero "
        "is beyond any max_token_increase (20%)"
    )
    [row] = [m for m in comparison.metrics if m.metric_name == "token_usage_v1"]
    assert row.classification == "regressed"  # the comment's call agrees with the gate
    comment = render_comment(CommentContext(comparison=comparison, gate=result))
    assert "❌ **ADK eval failed**" in comment and "growth from zero" in comment
    unchanged, _ = _gate(base, base, **options)
    assert unchanged.passed and not any("max_token_increase" in w for w in unchanged.warnings)


def test_no_baseline_no_regression_rule() -> None:
    """``fail_on: regression`` with nothing to compare gates nothing, and says so: a case
    failing its threshold must not read as a plain pass."""
    from adk_eval_action.report.render import CommentContext, render_comment

    failing = scores_side({"a": [0.1], "b": [0.9]}, threshold=0.5)
    result, comparison = _gate(failing, None, fail_on="regression", max_regression=0.0)
    assert result.passed and result.report_only
    assert result.unchecked == "fail_on: regression, and there is no baseline to compare with"
    comment = render_comment(CommentContext(comparison=comparison, gate=result))
    assert ("ℹ️ **ADK eval report only** (fail\\_on: regression, and there is no baseline to "
            "compare with: nothing fails the check): 1/2 eval cases passed") in comment
    # A baseline of other eval cases: nothing scored on both sides.
    other = scores_side({"x": [0.9], "y": [0.9]}, threshold=0.5)
    result, _ = _gate(failing, other, fail_on="regression")
    assert result.passed and result.report_only
    assert result.unchecked == ("fail_on: regression, and no gated metric was scored on the "
                                "same eval cases as the baseline")
    # Thresholds gate under fail_on any: nothing is unchecked.
    result, _ = _gate(failing, None, fail_on="any")
    assert not result.passed and result.unchecked is None and not result.report_only


def test_gate_config_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "adk-eval.yaml"
    path.write_text(
        "gate:\n"
        "  fail_on: regression\n"
        "  max_regression: 0.05\n"
        "  require_significance: true\n"
        "  max_token_increase: 0.25\n"
        "  metrics:\n"
        "    response_match_score: {max_regression: 0.1}\n"
        "    travel/safety: {min_effect: 0.02, require_significance: false}\n"
    )
    gate = load_project_config(path).gate
    assert gate.rule_for("travel", "response_match_score").max_regression == 0.1
    safety = gate.rule_for("travel", "safety")
    assert safety.max_regression == 0.05 and safety.require_significance is False
    assert gate.min_effect_for("travel", "safety") == 0.02
    path.write_text("gate:\n  metrics:\n    x: {max_regresion: 0.1}\n")
    with pytest.raises(ConfigError, match="max_regresion"):
        load_project_config(path)


def _files(tmp_path: Path, head: RunResults, base: RunResults) -> tuple[str, str]:
    save_results(head, tmp_path / "head.json")
    save_results(base, tmp_path / "base.json")
    return str(tmp_path / "head.json"), str(tmp_path / "base.json")


def test_cli_gate_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    head, base = _files(tmp_path, _side(0.7), _side(0.9))
    runner = CliRunner()

    def run(*flags: str):
        return runner.invoke(main, ["compare", head, "--baseline", base, *flags])

    assert run().exit_code == 0
    failed = run("--fail-on", "regression", "--max-regression", "0.1")
    assert failed.exit_code == 1
    assert "max_regression: `response_match_score` (travel) dropped by 0.200" in failed.output
    assert run("--fail-on", "regression", "--max-regression", "0.3").exit_code == 0
    assert run("--fail-on", "regression", "--min-effect", "0.25").exit_code == 0
    significant = run(
        "--fail-on", "regression", "--max-regression", "0.1", "--require-significance"
    )
    assert significant.exit_code == 1
    assert run("--fail-on", "bogus").exit_code == 2


def test_compare_refuses_a_baseline_of_other_suites_as_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A baseline from another project (no suite in common) is not used by compare and
    render, with run's warning and note, rather than listing its cases as removed."""
    monkeypatch.chdir(tmp_path)
    head = scores_side({"a": [0.1], "b": [0.9]}, threshold=0.5)
    other = results({"x": [[metric("response_match_score", 0.9, threshold=0.5)]]},
                    suite="elsewhere")
    head_file, base_file = _files(tmp_path, head, other)
    runner = CliRunner()
    said = ("baseline not used: its suites (elsewhere) are not the head's (travel)")
    for command in (["compare", head_file, "--fail-on", "any"], ["render", head_file]):
        done = runner.invoke(main, [*command, "--baseline", base_file])
        assert said in done.output, done.output
        assert "removed" not in done.output
    compared = runner.invoke(main, ["compare", head_file, "--baseline", base_file,
                                    "--print-comment"])
    assert ("No baseline: file base.json not usable: its suites (elsewhere) are not the "
            "head's (travel)") in compared.output, compared.output


def test_comment_names_the_failed_rule(tmp_path: Path) -> None:
    from adk_eval_action.report.render import CommentContext, render_comment

    result, comparison = _gate(_side(0.7), _side(0.9), fail_on="regression", max_regression=0.1)
    comment = render_comment(CommentContext(comparison=comparison, gate=result))
    assert "❌ **ADK eval failed**" in comment
    assert "max\\_regression: `response_match_score` (travel) dropped by 0.200" in comment
    assert isinstance(comparison, Comparison)


def _outage_side() -> RunResults:
    """5 eval cases: 2 pass, 1 fails, 2 runs never reached the model (ErrorRecord kind
    ``model``, as adk.runtime.model_calls records an outage)."""
    side = scores_side({"a": [0.9], "b": [0.8], "c": [0.1], "d": [0.9], "e": [0.9]},
                       threshold=0.5)
    cases = side.suites[0].eval_sets[0].eval_cases
    for case in cases[3:]:
        case.runs[0] = RunRecord(run=1, status=CaseStatus.ERROR, error="503 UNAVAILABLE",
                                 error_kind="model")
    side.suites[0].errors.append(
        ErrorRecord(kind="model", message="2 of 5 case runs could not reach the model")
    )
    return side


def test_the_headline_counts_passes_among_evaluated_cases_and_says_why_the_rest_were_not():
    result, _ = _gate(_outage_side(), None)
    # By hand: a, b pass, c fails (0.1 < 0.5), d and e have no verdict.
    assert (result.cases_total, result.cases_evaluated, result.cases_passed) == (5, 3, 2)
    assert result.count_text == "2/3 evaluated eval cases passed"
    # The model's outage is not the agent's: whatever not_evaluated says, the run is
    # incomplete (docs/gating.md), never "counted as failing" nor "only warned about".
    assert result.unsure_note == (
        "2 of 5 could not be evaluated (model unreachable), so the run is incomplete"
    )
    warned, _ = _gate(_outage_side(), None, not_evaluated="warn")
    assert warned.unsure_note == result.unsure_note
    # A metric without a score (kind metric, ADK's NOT_EVALUATED) beside it is the mode's.
    side = _outage_side()
    side.errors.append(ErrorRecord(kind="metric", message="no verdict"))
    assert _gate(side, None)[0].unsure_note.endswith(
        "(a metric or rubric without a score, model unreachable), counted as failing "
        "(not_evaluated: fail)"
    )


def test_the_headline_never_says_zero_passed_when_no_case_was_evaluated():
    side = _outage_side()
    for case in side.suites[0].eval_sets[0].eval_cases:
        case.runs = []
    side.errors.append(ErrorRecord(kind="credentials", message="no model credentials"))
    result, _ = _gate(side, None)
    assert result.unsure_kinds == ["credentials", "model"]
    assert result.count_text == (
        "0 of 5 eval cases could be evaluated (no model credentials, model unreachable)"
    )
    assert result.unsure_note == "the run is incomplete"
    # After the count's ';' a clause of its own, for each mode (not a stray "; so ...").
    unscored = _outage_side()
    for case in unscored.suites[0].eval_sets[0].eval_cases:
        case.runs = [RunRecord(run=1, status=CaseStatus.NOT_EVALUATED)]
    unscored.suites[0].errors.clear()
    for mode, says in (("fail", "they are counted as failing (not_evaluated: fail)"),
                       ("warn", "they are only warned about (not_evaluated: warn)")):
        result, _ = _gate(unscored, None, not_evaluated=mode)
        assert result.cases_evaluated == 0 and result.unsure_note == says
    assert "passed" not in result.count_text


def test_every_case_evaluated_keeps_the_plain_count():
    result, _ = _gate(scores_side({"a": [0.9], "b": [0.1]}, threshold=0.5), None)
    assert (result.count_text, result.unsure_note) == ("1/2 eval cases passed", "")


@pytest.mark.parametrize("not_evaluated", ["fail", "warn"])
def test_a_case_whose_metric_went_not_evaluated_is_newly_failing(not_evaluated: str) -> None:
    """Passed on the baseline, no score on the head: no delta can show it, so the regression
    rule fails on the case itself, unless not_evaluated: warn (then the headline names it)."""
    base = scores_side({"a": [0.9], "b": [0.9]}, threshold=0.5)
    head = scores_side({"a": [0.9], "b": [0.9]}, threshold=0.5)
    lost = head.suites[0].eval_sets[0].eval_cases[1].runs[0]
    lost.metrics[0].status, lost.metrics[0].score = MetricStatus.NOT_EVALUATED, None
    lost.status = CaseStatus.NOT_EVALUATED
    result, comparison = _gate(head, base, fail_on="regression", not_evaluated=not_evaluated)
    [metric_row] = comparison.metrics
    assert metric_row.delta == 0.0  # over case a, the one scored on both sides
    [crash] = result.crashes
    assert (crash.eval_id, crash.agent_raised) == ("b", False)
    assert crash.why == "`response_match_score` not evaluated"
    if not_evaluated == "fail":
        assert result.reasons == ["newly failing: 1 eval case passed on the baseline and "
                                  "crashed: `b` (travel): `response_match_score` not evaluated"]
        assert not failed_on_scores(result)  # no computed score failed
    else:
        assert result.passed and crash.note == "not_evaluated: warn"
        assert result.ungated_crashes == [crash]


def test_the_threshold_reason_shows_a_hostile_eval_id_inert() -> None:
    """The reason names eval ids, which reach the console, the comment and the HTML
    report: control and bidi characters are written as escapes, a backtick cannot end the
    code span."""
    head = scores_side({"x\u202eevil`id": [0.1], "ok": [0.9]}, threshold=0.5)
    result, _ = _gate(head, None)
    assert result.reasons == [
        "threshold: 1 of 2 eval case(s) failed: `response_match_score` below its threshold "
        "0.5 in 1 (`x\\u202eevil'id`)"]

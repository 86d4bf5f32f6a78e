"""Bad inputs to ``compare`` and ``render``: each is exit 2 with a message naming what to
fix, never a traceback or a gate that checked nothing (hand-built results files)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adk_eval_action.analysis.compare import NO_RUNS_ERROR, MetricSide
from adk_eval_action.analysis.gate import decide
from adk_eval_action.cli import main
from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import GateConfig, ProjectConfig
from adk_eval_action.report.cells import metric_status
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.format import delta
from adk_eval_action.results.io import save_results
from adk_eval_action.results.model import MetricStatus
from adk_eval_action.run.pipeline import write_text
from adk_eval_action.settings import resolve
from support.results_builder import metric, results, scores_side, tokens
from support.tables import compare


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    head, base = tmp_path / "head.json", tmp_path / "base.json"
    save_results(scores_side({"a": [0.9, 0.8], "b": [0.7, 0.7]}), head)
    save_results(scores_side({"a": [0.9, 0.9], "b": [0.7, 0.6]}), base)
    return head, base


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--min-effect", "-1"], "'--min-effect': -1.0 is not in the range x>=0"),
        (["--min-effect", "nan"], "'--min-effect': 'nan' is not a finite number"),
        (["--max-regression", "inf", "--fail-on", "regression"], "'--max-regression': 'inf'"),
        (["--max-token-increase", "nan"], "'--max-token-increase': 'nan'"),
        (["--min-pass-rate", "nan"], "'--min-pass-rate': 'nan' is not a finite number"),
    ],
)
def test_bad_gate_flags_are_usage_errors(files, flags, says) -> None:
    head, base = files
    result = _cli("compare", str(head), "--baseline", str(base), *flags)
    assert result.exit_code == 2
    assert says in result.output


def test_gate_values_from_other_sources_are_checked_too() -> None:
    # Action inputs reach the gate config without click: a ConfigError naming the input.
    with pytest.raises(ConfigError, match="invalid input min_effect: Input should be greater"):
        resolve(ProjectConfig(), {"min_effect": "-0.5"})
    with pytest.raises(ConfigError, match="invalid input min_pass_rate: .*finite number"):
        resolve(None, {"min_pass_rate": "nan"})
    with pytest.raises(ValueError, match="finite number"):
        GateConfig(max_regression=float("nan"))


def test_a_head_without_eval_cases_is_refused(files, tmp_path: Path) -> None:
    _, base = files
    empty = tmp_path / "empty.json"
    empty.write_text('{"schema_version": 1}')
    for command in ("compare", "render"):
        result = _cli(command, str(empty), "--baseline", str(base))
        assert result.exit_code == 2, command
        assert "empty.json: holds no eval cases and no errors" in result.output


@pytest.mark.parametrize(
    ("template", "says"),
    [
        # The template's line where it is known (here it is the rendering child's).
        ("ok\n{{ 1 / 0 }}", ":2: template error: ZeroDivisionError"),
        ("{{ comparison.cases[0].metrics | tojson }}", ":1: template error: TypeError"),
        (b"\xff\xfe{{ 1 }}", ": template error: UnicodeDecodeError"),
    ],
)
def test_a_user_template_failing_at_render_time_is_a_usage_error(
    files, tmp_path: Path, template, says
) -> None:
    head, base = files
    path = tmp_path / "mine.md.j2"
    if isinstance(template, bytes):
        path.write_bytes(template)
    else:
        path.write_text(template)
    result = _cli("render", str(head), "--baseline", str(base), "--template", str(path))
    assert result.exit_code == 2
    assert f"mine.md.j2{says}" in result.output


def test_a_case_written_twice_is_counted_once_with_a_warning(tmp_path: Path) -> None:
    head = results({"a": [[metric("m", 0.9)]]})
    twice = head.model_copy(deep=True)
    cases = twice.suites[0].eval_sets[0].eval_cases
    cases.append(cases[0].model_copy(deep=True))
    comparison = compare(twice, head, "b")
    assert comparison.cases[0].head_runs == 2
    assert comparison.warnings == [
        "head results: eval case `a` of eval set `smoke` (suite `travel`) appears 2 times; "
        "its runs are counted together as one case"
    ]
    head_path, base_path = tmp_path / "twice.json", tmp_path / "base.json"
    save_results(twice, head_path)
    save_results(head, base_path)
    result = _cli("compare", str(head_path), "--baseline", str(base_path), "--print-comment")
    assert "appears 2 times" in result.output


def test_tiny_deltas_print_as_zero() -> None:
    assert delta(0.0004) == "±0" and delta(-0.0004) == "±0"
    assert delta(0.0005) == "+0.001 (better)"  # no call: no colour
    assert delta(0.0005, call="improved") == "+0.001 🟢"
    assert delta(-0.2, higher_is_better=False, call="inconclusive") == "−0.2 (better)"
    assert delta(-0.2, call="regressed") == "−0.2 🔴"
    assert delta(10, higher_is_better=False, call="unchanged") == "+10"  # no word beside ⚪


def test_a_lone_surrogate_does_not_lose_the_comment(tmp_path: Path) -> None:
    path = tmp_path / "comment.md"
    write_text(path, "agent said \ud800 here")
    assert path.read_text(encoding="utf-8") == "agent said \ufffd here"


def test_near_limit_scores_neither_crash_nor_draw(tmp_path: Path) -> None:
    huge = 1.7e308
    head = results({c: [[metric("m", 0.5), tokens(huge)]] * 3 for c in ("a", "b")})
    base = results({c: [[metric("m", 0.5), tokens(100.0)]] * 3 for c in ("a", "b")})
    comparison = compare(head, base, "b")
    row = next(m for m in comparison.metrics if m.metric_name == "token_usage_v1")
    assert row.head.mean == huge  # a mean of near-limit values, not an overflow
    chart = metric_chart_markdown(comparison)
    assert "`token_usage_v1 ↓` (change too large to draw)" in chart
    assert "inf" not in chart.replace("informational", "")
    head_path, base_path = tmp_path / "h.json", tmp_path / "b.json"
    save_results(head, head_path)
    save_results(base, base_path)
    result = _cli("compare", str(head_path), "--baseline", str(base_path), "--print-comment")
    assert result.exit_code == 0
    assert "| 1.7e+308 |" in result.output


def test_failing_cases_are_ordered_errored_then_newly_failing_then_by_drop() -> None:
    base = results(
        {
            "still": [[metric("words", 50.0, threshold=40.0, higher_is_better=False)]],
            "newly": [[metric("acc", 0.6)]],
            "broken": [[metric("acc", 0.9)]],
        }
    )
    head = results(
        {
            "still": [[metric("words", 95.0, threshold=40.0, higher_is_better=False)]],
            "newly": [[metric("acc", 0.45)]],
            "broken": [[metric("acc", 0.9, status=MetricStatus.ERROR)]],
        }
    )
    gate = decide(compare(head, base, "b"), GateConfig())
    assert [c.eval_id for c in gate.failing_cases] == ["broken", "newly", "still"]


def test_a_run_with_an_errored_metric_is_not_a_passing_run() -> None:
    ok, broken = metric("acc", 0.9), metric("acc", 0.9, status=MetricStatus.ERROR)
    head = results({"a": [[ok], [broken], [ok]]})
    case = compare(head, head, "b").cases[0]
    assert (case.head_passes, case.head_runs) == (2, 3)
    assert case.flaky_head == {"overall": (2, 3)}


def test_a_nan_threshold_in_a_file_is_unknown_and_a_case_without_runs_says_so() -> None:
    head = results({"a": [[metric("acc", 0.9, threshold=math.nan)]], "b": []})
    comparison = compare(head, None, "none")
    assert comparison.metrics[0].head.threshold is None
    assert comparison.cases[1].error == NO_RUNS_ERROR


def test_metric_status_lists_every_kind_of_trouble() -> None:
    side = MetricSide(failed=2, errors=1, not_evaluated=0)
    assert metric_status(side, num_runs=3) == "❌ 2 failed runs, ⚠️ 1 errored run"
    assert metric_status(side) == "❌ 2 failed, ⚠️ 1 errored"
    assert metric_status(MetricSide()) == "✅"


def test_a_pass_says_which_baseline_cases_the_run_no_longer_has(tmp_path: Path) -> None:
    """Deleting the failing eval cases must not read as a plain pass: the headline and the
    console's gate line say how many of the baseline's cases are gone."""
    base = results({c: [[metric("m", 0.9 if c == "kept" else 0.1)]] for c in
                    ("kept", "gone_1", "gone_2", "gone_3", "gone_4")})
    head = results({"kept": [[metric("m", 0.9)]]})
    head_path, base_path = tmp_path / "head.json", tmp_path / "base.json"
    save_results(head, head_path)
    save_results(base, base_path)
    result = _cli("compare", str(head_path), "--baseline", str(base_path), "--print-comment")
    assert result.exit_code == 0, result.output
    note = "4 eval cases of the baseline are not in this run (removed)"
    assert f"✅ **ADK eval passed**: 1/1 eval cases passed; {note}" in result.output
    assert f"gate PASSED: 1/1 eval cases passed; {note}" in result.output
    one = results({c: [[metric("m", 0.9)]] for c in ("kept", "gone_1")})
    save_results(one, base_path)
    result = _cli("compare", str(head_path), "--baseline", str(base_path))
    assert "; 1 eval case of the baseline is not in this run (removed)" in result.output


def test_fail_on_none_reads_as_a_report_not_a_pass(tmp_path: Path) -> None:
    """With ``fail_on: none`` nothing can fail the check: 1 of 2 cases failing is reported,
    with exit 0, but not under a green "passed"."""
    head = results({"good": [[metric("m", 0.9)]], "bad": [[metric("m", 0.1)]]})
    head_path = tmp_path / "head.json"
    save_results(head, head_path)
    result = _cli("compare", str(head_path), "--fail-on", "none", "--print-comment")
    assert result.exit_code == 0, result.output
    assert ("ℹ️ **ADK eval report only** (`fail_on: none`: nothing fails the check): "
            "1/2 eval cases passed") in result.output
    assert "gate REPORT ONLY (fail_on: none, nothing fails the check): 1/2 eval cases passed" \
        in result.output
    assert "✅" not in result.output.split("eval cases passed")[0]
    failing = _cli("compare", str(head_path), "--print-comment")
    assert failing.exit_code == 1 and "❌ **ADK eval failed**: 1/2 eval cases passed" in \
        failing.output

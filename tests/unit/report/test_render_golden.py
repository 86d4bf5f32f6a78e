"""Golden comment and summary for a mixed comparison, and the mermaid chart rules.

The mixed case (hand-built results, 10 eval cases x 3 runs): ``response_match_score``
regressed, ``tool_trajectory_avg_score`` improved, ``safety`` inconclusive (cases swing both
ways), tokens up 10%, two rubrics, and two flaky cases: ``c01`` on the head
(``response_match_score`` 2/3) and ``c02`` on the baseline (``tool_trajectory_avg_score``
2/3). The gate is ``fail_on: any`` with ``max_regression: 0.1``.

Regenerate the golden files after an intended template change with
``ADK_EVAL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/report/test_render_golden.py`` and
review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.analysis.compare import Comparison, MetricComparison, MetricSide
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.chart import MAX_LABEL_CHARS, build_charts, metric_chart_markdown
from adk_eval_action.report.html import render_html
from adk_eval_action.report.html_view import case_records
from adk_eval_action.report.render import (
    CommentContext,
    render_comment,
    render_summary,
    with_evidence,
)
from adk_eval_action.results.model import RunMetadata, RunResults
from support.evidence_fixtures import evidence_context
from support.results_builder import metric, results, scores_side, tokens
from support.tables import compare

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
UPDATE = os.environ.get("ADK_EVAL_UPDATE_GOLDEN") == "1"
RUN_URL = "https://github.com/acme/agents/actions/runs/42"


def _case_runs(i: int, head: bool) -> list[list]:
    """Three runs of case ``c{i:02d}`` on one side (deterministic, no RNG)."""
    runs = []
    for r in range(3):
        jitter = (r - 1) * 0.01
        match = (0.7 if head else 0.9) + jitter
        if head and i == 1 and r == 1:
            match = 0.5  # fails its 0.6 threshold in one run: flaky on the head
        trajectory = (0.9 if head else 0.6) + jitter
        if not head and i == 2 and r == 1:
            trajectory = 0.4  # fails its 0.5 threshold in one run: flaky on the baseline
        safety = 0.6 + jitter + ((0.3 if i % 2 else -0.3) if head else 0.0)
        polite = 0.0 if head and i % 2 else 1.0
        runs.append(
            [
                metric("response_match_score", round(match, 4), threshold=0.6),
                metric("tool_trajectory_avg_score", round(trajectory, 4), threshold=0.5),
                metric(
                    "safety",
                    round(safety, 4),
                    threshold=0.2,
                    rubrics={"no_pii": 1.0, "polite": polite},
                ),
                tokens((110 if head else 100) + r),
            ]
        )
    return runs


def _mixed_side(head: bool) -> RunResults:
    return results(
        {f"c{i:02d}": _case_runs(i, head) for i in range(10)},
        sha="feedc0ffee" if head else "0ldbase000",
    )


def mixed_context() -> CommentContext:
    """The mixed case, compared, gated and charted as pipeline.finish does."""
    config = GateConfig(fail_on="any", max_regression=0.1, min_effect=0.02)
    head, base = _mixed_side(True), _mixed_side(False)
    comparison = compare(
        head,
        base,
        "`base.json`, commit 0ldbase000",
        min_effect=config.min_effect_for,
    )
    context = CommentContext(
        comparison=comparison,
        gate=decide(comparison, config),
        run_url=RUN_URL,
        results_path="adk-eval-results.json",
        chart=metric_chart_markdown(comparison),
    )
    return with_evidence(context, head, base)


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with ADK_EVAL_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from the golden file; if intended, regenerate with "
        "ADK_EVAL_UPDATE_GOLDEN=1 and review the diff"
    )


def test_mixed_case_has_each_classification() -> None:
    context = mixed_context()
    calls = {m.metric_name: m.classification for m in context.comparison.metrics}
    assert calls["response_match_score"] == "regressed"
    assert calls["tool_trajectory_avg_score"] == "improved"
    assert calls["safety"] == "inconclusive"
    flaky = {c.eval_id: (c.flaky_head, c.flaky_baseline) for c in context.comparison.flaky_cases}
    assert flaky == {
        "c01": ({"overall": (2, 3), "response_match_score": (2, 3)}, {}),
        "c02": ({}, {"overall": (2, 3), "tool_trajectory_avg_score": (2, 3)}),
    }
    assert not context.gate.passed


def test_golden_comment() -> None:
    comment = render_comment(mixed_context())
    assert "[Chart of baseline vs head per metric](" + RUN_URL in comment
    assert "| `c01` | head: overall 2/3, `response_match_score` 2/3<br>baseline: — |" in comment
    assert "| Metric | Baseline | Head | Δ and call | Interval | Pass rate and status |" in comment
    _check_golden("mixed_comment.md", comment)


def test_only_informational_metrics_need_no_correction() -> None:
    """A run whose only metric is informational (token_usage_v1) has no gated test: the
    method line says there is nothing to correct across, not "across 0 ... tests"."""
    side = {f"c{i}": [[tokens(100 + i)]] for i in range(6)}
    head, base = results(side, sha="feedc0ffee"), results(side, sha="0ldbase000")
    comparison = compare(head, base, "`base.json`", min_effect=GateConfig().min_effect_for)
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()),
                             run_url=RUN_URL, results_path="adk-eval-results.json")
    comment = render_comment(context)
    assert "one-sided 5% per direction, no gated metric or rubric, so no correction;" in comment
    assert "across 0" not in comment
    assert "No metric with a threshold was scored: only the informational ones below." in comment


def test_golden_summary_has_the_chart() -> None:
    summary = render_summary(mixed_context())
    assert summary.count("```mermaid\nxychart-beta horizontal") == 2
    _check_golden("mixed_summary.md", summary)


def test_golden_evidence_comment_and_summary() -> None:
    """Hand-built runs with invocations (:mod:`evidence_fixtures`): a wrong tool argument, a
    multi-turn case whose turn 2 differs, a rubric the judge said no to, a custom metric's
    reason."""
    comment = render_comment(evidence_context())
    assert '- get_weather(city="Paris")\n+ get_weather(city="paris")' in comment
    assert "@@ turn 2 of 3: expected (-) vs actual (+) @@" in comment
    assert "judge: it says EUR, not USD." in comment
    assert "`politeness` -1.000 (threshold ≥ 0): turn 1 rude: says 'obviously'" in comment
    _check_golden("evidence_comment.md", comment)
    _check_golden("evidence_summary.md", render_summary(evidence_context()))


def test_one_run_gets_an_interval_and_too_few_cases_say_so() -> None:
    """One run per case is tested like any other (the sign-flip test is exact for an
    unchanged agent); four cases cannot reach the corrected level, and the comment says
    why instead of calling the point delta."""
    base = results({f"c{i}": [[metric("response_match_score", 0.9)]] for i in range(12)})
    head = results({f"c{i}": [[metric("response_match_score", 0.7)]] for i in range(12)})
    comparison = compare(head, base, "b")
    comment = render_comment(
        CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    )
    assert "| −0.200 🔴 regressed | [−0.2, −0.2] |" in comment
    few = compare(
        results({f"c{i}": [[metric("response_match_score", 0.7)]] for i in range(4)}),
        results({f"c{i}": [[metric("response_match_score", 0.9)]] for i in range(4)}),
        "b",
    )
    comment = render_comment(CommentContext(comparison=few, gate=decide(few, GateConfig())))
    assert "⚠️ no interval: 4 paired cases x 1 run a side are too few" in comment
    assert "| −0.200 (worse) ❔ inconclusive |" in comment  # red only with a regressed call
    assert "Interval" not in comment.split("⚠️ no interval")[0]  # no interval: no column
    # What would decide it: 2 runs a side, each case's 6 labellings (p = 1/6**4 <= 0.048).
    assert (
        "- `response_match_score` (travel): 2 runs per case would decide a drop this size; "
        "with 1 the smallest possible p is 0.0625 (a call needs p ≤ 0.0476)"
    ) in comment


def test_a_collapse_of_two_cases_is_called_on_its_side_in_the_comment() -> None:
    """Two metrics of 2 cases x 2 runs, 1.000 → 0.000 in every head run: too few
    labellings for a bound on a gain (36, p ≥ 1/36 > 0.0238), enough for a drop (1/36 ≤
    0.0476). The table shows the one end it has, the call is 🔴, and no ❔ is left."""
    def side(score: float) -> RunResults:
        return results({
            case: [[metric("tool_trajectory_avg_score", score, threshold=0.0),
                    metric("response_match_score", score, threshold=0.0)]] * 2
            for case in ("a", "b")
        })

    comparison = compare(side(0.0), side(1.0), "b")
    comment = render_comment(
        CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    )
    assert "| −1.000 🔴 regressed | ≤ −1 |" in comment
    assert "❔" not in comment.split("Method:")[0] and "no interval" not in comment


def test_the_comment_names_the_eval_case_that_drove_a_call() -> None:
    """3 cases x 5 runs: case `a` passes every baseline run and fails every head run, the
    two others are noisy; the mean's p is 0.36, `a`'s own p = 1/252 (its runs alone)."""
    base = {"a": [1.0] * 5, "b": [0.0, 1.0, 0.0, 1.0, 0.0], "c": [1.0, 0.0, 1.0, 0.0, 1.0]}
    head = {"a": [0.0] * 5, "b": [1.0, 1.0, 1.0, 0.0, 1.0], "c": [1.0, 1.0, 0.0, 1.0, 1.0]}
    comparison = compare(scores_side(head), scores_side(base), "b")
    comment = render_comment(
        CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    )
    assert "| −0.133 🔴 regressed (eval case `a`) |" in comment
    assert "and 1 eval case's own test (worse side)" in comment
    assert (
        "Called 🔴 by an eval case's own runs (its baseline and head runs exchanged, 1 such "
        "test in the correction):\n- `response_match_score` (travel): eval case `a` (smoke) "
        "1 → 0, p = 0.00397 ≤ 0.0238"
    ) in comment


# --- chart -------------------------------------------------------------------------------

_LINE = re.compile(
    r'^(xychart-beta horizontal|    title "[^"]*"|    x-axis \["[^"]*"(, "[^"]*")*\]'
    r'|    y-axis "[^"]*" -?\d+(\.\d+)? --> -?\d+(\.\d+)?|    (bar|line) \[-?\d+(\.\d+)?'
    r"(, -?\d+(\.\d+)?)*\])$"
)


#: (name, baseline mean, head mean, side fields) of one metric of a hand-made comparison.
ChartRow = tuple[str, float | None, float | None, dict[str, Any]]


def _comparison(rows: list[ChartRow]) -> Comparison:
    """A comparison of the given (name, baseline mean, head mean, side fields) rows."""
    metrics = []
    for name, base, head, fields in rows:
        side = {"min_value": 0.0, "max_value": 1.0, **fields}
        metrics.append(
            MetricComparison(
                suite="travel",
                metric_name=name,
                baseline=None if base is None else MetricSide(mean=base, **side),
                head=None if head is None else MetricSide(mean=head, **side),
                delta=None if base is None or head is None else head - base,
            )
        )
    return Comparison(
        has_baseline=any(r[1] is not None for r in rows),
        baseline_note="b",
        head_metadata=RunMetadata(),
        metrics=metrics,
    )


def _blocks(markdown: str) -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"```mermaid\n(.*?)\n```", markdown, re.S)]


def test_twenty_metrics_make_two_readable_charts() -> None:
    rows: list[ChartRow] = [
        (f"custom_metric_number_{i:02d}", 0.5 + i / 100, 0.6, {}) for i in range(20)
    ]
    blocks = _blocks(metric_chart_markdown(_comparison(rows)))
    assert len(blocks) == 2
    for block in blocks:
        assert all(_LINE.match(line) for line in block), block
        (axis,) = [line for line in block if "x-axis" in line]
        assert axis.count('", "') == 9  # ten metrics per chart
        assert any(line.startswith("    bar [") for line in block)
        assert any(line.startswith("    line [") for line in block)
    assert 'title "Scores (1 of 2)"' in blocks[0][1]


def test_other_ranges_and_informational_metrics_are_relative_to_baseline() -> None:
    rows: list[ChartRow] = [
        ("response_match_score", 0.8, 0.6, {}),
        ("brevity", 10.0, 15.0, {"max_value": 1000.0, "higher_is_better": False}),
        (
            "token_usage_v1",
            200.0,
            150.0,
            {
                "informational": True,
                "min_value": None,
                "max_value": None,
                "higher_is_better": False,
            },
        ),
        ("zero_based", 0.0, 2.0, {"max_value": None}),
    ]
    charts = build_charts(_comparison(rows))
    scores, relative = charts.charts
    assert [r.label for r in scores.rows] == ["response_match_score"]
    assert [(r.label, r.head) for r in relative.rows] == [
        ("brevity ↓", 150.0),
        ("token_usage_v1 ↓", 75.0),
    ]
    assert relative.y_max == 200.0 and relative.y_min == 0.0
    assert charts.not_charted == ["`zero_based` (baseline is 0)"]
    # One metric alone: baseline and head as two bars (a one-point line is invisible).
    lines = scores.to_mermaid().splitlines()
    assert lines[2] == '    x-axis ["response_match_score baseline", "response_match_score head"]'
    assert lines[4] == "    bar [0.8, 0.6]"


def test_no_baseline_draws_head_bars_only() -> None:
    rows: list[ChartRow] = [
        ("a", None, 0.5, {}), ("b", None, 1e-9, {}), ("tokens", None, 5.0, {"max_value": None}),
    ]
    markdown = metric_chart_markdown(_comparison(rows))
    (block,) = _blocks(markdown)
    assert "    bar [0.5, 0]" in block and not any("line" in line for line in block)
    assert "Not charted: `tokens` (no baseline to scale by)." in markdown


def test_labels_are_sanitised_shortened_and_unique() -> None:
    long = "rubric_based_final_response_quality_v1_of_the_agent"
    rows: list[ChartRow] = [
        ('say "hi" `now`', 0.5, 0.5, {}),
        (long, 0.5, 0.5, {}),
        (long.replace("quality", "qualitz"), 0.5, 0.5, {}),
    ]
    (chart,) = build_charts(_comparison(rows)).charts
    labels = [r.label for r in chart.rows]
    assert labels[0] == "say 'hi' 'now'"
    assert all(len(label) <= MAX_LABEL_CHARS for label in labels)
    assert len(set(labels)) == 3 and "…" in labels[1]


def test_nothing_to_draw_is_empty() -> None:
    assert metric_chart_markdown(_comparison([])) == ""


@pytest.mark.parametrize("max_per_chart", [0, -1])
def test_max_per_chart_must_be_positive(max_per_chart: int) -> None:
    with pytest.raises(ValueError, match="max_per_chart"):
        build_charts(_comparison([("a", 0.1, 0.2, {})]), max_per_chart)


def test_red_and_green_appear_only_beside_a_regressed_or_improved_call():
    """Red means the agent got worse (a regressed call), green that it got better; a move
    within noise (inconclusive, no call) reads neutral: ``(worse)``/``(better)``; an unchanged
    call gives the sign alone."""
    rows = [
        line for path in sorted(GOLDEN.glob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")
    ]
    assert any("(worse) ❔ inconclusive" in line for line in rows)
    for line in rows:
        assert "🔴" not in line or "🔴 regressed" in line, line
        assert "🟢" not in line or "🟢 improved" in line, line
        if "inconclusive" in line or "unchanged" in line:
            assert "🔴" not in line and "🟢" not in line, line
        if "⚪ unchanged" in line:  # within ±min_effect: no word of a direction either
            assert "(worse)" not in line and "(better)" not in line, line


def test_a_gated_metric_without_a_paired_test_is_named_not_denied() -> None:
    """One eval case a side: the threshold-gated metric has no interval (no paired test),
    and the method line says so instead of "no gated metric or rubric"."""
    head = results({"c0": [[metric("response_match_score", 0.4)]]}, sha="feedc0ffee")
    base = results({"c0": [[metric("response_match_score", 0.9)]]}, sha="0ldbase000")
    comparison = compare(head, base, "`base.json`", min_effect=GateConfig().min_effect_for)
    assert comparison.tests is not None and comparison.tests.tests == 0
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()),
                             run_url=RUN_URL, results_path="adk-eval-results.json")
    comment = render_comment(context)
    assert ("one-sided 5% per direction, 1 gated metric without a paired test (no interval: "
            "its row says why), so no correction;") in comment
    assert "no gated metric or rubric" not in comment
    page = render_html(context, case_records(head), case_records(base))
    assert "1 gated metric without a paired test (no interval: its row says why)" in page

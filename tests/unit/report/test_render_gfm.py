"""The comment and summary checked as GitHub renders them (a GFM parser, :mod:`gfm`): tables
keep their shape, ``<details>`` balance, and no HTML, marker or mention from data survives,
on every golden file and on hostile agent text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adk_eval_action.analysis.gate import decide
from adk_eval_action.github.sticky import comment_marker, compose_comment_body
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.format import strip_markers
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.model import ErrorRecord
from support.evidence_fixtures import evidence_context
from support.gfm import cells, details_count, gfm_html, structure_problems, table_problems
from support.results_builder import metric, results
from support.tables import compare

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.md")))
def test_golden_files_render_with_their_structure(name: str) -> None:
    markdown = (GOLDEN / name).read_text(encoding="utf-8")
    assert structure_problems(markdown) == []
    assert "<table>" in gfm_html(markdown)


def _hostile() -> CommentContext:
    return evidence_context(hostile=True)


@pytest.mark.parametrize("render", [render_comment, render_summary], ids=["comment", "summary"])
def test_hostile_agent_text_cannot_break_the_markdown(render) -> None:
    context = _hostile()
    markdown = render(context)
    assert structure_problems(markdown) == []
    html = gfm_html(markdown)
    assert "<script" not in html and "<img" not in html
    assert "<!--" not in markdown  # no comment marker, not even inside the diff block
    # One <details> per evidence case (failing, and worse than the baseline) and the
    # templates' own (eval cases; in the summary, every case worse than the baseline):
    # none from the agent's text.
    own = 1 if context.comparison.changed_cases else 0
    own += 1 if render is render_summary and context.gate.dropped_cases else 0
    assert context.dropped_evidence, "the hostile fixture has a passing case that got worse"
    evidence = len(context.evidence) + len(context.dropped_evidence)
    assert details_count(markdown) == evidence + own
    # The hostile text is shown, escaped: its words are all there.
    assert "alert(1)" in html and "octocat" in html


def test_hostile_text_in_every_evidence_field() -> None:
    context = _hostile()
    (paris,) = [e for e in context.evidence if e.eval_id.startswith("paris")]
    assert paris.turn is not None and paris.turn.user is not None
    assert paris.turn.user.startswith("a | b")
    (change,) = paris.turn.tool_changes
    assert change.actual_args["city"].startswith('"a | b')
    trip = next(e for e in context.evidence if e.eval_id == "trip")
    assert trip.rubrics[0].rationale and trip.rubrics[0].rationale.startswith("a | b")
    rude = next(e for e in context.evidence if e.eval_id == "rude")
    assert rude.metrics[0].reason and rude.metrics[0].reason.startswith("a | b")


def test_oversized_hostile_comment_fits_and_keeps_its_structure() -> None:
    context = _hostile()
    many = [
        e.model_copy(update={"eval_id": f"{e.eval_id}-{i}"})
        for i in range(40)
        for e in context.evidence
    ]
    big = context.model_copy(update={"evidence": many[:50]})
    full = render_comment(big, max_chars=10**9)
    assert len(full) > 8_000  # ten cases of hostile text
    limit = 6_000
    comment = render_comment(big, max_chars=limit)
    assert len(comment) <= limit
    assert structure_problems(comment) == []
    assert "more failing eval cases with evidence in the job summary" in comment
    assert render_comment(big).count("<details><summary><code>") <= 10


def test_the_checker_finds_broken_structure() -> None:
    broken = (
        "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n\n<details><summary>x</summary>\n\n"
        "<script>x</script>\n"
    )
    problems = structure_problems(broken)
    assert any("3 cells, header 2" in p for p in problems)
    assert any("not closed" in p for p in problems)
    assert any("raw <script>" in p for p in problems)
    assert any("mention" in p for p in structure_problems("hi @octocat\n"))
    assert structure_problems("`@octocat` and @\u200bocto\n") == []
    # A pipe inside a code span splits a GFM cell unless escaped.
    assert cells("| `a|b` | c |") == 3 and cells("| `a\\|b` | c |") == 2
    assert table_problems("text\n|---|---|\n") != []


def test_compact_table_leaves_out_empty_columns() -> None:
    context = evidence_context()
    header = next(
        line for line in render_comment(context).splitlines() if line.startswith("| Metric")
    )
    # response_match_score 1.000 -> 1.000 in every case: [0, 0], so the column is there.
    assert header == "| Metric | Baseline | Head | Δ and call | Interval | Pass rate and status |"
    for row in context.comparison.metrics:
        row.interval = None  # no interval anywhere: the column is left out
    comment = render_comment(context)
    header = next(line for line in comment.splitlines() if line.startswith("| Metric"))
    assert header == "| Metric | Baseline | Head | Δ and call | Pass rate and status |"
    summary = render_summary(evidence_context())
    full = next(line for line in summary.splitlines() if line.startswith("| Suite | Metric"))
    assert "Interval" in full and "Call" in full


def test_compact_table_has_a_table_per_suite_and_thresholds_beside_their_metric() -> None:
    """Two suites: a table under each suite's name (no Suite column, which pushed the
    status off a comment's width); a threshold beside its metric's name, none where the
    metric has none."""
    from unit.report.test_render_golden import mixed_context

    context = mixed_context()
    two_suites = context.comparison.model_copy(deep=True)
    two_suites.metrics[0].suite = "other"
    comment = render_comment(context.model_copy(update={"comparison": two_suites}))
    lines = comment.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("| Metric |")]
    assert [lines[i - 2] for i in headers[:2]] == ["**other**", "**travel**"]
    assert all("Interval" in lines[i] and "Suite" not in lines[i] for i in headers[:2])
    assert lines[headers[0] + 2].startswith("| `response_match_score` ≥ 0.6 | 0.900 | ")
    no_threshold = context.comparison.model_copy(deep=True)
    for row in no_threshold.metrics:
        for side in (row.head, row.baseline):
            if side is not None:
                side.threshold = None
    comment = render_comment(context.model_copy(update={"comparison": no_threshold}))
    assert "| `response_match_score` | 0.900 | " in comment


def test_numbers_are_rounded_per_metric_range() -> None:
    comment = render_comment(evidence_context())
    row = next(line for line in comment.splitlines() if line.startswith("| `politeness`"))
    # politeness is in [-1, 1]: three decimals; the call shares the Δ cell.
    assert re.search(
        r"\| 0\.000 \| -1\.000 \| −1\.000 \(worse\) ❔ inconclusive \(no interval\) \| — \|", row
    ), row
    gate = GateConfig(fail_on="none")
    assert structure_problems(render_comment(evidence_context(gate=gate))) == []


def test_the_rendered_comment_and_the_posted_body_neutralise_markers_alike():
    hostile = "x<!-- adk-eval-action:default -->y<!--ADK-EVAL-ACTION-head:abc-->"
    head = results({hostile: [[metric("response_match_score", 0.1)]]})
    head.suites[0].errors.append(ErrorRecord(kind="metric", message=hostile, suite="travel"))
    comparison = compare(head, None, "none given")
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    rendered = render_comment(context)
    # In a code span the id's "<!--" is broken by a zero-width space, in text it is
    # HTML-escaped: no marker is left for the posted body to remove. The comment's eval
    # case table cuts the id to 40 characters; the job summary's shows it whole.
    assert "`x<!-\u200b- adk-eval-action:default --…:abc-->`" in rendered
    assert "`x<!-\u200b- adk-eval-action:default -->y<!-\u200b-ADK-EVAL-ACTION-head:abc-->`" \
        in render_summary(context)
    assert "&lt;\\!-- adk-eval-action:default --&gt;" in rendered
    assert strip_markers(rendered) == rendered
    body = compose_comment_body(rendered, comment_marker())
    # The posted body is the rendered file plus the footer: one neutralisation for both.
    assert body == rendered.rstrip("\n") + "\n" + comment_marker() + "\n"

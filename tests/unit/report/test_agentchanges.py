"""The agent's changes in the comment, the job summary and the HTML report
(report.agentchange_text, ``_agent.md.j2``, ``report.html.j2``): collapsed, bounded, escaped, and
absent when nothing changed."""

from __future__ import annotations

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.agentchange_text import COMMENT_HUNK_LINES, COMMENT_HUNKS
from adk_eval_action.report.html import render_html
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.model import RunResults
from support.gfm import details_count, gfm_html, structure_problems
from support.results_builder import metric, results
from support.tables import compare

HOSTILE = "@octocat <img src=x onerror=alert(1)> ``` </details> <!-- adk-eval-action:x -->"


def side(instruction: str, model: str = "gemini-2.5-flash", tool: str = "get_weather",
         agent: str = "a") -> RunResults:
    run = results({"c": [[metric("m", 0.9)]]}, suite="s")
    run.suites[0].agent_details = {"k": {
        "name": agent, "instructions": instruction,
        "tool_declarations": [{"function_declarations": [{"name": tool}]}]}}
    run.suites[0].agents = [AgentRecord(name=agent, kind="LlmAgent", model=model)]
    return run


def context(head: RunResults, baseline: RunResults | None) -> CommentContext:
    comparison = compare(head, baseline, "baseline")
    return CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))


def hunks(count: int, size: int, pad: str = "") -> tuple[str, str]:
    """Two instructions whose diff has ``count`` hunks, each changing ``size`` lines (far
    apart, so no two hunks join), each line ending in ``pad``."""
    before = [f"line {i}{pad}" for i in range(count * (size + 10))]
    after = [f"new {line}" if i % (size + 10) < size else line for i, line in enumerate(before)]
    return "\n".join(before), "\n".join(after)


def section(markdown: str) -> str:
    start = markdown.index("<details><summary>🔧 ")
    return markdown[start:markdown.index("\n</details>", start)]


def test_the_comment_shows_the_first_lines_of_each_hunk_the_summary_all() -> None:
    before, after = hunks(4, 5)
    ctx = context(side(after), side(before))
    [change] = ctx.comparison.agent_changes[0].instructions
    # @@, a line of context before (none before the first line), 5 out, 5 in, one after.
    assert [len(h) for h in change.hunks] == [12, 13, 13, 13]
    comment = section(render_comment(ctx))
    shown = COMMENT_HUNKS * COMMENT_HUNK_LINES
    block = comment[comment.index("  ```diff\n"):]
    diff_lines = block[:block.index("\n  ```\n")].split("\n")[1:]
    assert len(diff_lines) == shown
    assert comment.count("  @@ ") == COMMENT_HUNKS
    assert f"  … {12 + 3 * 13 - shown} more diff lines in the job summary." in comment
    summary = section(render_summary(ctx))
    assert summary.count("  @@ ") == 4 and "+new line 45" in summary
    assert "more diff lines" not in summary


def test_nothing_is_shown_without_a_change_or_a_baseline() -> None:
    same = side("Be brief.")
    for ctx in (context(same, same.model_copy(deep=True)), context(same, None)):
        assert "🔧" not in render_comment(ctx) and "🔧" not in render_summary(ctx)
        assert 'id="agent"' not in render_html(ctx, {})


def test_agent_text_is_escaped_everywhere() -> None:
    ctx = context(side(f"Be brief. {HOSTILE}", model=HOSTILE, tool=HOSTILE),
                  side("Be brief."))
    for markdown in (render_comment(ctx), render_summary(ctx)):
        assert structure_problems(markdown) == []
        assert "<!--" not in markdown
        html = gfm_html(markdown)
        assert "<img" not in html and "alert(1)" in html
        assert details_count(markdown) == 1 + (1 if ctx.comparison.changed_cases else 0)
    page = render_html(ctx, {})
    agent = page[page.index('<section id="agent">'):]
    agent = agent[:agent.index("</section>")]
    assert "<img" not in agent and "&lt;img src=x onerror=alert(1)&gt;" in agent


def test_the_diffs_are_dropped_before_the_evidence_to_fit_the_limit() -> None:
    before, after = hunks(3, 5, " and more words" * 8)
    ctx = context(side(after), side(before))
    full = render_comment(ctx)
    without = render_comment(ctx.model_copy(update={"show_agent_diffs": False}))
    assert "```diff" not in without and "the diff in the job summary" in without
    assert len(full) > len(without) + 1500
    cut = render_comment(ctx, max_chars=len(without) + 600)
    assert len(cut) < len(full) and "```diff" not in cut
    assert "Left out to fit GitHub's comment size limit: " in cut
    assert "the agent's instruction diffs" in cut


def test_several_suites_are_named() -> None:
    head, base = side("new"), side("old")
    for run in (head, base):
        other = run.suites[0].model_copy(update={"name": "t"}, deep=True)
        run.suites.append(other)
    markdown = render_comment(context(head, base))
    assert "🔧 The agents of 2 suites changed since the baseline: s: the instruction of a " \
           "(+1 −1 lines); t: the instruction of a (+1 −1 lines)" in markdown
    assert "Suite `s`:" in markdown and "Suite `t`:" in markdown

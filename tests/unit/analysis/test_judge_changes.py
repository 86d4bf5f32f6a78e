"""A judge metric judged differently from the baseline (analysis.comparability.judge_changes)
and the line that says so beside its deltas (report.judging): where it goes, what it says."""

from __future__ import annotations

from adk_eval_action.analysis.comparability import judge_changes
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.html import render_html
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.judgesetup import JudgeSetup
from adk_eval_action.results.model import RunResults
from support.results_builder import metric, results
from support.tables import compare

RUBRIC = "rubric_based_final_response_quality_v1"


def side(judge: str = "gemini-2.5-flash", samples: int | None = 5, prompt: str | None = "aaa",
         adk: str = "2.13.0", rubrics: bool = True) -> RunResults:
    score = metric(RUBRIC, 1.0, rubrics={"friendly": 1.0} if rubrics else None)
    run = results({"c": [[score, metric("response_match_score", 0.9)]]}, suite="s")
    run.metadata.adk_version = adk
    run.suites[0].judge_models = {RUBRIC: judge}
    run.suites[0].judge_setup = (None if samples is None and prompt is None
                                 else {RUBRIC: JudgeSetup(num_samples=samples, prompt=prompt)})
    return run


def test_each_difference_of_the_judging_is_found() -> None:
    found = judge_changes(side("gemini-2.5-pro", 1, "bbb"), side())
    assert [(c.suite, c.metric_name, c.what, c.baseline, c.head) for c in found] == [
        ("s", RUBRIC, "judge_model", "gemini-2.5-flash", "gemini-2.5-pro"),
        ("s", RUBRIC, "num_samples", "5", "1"),
        ("s", RUBRIC, "prompt", "aaa", "bbb"),
    ]
    assert judge_changes(side(), side()) == []


def test_what_a_side_did_not_record_is_not_compared() -> None:
    """A baseline written before the judging was recorded: only the judge model, which it
    did record, is compared; one that judged no such metric is not compared at all."""
    old = side(samples=None, prompt=None)
    assert judge_changes(side(samples=1, prompt="bbb"), old) == []
    assert [c.what for c in judge_changes(side("gemini-2.5-pro", 1), old)] == ["judge_model"]
    unjudged = side()
    unjudged.suites[0].judge_models = {}
    assert judge_changes(side("gemini-2.5-pro"), unjudged) == []


def context(head: RunResults, baseline: RunResults) -> CommentContext:
    comparison = compare(head, baseline, "baseline")
    return CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))


LINE = (f"⚖️ Judged differently from the baseline: `{RUBRIC}`: num_samples 5 → 1, judge "
        "prompt `aaa` → `bbb` (google-adk 2.12.0 → 2.13.0); its deltas measure the judge's "
        "change as well as the agent's.")


def test_the_line_is_above_the_rubric_table() -> None:
    ctx = context(side(samples=1, prompt="bbb"), side(adk="2.12.0"))
    for markdown in (render_comment(ctx), render_summary(ctx)):
        assert markdown.count(LINE) == 1
        assert markdown.index("### Rubrics") < markdown.index(LINE) < markdown.index(
            "| `friendly`" if "| `friendly`" in markdown else "`friendly`")
    page = render_html(ctx, {})
    rubrics = page[page.index('<section id="rubrics">'):]
    assert (f'<p class="warn">Judged differently from the baseline: {RUBRIC}: num_samples '
            "5 → 1, judge prompt aaa → bbb (google-adk 2.12.0 → 2.13.0); its deltas measure "
            "the judge&#39;s change as well as the agent&#39;s.</p>"
            ) in rubrics[:rubrics.index("</section>")]


def test_without_rubric_rows_it_is_below_the_metric_table() -> None:
    ctx = context(side(samples=1, prompt="bbb", rubrics=False),
                  side(adk="2.12.0", rubrics=False))
    comment = render_comment(ctx)
    assert "### Rubrics" not in comment and comment.count(LINE) == 1
    assert comment.index("| `response_match_score`") < comment.index(LINE)
    # Trimmed to fit, the rubric table goes and the line moves below the metric table.
    full = context(side(samples=1, prompt="bbb"), side(adk="2.12.0"))
    trimmed = render_comment(full.model_copy(update={"show_rubrics": False}))
    assert "### Rubrics" not in trimmed and trimmed.count(LINE) == 1


def test_no_line_when_the_judging_is_the_same() -> None:
    ctx = context(side(), side())
    assert "Judged differently" not in render_comment(ctx) + render_summary(ctx)
    assert "Judged differently" not in render_html(ctx, {})

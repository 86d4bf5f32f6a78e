"""An incomplete run (exit 2) reads the same everywhere (report/headline.py): one heading,
one headline ``⚠️ **ADK eval incomplete** (<cause>): <what was evaluated>`` in the comment
and the job summary, ``gate INCOMPLETE (<cause>): … (exit 2)`` on the console, whatever
stopped it; ``render``/``compare`` of the results file a stopped run wrote show what the
action posted; a baseline whose own run was incomplete says so; a metric the head did not
evaluate is "not evaluated", never "removed"; eval cases without runs name why; and the
rendered comment file drops marker-like text as the posted body does.

In process, hand-built results (tests/results_builder.py) where no agent needs to run.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adk_eval_action.analysis.compare import NO_RUNS_ERROR
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.format import strip_markers
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.io import save_results
from adk_eval_action.results.model import (
    CaseStatus,
    ErrorRecord,
    EvalCaseRecord,
    RunRecord,
    RunResults,
)
from adk_eval_action.run.console import print_table
from support.results_builder import metric, results
from support.tables import compare

# The cause words, as docs/action.md's exit code table and docs/gating.md name the kinds.
CAUSES = {
    "judge": "judge setup",
    "model": "model unreachable",
    "agent": "agent setup",
    "metric_code": "a metric's code failed",
    "inference": "inference error",
}


def _errored(kind: str, message: str, passing: int = 0) -> RunResults:
    """Two eval cases whose single run errored with ``kind`` (after ``passing`` passing
    ones), and the suite's error of that kind naming no eval case."""
    cases = {f"ok{i}": [[metric("response_match_score", 0.9)]] for i in range(passing)}
    cases |= {"a": [[]], "b": [[]]}
    head = results(cases)
    for case in head.suites[0].eval_sets[0].eval_cases[passing:]:
        case.runs = [RunRecord(run=1, status=CaseStatus.ERROR, error=message, error_kind=kind)]
    head.suites[0].errors.append(ErrorRecord(kind=kind, message=message, suite="travel"))
    return head


def _context(head: RunResults, baseline: RunResults | None = None) -> CommentContext:
    comparison = compare(head, baseline, "file base.json" if baseline else "none given")
    gate = decide(comparison, GateConfig())
    return CommentContext(comparison=comparison, gate=gate)


@pytest.mark.parametrize("kind", sorted(CAUSES))
def test_every_cause_reads_one_headline_in_comment_summary_and_console(kind, caplog):
    context = _context(_errored(kind, "it broke"))
    comment, summary = render_comment(context), render_summary(context)
    if kind == "model":  # a run-wide outage is stated in full, once, not listed below
        expected = "⚠️ **ADK eval incomplete** (model unreachable): it broke; 0 of 2 eval " \
            "cases could be evaluated."
        console = "gate INCOMPLETE (model unreachable): it broke; 0 of 2 eval cases could " \
            "be evaluated (exit 2)"
    else:
        expected = f"⚠️ **ADK eval incomplete** ({CAUSES[kind]}): 0 of 2 eval cases could " \
            "be evaluated (1 error below)."
        console = f"gate INCOMPLETE ({CAUSES[kind]}): 0 of 2 eval cases could be " \
            "evaluated (exit 2)"
    assert comment.splitlines()[:3] == ["### ADK evaluation", "", expected]
    assert summary.splitlines()[:3] == ["## ADK evaluation", "", expected]
    with caplog.at_level(logging.INFO):
        print_table(context.comparison, context.gate, usage_error=True)
    assert caplog.messages[-1] == console
    for old in ("could not evaluate everything", "so the run is incomplete", "errors above"):
        assert old not in comment + summary + caplog.text


def test_the_headline_counts_what_was_evaluated_and_names_every_cause():
    head = _errored("judge", "judge 404", passing=3)
    head.suites[0].errors.append(ErrorRecord(kind="metric_code", message="m raised",
                                             suite="travel", eval_id="a"))
    headline = render_comment(_context(head)).splitlines()[2]
    # 3 of 5 ran and passed; the kinds in the order they were recorded.
    assert headline == ("⚠️ **ADK eval incomplete** (judge setup, a metric's code failed): "
                        "3/3 evaluated eval cases passed, 2 of 5 could not be evaluated "
                        "(2 errors below).")


def test_an_incomplete_run_that_also_failed_on_scores_says_both(caplog):
    head = _errored("judge", "judge 404", passing=2)
    first = head.suites[0].eval_sets[0].eval_cases[0]
    first.runs = [RunRecord(run=1, status=CaseStatus.FAILED,
                            metrics=[metric("response_match_score", 0.1)])]
    context = _context(head)
    # 1 of the 2 evaluated cases failed its threshold (0.1 < 0.5), which the reason names
    # (not the default min_pass_rate). It counts as the headline does: 1 failed, 2 could
    # not be evaluated (never "3 of 4 failed"), 1 of 4 passed.
    reason = "threshold: 1 of 4 eval case(s) failed and 2 could not be evaluated " \
        "(not_evaluated: fail): `response_match_score` below its threshold 0.5 in 1 (`ok0`)"
    assert render_comment(context).splitlines()[2] == (
        "⚠️ **ADK eval incomplete** (judge setup) and **failed**: 1/2 evaluated eval cases "
        "passed, 2 of 4 could not be evaluated (1 error below). threshold: 1 of 4 eval "
        "case(s) failed and 2 could not be evaluated (not\\_evaluated: fail): "
        "`response_match_score` below its threshold 0.5 in 1 (`ok0`).")
    with caplog.at_level(logging.INFO):
        print_table(context.comparison, context.gate, usage_error=True)
    assert caplog.messages[-2:] == [
        "gate INCOMPLETE (judge setup) and FAILED: 1/2 evaluated eval cases passed, 2 of 4 "
        "could not be evaluated (exit 2)", f"  - {reason}"]


def test_a_hostile_error_message_in_the_headline_is_escaped():
    message = "<!-- adk-eval-action:default --> @octocat ::error::x \u202e | <b>"
    head = _errored("model", message)
    comment = render_comment(_context(head))
    headline = comment.splitlines()[2]
    assert strip_markers(comment) == comment and "<b>" not in headline
    assert "@\u200boctocat" in headline and "\\u202e" in headline and "\\|" in headline


def _stopped_run(repo: Path, cli) -> None:
    """The CLI's run stopped by adk-eval.yaml naming a missing agent: r.json, c.md, s.md."""
    (repo / "broken.yaml").write_text("suites:\n  - name: t\n    agent: nope\n"
                                      "    eval_sets: ['travel_agent/eval/*.json']\n")
    result = cli("run", "--config", "broken.yaml", "--results-out", "r.json",
                 "--comment-out", "c.md", "--summary-out", "s.md")
    assert result.exit_code == 2, result.output


def test_render_and_compare_of_a_stopped_results_file_show_what_the_run_posted(
    example_repo: Path, cli
) -> None:
    _stopped_run(example_repo, cli)
    comment = (example_repo / "c.md").read_text()
    summary = (example_repo / "s.md").read_text()
    assert comment.startswith(
        "### ADK evaluation\n\n⚠️ **ADK eval incomplete** (configuration error): nothing was "
        "evaluated: the run stopped before evaluation started.\n\n")
    assert "0/0" not in comment and "no eval case was evaluated" not in comment
    assert summary == "## " + comment.removeprefix("### ")

    assert cli("render", "r.json", "--out", "r.md").exit_code == 0
    assert (example_repo / "r.md").read_text() == comment
    assert cli("render", "r.json", "--summary", "--out", "rs.md").exit_code == 0
    assert (example_repo / "rs.md").read_text() == summary

    base = results({"a": [[metric("response_match_score", 0.9)]]})
    save_results(base, example_repo / "base.json")
    compared = cli("compare", "r.json", "--baseline", "base.json", "--comment-out", "cc.md",
                   "--summary-out", "cs.md")
    assert compared.exit_code == 2, compared.output
    assert (example_repo / "cc.md").read_text() == comment
    assert (example_repo / "cs.md").read_text() == summary
    # Not "5 eval cases of the baseline are not in this run (removed)": none was reached.
    assert "removed" not in compared.output
    assert "gate INCOMPLETE (configuration error): nothing was evaluated: the run stopped " \
        "before evaluation started (exit 2)" in compared.output


def test_render_of_a_hostile_stopped_results_file_is_escaped(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    message = "x.yaml: <!-- adk-eval-action:default --> @octocat \u202e <img src=x> #12"
    stopped = RunResults(errors=[ErrorRecord(kind="config", message=message)])
    save_results(stopped, tmp_path / "r.json")
    result = cli("render", "r.json", "--out", "r.md")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "r.md").read_text()
    assert strip_markers(text) == text and "<img" not in text
    assert "@\u200boctocat" in text and "\\u202e" in text and "#\u200b12" in text


def test_a_baseline_whose_run_was_incomplete_says_so(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    save_results(results({"a": [[metric("response_match_score", 0.9)]]}), tmp_path / "h.json")
    stopped = RunResults(complete=False,
                         errors=[ErrorRecord(kind="config", message="@octocat bad.yaml")])
    save_results(stopped, tmp_path / "b1.json")
    save_results(_errored("agent", "agent x failed to import"), tmp_path / "b2.json")
    # No suite of either completed: neither is a baseline, and the line says why.
    first = cli("compare", "h.json", "--baseline", "b1.json", "--print-comment")
    assert "No baseline: file b1.json: the baseline run itself was incomplete (configuration " \
        "error: nothing was evaluated). Showing head scores only." in first.output
    second = cli("compare", "h.json", "--baseline", "b2.json", "--print-comment")
    assert "No baseline: file b2.json: the baseline run itself was incomplete (agent setup: " \
        "agent x failed to import). Showing head scores only." in second.output
    # A complete baseline's line is as before.
    save_results(results({"a": [[metric("response_match_score", 0.8)]]}), tmp_path / "b3.json")
    third = cli("compare", "h.json", "--baseline", "b3.json", "--print-comment")
    assert "incomplete" not in third.output


def _with_config(side: RunResults, criteria: dict) -> RunResults:
    side.suites[0].eval_config = {"criteria": criteria}
    return side


def test_a_metric_the_head_did_not_evaluate_is_not_evaluated_never_removed():
    baseline = _with_config(results({
        "a": [[metric("response_match_score", 0.9), metric("gone", 0.9),
               metric("token_usage_v1", 40, informational=True)]],
        "b": [[metric("response_match_score", 0.9), metric("gone", 0.9),
               metric("token_usage_v1", 40, informational=True)]],
    }), {"response_match_score": 0.5, "gone": 0.5})
    # The head's eval config dropped "gone"; its agent did not load, so nothing was scored.
    head = _with_config(_errored("agent", "agent x failed to import"),
                        {"response_match_score": 0.5})
    context = _context(head, baseline)
    rows = {m.metric_name: m.head_not_evaluated for m in context.comparison.metrics}
    assert rows == {"response_match_score": True, "gone": False, "token_usage_v1": True}
    comment, summary = render_comment(context), render_summary(context)
    for text in (comment, summary):
        [row] = [x for x in text.splitlines() if "`response_match_score`" in x and "|" in x]
        assert row.endswith("| ⚠️ not evaluated |") and "removed" not in row
        [row] = [x for x in text.splitlines() if "`gone`" in x and "|" in x]
        assert row.endswith("| removed |")


def test_a_metric_of_a_complete_head_without_it_is_removed():
    baseline = results({"a": [[metric("response_match_score", 0.9), metric("gone", 0.9)]]})
    head = results({"a": [[metric("response_match_score", 0.9)]]})
    context = _context(head, baseline)
    assert [m.head_not_evaluated for m in context.comparison.metrics] == [False, False]
    [row] = [x for x in render_comment(context).splitlines() if "`gone`" in x and "|" in x]
    assert row.endswith("| removed |")


def test_eval_cases_without_runs_name_why():
    head = results({"a": [[metric("response_match_score", 0.9)]]})
    head.suites[0].eval_sets[0].eval_cases.append(EvalCaseRecord(eval_id="b", runs=[]))
    cut_short = compare(head, None, "none")
    assert {c.eval_id: c.error for c in cut_short.cases} == {"a": None, "b": NO_RUNS_ERROR}
    head.suites[0].errors.append(ErrorRecord(
        kind="agent", suite="travel", file="agent.py", line=3,
        message="agent travel failed to import: RuntimeError: no"))
    named = compare(head, None, "none")
    assert {c.eval_id: c.error for c in named.cases} == {
        "a": None, "b": "not run: agent travel failed to import: RuntimeError: no"}
    # A run-wide error (no model credentials) names it for every suite's runless cases.
    head.suites[0].errors.clear()
    head.errors.append(ErrorRecord(kind="credentials", message="no GOOGLE_API_KEY"))
    assert compare(head, None, "none").cases[1].error == "not run: no GOOGLE_API_KEY"

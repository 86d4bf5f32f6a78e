"""Kinds of google-adk evaluation problem reported in public give their right values.

Each folder of ``tests/fixtures/reported/`` is a small repository of this project's own
that reproduces one reported kind (its README names the google-adk report and the right
value). Each test copies one folder as it is and runs ``adk-eval-action run ...
--baseline none`` in it through real google-adk, with the stand-in models of
``adk_eval_action.testing.standins``, then checks the right value on the results file, the
console and the exit code. (``tests/integration/test_reported_shared.py`` runs the same
checks on the
reference copies in ``../shared`` where those exist.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_action.report.format import md as md_text
from conftest import CliRun
from support.adk_features import (
    JUDGE_LOGS_UNPARSABLE_ANSWER,
    needs_case_rubrics_alone,
    needs_ignore_args,
)
from support.reported import Run, case_runs, only_metric, reported_runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reported"

@pytest.fixture
def reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Run:
    """``run(folder, *args)``: copies ``folder`` of ``tests/fixtures/reported`` to a fresh
    directory, runs ``adk-eval-action run ARGS --baseline none`` there and returns (exit
    code, console output, the results file's JSON or None when none was written)."""
    return reported_runner(FIXTURES, tmp_path, monkeypatch, cli)


@needs_case_rubrics_alone
def test_turn_rubrics_an_earlier_turns_no_is_kept(reported: Run) -> None:
    """Turn 1's rubric ("no": the agent opened the shelf, it never archived one) is judged
    against turn 1, not dropped for the last turn's rubrics: the mean of 0 and 1 fails
    the 0.8 threshold."""
    code, _, results = reported("turn_rubrics", "shelf_bot")
    assert code == 1 and results is not None
    metric = only_metric(results, "rubric_based_tool_use_quality_v1")
    first, second = metric["invocations"]
    assert [(r["rubric_id"], r["score"]) for r in first["rubrics"]] == [("first_archives", 0.0)]
    assert [(r["rubric_id"], r["score"]) for r in second["rubrics"]] == [("second_files", 1.0)]
    assert metric["status"] == "failed" and metric["score"] == 0.5
    assert case_runs(results)[0]["status"] == "failed"


@needs_case_rubrics_alone
def test_turn_rubrics_evidence_leads_with_the_failed_rubric(reported: Run, tmp_path: Path) -> None:
    """The case expects no tool call and no final response (per-turn rubrics only): its
    evidence leads with the rubric the judge said "no" to and shows the turn's tool calls
    as they were made, not as a diff against nothing."""
    code, _, _ = reported("turn_rubrics", "shelf_bot")
    assert code == 1
    comment = next(tmp_path.rglob("comment.md")).read_text(encoding="utf-8")
    evidence = comment.split("### Why eval cases fail", 1)[1].split("</details>", 1)[0]
    assert "(not expected)" not in evidence
    assert "expected (-) vs actual (+)" not in evidence
    rubric = evidence.index(
        "⚖️ rubric `first_archives` “Calls \"archive\\_shelf\".”: no on turn 1")
    assert rubric < evidence.index("@@ turn 1 of 2 @@")
    assert "  tool calls made: open_shelf(label=\"B7\")" in evidence


def test_thought_parts_are_not_the_final_response(reported: Run) -> None:
    """The model's thought part is left out of the response ADK compares: it matches the
    expected answer word for word (ROUGE-1 1.0), and the console says what was left out."""
    code, output, results = reported("thought_parts", "muse")
    assert code == 0 and results is not None
    assert only_metric(results, "response_match_score")["score"] == 1.0
    assert "thought part" in output


@pytest.mark.parametrize(("args", "config"), [
    (("clock_bot",), "clock_bot/checks/test_config.json"),
    (("--config", "blank.yaml"), "clock_bot/checks/blank_config.json")])
def test_empty_criteria_is_a_config_error_naming_the_file(
        reported: Run, args: tuple[str, ...], config: str) -> None:
    """An eval config whose keys are all another tool's (so ADK sees no criteria), or with
    ``criteria: {}``, evaluates nothing: exit 2, naming the file, not an empty pass."""
    code, output, _ = reported("empty_criteria", *args)
    assert code == 2
    assert "no metric would be evaluated" in output and config in output
    assert "INCOMPLETE" in output


def test_misplaced_judge_options_are_linted_and_the_judge_used_recorded(reported: Run) -> None:
    """``judge_model`` and ``num_samples`` beside ``threshold`` are not ADK's keys there:
    both are named with the key meant, and the judge ADK used instead (its default,
    gemini-2.5-flash, here the local fake Gemini API) is the one recorded."""
    code, output, results = reported("misplaced_judge", "welcome_bot")
    assert "did you mean `judge_model_options.judge_model`?" in output
    assert "did you mean `judge_model_options.num_samples`?" in output
    assert results is not None
    assert only_metric(results, "final_response_match_v2")["judge_model"] == "gemini-2.5-flash"
    assert code in (0, 1)


@needs_ignore_args
def test_misspelt_criterion_key_is_named(reported: Run) -> None:
    """``ignore_arguments`` is not a key of ADK's ToolTrajectoryCriterion: it is named with
    the right one, and the arguments are compared after all (they differ: exit 1); spelt
    right, the same case passes."""
    code, output, _ = reported("misspelt_criterion", "--config", "misspelt.yaml")
    assert "`criteria.tool_trajectory_avg_score.ignore_arguments` is ignored by ADK" in output
    assert "did you mean `ignore_args`?" in output
    assert code == 1
    code, output, _ = reported("misspelt_criterion", "coupon_bot")
    assert code == 0 and "ignored by ADK" not in output


@pytest.mark.parametrize(("mode", "code", "headline"), [
    ("fail", 1, "gate FAILED"), ("warn", 0, "gate PASSED with warnings")])
def test_judge_no_verdict_one_status_rule_and_the_headline_follows_the_mode(
        reported: Run, mode: str, code: int, headline: str) -> None:
    """A judge whose answer gives no verdict leaves its metric not evaluated, and the run
    with it, in results.json as in the gate; ``--not-evaluated`` decides the exit code and
    the headline, and the console names the rubric and why."""
    exit_code, output, results = reported("judge_no_verdict", "queue_bot",
                                          "--not-evaluated", mode)
    assert exit_code == code and headline in output
    assert results is not None
    frq = only_metric(results, "rubric_based_final_response_quality_v1")
    assert frq["status"] == "not_evaluated"
    assert only_metric(results, "rubric_based_tool_use_quality_v1")["status"] == "passed"
    assert case_runs(results)[0]["status"] == "not_evaluated"
    # google-adk 1.x does not log an answer it cannot parse: the rubric just has no verdict.
    why = ("ID/Property/Rationale/Verdict" if JUDGE_LOGS_UNPARSABLE_ANSWER
           else "the judge's answer gave no verdict for it")
    assert "names_total" in output and why in output


def test_judge_no_verdict_by_default_is_the_judges_fault_not_the_agents(reported: Run) -> None:
    """With ``not_evaluated`` left unset, a judge whose answer gives no verdict makes the run
    incomplete (exit 2), naming the rubric, the eval case and that the judge model answered
    off-format, never a red "failed"; the rubric keeps its text in the comment's table."""
    exit_code, output, results = reported("judge_no_verdict", "queue_bot")
    assert exit_code == 2, output
    assert results is not None and results["complete"] is False
    [error] = [e for s in results["suites"] for e in s["errors"]]
    assert (error["kind"], error["eval_id"]) == ("judge_answer", "waiting_jobs")
    assert error["message"].startswith(
        "the judge model `stand-in-judge-garbage` of `rubric_based_final_response_quality_v1` "
        "answered off-format: no verdict in 1 run of 1 eval case in queue.evalset.json "
        "(waiting_jobs): no verdict for rubric `names_total` (turn 1): ")
    assert ("gate INCOMPLETE (the judge model answered off-format): 0 of 1 eval case could be "
            "evaluated (exit 2)") in output
    assert "FAILED" not in output
    comment = (Path.cwd() / "comment.md").read_text(encoding="utf-8")
    assert comment.splitlines()[2].startswith(
        "⚠️ **ADK eval incomplete** (the judge model answered off-format): ")
    text = json.loads((Path.cwd() / "queue_bot/eval/test_config.json").read_text())[
        "criteria"]["rubric_based_final_response_quality_v1"]["rubrics"][0][
        "rubric_content"]["text_property"]
    # Under the judge metric's name, a row per rubric.
    assert "\nMetric `rubric_based_final_response_quality_v1`\n" in comment
    rubric_row = "| `names_total` "
    [row] = [line for line in comment.splitlines() if line.startswith(rubric_row)]
    assert row == f"{rubric_row}{md_text(text)} | — |"


@pytest.mark.parametrize(("args", "says", "turns"), [
    (("desk_bot",), "Room 4 at noon.", 2),
    (("--config", "vague.yaml"), "Some room, some time.", 3)])
def test_user_simulator_the_configured_one_is_used(
        reported: Run, args: tuple[str, ...], says: str, turns: int) -> None:
    """The eval config's ``user_simulator_config`` model speaks after the starting prompt
    (ADK's default simulator, gemini-2.5-flash, never does): the desk's user stops once
    the room is reserved (turn 2); the vague one never would, and the conversation ends at
    its ``max_allowed_invocations`` (3; ADK's default is 20)."""
    code, _, results = reported("user_simulator", *args)
    assert code == 0 and results is not None
    (run,) = case_runs(results)
    users = [part["text"] for inv in run["actual_invocations"]
             for part in inv["user_content"]["parts"]]
    assert users == ["Hello, I need a meeting room.", *[says] * (turns - 1)]


@pytest.mark.parametrize("agent", ["builder_bot", "ledger_bot"])
def test_agent_factory_the_agent_is_built_in_its_evaluations_loop(
        reported: Run, agent: str) -> None:
    """``get_agent_async`` is awaited in the event loop that runs the evaluation, so the
    resource it opened (ledger_bot's connection task) still answers the tool: both pass."""
    code, _, results = reported("agent_factory", agent)
    assert code == 0 and results is not None
    assert {run["status"] for run in case_runs(results)} == {"passed"}

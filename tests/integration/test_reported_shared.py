"""The reference copies of the reported inputs, in ``../shared/fixtures/reported/`` where
that folder exists (the project's own machines), give their right values.

An extra source only: ``tests/integration/test_reported.py`` checks every behaviour below on the
project's own fixtures (``tests/fixtures/reported``); these tests are marked ``reference``
(left out of the quick loop) and skip, saying so, where ``../shared`` is absent. Each folder
there is a small repository reproducing a publicly reported google-adk evaluation problem;
its README gives the value the product got wrong and the right one. Each test copies one
folder as it is, points its agents at the stand-ins' current module
(``adk_eval_action.testing.standins``, as the fixtures' README asks when they move) and runs
``adk-eval-action run ... --baseline none`` in it through real google-adk, as the README says,
then checks the README's *right* column on the results file, the console and the exit code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED, CliRun
from support.adk_features import (
    JUDGE_LOGS_UNPARSABLE_ANSWER,
    needs_case_rubrics_alone,
    needs_ignore_args,
)
from support.reported import Run, case_runs, only_metric, reported_runner

REPORTED = SHARED / "fixtures" / "reported"

pytestmark = [
    pytest.mark.reference,
    pytest.mark.skipif(
        not REPORTED.is_dir(),
        reason="../shared/fixtures/reported (reference copies of the reported inputs, kept "
        "beside this repository on the project's own machines) is not present; "
        "tests/integration/test_reported.py checks the same behaviours on tests/fixtures/reported"),
]

@pytest.fixture
def reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Run:
    """``run(folder, *args)``: copies ``folder`` of the reported fixtures to a fresh directory,
    runs ``adk-eval-action run ARGS --baseline none`` there and returns (exit code, console
    output, the results file's JSON or None when none was written)."""
    return reported_runner(REPORTED, tmp_path, monkeypatch, cli, _current_standins)


def _current_standins(root: Path) -> None:
    """Points the copy's agents at the stand-ins' current module."""
    for agent in root.rglob("*.py"):
        text = agent.read_text(encoding="utf-8")
        agent.write_text(text.replace("adk_eval_action.standins",
                                      "adk_eval_action.testing.standins"), encoding="utf-8")


@needs_case_rubrics_alone
def test_multiturn3593_an_earlier_turns_rubric_verdict_is_kept(reported: Run) -> None:
    code, _, results = reported("multiturn3593", "files_bot/eval_per_turn/files_turn.evalset.json")
    assert code == 1 and results is not None
    metric = only_metric(results, "rubric_based_tool_use_quality_v1")
    first = metric["invocations"][0]
    assert [(r["rubric_id"], r["score"]) for r in first["rubrics"]] == [("t1_deletes", 0.0)]
    assert metric["status"] == "failed" and metric["score"] == 0.5
    assert case_runs(results)[0]["status"] == "failed"


def test_thought7091_thought_parts_are_not_the_final_response(reported: Run) -> None:
    code, output, results = reported("new_thought7091", "thinker")
    assert code == 0 and results is not None
    assert only_metric(results, "response_match_score")["score"] == 1.0
    assert "thought part" in output


@pytest.mark.parametrize("args", [("probe_agent",), ("--config", "variant_empty_criteria.yaml")])
def test_foreignkeys_no_metric_to_evaluate_is_a_config_error_naming_the_file(
        reported: Run, args: tuple[str, ...]) -> None:
    code, output, _ = reported("foreignkeys", *args)
    assert code == 2
    assert "no metric would be evaluated" in output and "_config.json" in output
    assert "INCOMPLETE" in output


def test_misplacedjudge_is_linted_and_the_judge_used_recorded(reported: Run) -> None:
    code, output, results = reported("misplacedjudge", "echo_bot")
    assert "did you mean `judge_model_options.judge_model`?" in output
    assert "did you mean `judge_model_options.num_samples`?" in output
    assert results is not None
    # ADK ignores the misplaced stand-in-judge and falls back to its default judge.
    assert only_metric(results, "final_response_match_v2")["judge_model"] == "gemini-2.5-flash"
    assert code in (0, 1)


@needs_ignore_args
def test_ignoreargs2757_a_misspelt_criterion_key_is_named(reported: Run) -> None:
    code, output, _ = reported("ignoreargs2757", "--config", "variant_typo.yaml")
    assert "`criteria.tool_trajectory_avg_score.ignore_arguments` is ignored by ADK" in output
    assert "did you mean `ignore_args`?" in output
    assert code == 1  # the arguments are compared after all, and differ
    code, output, _ = reported("ignoreargs2757", "promo_bot")
    assert code == 0 and "ignored by ADK" not in output


@pytest.mark.parametrize(("mode", "code", "headline"), [
    ("fail", 1, "gate FAILED"), ("warn", 0, "gate PASSED with warnings")])
def test_notevaluated5732_one_status_rule_and_the_headline_follows_the_mode(
        reported: Run, mode: str, code: int, headline: str) -> None:
    exit_code, output, results = reported("notevaluated5732", "ticket_bot",
                                          "--not-evaluated", mode)
    assert exit_code == code and headline in output
    assert results is not None
    frq = only_metric(results, "rubric_based_final_response_quality_v1")
    assert frq["status"] == "not_evaluated"
    assert case_runs(results)[0]["status"] == "not_evaluated"
    # google-adk 1.x does not log an answer it cannot parse: the rubric just has no verdict.
    why = ("ID/Property/Rationale/Verdict" if JUDGE_LOGS_UNPARSABLE_ANSWER
           else "the judge's answer gave no verdict for it")
    assert "mentions_count" in output and why in output


def test_sim4283_the_configured_user_simulator_is_used(reported: Run) -> None:
    code, _, results = reported("sim4283", "table_bot")
    assert code == 0 and results is not None
    (run,) = case_runs(results)
    users = [part["text"] for inv in run["actual_invocations"]
             for part in inv["user_content"]["parts"]]
    # After the scenario's starting prompt, probe-usersim-1's own words: ADK's default
    # simulator (gemini-2.5-flash) never ran.
    assert len(users) >= 2 and set(users[1:]) == {"7pm please."}
    assert len(run["actual_invocations"]) <= 6


@pytest.mark.parametrize("agent", ["factory_bot", "pool_bot"])
def test_get_agent_async4410_the_agent_is_built_in_its_evaluations_loop(
        reported: Run, agent: str) -> None:
    code, _, results = reported("new_get_agent_async4410", agent)
    assert code == 0 and results is not None
    assert {run["status"] for run in case_runs(results)} == {"passed"}


@needs_case_rubrics_alone
def test_multiturn3593_evidence_of_a_rubrics_only_case_leads_with_the_failed_rubric(
    reported: Run, tmp_path: Path
) -> None:
    """The case expects no tool call and no final response (it is judged by per-turn
    rubrics only): its evidence leads with the rubric the judge said "no" to and shows the
    turn's tool calls as they were made, not as a diff against nothing."""
    code, _, _ = reported("multiturn3593", "files_bot/eval_per_turn/files_turn.evalset.json")
    assert code == 1
    comment = next(tmp_path.rglob("comment.md")).read_text(encoding="utf-8")
    evidence = comment.split("### Why eval cases fail", 1)[1].split("</details>", 1)[0]
    print(evidence)
    assert "(not expected)" not in evidence
    assert "expected (-) vs actual (+)" not in evidence
    rubric = evidence.index("⚖️ rubric `t1_deletes` “Calls \"delete\\_folder\".”: no on turn 1")
    turn = evidence.index("@@ turn 1 of 2 @@")
    assert rubric < turn
    assert "  tool calls made: create_folder(name=\"Q3\")" in evidence

"""One rule for judge faults: whichever judge-backed metric, a judge that gives no verdict
(an answer off ADK's format, a judge model that raises, google-genai's 429 or a timeout
after the retries) is the judge's fault, never the agent's: the run is incomplete (exit 2), and one
error names the metric, the judge model, the eval case and what to do. Only a verdict that
the agent failed fails its case (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.results.records import (
    JUDGE_ANSWER_HINT,
    JUDGE_FAULT_HINT,
    JUDGE_OUTAGE_HINT,
)
from adk_eval_action.testing.gemini_fake import Fault, GeminiFake
from adk_eval_action.testing.judge import (
    GARBAGE_JUDGE_MODEL,
    RAISING_JUDGE_MESSAGE,
    RAISING_JUDGE_MODEL,
    TIMEOUT_JUDGE_MODEL,
)
from conftest import CliRun, case_runs, load_json, metric
from support.adk_features import needs_metric

CASE = "weather_paris"


def _rubrics(rubric_type: str) -> list[dict[str, Any]]:
    return [{"rubric_id": "names_paris", "type": rubric_type,
             "rubric_content": {"text_property": 'The answer mentions "Paris".'}}]


CRITERIA: dict[str, dict[str, Any]] = {
    "rubric_based_final_response_quality_v1": {"rubrics": _rubrics("FINAL_RESPONSE_QUALITY")},
    "rubric_based_tool_use_quality_v1": {"rubrics": _rubrics("TOOL_USE_QUALITY")},
    "rubric_based_multi_turn_trajectory_quality_v1": {
        "rubrics": _rubrics("TRAJECTORY_QUALITY")},
    "final_response_match_v2": {},
    "hallucinations_v1": {},
}
"""Every google-adk metric whose verdict comes from a judge model it calls through ADK's
LLM registry (``judge_model_options``), with what its criterion needs besides the judge."""

FAULTS = {
    # fault: (judge model, error kind, headline's words, what the message says, hint)
    "off-format": (GARBAGE_JUDGE_MODEL, "judge_answer", "the judge model answered off-format",
                   "answered off-format", JUDGE_ANSWER_HINT),
    "raises": (RAISING_JUDGE_MODEL, "judge", "judge setup",
               f"RuntimeError: {RAISING_JUDGE_MESSAGE}", JUDGE_FAULT_HINT),
    "429": ("gemini-2.5-flash", "model", "model unreachable", "429 RESOURCE_EXHAUSTED",
            JUDGE_OUTAGE_HINT),
    "timeout": (TIMEOUT_JUDGE_MODEL, "model", "model unreachable", "timeout after 2 attempts",
                JUDGE_OUTAGE_HINT),
}


def _one_case_suite(repo: Path, metric_name: str, judge: str) -> None:
    """The example agent's ``weather_paris`` alone, judged by ``metric_name`` alone."""
    folder = repo / "travel_agent/eval"
    data = load_json(folder / "travel.evalset.json")
    [case] = [c for c in data["eval_cases"] if c["eval_id"] == CASE]
    for path in folder.glob("*.json"):
        path.unlink()
    (folder / "one.evalset.json").write_text(
        json.dumps({"eval_set_id": "one", "eval_cases": [case]}), encoding="utf-8")
    criterion = {"threshold": 0.5, **CRITERIA[metric_name],
                 "judge_model_options": {"judge_model": judge, "num_samples": 1}}
    (folder / "test_config.json").write_text(
        json.dumps({"criteria": {metric_name: criterion}}), encoding="utf-8")
    (repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 2, initial_delay_s: 0.01}\n", encoding="utf-8")


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("metric_name", [
    pytest.param(name, marks=needs_metric(name)) for name in CRITERIA])
def test_a_judge_without_a_verdict_is_incomplete_for_every_judge_metric(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, metric_name: str, fault: str
) -> None:
    judge, kind, words, says, hint = FAULTS[fault]
    _one_case_suite(example_repo, metric_name, judge)
    if fault == "429":
        gemini_api.faults = [Fault(status=429, retry_delay_s=0.01, role="judge")]

    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md")

    assert result.exit_code == 2, result.output
    assert f"gate INCOMPLETE ({words})" in result.output
    assert "FAILED" not in result.output
    results = load_json(example_repo / "r.json")
    assert results["complete"] is False
    [error] = [e for s in results["suites"] for e in s["errors"]]
    assert (error["kind"], error["metric"], error["eval_id"]) == (kind, metric_name, CASE)
    assert error["message"].startswith(f"the judge model `{judge}` of `{metric_name}` ")
    assert says in error["message"] and f"({CASE})" in error["message"]
    assert error["hint"] == hint
    [run] = case_runs(results, CASE)
    assert metric(run, metric_name).get("score") is None
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert comment.splitlines()[2].startswith(f"⚠️ **ADK eval incomplete** ({words}): ")
    assert f"**{kind}**" in comment


@pytest.mark.parametrize(("args", "kind", "code"), [
    ((), "judge_answer", 2),
    (("--not-evaluated", "fail"), "metric", 1),
    (("--not-evaluated", "warn"), "metric", 0),
])
def test_the_results_file_and_the_comment_say_the_same_kind_of_a_judge_fault(
    example_repo: Path, cli: CliRun, args: tuple[str, ...], kind: str, code: int
) -> None:
    """The kind of an off-format judge answer is decided once, where the run records it
    (a ``not_evaluated`` the user sets counts such cases, else the run is incomplete): the
    saved results file, the comment of the run and the comment ``render`` makes from the
    saved file later (under no ``not_evaluated`` of its own) all say it, and rendering
    changes nothing in the saved file."""
    _one_case_suite(example_repo, "final_response_match_v2", GARBAGE_JUDGE_MODEL)

    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md",
                 *args)

    assert result.exit_code == code, result.output
    saved = (example_repo / "r.json").read_text(encoding="utf-8")
    [error] = [e for s in json.loads(saved)["suites"] for e in s["errors"]]
    assert (error["kind"], error["metric"]) == (kind, "final_response_match_v2")
    assert error["message"].startswith(
        f"the judge model `{GARBAGE_JUDGE_MODEL}` of `final_response_match_v2` answered "
        "off-format: no verdict in 1 run of 1 eval case in one.evalset.json (weather_paris)")
    rendered = cli("render", "r.json", "--out", "again.md")
    assert rendered.exit_code == 0, rendered.output
    for comment in ("c.md", "again.md"):
        text = (example_repo / comment).read_text(encoding="utf-8")
        assert f"**{kind}**" in text
        other = "metric" if kind == "judge_answer" else "judge_answer"
        assert f"**{other}**" not in text
    assert (example_repo / "r.json").read_text(encoding="utf-8") == saved


SCENARIO_CASE = "planned_trip"


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("metric_name", [pytest.param(
    "per_turn_user_simulator_quality_v1",
    marks=needs_metric("per_turn_user_simulator_quality_v1"))])
def test_a_judge_of_the_user_simulator_without_a_verdict_is_incomplete(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, metric_name: str, fault: str
) -> None:
    """The same rule for the metric that judges the user simulator's turns of a
    ``conversation_scenario`` case (its judge is ``_llm``, not ``_judge_model``)."""
    judge, kind, words, says, hint = FAULTS[fault]
    folder = example_repo / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps({
        "eval_set_id": "trip_scenarios",
        "eval_cases": [{
            "eval_id": SCENARIO_CASE,
            "conversation_scenario": {
                "starting_prompt": "Hi, I am planning a trip.",
                "conversation_plan": "- What's the weather in Paris?"},
            "session_input": {"app_name": "travel_agent", "user_id": "u", "state": {}}}]}),
        encoding="utf-8")
    (folder / "test_config.json").write_text(json.dumps({
        "criteria": {metric_name: {
            "threshold": 0.5, "judge_model_options": {"judge_model": judge, "num_samples": 1}}},
        "user_simulator_config": {"model": "gemini-2.5-pro", "max_allowed_invocations": 2},
    }), encoding="utf-8")
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 2, initial_delay_s: 0.01}\n", encoding="utf-8")
    if fault == "429":
        gemini_api.faults = [Fault(status=429, retry_delay_s=0.01, role="judge")]

    result = cli("run", "travel_agent/scenarios", "--results-out", "r.json")

    assert result.exit_code == 2, result.output
    assert f"gate INCOMPLETE ({words})" in result.output
    results = load_json(example_repo / "r.json")
    [error] = [e for s in results["suites"] for e in s["errors"]]
    assert (error["kind"], error["metric"], error["eval_id"]) == (
        kind, metric_name, SCENARIO_CASE)
    assert error["message"].startswith(f"the judge model `{judge}` of `{metric_name}` ")
    assert says in error["message"]
    assert error["hint"] == hint
    [run] = case_runs(results, SCENARIO_CASE)
    assert metric(run, metric_name).get("score") is None

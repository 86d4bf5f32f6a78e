"""Bad input gets a clear error and loses nothing; rubric rules; config lint."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.runtime.user_exits import UserExit, exits_as_errors
from conftest import CliRun, case_runs, load_json, metric
from support.adk_features import needs_case_rubrics_alone

RUBRIC = "rubric_based_final_response_quality_v1"


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return path


def _evalset(example_repo: Path) -> dict[str, Any]:
    return load_json(example_repo / "travel_agent/eval/travel.evalset.json")


def test_broken_eval_set_exits_2_naming_file_and_keeps_others(
    example_repo: Path, cli: CliRun
) -> None:
    _write(example_repo / "travel_agent/eval/broken.evalset.json", '{"eval_set_id": "x",\n  oops')
    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 2
    assert "travel_agent/eval/broken.evalset.json" in result.output
    assert ("not valid JSON: Expecting property name enclosed in double quotes at line 2, "
            "column 3") in result.output
    results = load_json(example_repo / "r.json")
    assert case_runs(results, "weather_paris")[0]["status"] == "passed"
    comment = (example_repo / "c.md").read_text()
    assert "broken.evalset.json" in comment and "**eval_set**" in comment
    # The incomplete headline names the cause, and counts the cases that did run.
    assert comment.splitlines()[2] == (
        "⚠️ **ADK eval incomplete** (eval set error): 5/5 eval cases passed (1 error below).")


def test_unknown_shape_lists_accepted_shapes(example_repo: Path, cli: CliRun) -> None:
    _write(example_repo / "travel_agent/eval/odd.test.json", {"cases": []})
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert "odd.test.json" in result.output
    assert "legacy list of turns" in result.output


def test_agent_import_error_errors_its_suite_only(example_repo: Path, cli: CliRun) -> None:
    broken = example_repo / "broken_agent"
    shutil.copytree(
        example_repo / "travel_agent", broken, ignore=shutil.ignore_patterns("__pycache__")
    )
    (broken / "agent.py").write_text("import not_a_module_anywhere\n")
    result = cli("run", ".", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 2
    results = load_json(example_repo / "r.json")
    by_name = {s["name"]: s for s in results["suites"]}
    assert by_name["broken_agent"]["errors"][0]["kind"] == "agent"
    assert (
        "No module named 'not_a_module_anywhere'" in by_name["broken_agent"]["errors"][0]["message"]
    )
    assert case_runs({"suites": [by_name["travel_agent"]]}, "weather_paris")[0]["status"] == (
        "passed"
    )
    assert "not\\_a\\_module\\_anywhere" in (example_repo / "c.md").read_text()


def test_duplicate_rubric_ids_are_refused(example_repo: Path, cli: CliRun) -> None:
    data = _evalset(example_repo)
    case = data["eval_cases"][-1]
    case["rubrics"].append({"rubric_id": "friendly", "rubric_content": {"text_property": "x"}})
    _write(example_repo / "travel_agent/eval/travel.evalset.json", data)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert "eval case `weather_tokyo_rubrics`: rubric id(s) friendly defined more than once" in (
        result.output
    )


def _single_case_set(example_repo: Path, case: dict[str, Any], config: dict[str, Any]) -> None:
    folder = example_repo / "travel_agent/eval"
    for path in folder.glob("*.json"):
        path.unlink()
    _write(folder / "one.evalset.json", {"eval_set_id": "one", "eval_cases": [case]})
    _write(folder / "test_config.json", config)


def _rubric_config(judge: str = "stand-in-judge", rubrics: list[Any] | None = None) -> dict:
    criterion: dict[str, Any] = {"threshold": 0.5, "judge_model_options": {"judge_model": judge}}
    if rubrics is not None:
        criterion["rubrics"] = rubrics
    return {"criteria": {RUBRIC: criterion}}


def _trip_case(example_repo: Path, **extra: Any) -> dict[str, Any]:
    case = next(
        c for c in _evalset(example_repo)["eval_cases"] if c["eval_id"] == "multi_turn_trip"
    )
    case.pop("rubrics", None)
    case.update(extra)
    return case


def test_string_rubrics_and_final_only_rubric(example_repo: Path, cli: CliRun) -> None:
    case = _trip_case(
        example_repo,
        rubrics=[
            {
                "id": "ends_with_tokyo",
                "text": 'The final answer mentions "Tokyo".',
                "applies_to": "final",
            },
        ],
    )
    _single_case_set(
        example_repo, case, _rubric_config(rubrics=['The answer never mentions "sorry".'])
    )
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    run = case_runs(load_json(example_repo / "r.json"), "multi_turn_trip")[0]
    invocations = metric(run, RUBRIC)["invocations"]
    assert len(invocations) == 3
    ids = [sorted(r["rubric_id"] for r in inv["rubrics"]) for inv in invocations]
    # rubric_0 (a plain string in the config) on every turn; the final-only one on the last.
    assert ids == [["rubric_0"], ["rubric_0"], ["ends_with_tokyo", "rubric_0"]]


@needs_case_rubrics_alone
def test_rubric_metric_without_rubrics_is_an_error_not_a_pass(
    example_repo: Path, cli: CliRun
) -> None:
    """A rubric metric with no rubric from any source has nothing to judge: a config error
    naming the case, found before any call for it (the case is not run), and the run is
    incomplete (exit 2), not the agent failing."""
    _single_case_set(example_repo, _trip_case(example_repo), _rubric_config())
    result = cli("run", "travel_agent", "--results-out", "r.json", "--print-comment")
    assert result.exit_code == 2  # the metric could not score: incomplete, not the agent's
    results = load_json(example_repo / "r.json")
    with pytest.raises(KeyError):  # left out: no record, no run
        case_runs(results, "multi_turn_trip")
    (error,) = [e for s in results["suites"] for e in s["errors"]]
    assert error["kind"] == "config" and error["eval_id"] == "multi_turn_trip"
    assert (f"eval case `multi_turn_trip` has no rubrics, none of type FINAL_RESPONSE_QUALITY, "
            f"so metric `{RUBRIC}` has nothing to judge") in error["message"]
    assert "has nothing to judge" in result.output


@needs_case_rubrics_alone
def test_judge_timeout_is_a_model_error_after_the_retries(example_repo: Path, cli: CliRun) -> None:
    """A judge that times out on every call is the model service failing, not the agent:
    after the retries the run is incomplete (exit 2), in either not_evaluated mode."""
    case = _trip_case(example_repo, rubrics=['The final answer mentions "Tokyo".'])
    config = _rubric_config(judge="stand-in-judge-timeout")
    config["criteria"][RUBRIC]["judge_model_options"]["num_samples"] = 1
    config["criteria"]["tool_trajectory_avg_score"] = 1.0
    _single_case_set(example_repo, case, config)
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 3, initial_delay_s: 0.01}\n", encoding="utf-8"
    )
    result = cli("run", "travel_agent", "--results-out", "r.json", "--print-comment")
    assert result.exit_code == 2
    results = load_json(example_repo / "r.json")
    run = case_runs(results, "multi_turn_trip")[0]
    m = metric(run, RUBRIC)
    assert m["status"] == "error"
    assert m["reason"].startswith("model: judge model stand-in-judge-timeout: timeout")
    assert "after 3 attempts" in m["reason"]
    # The scores that were computed stay; the run itself is an error of kind model.
    assert metric(run, "tool_trajectory_avg_score")["score"] == 1.0
    assert (run["status"], run["error_kind"]) == ("error", "model")
    [error] = [e for e in results["suites"][0]["errors"] if e["kind"] == "model"]
    assert error["message"] == (
        f"the judge model `stand-in-judge-timeout` of `{RUBRIC}` could not be reached: no "
        "verdict in 1 run of 1 eval case in one.evalset.json (multi_turn_trip): judge model "
        "stand-in-judge-timeout: timeout after 3 attempts")
    counts = results["metadata"]["model_calls"]
    # By hand: one judge call per turn (num_samples 1) on 3 turns, each tried 3 times.
    assert (counts["failed_calls"], counts["retry_causes"]) == (3, {"timeout": 6})
    # Every rubric sent to the judge says why it has no verdict.
    reasons = [r.get("reason") for i in m["invocations"] for r in i["rubrics"]]
    assert len(reasons) == 3 and all(r and r.startswith("judge call failed") for r in reasons)
    warn = cli("run", "travel_agent", "--results-out", "r2.json", "--not-evaluated", "warn")
    assert warn.exit_code == 2


@needs_case_rubrics_alone
def test_judge_without_parsable_verdict(example_repo: Path, cli: CliRun) -> None:
    case = _trip_case(example_repo, rubrics=['The final answer mentions "Tokyo".'])
    _single_case_set(example_repo, case, _rubric_config(judge="stand-in-judge-garbage"))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    # The judge model answered off-format: incomplete, not the agent failing.
    assert result.exit_code == 2, result.output
    assert "gate INCOMPLETE (the judge model answered off-format)" in result.output
    m = metric(case_runs(load_json(example_repo / "r.json"), "multi_turn_trip")[0], RUBRIC)
    assert m["status"] == "not_evaluated"
    unparsable = "the judge's answer was not in ADK's ID/Property/Rationale/Verdict format"
    assert m["reason"] == (
        f"no verdict for rubric `multi_turn_trip.rubric_0` (turns 1, 2, 3): {unparsable}"
    )
    assert {r["reason"] for i in m["invocations"] for r in i["rubrics"]} == {unparsable}


def test_config_lint_warnings(example_repo: Path, cli: CliRun) -> None:
    config = load_json(example_repo / "travel_agent/eval/test_config.json")
    config["criteria"]["response_match_scor"] = 0.5
    config["criteria"][RUBRIC]["judge_model"] = "gemini-2.5-pro"
    config["criteria"]["token_usage_v1"] = 100
    config["metrics"] = ["x"]
    _write(example_repo / "travel_agent/eval/test_config.json", config)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    out = result.output
    assert "unknown top-level key `metrics`" in out
    # A metric no registry knows is not a warning but refused before any case runs.
    assert result.exit_code == 2
    assert (
        "metric `response_match_scor` is neither a google-adk metric nor declared in "
        "`custom_metrics`; did you mean `response_match_score`?" in out
    )
    assert f"`criteria.{RUBRIC}.judge_model` is ignored by ADK" in out
    assert "did you mean `judge_model_options.judge_model`?" in out
    assert "`token_usage_v1` is an informational efficiency metric" in out


def test_custom_metric_import_error_is_refused_before_any_case_runs(
    example_repo: Path, cli: CliRun
) -> None:
    config = load_json(example_repo / "travel_agent/eval/test_config.json")
    config["custom_metrics"]["politeness"]["code_config"]["name"] = "travel_agent.metrics.nope"
    _write(example_repo / "travel_agent/eval/test_config.json", config)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    results = load_json(example_repo / "r.json")
    [error] = [e for e in results["errors"] if e["kind"] == "custom_metric"]
    assert error["file"] == "travel_agent/eval/test_config.json"
    assert "travel_agent.metrics.nope" in error["message"]
    assert "`custom_metrics.politeness.code_config.name`" in error["message"]
    assert results["suites"] == []  # nothing ran
    assert result.output.count(error["message"]) == 1
    # Nothing ran, so nothing failed: the verdict is incomplete, not "failed".
    assert "gate INCOMPLETE (custom metric setup): nothing was evaluated: the run stopped " \
        "before evaluation started (exit 2)" in result.output


def test_invalid_project_config_names_file_and_field(example_repo: Path, cli: CliRun) -> None:
    _write(
        example_repo / "adk-eval.yaml",
        "suites:\n  - name: x\n    agent: travel_agent\n    eval_sets: []\n",
    )
    result = cli("run")
    assert result.exit_code == 2
    assert "adk-eval.yaml (field `suites[0].eval_sets`)" in result.output


def test_no_eval_sets_is_a_usage_error(tmp_path: Path, cli: CliRun, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("run", ".")
    assert result.exit_code == 2
    assert "no eval sets found" in result.output


def test_same_named_agents_get_distinct_suites(example_repo: Path, cli: CliRun) -> None:
    for folder in ("x", "y"):
        shutil.copytree(
            example_repo / "travel_agent",
            example_repo / folder / "travel_agent",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    result = cli("run", "x", "y", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    names = sorted(s["name"] for s in load_json(example_repo / "r.json")["suites"])
    assert names == ["x/travel_agent", "y/travel_agent"]


def test_repeated_eval_set_id_is_an_eval_set_error(example_repo: Path, cli: CliRun) -> None:
    folder = example_repo / "travel_agent/eval"
    shutil.copy(folder / "travel.evalset.json", folder / "travel_copy.evalset.json")
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert "eval_set_id `travel` is also the id of travel_agent/eval/travel.evalset.json" in (
        result.output
    )
    assert case_runs(load_json(example_repo / "r.json"), "weather_paris")[0]["status"] == "passed"


def test_adk_samples_layout_finds_the_sibling_agent(example_repo: Path, cli: CliRun) -> None:
    project = example_repo / "samples" / "my_project"
    shutil.copytree(
        example_repo / "travel_agent",
        project / "travel_agent",
        ignore=shutil.ignore_patterns("__pycache__", "eval"),
    )
    shutil.copytree(example_repo / "travel_agent/eval", project / "eval" / "data")
    result = cli("run", "samples", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    suite = load_json(example_repo / "r.json")["suites"][0]
    assert suite["agent"] == "samples/my_project/travel_agent"
    assert suite["eval_config_file"] == "samples/my_project/eval/data/test_config.json"


def test_config_suite_uses_test_config_beside_its_eval_sets(
    example_repo: Path, cli: CliRun
) -> None:
    _write(
        example_repo / "adk-eval.yaml",
        "suites:\n  - name: t\n    agent: travel_agent\n"
        "    eval_sets: [travel_agent/eval/travel.evalset.json]\n",
    )
    result = cli("run", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    suite = load_json(example_repo / "r.json")["suites"][0]
    assert suite["eval_config_file"] == "travel_agent/eval/test_config.json"


def test_missing_criteria_suggests_the_key(example_repo: Path, cli: CliRun) -> None:
    config = load_json(example_repo / "travel_agent/eval/test_config.json")
    config["critera"] = config.pop("criteria")
    _write(example_repo / "travel_agent/eval/test_config.json", config)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert "did you mean `criteria` instead of `critera`" in result.output


def test_zero_eval_cases_is_a_usage_error(example_repo: Path, cli: CliRun) -> None:
    folder = example_repo / "travel_agent/eval"
    for path in folder.glob("*.json"):
        if path.name != "test_config.json":
            path.unlink()
    _write(folder / "empty.evalset.json", {"eval_set_id": "empty", "eval_cases": []})
    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 2
    assert ("error (eval_set: travel_agent/eval/empty.evalset.json): "
            "travel_agent/eval/empty.evalset.json: `eval_cases` is empty") in result.output
    assert "gate INCOMPLETE (eval set error): no eval case was evaluated (exit 2)" \
        in result.output
    comment = (example_repo / "c.md").read_text()
    assert "no eval case was evaluated" in comment and "0/0" not in comment
    assert "| Metric |" not in comment and "No metric was scored." in comment
    assert comment.endswith("ran\n") and "\n\n\n" not in comment


def test_an_empty_eval_set_beside_others_is_an_error_as_an_empty_list_is(
    example_repo: Path, cli: CliRun,
) -> None:
    """Both shapes of an eval set without eval cases are refused naming the file (exit 2),
    as ADK's AgentEvaluator refuses one; the other eval sets are still evaluated."""
    folder = example_repo / "travel_agent/eval"
    _write(folder / "empty.evalset.json", {"eval_set_id": "empty", "eval_cases": []})
    _write(folder / "list.test.json", [])
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    for name, says in [("empty.evalset.json", "`eval_cases` is empty"),
                       ("list.test.json", "an empty JSON list")]:
        assert f"travel_agent/eval/{name}: {says}: an eval set without eval cases" in (
            result.output)
    results = json.loads((example_repo / "r.json").read_text())
    evaluated = [c["eval_id"] for s in results["suites"] for e in s["eval_sets"]
                 for c in e["eval_cases"]]
    assert len(evaluated) == 5


def test_an_eval_case_without_turns_is_an_eval_set_error_naming_the_case(
    example_repo: Path, cli: CliRun,
) -> None:
    """An eval case with ``"conversation": []`` (``adk web`` saves one when a case is made
    before chatting) is refused as an eval set error naming file, line and case (exit 2,
    "incomplete", not a failing agent); it is never run, and the other eval cases are."""
    folder = example_repo / "travel_agent/eval"
    data = _evalset(example_repo)
    ran = [c["eval_id"] for c in data["eval_cases"]]
    data["eval_cases"].insert(1, {"eval_id": "nothing", "conversation": [],
                                  "session_input": data["eval_cases"][0]["session_input"]})
    _write(folder / "travel.evalset.json", data)
    _write(folder / "only.evalset.json", {"eval_set_id": "only", "eval_cases": [
        {"eval_id": "blank", "conversation": []}]})
    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 2, result.output
    for name, eval_id in [("travel", "nothing"), ("only", "blank")]:
        shown = f"travel_agent/eval/{name}.evalset.json"
        assert (f"error (eval_set: {shown}, {eval_id}): {shown}: eval case `{eval_id}`: the "
                "eval case has "
                "no turns (conversation is empty): add turns or remove the case") in result.output
    assert "NOT_EVALUATED" not in result.output and "gate FAILED" not in result.output
    results = load_json(example_repo / "r.json")
    evaluated = {c["eval_id"]: [r["status"] for r in c["runs"]] for s in results["suites"]
                 for e in s["eval_sets"] for c in e["eval_cases"]}
    assert "nothing" not in evaluated and "blank" not in evaluated
    assert {i: evaluated[i] for i in ran} == {i: ["passed"] for i in ran}
    errors = {e["eval_id"]: e for e in results["suites"][0]["errors"]}
    lines = (folder / "travel.evalset.json").read_text().splitlines()
    assert errors["nothing"]["line"] == 1 + next(
        n for n, line in enumerate(lines) if '"eval_id": "nothing"' in line)
    assert (errors["nothing"]["kind"], errors["nothing"]["eval_set_id"]) == ("eval_set", "travel")
    assert errors["blank"]["file"] == "travel_agent/eval/only.evalset.json"
    comment = (example_repo / "c.md").read_text()
    assert comment.splitlines()[2].startswith(
        f"⚠️ **ADK eval incomplete** (eval set error): {len(evaluated)}/{len(evaluated)} "
        "eval cases passed"), comment
    assert "the eval case has no turns" in comment


def test_a_conversation_scenario_case_is_not_an_empty_case(tmp_path: Path) -> None:
    """A ``conversation_scenario`` case has no ``conversation``: it is kept, and only the
    case whose ``conversation`` is an empty list is left out."""
    from adk_eval_action.adk.files.evalsets import load_eval_set

    path = _write(tmp_path / "s.evalset.json", {"eval_set_id": "s", "eval_cases": [
        {"eval_id": "scenario", "conversation_scenario": {
            "starting_prompt": "Hi", "conversation_plan": "Ask the weather in Paris."}},
        {"eval_id": "empty", "conversation": []}]})
    loaded = load_eval_set(path)
    assert [c.eval_id for c in loaded.eval_set.eval_cases] == ["scenario"]
    line = 1 + path.read_text().splitlines().index('      "eval_id": "empty",')
    assert loaded.empty_cases == {"empty": line} and list(loaded.eval_id_lines) == ["scenario"]


def test_agent_import_error_names_the_line(example_repo: Path, cli: CliRun) -> None:
    (example_repo / "travel_agent" / "agent.py").write_text("x = 1\nraise RuntimeError('boom')\n")
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert (
        "agent travel_agent failed to import: RuntimeError: boom (at travel_agent/agent.py:2)"
        in (result.output)
    )


def test_a_custom_metric_giving_nan_is_recorded_as_an_error(
    example_repo: Path, cli: CliRun
) -> None:
    _politeness_scoring(example_repo, "float('nan')")
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2, result.output  # the metric's code, not the agent
    # The results file itself says so (NaN would be written as null and look like a pass).
    results = load_json(example_repo / "r.json")
    m = metric(case_runs(results, "weather_paris")[0], "politeness")
    assert m["status"] == "error" and "score" not in m
    assert m["reason"] == "non-finite score nan: fix the metric's code"
    [error] = results["suites"][0]["errors"]
    assert error["kind"] == "metric_code" and results["complete"] is False
    assert error["message"] == (
        f"the code of `politeness` failed in {_every_case_of_the_example(example_repo)}: "
        "non-finite score nan: fix the metric's code"
    )


def test_a_custom_metric_scoring_outside_its_range_is_recorded_as_an_error(
    example_repo: Path, cli: CliRun
) -> None:
    # politeness declares [-1, 1] (its metric_info); 5.0 is its code's fault, and a results
    # file never holds such a scored result (results.input_checks refuses one when it is read).
    _politeness_scoring(example_repo, "5.0")
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    reason = "score 5.0 is outside its value range [-1.0, 1.0]: fix the metric's code"
    results = load_json(example_repo / "r.json")
    m = metric(case_runs(results, "weather_paris")[0], "politeness")
    assert m["status"] == "error" and "score" not in m and m["reason"] == reason
    [error] = results["suites"][0]["errors"]
    assert error["kind"] == "metric_code" and results["complete"] is False
    assert error["message"].endswith(reason)
    # The file the run wrote is one its own reader accepts (incomplete, not malformed).
    compared = cli("compare", "r.json", "--baseline", "none")
    assert compared.exit_code == 2 and "malformed" not in compared.output
    assert reason in compared.output


def _politeness_scoring(example_repo: Path, score: str) -> None:
    """The example's custom metric ``politeness`` replaced by code that passes every
    invocation with ``score`` (a Python expression), overall and per invocation."""
    metrics = example_repo / "travel_agent/metrics.py"
    metrics.write_text(
        metrics.read_text()
        + "\n\ndef fixed_politeness(eval_metric, actual_invocations, expected_invocations,"
        " conversation_scenario):\n"
        f"    per = [PerInvocationResult(actual_invocation=i, score={score},"
        " eval_status=EvalStatus.PASSED) for i in actual_invocations]\n"
        f"    return EvaluationResult(overall_score={score},"
        " overall_eval_status=EvalStatus.PASSED, per_invocation_results=per)\n"
    )
    config = load_json(example_repo / "travel_agent/eval/test_config.json")
    config["custom_metrics"]["politeness"]["code_config"]["name"] = (
        "travel_agent.metrics.fixed_politeness"
    )
    _write(example_repo / "travel_agent/eval/test_config.json", config)


def _every_case_of_the_example(example_repo: Path) -> str:
    """Where a metric hit in every case of the example suite failed, from its eval set files
    (one run each): the legacy file is one eval case named after the file."""
    travel = [c["eval_id"] for c in _evalset(example_repo)["eval_cases"]]
    assert (example_repo / "travel_agent/eval/legacy_weather.test.json").is_file()
    return (
        f"{len(travel) + 1} runs of {len(travel) + 1} eval cases across 2 eval sets: "
        f"legacy_weather.test.json (legacy_weather), travel.evalset.json ({', '.join(travel)})"
    )


def _run_writing_all(cli: CliRun) -> Any:
    """``run travel_agent`` with no baseline, writing r.json, c.md and s.md."""
    return cli("run", "travel_agent", "--baseline", "none", "--results-out", "r.json",
               "--comment-out", "c.md", "--summary-out", "s.md", "--quiet")


def _written(example_repo: Path) -> dict[str, Any]:
    assert (example_repo / "c.md").is_file() and (example_repo / "s.md").is_file()
    return load_json(example_repo / "r.json")


@pytest.mark.parametrize(
    ("statement", "raised"),
    [
        ("import sys; sys.exit(0)", "SystemExit: 0"),
        ("import sys; sys.exit(1)", "SystemExit: 1"),
        ("raise SystemExit('bye')", "SystemExit: bye"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ],
)
def test_an_exit_raised_in_a_tool_fails_its_case_with_file_and_line(
    example_repo: Path, cli: CliRun, statement: str, raised: str
) -> None:
    agent = example_repo / "travel_agent/agent.py"
    source = agent.read_text()
    anchor = "    name = city.strip().title()\n"
    agent.write_text(source.replace(anchor, "    " + statement + "\n" + anchor))
    line = agent.read_text().splitlines().index("    " + statement) + 1
    result = _run_writing_all(cli)
    assert result.exit_code == 1, result.output  # the agent's behaviour fails the gate
    results = _written(example_repo)
    [run] = case_runs(results, "weather_paris")
    assert (run["status"], run.get("error_kind")) == ("failed", None)
    assert run["error"] == f"the agent raised {raised} (at travel_agent/agent.py:{line})"
    assert [r["status"] for r in case_runs(results, "currency_usd_eur")] == ["passed"]
    assert results["complete"] is True


def test_an_exit_at_agent_import_is_the_suites_import_error(
    example_repo: Path, cli: CliRun
) -> None:
    agent = example_repo / "travel_agent/agent.py"
    source = agent.read_text()
    agent.write_text(source + "import sys\nsys.exit(0)\n")
    line = len(source.splitlines()) + 2
    result = _run_writing_all(cli)
    assert result.exit_code == 2, result.output
    [suite] = _written(example_repo)["suites"]
    assert suite["errors"][0]["kind"] == "agent"
    assert suite["errors"][0]["message"] == (
        f"agent travel_agent failed to import: SystemExit: 0 (at travel_agent/agent.py:{line})"
    )


@pytest.mark.parametrize(
    ("statement", "reason"),
    [("raise ValueError('no')", "ValueError: no"), ("raise SystemExit(0)", "SystemExit: 0")],
)
def test_an_exit_in_a_custom_metric_is_that_metric_raising(
    example_repo: Path, cli: CliRun, statement: str, reason: str
) -> None:
    metrics = example_repo / "travel_agent/metrics.py"
    source = metrics.read_text()
    anchor = '    """Politeness of the agent\'s replies, in [-1, 1] (higher is better).\n'
    assert anchor in source
    metrics.write_text(source.replace(anchor, "    " + statement + "\n" + anchor))
    # The file and line in the user's metric code, as for an exception of the agent's.
    line = metrics.read_text().splitlines().index("    " + statement) + 1
    reason += f" (at travel_agent/metrics.py:{line})"
    result = _run_writing_all(cli)
    # The metric's code failed, not the agent: incomplete (exit 2), never a red "failed".
    assert result.exit_code == 2, result.output
    where = _every_case_of_the_example(example_repo)
    assert f"the code of `politeness` failed in {where}: {reason}" in result.output
    assert "gate INCOMPLETE (a metric's code failed): 0 of 5 eval cases could be evaluated " \
        "(exit 2)" in result.output
    results = _written(example_repo)
    [run] = case_runs(results, "weather_paris")
    m = metric(run, "politeness")
    assert (m["status"], m["reason"]) == ("error", reason)
    assert metric(run, "brevity")["status"] == "passed"  # other metrics' scores are kept
    assert results["complete"] is False
    comment = (example_repo / "c.md").read_text()
    assert comment.count("⚠️ **ADK eval incomplete** (a metric's code failed): 0 of 5 eval "
                         "cases could be evaluated (1 error below).") == 1
    assert "ADK eval failed" not in comment and "| `brevity` ≤ 40 | 11 | 100% ✅ |" in comment
    errors = comment.split("### Errors")[1]
    assert "**metric_code** in `travel_agent`: the code of `politeness` failed in 5 runs" \
        in errors
    assert "the fault is in the metric's code, not the agent" in errors
    # not_evaluated: warn does not turn a broken metric into a pass either.
    warned = cli("run", "travel_agent", "--baseline", "none", "--results-out", "w.json",
                 "--not-evaluated", "warn", "--quiet")
    assert warned.exit_code == 2, warned.output


def test_a_keyboard_interrupt_only_counts_as_the_codes_when_no_sigint_can_raise_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python's default SIGINT handler raises KeyboardInterrupt: then it is a real Ctrl-C
    and passes; with another handler in force (the run's raises Interrupted) it was code."""
    monkeypatch.setattr(signal, "getsignal", lambda sig: signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt), exits_as_errors():
        raise KeyboardInterrupt
    with pytest.raises(UserExit, match="^SystemExit: 3$"), exits_as_errors():
        raise SystemExit(3)
    monkeypatch.setattr(signal, "getsignal", lambda sig: signal.SIG_IGN)
    with pytest.raises(UserExit, match="^KeyboardInterrupt$") as caught, exits_as_errors():
        raise KeyboardInterrupt
    assert isinstance(caught.value.__cause__, KeyboardInterrupt)


def test_field_locations_are_the_fields_the_user_wrote() -> None:
    """pydantic's union members (``.float``) and ADK's camelCase aliases are not in the
    location reported; the field is as the user's file spells it."""
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.eval_set import EvalSet
    from pydantic import ValidationError

    from adk_eval_action.errors import field_location

    config = {"criteria": {"response_match_score": "abc"}}
    with pytest.raises(ValidationError) as raised:
        EvalConfig.model_validate(config)
    assert "float" in [str(p) for p in raised.value.errors()[0]["loc"]]
    assert field_location(raised.value.errors()[0]["loc"], config) == (
        "criteria.response_match_score")
    turn = {"invocation_id": "i", "final_response": {"role": "model", "parts": []}}
    for case, expected in [
        ({"eval_id": "a", "conversation": [turn]}, "eval_cases[0].conversation[0].user_content"),
        ({"evalId": "a", "conversation": [{"invocationId": "i"}]},
         "eval_cases[0].conversation[0].userContent"),
    ]:
        data = {"eval_set_id": "s", "eval_cases": [case]}
        with pytest.raises(ValidationError) as raised:
            EvalSet.model_validate(data)
        locations = [field_location(e["loc"], data) for e in raised.value.errors()]
        assert expected in locations, locations


def test_a_cut_json_file_names_the_position_of_what_is_unterminated(tmp_path: Path) -> None:
    from adk_eval_action.adk.files.evalsets import load_eval_set
    from adk_eval_action.errors import EvalSetError

    path = _write(tmp_path / "cut.evalset.json", '{"eval_set_id": "x",\n "eval_cases": [{"eval_')
    with pytest.raises(EvalSetError) as raised:
        load_eval_set(path)
    # json.loads names where the string starts: line 2, the column of its quote.
    assert str(raised.value).endswith(
        "not valid JSON: Unterminated string starting at line 2, column 18")


def test_config_errors_name_files_relative_to_the_repository(
    example_repo: Path, cli: CliRun,
) -> None:
    config = load_json(example_repo / "travel_agent/eval/test_config.json")
    config["criteria"]["response_match_score"] = "abc"
    _write(example_repo / "travel_agent/eval/test_config.json", config)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2
    assert ("error (config: travel_agent/eval/test_config.json): travel_agent/eval/"
            "test_config.json (field `criteria.response_match_score`): Input should be a valid "
            "number") in result.output
    _write(example_repo / "adk-eval.yaml", "suites:\n  - name: t\n    agent: nope\n"
           "    eval_sets: ['travel_agent/eval/*.json']\n")
    result = cli("run", "--config", "adk-eval.yaml", "--results-out", "r.json")
    assert result.exit_code == 2
    assert "error: adk-eval.yaml (field `suites[0].agent`): agent folder nope not found" in (
        result.output)
    assert "gate INCOMPLETE (configuration error): nothing was evaluated: the run stopped " \
        "before evaluation started (exit 2)" in result.output
    assert str(example_repo) not in result.output


def test_a_custom_metric_without_per_invocation_results_is_its_codes_fault(
    example_repo: Path, cli: CliRun
) -> None:
    """A custom metric that returns an EvaluationResult without one per-invocation result
    per invocation: ADK's LocalEvalService refuses it ("should return results for each
    invocation"); that is the metric's code failing (metric_code, exit 2), naming it."""
    metrics = example_repo / "travel_agent/metrics.py"
    source = metrics.read_text()
    anchor = '    """Politeness of the agent\'s replies, in [-1, 1] (higher is better).\n'
    assert anchor in source
    statement = ("if any('Tokyo' in _reply_text(a) for a in actual_invocations): return "
                 "EvaluationResult(overall_score=float('nan'), "
                 "overall_eval_status=EvalStatus.PASSED)")
    metrics.write_text(source.replace(anchor, "    " + statement + "\n" + anchor))
    result = _run_writing_all(cli)
    assert result.exit_code == 2, result.output
    results = _written(example_repo)
    # The stand-in agent replies as the eval set expects: one case's replies name Tokyo.
    [tokyo] = [c for c in _evalset(example_repo)["eval_cases"]
               if "Tokyo" in json.dumps([t["final_response"] for t in c["conversation"]])]
    turns = len(tokyo["conversation"])
    reason = (f"it returned 0 per-invocation results for {turns} invocation"
              f"{'s' if turns > 1 else ''}: an EvaluationResult needs one in "
              "per_invocation_results per invocation")
    [run] = case_runs(results, tokyo["eval_id"])
    m = metric(run, "politeness")
    assert (m["status"], m["reason"]) == ("error", reason)
    assert metric(run, "brevity")["status"] == "passed"  # the other metrics are kept
    [error] = results["suites"][0]["errors"]
    assert error["kind"] == "metric_code" and results["complete"] is False
    assert error["message"] == (
        "the code of `politeness` failed in 1 run of 1 eval case in travel.evalset.json "
        f"({tokyo['eval_id']}): {reason}")
    assert error["metric"] == "politeness" and error["eval_id"] == tokyo["eval_id"]
    assert "evaluation failed" not in result.output and "gate FAILED" not in result.output

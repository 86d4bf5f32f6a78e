"""The real model path end to end: the example agents on ``gemini-2.5-flash`` and ADK's
default judge, through ADK's ``Gemini`` class and google-genai's HTTP client, against the
session's fake Gemini API (``gemini_api``), with faults injected.

What a red check means is checked here: exit 1 only when computed scores fail the gate;
a model outage, missing credentials and setup errors are exit 2 ("incomplete"), with the
results file, the comment and the job summary still written.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.compat import EFFICIENCY_METRICS_REPORTED
from adk_eval_action.testing.gemini_fake import Fault, GeminiFake, load_script
from conftest import EXAMPLES, CliRun, SharedRun, case_runs, load_json, metric
from support.adk_features import needs_adk_openai_model, needs_metric

EVAL_SET = "travel_agent/eval/travel.evalset.json"  # 4 eval cases
NOT_COMPARED = {"invocation_duration_v1"}  # wall clock


def _scores(results: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, str]]:
    return {
        (case["eval_id"], m["metric_name"]): (m.get("score"), m["status"])
        for suite in results["suites"]
        for eval_set in suite["eval_sets"]
        for case in eval_set["eval_cases"]
        for run in case["runs"]
        for m in run["metrics"]
        if m["metric_name"] not in NOT_COMPARED
    }


def _run(cli: CliRun, *extra: str) -> Any:
    return cli(
        "run",
        EVAL_SET,
        "--results-out",
        "r.json",
        "--comment-out",
        "c.md",
        "--summary-out",
        "s.md",
        *extra,
    )


STAND_IN_AGENT = """
import yaml
from pathlib import Path

from adk_eval_action.testing.gemini_script import AgentScript
from adk_eval_action.testing.standins import ScriptedLlm, register_standins

from .tools import INSTRUCTION, convert_currency, get_weather
from google.adk.agents import LlmAgent

register_standins()
_script = yaml.safe_load((Path(__file__).parents[1] / "gemini_fake.yaml").read_text())
_good = AgentScript.model_validate(_script["agents"][1])
root_agent = LlmAgent(
    name="travel_agent",
    model=ScriptedLlm(model="scripted-travel", rules=_good.rules,
                      default_reply=_good.default_reply),
    instruction=INSTRUCTION,
    tools=[get_weather, convert_currency],
)
"""


def test_clean_run_scores_as_the_stand_in_run(
    good_run: SharedRun, example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """The same rules answered in process by the stand-in BaseLlm (no HTTP, no
    google-genai) and through the fake Gemini API give the same score for every metric."""
    agent = example_repo / "travel_agent"
    (agent / "tools.py").write_text((agent / "agent.py").read_text(), encoding="utf-8")
    (agent / "agent.py").write_text(STAND_IN_AGENT, encoding="utf-8")
    config = load_json(agent / "eval/test_config.json")
    config["criteria"]["rubric_based_final_response_quality_v1"]["judge_model_options"][
        "judge_model"
    ] = "stand-in-judge"
    (agent / "eval/test_config.json").write_text(json.dumps(config), encoding="utf-8")
    gemini_api.clear_calls()

    stand_in = cli("run", "travel_agent", "--results-out", "standin.json")

    assert stand_in.exit_code == 0, stand_in.output
    assert gemini_api.calls == []  # nothing went over HTTP
    assert good_run.exit_code == 0, good_run.output
    ours, theirs = (
        _scores(load_json(good_run.results)),
        _scores(load_json(example_repo / "standin.json")),
    )
    # Five eval cases, each with the eval config's metrics and, where google-adk adds them
    # to every eval (later 2.x), its efficiency metrics but the wall-clock one (NOT_COMPARED).
    per_case = len(config["criteria"]) + (3 if EFFICIENCY_METRICS_REPORTED else 0)
    assert len(ours) == 5 * per_case and ours == theirs


def test_first_calls_429_give_the_same_scores_and_the_retries_are_reported(
    good_run: SharedRun, example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    clean = cli("run", EVAL_SET, "--results-out", "clean.json")
    assert clean.exit_code == 0
    # The wait is the server's retryDelay, not the default backoff (0.5-1 s per retry).
    (example_repo / "adk-eval.yaml").write_text("model_retries: {initial_delay_s: 0.01}\n",
                                                encoding="utf-8")
    gemini_api.faults = [Fault(status=429, retry_delay_s=0.05, times=3)]
    gemini_api.clear_calls()

    result = _run(cli)

    assert result.exit_code == 0, result.output
    results = load_json(example_repo / "r.json")
    assert _scores(results) == _scores(load_json(example_repo / "clean.json"))
    counts = results["metadata"]["model_calls"]
    assert (counts["retried_calls"], counts["retries"], counts["failed_calls"]) == (3, 3, 0)
    assert counts["retry_causes"] == {"429 RESOURCE_EXHAUSTED": 3}
    # Every call the fake saw is a call or a retry of one.
    assert len(gemini_api.calls) == counts["calls"] + counts["retries"]
    assert [c.outcome for c in gemini_api.calls[:3]] == ["429"] * 3
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert re.search(r"Model calls: \d+, 3 retried \(429 RESOURCE\\_EXHAUSTED ×3\)", comment)
    assert "model calls:" in result.output and "3 retried" in result.output


@pytest.mark.parametrize("retries", [
    # The default settings (adk-eval.yaml says nothing) back off 1+2+4+8 s per call.
    pytest.param(None, marks=pytest.mark.slow, id="default-backoff"),
    # Its quick twin: the same attempts and outcome without the waits.
    pytest.param("model_retries: {initial_delay_s: 0.01}\n", id="short-backoff"),
])
def test_a_persistent_outage_is_incomplete_within_a_bounded_time(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, retries: str | None
):
    """Every call 503, 5 attempts per call (the default), 4 eval cases."""
    if retries:
        (example_repo / "adk-eval.yaml").write_text(retries, encoding="utf-8")
    gemini_api.faults = [Fault(status=503)]
    gemini_api.clear_calls()

    started = time.monotonic()
    result = _run(cli)
    elapsed = time.monotonic() - started

    assert result.exit_code == 2, result.output
    assert elapsed < 60
    results = load_json(example_repo / "r.json")
    # By hand: each case's first agent call is tried 5 times (the default attempts), never
    # more, and nothing else is called (no inference, so no judge).
    assert len(gemini_api.calls) == 4 * 5
    assert {c.role for c in gemini_api.calls} == {"agent"}
    [summary] = [e for e in results["suites"][0]["errors"] if e["kind"] == "model"]
    assert summary["message"] == "4 of 4 case runs could not reach the model (503 UNAVAILABLE ×4)"
    for eval_id in (
        "weather_paris",
        "currency_usd_eur",
        "multi_turn_trip",
        "weather_tokyo_rubrics",
    ):
        [run] = case_runs(results, eval_id)
        assert (run["status"], run["error_kind"]) == ("error", "model")
        assert run["metrics"] == []
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    headline = comment.splitlines()[2]
    assert headline.startswith(
        "⚠️ **ADK eval incomplete** (model unreachable): 4 of 4 case runs could not reach the "
        "model (503 UNAVAILABLE ×4)"
    )
    assert comment.count("could not reach the model") == 1  # once, not per case
    assert "failed" not in headline.lower()
    # None of the 4 cases ran: the count says so, never "0/4 eval cases passed".
    assert headline.endswith("×4); 0 of 4 eval cases could be evaluated.")
    # The job summary and the console say it in the same words.
    assert headline in (example_repo / "s.md").read_text(encoding="utf-8").splitlines()
    assert "gate INCOMPLETE (model unreachable): 4 of 4 case runs could not reach the model " \
        "(503 UNAVAILABLE ×4); 0 of 4 eval cases could be evaluated (exit 2)" in result.output
    assert "FAILED" not in result.output
    assert results["complete"] is False


def test_a_judge_outage_keeps_the_scores_that_were_computed(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 2, initial_delay_s: 0.01}\n", encoding="utf-8"
    )
    gemini_api.faults = [Fault(status=500, role="judge")]

    result = _run(cli)

    assert result.exit_code == 2, result.output
    results = load_json(example_repo / "r.json")
    [run] = case_runs(results, "weather_paris")
    assert (run["status"], run["error_kind"]) == ("error", "model")
    assert metric(run, "tool_trajectory_avg_score")["score"] == 1.0  # scored by ADK locally
    rubric = metric(run, "rubric_based_final_response_quality_v1")
    assert rubric["status"] == "error" and "500 INTERNAL after 2 attempts" in rubric["reason"]
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert (
        "the judge model `gemini-2.5-flash` of `rubric_based_final_response_quality_v1` "
        "could not be reached: no verdict in 4 runs of 4 eval cases in travel.evalset.json "
        "(weather\\_paris, currency\\_usd\\_eur, multi\\_turn\\_trip, "
        "weather\\_tokyo\\_rubrics): judge model gemini-2.5-flash: 500 INTERNAL after 2 attempts"
    ) in comment
    # The per-metric table stays: the metric that needs no judge is scored and passes.
    [row] = [line for line in comment.splitlines() if "| `tool_trajectory_avg_score` " in line]
    assert "| 1.000 |" in row and row.endswith("✅ |")
    assert "counts as a failure" not in comment  # said once, as the model's outage


def test_a_model_name_the_api_does_not_know_is_named_and_tried_once(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """The API answers 404 NOT_FOUND for a model it does not know: not an outage (no retry
    cures it), but the agent's setup, named with what to check; still exit 2."""
    agent = example_repo / "travel_agent/agent.py"
    agent.write_text(agent.read_text().replace('"gemini-2.5-flash"', '"gemini-2.5-flsh"'))
    gemini_api.faults = [Fault(status=404, role="agent")]
    gemini_api.clear_calls()

    result = _run(cli)

    assert result.exit_code == 2, result.output
    # By hand: 4 eval cases, each stops at its first agent call, tried once (404 is not
    # among the statuses google-genai retries), so no judge is called either.
    assert [c.role for c in gemini_api.calls] == ["agent"] * 4
    results = load_json(example_repo / "r.json")
    [error] = results["suites"][0]["errors"]
    assert (error["kind"], error["message"]) == (
        "agent",
        "4 of 4 case runs named a model the API does not know (404 NOT_FOUND: agent model "
        "`gemini-2.5-flsh` is unknown to the API ×4)",
    )
    assert "check the model name's spelling" in error["hint"]
    [run] = case_runs(results, "weather_paris")
    assert (run["status"], run["error_kind"]) == ("error", "agent")
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert "could not reach the model" not in comment
    assert comment.splitlines()[2] == (
        "⚠️ **ADK eval incomplete** (agent setup): 0 of 4 eval cases could be evaluated "
        "(1 error below)."
    )
    assert "agent model `gemini-2.5-flsh` is unknown to the API" in comment
    # Not retried, so not "after retries": each call failed for good at its first try.
    assert "Model calls: 4, 4 failed for good (404 NOT\\_FOUND ×4)." in comment


def test_a_judge_model_the_api_does_not_know_keeps_the_other_scores(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {attempts: 3, initial_delay_s: 0.01}\n", encoding="utf-8"
    )
    gemini_api.faults = [Fault(status=404, role="judge")]
    gemini_api.clear_calls()

    result = _run(cli)

    assert result.exit_code == 2, result.output
    results = load_json(example_repo / "r.json")
    [error] = results["suites"][0]["errors"]
    assert error["kind"] == "judge"
    assert error["message"].startswith(
        "the judge model `gemini-2.5-flash` of `rubric_based_final_response_quality_v1` could "
        "not be used: no verdict in 4 runs of 4 eval cases in travel.evalset.json "
        "(weather_paris, currency_usd_eur, multi_turn_trip, weather_tokyo_rubrics): 404 "
        "NOT_FOUND: judge model `gemini-2.5-flash` is unknown to the API")
    assert error["hint"].endswith("is available to this API key or project")
    [run] = case_runs(results, "weather_paris")
    assert (run["status"], run["error_kind"]) == ("error", "judge")
    assert metric(run, "tool_trajectory_avg_score")["score"] == 1.0
    # Each judge request is sent once: a retry would send the same request again.
    judged = [json.dumps(c.request, sort_keys=True) for c in gemini_api.calls if c.role == "judge"]
    assert judged and len(set(judged)) == len(judged)


@pytest.mark.parametrize(
    "fault",
    [
        Fault(kind="drop", times=2),
        Fault(kind="malformed", times=2),
        # Only this answer is slow enough to be cut off by the 10 s call timeout.
        pytest.param(Fault(kind="slow", delay_s=120, times=1), marks=pytest.mark.slow),
    ],
    ids=["dropped", "malformed", "slow"],
)
def test_transient_transport_faults_are_retried_to_the_same_scores(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, fault: Fault
):
    # A call timeout of 1 s also cut off ordinary answers on a loaded machine (retries
    # counted 3-4 instead of 1-2); 10 s cuts off only the faulty slow answer.
    (example_repo / "adk-eval.yaml").write_text(
        "model_retries: {initial_delay_s: 0.01, call_timeout_s: 10}\n", encoding="utf-8"
    )
    clean = cli("run", EVAL_SET, "--results-out", "clean.json")
    gemini_api.faults = [fault]

    result = _run(cli)

    assert result.exit_code == 0, result.output
    results = load_json(example_repo / "r.json")
    assert _scores(results) == _scores(load_json(example_repo / "clean.json"))
    assert clean.exit_code == 0
    assert results["metadata"]["model_calls"]["retries"] == (fault.times or 0)


def test_regressed_answers_with_a_clean_baseline_fail_the_gate(regressed_run: SharedRun):
    assert regressed_run.exit_code == 1, regressed_run.output
    results = load_json(regressed_run.results)
    assert results["complete"] is True
    assert results["metadata"]["model_calls"]["failed_calls"] == 0
    assert [
        e for e in results["suites"][0]["errors"] if e["kind"] in ("model", "credentials")
    ] == []


def test_no_credentials_is_refused_before_any_case_runs(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("GOOGLE_API_KEY")
    gemini_api.clear_calls()

    started = time.monotonic()
    result = _run(cli)
    elapsed = time.monotonic() - started

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []
    assert elapsed < 10  # google-adk is already imported in this process
    results = load_json(example_repo / "r.json")
    [error] = [e for e in results["errors"] if e["kind"] == "credentials"]
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        assert name in error["message"]
    # The run stopped before evaluation started: the message once, no eval case listed.
    assert result.output.count(error["message"]) == 1
    assert "gate INCOMPLETE (no model credentials): nothing was evaluated: the run stopped " \
        "before evaluation started (exit 2)" in result.output
    for written in ("c.md", "s.md"):
        text = (example_repo / written).read_text()
        headline = next(line for line in text.splitlines() if "ADK eval incomplete" in line)
        assert headline == ("⚠️ **ADK eval incomplete** (no model credentials): nothing was "
                            "evaluated: the run stopped before evaluation started.")
        assert "weather_paris" not in text and "passed" not in text
    assert results["suites"] == [] and results["complete"] is False
    assert "No API key was provided" not in result.output  # google-genai never got there
    assert "Task exception was never retrieved" not in result.output


def _config(example_repo: Path) -> dict[str, Any]:
    return load_json(example_repo / "travel_agent/eval/test_config.json")


RUBRIC = "rubric_based_final_response_quality_v1"


def _judge(config: dict[str, Any], judge: str) -> None:
    config["criteria"][RUBRIC]["judge_model_options"]["judge_model"] = judge


@pytest.mark.parametrize(
    ("change", "kind", "field"),
    [
        (
            lambda c: _judge(c, "acme-judge-7b"),
            "judge",
            f"criteria.{RUBRIC}.judge_model_options.judge_model",
        ),
        (lambda c: c["custom_metrics"].pop("brevity"), "config", "criteria.brevity"),
        (
            lambda c: c["custom_metrics"]["politeness"]["code_config"].update(
                name="travel_agent.nowhere.politeness"
            ),
            "custom_metric",
            "custom_metrics.politeness.code_config.name",
        ),
        (lambda c: c.update(criteria={}), "config", "criteria"),
        (
            lambda c: _judge(c, "openai/gpt-4o"),  # LiteLLM's, without OPENAI_API_KEY
            "credentials",
            f"criteria.{RUBRIC}.judge_model_options.judge_model",
        ),
        pytest.param(
            lambda c: _judge(c, "gpt-4o"),  # google-adk's own OpenAILlm: a red exit 1 before
            "credentials",
            f"criteria.{RUBRIC}.judge_model_options.judge_model",
            marks=needs_adk_openai_model,
        ),
    ],
    ids=["unknown-judge", "undeclared-metric", "unimportable-metric", "empty-criteria",
         "litellm-judge-without-key", "adk-openai-judge-without-key"],
)
def test_setup_errors_are_exit_2_naming_the_file_and_field(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, change: Any, kind: str, field: str,
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = _config(example_repo)
    change(config)
    (example_repo / "travel_agent/eval/test_config.json").write_text(json.dumps(config))
    gemini_api.clear_calls()

    result = _run(cli)

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []  # before any agent ran
    errors = [e for e in load_json(example_repo / "r.json")["errors"] if e["kind"] == kind]
    assert errors and errors[0]["file"] == "travel_agent/eval/test_config.json"
    assert f"(field `{field}`)" in errors[0]["message"]


def test_an_exception_in_the_agents_own_code_fails_its_case_with_file_and_line(
    example_repo: Path, cli: CliRun
):
    agent = example_repo / "travel_agent/agent.py"
    source = agent.read_text(encoding="utf-8")
    broken = source.replace(
        "    name = city.strip().title()\n",
        "    name = city.strip().title()\n"
        "    if name == 'Tokyo':\n"
        "        raise RuntimeError('weather service down for Tokyo')\n",
    )
    assert broken != source
    agent.write_text(broken, encoding="utf-8")
    line = (
        broken.splitlines().index("        raise RuntimeError('weather service down for Tokyo')")
        + 1
    )

    result = _run(cli)

    assert result.exit_code == 1, result.output  # agent behaviour: a failed case, not exit 2
    results = load_json(example_repo / "r.json")
    [run] = case_runs(results, "weather_tokyo_rubrics")
    assert (run["status"], run.get("error_kind")) == ("failed", None)
    assert run["error"] == (
        "the agent raised RuntimeError: weather service down for Tokyo "
        f"(at travel_agent/agent.py:{line})"
    )
    assert [r["status"] for r in case_runs(results, "weather_paris")] == ["passed"]
    assert results["complete"] is True


def test_the_fake_answers_the_examples_script_file():
    script = load_script(EXAMPLES / "gemini_fake.yaml")
    assert [a.instruction for a in script.agents] == [
        "Be blunt", "travel assistant", "Guess the forecast", "You are a forecaster",
        "You are the order desk", "You are the front desk"]


SCENARIO_SET = {
    "eval_set_id": "trip_scenarios",
    "eval_cases": [
        {
            "eval_id": "planned_trip",
            "conversation_scenario": {
                "starting_prompt": "Hi, I am planning a trip.",
                "conversation_plan": "- What's the weather in Paris?\n"
                "- Please convert 100 USD to EUR.\n"
                "- What's the weather in Tokyo?",
            },
            "session_input": {"app_name": "travel_agent", "user_id": "u", "state": {}},
        }
    ],
}

# A metric that supports user simulation (a rubric metric; ADK's "Evaluation Criteria").
SCENARIO_CRITERIA = {
    "rubric_based_final_response_quality_v1": {
        "threshold": 0.5, "judge_model_options": {"num_samples": 1},
        "rubrics": [{"rubric_id": "helps", "rubric_content": {"text_property": "It helps."}}],
    }
}


@pytest.mark.parametrize(("limit", "turns"), [(2, 2), (10, 4)])
def test_user_simulator_config_is_honoured(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, limit: int, turns: int
):
    """The eval config's user simulator model and max_allowed_invocations are the ones ADK
    runs with. By hand: the starting prompt, then one plan item per turn (the fake's user
    simulator rule) until the plan is done or the limit is reached."""
    folder = example_repo / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps(SCENARIO_SET), encoding="utf-8")
    config = {
        "criteria": SCENARIO_CRITERIA,
        "user_simulator_config": {"model": "gemini-2.5-pro", "max_allowed_invocations": limit},
    }
    (folder / "test_config.json").write_text(json.dumps(config), encoding="utf-8")
    gemini_api.clear_calls()

    result = cli("run", "travel_agent/scenarios", "--results-out", "r.json")

    [run] = case_runs(load_json(example_repo / "r.json"), "planned_trip")
    assert len(run["actual_invocations"]) == turns, result.output
    simulator = [c for c in gemini_api.calls if c.role == "user_simulator"]
    assert simulator and {c.model for c in simulator} == {"gemini-2.5-pro"}
    said = [inv["user_content"]["parts"][0]["text"] for inv in run["actual_invocations"]]
    plan = [
        "What's the weather in Paris?",
        "Please convert 100 USD to EUR.",
        "What's the weather in Tokyo?",
    ]
    assert said == ["Hi, I am planning a trip.", *plan][:turns]


def test_an_unknown_user_simulator_model_of_a_scenario_suite_is_refused_before_any_call(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """The preflight reads the eval sets for scenarios (adk.files.prepare.may_have_scenarios) and
    so checks the simulator's model; nothing is called."""
    folder = example_repo / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps(SCENARIO_SET), encoding="utf-8")
    config = {"criteria": SCENARIO_CRITERIA, "user_simulator_config": {"model": "acme-sim"}}
    (folder / "test_config.json").write_text(json.dumps(config), encoding="utf-8")
    gemini_api.clear_calls()

    result = cli("run", "travel_agent/scenarios", "--results-out", "r.json")

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []
    assert "user_simulator_config.model" in result.output and "acme-sim" in result.output


def test_metrics_that_need_expected_invocations_are_refused_for_scenarios_before_any_call(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """ADK's docs list tool_trajectory_avg_score and response_match_score as not supporting
    user simulation; their evaluators raise without an expected conversation. Refused as a
    config error naming the metric and the case kind, before the simulated conversation."""
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    with pytest.raises(ValueError, match="expected_invocations"):  # ADK's own evaluator
        TrajectoryEvaluator(eval_metric=EvalMetric(
            metric_name="tool_trajectory_avg_score", threshold=1.0,
        )).evaluate_invocations([], None, None)
    folder = example_repo / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps(SCENARIO_SET), encoding="utf-8")
    config = {"criteria": {**SCENARIO_CRITERIA, "tool_trajectory_avg_score": 1.0,
                           "response_match_score": 0.5}}
    (folder / "test_config.json").write_text(json.dumps(config), encoding="utf-8")
    gemini_api.clear_calls()

    result = cli("run", "travel_agent/scenarios", "--results-out", "r.json")

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []
    errors = load_json(example_repo / "r.json")["errors"]
    assert [(e["kind"], e["message"].rsplit(" (field ", 1)[1]) for e in errors] == [
        ("config", "`criteria.tool_trajectory_avg_score`)"),
        ("config", "`criteria.response_match_score`)"),
    ]
    for name, error in zip(("tool_trajectory_avg_score", "response_match_score"), errors,
                           strict=True):
        assert error["message"].startswith(
            f"metric `{name}` does not support user simulation: `conversation_scenario` eval "
            "cases (`trip.evalset.json: planned_trip`) have no expected invocations"
        )
    assert errors[0]["message"] in result.output
    assert "fix the metric's code" not in result.output


def test_console_prints_each_lint_warning_once_and_whole_suite_names(
    example_repo: Path, cli: CliRun
):
    config = _config(example_repo)
    config["metrics"] = ["x"]  # an unknown top-level key: a lint warning
    (example_repo / "travel_agent/eval/test_config.json").write_text(json.dumps(config))
    name = "travel_agent_with_a_suite_name_longer_than_twenty_characters"
    (example_repo / "adk-eval.yaml").write_text(
        f"suites:\n  - name: {name}\n    agent: travel_agent\n"
        f"    eval_sets: ['{EVAL_SET}']\n"
        "    eval_config: travel_agent/eval/test_config.json\n",
        encoding="utf-8",
    )

    result = cli("run", "--results-out", "r.json")

    warning = "unknown top-level key `metrics` is ignored by ADK's EvalConfig"
    assert result.output.count(warning) == 1, result.output
    rows = [line for line in result.output.splitlines() if "response_match_score" in line]
    assert rows and rows[0].startswith(name + " ")


@pytest.mark.parametrize(("limit", "score"), [
    pytest.param(limit, score, marks=needs_metric("per_turn_user_simulator_quality_v1"))
    for limit, score in [(10, 1.0), (2, 0.5)]])
def test_the_user_simulators_turns_are_judged_by_adks_per_turn_metric(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, limit: int, score: float
):
    """``per_turn_user_simulator_quality_v1`` through the fake Gemini judge, which reads
    ADK's real prompt. By hand: with room for the whole plan the user says the starting
    prompt (checked by ADK itself), then the plan's three items, each the plan's next step
    (valid), then stops when every item was said (valid): 4/4. Cut at 2 turns, the user
    never said the last two items, so stopping there is invalid, and ADK marks the last turn
    failed: 1/2."""
    folder = example_repo / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps(SCENARIO_SET), encoding="utf-8")
    config = {
        "criteria": {"per_turn_user_simulator_quality_v1": {
            "threshold": 0.75,
            "judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 1}}},
        "user_simulator_config": {"model": "gemini-2.5-pro", "max_allowed_invocations": limit},
    }
    (folder / "test_config.json").write_text(json.dumps(config), encoding="utf-8")
    gemini_api.clear_calls()

    result = cli("run", "travel_agent/scenarios", "--results-out", "r.json")

    [run] = case_runs(load_json(example_repo / "r.json"), "planned_trip")
    assert metric(run, "per_turn_user_simulator_quality_v1")["score"] == score, result.output
    assert result.exit_code == (0 if score >= 0.75 else 1), result.output
    judged = [c for c in gemini_api.calls if c.role == "judge"]
    # One judge call per turn after the first, and one on the stop signal.
    assert len(judged) == min(limit, 4)

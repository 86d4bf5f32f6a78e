"""The cost plan (adk/evaluate/plan.py, ``adk-eval-action plan``): its call counts are the calls the
stand-in models actually receive when the same suites are evaluated, and a hand count."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adk_eval_action.adk.evaluate.engine import EngineSettings
from adk_eval_action.adk.evaluate.scheduler import EngineHooks, evaluate_suites, plan_suites
from adk_eval_action.adk.runtime.model_calls import ModelCalls
from adk_eval_action.project.config import ModelRetrySettings
from adk_eval_action.project.discovery import Suite, discover_suites
from conftest import CliRun, working_directory
from support.adk_features import needs_case_rubrics_alone
from support.counting_models import CALLS, register, thanks, turn, weather, write_agent

register()

FRQ = "FINAL_RESPONSE_QUALITY"
SAYS_HAPPY = {"rubric_id": "happy", "rubric_content": {"text_property": 'Says "happy".'},
              "type": FRQ}


def _judge(samples: int, **extra: object) -> dict:
    return {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": "counting-judge", "num_samples": samples},
        **extra,
    }


CRITERIA = {
    "tool_trajectory_avg_score": 1.0,
    "final_response_match_v2": _judge(2),
    "rubric_based_final_response_quality_v1": _judge(1),
    "hallucinations_v1": _judge(1),
}
CASES = {
    # A case rubric: ADK copies it onto every turn, so each turn is judged.
    "one_tool": {"conversation": [weather("Paris")], "rubrics": [SAYS_HAPPY]},
    "no_tool": {"conversation": [thanks()], "rubrics": [SAYS_HAPPY]},
    # Three turns; only the middle one has a rubric for the rubric metric.
    "three_turns": [
        weather("London"),
        turn("convert 10 usd to eur", "That is 20.0 eur.",
             [{"name": "convert", "args": {"amount": 10, "src": "usd", "dst": "eur"}}],
             rubrics=[SAYS_HAPPY]),
        thanks(),
    ],
}


@pytest.fixture(autouse=True)
def clear_calls():
    CALLS.clear()
    yield
    CALLS.clear()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_agent(tmp_path, "planned", {"trips": CASES}, CRITERIA)
    return tmp_path


@needs_case_rubrics_alone
def test_plan_counts_are_the_calls_the_models_receive(project: Path) -> None:
    suites = discover_suites([project], project)
    settings = EngineSettings(num_runs=2, parallelism=4, repo_root=project)
    hooks = EngineHooks(on_progress=None)
    plan, records = asyncio.run(plan_suites(suites, settings, hooks))
    assert CALLS.calls == []  # planning calls no model
    assert not [e for r in records for e in r.errors]
    calls = ModelCalls(ModelRetrySettings())
    evaluation = asyncio.run(evaluate_suites(suites, settings, hooks, calls))
    assert not [e for s in evaluation.suites for e in s.errors]
    assert plan.agent_calls == CALLS.count("agent")
    assert plan.judge_calls == CALLS.count("judge")
    assert calls.summary().calls == len(CALLS.calls)  # the run's count (results metadata)
    # By hand, per run: agent 2 + 1 + (2 + 2 + 1) = 8. Judge: final_response_match_v2
    # 2 samples x 5 turns = 10; the rubric metric judges the turns with a rubric: 1 + 1 +
    # 1 (of three) = 3; hallucinations_v1 segments and validates 5 final responses = 10.
    assert (plan.agent_calls, plan.judge_calls) == (2 * 8, 2 * 23)
    assert plan.calls_by_model() == {"counting-agent": 16, "counting-judge": 46}
    assert plan.suites[0].agent_models == ["counting-agent"]


def test_the_estimate_follows_the_chains_and_the_limits(project: Path) -> None:
    suites = discover_suites([project], project)
    settings = EngineSettings(num_runs=1, parallelism=2, repo_root=project, latency_s=0.5)
    plan, _ = asyncio.run(plan_suites(suites, settings, EngineHooks(on_progress=None)))
    chains = {c.eval_id: c.chain for c in plan.suites[0].cases}
    # Agent calls, then each judge metric's calls one after another (parallelism_limit 1).
    assert chains == {"one_tool": 2 + 2 + 1 + 2, "no_tool": 1 + 2 + 1 + 2,
                      "three_turns": 5 + 6 + 1 + 6}
    assert plan.wall_s() == pytest.approx(max(sum(chains.values()) / 2, 18) * 0.5)
    limited = plan.model_copy(update={"model_limits": {"counting-judge": 1}})
    assert limited.wall_s() == pytest.approx(23 * 0.5)  # 23 judge calls, one at a time


def test_the_estimate_of_a_thousand_runs_is_computed_not_listed(project: Path) -> None:
    """The same bounds as the rule applied by hand, without a list of every run."""
    suites = discover_suites([project], project)
    settings = EngineSettings(num_runs=1, parallelism=2, repo_root=project, latency_s=0.5)
    plan, _ = asyncio.run(plan_suites(suites, settings, EngineHooks(on_progress=None)))
    chains = [c.chain for c in plan.suites[0].cases]
    many = plan.model_copy(update={"suites": [plan.suites[0].model_copy(
        update={"num_runs": 1000})]})
    assert many.case_runs == 3000
    assert many.wall_s() == pytest.approx(sum(chains) * 1000 / 2 * 0.5)


# google-adk 1.x refuses a rubric metric with no criterion rubric ("Rubrics are
# required."): `run` would, so `plan` does.
@needs_case_rubrics_alone
def test_plan_command_prints_the_plan_and_refuses_what_run_refuses(
    project: Path, cli: CliRun
) -> None:
    with working_directory(project):
        result = cli("plan", "planned", "--num-runs", "3", "--parallelism", "4",
                     "--latency", "2")
        assert result.exit_code == 0, result.output
        assert "3 eval case(s) x 3 run(s) = 9 case run(s)" in result.output
        assert "~24 agent model calls" in result.output
        assert "~69 judge model calls" in result.output
        # 3 cases x 3 runs a side, 4 gated metrics: a lone call needs p <= 0.05/1.05/4;
        # the smallest p is C(6, 3)**-3, one case collapsing has p = 1/C(6, 3) = 0.05.
        assert (
            "  can call (each of its 4 gated metrics, against its baseline): 3 paired cases "
            "x 3 runs a side: the smallest possible p is 0.000125; a call needs p ≤ 0.0119 "
            "with the run's 4 gated tests (every suite's; more with rubrics); one case "
            "collapsing from all-pass to "
            "all-fail would not be called (p = 0.05); 5 runs would call it"
        ) in result.output
        assert CALLS.calls == []
        # A metric name no registry knows: `run`'s preflight refuses it, so `plan` does.
        config = project / "planned" / "eval" / "test_config.json"
        config.write_text(json.dumps({"criteria": {**CRITERIA, "tool_trajectory_avg_scor": 1}}))
        misspelt = cli("plan", "planned")
        config.write_text(json.dumps({"criteria": CRITERIA}))
        (project / "planned" / "eval" / "broken.evalset.json").write_text("{not json")
        broken = cli("plan", "planned")
    assert misspelt.exit_code == 2, misspelt.output
    assert ("metric `tool_trajectory_avg_scor` is neither a google-adk metric nor declared "
            "in `custom_metrics`; did you mean `tool_trajectory_avg_score`? (field "
            "`criteria.tool_trajectory_avg_scor`) in planned/eval/test_config.json"
            ) in misspelt.output
    assert CALLS.calls == []
    assert broken.exit_code == 2
    assert "broken.evalset.json" in broken.output


@needs_case_rubrics_alone
def test_run_prints_the_plan_summary_first(project: Path, cli: CliRun) -> None:
    with working_directory(project):
        result = cli("run", "planned", "--baseline", "none", "--quiet")
    lines = result.output.splitlines()
    plan_line = next(i for i, line in enumerate(lines) if line.startswith("plan:"))
    assert "3 eval case(s), 3 case run(s); ~8 agent and ~23 judge model calls" in lines[
        plan_line]
    assert not any(line.startswith("progress:") for line in lines)  # --quiet
    assert plan_line < next(i for i, line in enumerate(lines) if line.startswith("results:"))
    assert json.loads((project / "adk-eval-results.json").read_text())["suites"]


SCENARIO_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "reported" / "user_simulator"


def test_a_conversation_scenario_is_not_estimated_rather_than_zero(
    tmp_path: Path, cli: CliRun,
) -> None:
    """google/adk-python's conversation_scenario shape (the simulated user decides the
    turns; hallucinations_v1 judges them): the plan says its agent and judge calls and
    its share of the totals are not estimated, never "up to 0" or "judge calls: none"."""
    import shutil

    shutil.copytree(SCENARIO_FIXTURE / "desk_bot", tmp_path / "desk_bot")
    with working_directory(tmp_path):
        result = cli("plan", "desk_bot")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "  agent model(s): scripted-desk; agent calls not estimated" in lines, result.output
    assert "  judge calls: not estimated" in lines
    assert ("  1 conversation scenario case(s): not estimated (the simulated user decides "
            "the turns)") in lines
    assert ("total: 1 case run(s), model calls not estimated (all conversation scenario case "
            "runs)") in lines
    assert next(x for x in lines if x.startswith("estimated wall time: ")).startswith(
        "estimated wall time: not estimated, plus the start-up")
    assert "up to 0" not in result.output and "judge calls: none" not in result.output
    assert "~0" not in result.output


def test_eval_cases_without_expected_tool_calls_have_no_upper_bound(
    tmp_path: Path, cli: CliRun,
) -> None:
    """agent-starter-pack's eval sets list no expected tool calls, and its weather case
    calls one: the run makes more agent calls than one per turn, so the plan gives no
    "up to"; its estimate is a floor of what the run then counts."""
    from support.layouts import starter_pack

    root = starter_pack(tmp_path / "repo")
    with working_directory(root):
        planned = cli("plan", "--num-runs", "1")
        ran = cli("run", "--num-runs", "1", "--baseline", "none", "--results-out", "r.json")
    assert planned.exit_code == 0, planned.output
    assert ("agent calls ~2 (no upper bound: 2 eval case(s) list no expected tool calls, so "
            "their tool calls are not counted)") in planned.output
    assert "up to" not in planned.output
    assert ran.exit_code in (0, 1), ran.output
    usage = json.loads((root / "r.json").read_text())["metadata"]["model_calls"]["usage"]
    agent_calls = sum(u["calls"] for u in usage if u["role"] == "agent")
    assert agent_calls > 2  # the weather case's tool call took a model call of its own


def _alike_suites(root: Path, count: int, criteria: dict | None = None) -> None:
    """adk-eval.yaml naming ``count`` suites of the example's travel agent and eval set
    (``criteria``: an eval config of their own instead of the example's)."""
    import yaml

    config = None
    if criteria is not None:
        (root / "other_config.json").write_text(json.dumps({"criteria": criteria}))
        config = "other_config.json"
    (root / "adk-eval.yaml").write_text(yaml.safe_dump({"suites": [
        {"name": f"s{i}", "agent": "travel_agent",
         "eval_sets": ["travel_agent/eval/travel.evalset.json"],
         **({"eval_config": config} if config else {})} for i in range(count)]}))


def test_plan_of_many_alike_suites_imports_each_agent_and_reads_each_file_once(
    example_repo: Path, cli: CliRun, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An adk-eval.yaml of many suites of one agent and one eval set (issue 34's 5,000
    suites spun for minutes: each suite imported the agent twice in import scopes of its
    own and parsed its files three times): the agent is imported once for the plan and
    once for the preflight, the files read once for each, and every suite is still planned
    and said under its own name, with the plan of one such suite alone."""
    from adk_eval_action.adk.evaluate import scheduler
    from adk_eval_action.adk.files import prepare
    from adk_eval_action.adk.runtime import agent

    _alike_suites(example_repo, 1)
    alone = cli("plan")
    assert alone.exit_code == 0, alone.output
    loads: list[Path] = []
    reads: list[str] = []
    real_load, real_inputs = agent.load_agent, prepare.load_suite_inputs

    async def counted_load(folder: Path, repo_root: Path | None = None) -> agent.LoadedAgent:
        loads.append(folder)
        return await real_load(folder, repo_root)

    def counted_inputs(suite: Suite, repo_root: Path,
                       eval_sets: bool = True) -> prepare.SuiteInputs:
        reads.append(suite.name)
        return real_inputs(suite, repo_root, eval_sets)

    for module in (agent, scheduler):
        monkeypatch.setattr(module, "load_agent", counted_load)
    monkeypatch.setattr(prepare, "load_suite_inputs", counted_inputs)
    _alike_suites(example_repo, 300)
    result = cli("plan")
    assert result.exit_code == 0, result.output
    assert len(loads) == 2 and reads == ["s0", "s0"], (loads, reads)
    lines = result.output.splitlines()
    assert len([x for x in lines if x.startswith("suite s")]) == 2 * 300  # agent, plan
    planned = [x for x in alone.output.splitlines() if x.startswith("suite s0: ")]
    for name in ("s1", "s17", "s299"):
        assert [x.replace("suite s0:", f"suite {name}:") for x in planned] == [
            x for x in lines if x.startswith(f"suite {name}: ")]
    assert result.output.count("note: travel_agent/eval/travel.evalset.json") == 1


def test_alike_suites_are_each_refused_under_their_own_name(example_repo: Path) -> None:
    """What the preflight refuses in suites of one agent and one eval config (a metric
    google-adk does not know) is found once and said of each suite, by its name."""
    import os

    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.run.evaluation import find_suites
    from adk_eval_action.settings import load_request

    _alike_suites(example_repo, 3, {"no_such_metric_v9": 0.5})
    suites = find_suites(load_request(example_repo))
    report = asyncio.run(check_suites(suites, example_repo, os.environ))
    refused = [p for p in report.problems if "no_such_metric_v9" in p.message]
    assert [p.suite for p in refused] == ["s0", "s1", "s2"]
    assert len({p.message for p in refused}) == 1


PIPELINE_PY = '''\
from google.adk.agents import LlmAgent, SequentialAgent


def get_weather(city: str) -> dict:
    """Weather of a city."""
    return {"status": "success", "city": city.title(), "condition": "sunny"}


root_agent = SequentialAgent(name="pipe", sub_agents=[
    LlmAgent(name="finder", model="counting-agent-finder", instruction="Find.",
             tools=[get_weather]),
    LlmAgent(name="writer", model="counting-agent-writer", instruction="Write."),
    LlmAgent(name="checker", model="counting-agent-checker", instruction="Check."),
])
'''


def test_a_pipelines_calls_are_planned_per_model_as_its_models_receive_them(
    tmp_path: Path,
) -> None:
    """A pipeline of three models: each sub-agent replies every turn, the first also
    calls the tool. `plan` lists each model with the calls it then receives (it put all of
    them under the first model, and counted one reply per turn)."""
    folder = write_agent(tmp_path, "pipe", {"trips": {"paris": [weather("Paris"), thanks()]}},
                         {"tool_trajectory_avg_score": 0.0})
    (folder / "agent.py").write_text(PIPELINE_PY)
    suites = discover_suites([tmp_path], tmp_path)
    settings = EngineSettings(num_runs=2, parallelism=2, repo_root=tmp_path)
    hooks = EngineHooks(on_progress=None)
    plan, records = asyncio.run(plan_suites(suites, settings, hooks))
    assert not [e for r in records for e in r.errors]
    assert plan.suites[0].agent_models == [
        "counting-agent-finder", "counting-agent-writer", "counting-agent-checker"]
    # By hand, per run: finder 2 (tool, reply) + 1, writer 1 + 1, checker 1 + 1.
    assert plan.calls_by_model() == {"counting-agent-finder": 6, "counting-agent-writer": 4,
                                     "counting-agent-checker": 4}
    assert plan.agent_calls == 14
    evaluation = asyncio.run(evaluate_suites(suites, settings, hooks,
                                             ModelCalls(ModelRetrySettings())))
    assert not [e for s in evaluation.suites for e in s.errors]
    received = {m: sum(1 for c in CALLS.calls if c.model == m) for m in plan.calls_by_model()}
    assert received == plan.calls_by_model()


def test_the_detection_note_says_the_suites_count_and_the_runs_apart(
    tmp_path: Path, cli: CliRun
) -> None:
    """Two suites of one gated metric each: the note says each suite's own count, and the
    run's two tests the correction covers as the run's."""
    for name in ("first", "second"):
        write_agent(tmp_path, name, {"trips": {"paris": [weather("Paris")]}},
                    {"tool_trajectory_avg_score": 1.0})
    with working_directory(tmp_path):
        result = cli("plan", "--num-runs", "2")
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "can call" in line]
    assert len(notes) == 2
    # 1 case x 2 runs a side: p = 1/C(4, 2) = 1/6; two tests: p <= 0.05/1.05/2 = 0.0238.
    assert notes[0] == (
        "  can call (each of its 1 gated metric, against its baseline): 1 paired case x 2 "
        "runs a side: the smallest possible p is 0.167; a call needs p ≤ 0.0238 with the "
        "run's 2 gated tests (every suite's; more with rubrics); one case collapsing from "
        "all-pass to all-fail would not be called (p = 0.167); 4 runs would call it")

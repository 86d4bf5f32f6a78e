"""camelCase eval configs (agent-starter-pack's spelling) read exactly as their snake_case
twins: the same scores through real google-adk, the same judge model and call count in the
plan, the same preflight findings and the same recorded eval config.

The fixture (tests/fixtures/camel_pack) is laid out as agent-starter-pack lays out its ADK
template; its agent and judge both run on ``gemini-3-flash-preview`` through ADK's Gemini
class against the session's fake Gemini API, whose judge answers by the stand-in judge's
rules (adk_eval_action.testing.judge.property_verdict): a rubric quoting no phrase is met, a
rubric quoting "foggy" is met when the answer says it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_config import EvalConfig

from adk_eval_action.adk.evaluate.preflight import SuiteToCheck, preflight
from adk_eval_action.adk.files.evalconfig import effective_eval_config, load_eval_config
from adk_eval_action.testing.gemini_fake import GeminiFake, load_script
from conftest import CliRun, case_runs, load_json, metric, working_directory

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "camel_pack"
RUBRIC = "rubric_based_final_response_quality_v1"
JUDGE = "gemini-3-flash-preview"
CONFIG = "tests/eval/eval_config.json"

# The fixture's eval config as a snake_case user writes it, typed out here (not derived
# from the camelCase file by any code under test).
SNAKE_TWIN = {
    "criteria": {
        RUBRIC: {
            "threshold": 0.75,
            "judge_model_options": {"judge_model": JUDGE, "num_samples": 1},
            "rubrics": [
                {
                    "rubric_id": "on_topic",
                    "rubric_content": {
                        "text_property": "The answer responds to what the user asked."
                    },
                },
                {
                    "rubric_id": "names_the_fog",
                    "rubric_content": {"text_property": 'The answer says "foggy".'},
                },
            ],
        }
    }
}
SUITES = (
    "suites:\n"
    "  - name: app\n"
    "    agent: app\n"
    "    eval_sets: [tests/eval/evalsets/basic.evalset.json]\n"
    f"    eval_config: {CONFIG}\n"
)


def _repository(root: Path, spelling: str) -> Path:
    """A copy of the fixture at ``root/spelling``; ``snake`` replaces its eval config by
    :data:`SNAKE_TWIN`."""
    repo = root / spelling
    shutil.copytree(PACK, repo, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "adk-eval.yaml").write_text(SUITES, encoding="utf-8")
    if spelling == "snake":
        (repo / CONFIG).write_text(json.dumps(SNAKE_TWIN), encoding="utf-8")
    return repo


@pytest.fixture
def pack_agent(gemini_api: GeminiFake) -> GeminiFake:
    """The fake Gemini API answering the fixture's agent too."""
    gemini_api.agents = [*load_script(PACK / "gemini_fake.yaml").agents, *gemini_api.agents]
    return gemini_api


def _verdicts(results: dict[str, Any]) -> dict[str, tuple[Any, str, dict[str, Any]]]:
    """eval id -> (score, status, rubric id -> verdict) of the rubric metric."""
    out = {}
    for eval_id in ("greeting", "weather_query"):
        [run] = case_runs(results, eval_id)
        rubric = metric(run, RUBRIC)
        verdicts = {r["rubric_id"]: r["score"] for r in rubric["rubrics"]}
        out[eval_id] = (rubric["score"], rubric["status"], verdicts)
        assert rubric["judge_model"] == JUDGE
        assert {r["text"] for r in rubric["rubrics"]} == {
            "The answer responds to what the user asked.", 'The answer says "foggy".'}
    return out


def test_camelcase_config_scores_as_its_snake_case_twin(
    tmp_path: Path, cli: CliRun, pack_agent: GeminiFake
) -> None:
    runs = {}
    for spelling in ("camel", "snake"):
        repo = _repository(tmp_path, spelling)
        pack_agent.clear_calls()
        with working_directory(repo):
            result = cli("run", "--results-out", "results.json", "--baseline", "none")
        judge_calls = [c.model for c in pack_agent.calls if c.role == "judge"]
        runs[spelling] = (result, load_json(repo / "results.json"), judge_calls)

    camel, snake = runs["camel"], runs["snake"]
    # greeting: the answer never says "foggy" (0.5 < 0.75, failed); weather_query: the tool
    # says it is foggy in San Francisco and the answer repeats it (1.0).
    expected = {
        "greeting": (0.5, "failed", {"on_topic": 1.0, "names_the_fog": 0.0}),
        "weather_query": (1.0, "passed", {"on_topic": 1.0, "names_the_fog": 1.0}),
    }
    for result, results, judge_calls in (camel, snake):
        assert result.exit_code == 1, result.output  # computed scores fail the gate
        assert "internal error" not in result.output
        assert _verdicts(results) == expected
        # numSamples 1: one judge call per eval case, to the judge the config names.
        assert judge_calls == [JUDGE, JUDGE]
        [suite] = results["suites"]
        assert suite["judge_models"] == {RUBRIC: JUDGE}
    assert camel[1]["suites"][0]["eval_config"] == snake[1]["suites"][0]["eval_config"]


def test_plan_of_a_camelcase_config_names_its_judge_and_samples(
    tmp_path: Path, cli: CliRun
) -> None:
    for spelling in ("camel", "snake"):
        with working_directory(_repository(tmp_path, spelling)):
            result = cli("plan")
        assert result.exit_code == 0, result.output
        # 2 eval cases x 1 judged turn x numSamples 1, not ADK's default judge x 5 samples.
        assert f"  judge calls: {JUDGE} ~2" in result.output.splitlines()
        assert "~2 judge model calls" in result.output


def _preflight_problems(path: Path) -> list[tuple[str, str | None, str]]:
    suite = SuiteToCheck(
        name="s", root_agent=None, eval_config=load_eval_config(path).eval_config,
        eval_config_file=CONFIG,
    )
    report = preflight([suite], {"GOOGLE_API_KEY": "k"})
    return [(p.kind, p.field, p.message) for p in report.problems]


def test_a_camelcase_litellm_judge_without_its_key_is_refused_as_the_snake_case_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert litellm.validate_environment("openai/gpt-4o")["missing_keys"] == ["OPENAI_API_KEY"]
    camel = json.loads((PACK / CONFIG).read_text(encoding="utf-8"))
    camel["criteria"][RUBRIC]["judgeModelOptions"]["judgeModel"] = "openai/gpt-4o"
    snake = json.loads(json.dumps(SNAKE_TWIN))
    snake["criteria"][RUBRIC]["judge_model_options"]["judge_model"] = "openai/gpt-4o"
    found = {}
    for spelling, data in (("camel", camel), ("snake", snake)):
        path = tmp_path / f"{spelling}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        found[spelling] = _preflight_problems(path)

    [(kind, field, message)] = found["camel"]
    assert (kind, field) == (
        "credentials", f"criteria.{RUBRIC}.judge_model_options.judge_model"
    )
    assert "`openai/gpt-4o`" in message and "OPENAI_API_KEY" in message
    assert found["camel"] == found["snake"]


def test_earlier_records_and_either_spelling_are_the_same_effective_config() -> None:
    camel = load_eval_config(PACK / CONFIG)
    # What this tool recorded before it read criteria with ADK's models: the criterion as
    # ADK's EvalConfig keeps it (BaseCriterion, its extra keys as the file spelt them).
    # (google-adk 2.x's BaseCriterion adds include_intermediate_responses_in_final to it.)
    earlier = EvalConfig.model_validate(SNAKE_TWIN).model_dump(mode="json", exclude_none=True)
    assert effective_eval_config(earlier) == effective_eval_config(camel.recorded())
    changed = json.loads(json.dumps(SNAKE_TWIN))
    changed["criteria"][RUBRIC]["judge_model_options"]["num_samples"] = 3
    assert effective_eval_config(changed) != effective_eval_config(camel.recorded())


CAMEL_EVERYTHING = {
    "criteria": {
        "tool_trajectory_avg_score": {"threshold": 1.0, "matchType": "IN_ORDER"},
        "hallucinations_v1": {"threshold": 0.5, "evaluateIntermediateNlResponses": True,
                              "judgeModelOptions": {"judgeModel": JUDGE, "numSamples": 2}},
        "tone": 0.0,
    },
    "customMetrics": {"tone": {
        "codeConfig": {"name": "app.metrics.tone"},
        "metricInfo": {"metricName": "tone",
                       "metricValueInfo": {"interval": {"minValue": -1.0, "maxValue": 1.0}}},
    }},
    "userSimulatorConfig": {"model": "gemini-2.5-pro", "maxAllowedInvocations": 3},
}
SNAKE_EVERYTHING = {
    "criteria": {
        "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
        "hallucinations_v1": {"threshold": 0.5, "evaluate_intermediate_nl_responses": True,
                              "judge_model_options": {"judge_model": JUDGE, "num_samples": 2}},
        "tone": 0.0,
    },
    "custom_metrics": {"tone": {
        "code_config": {"name": "app.metrics.tone"},
        "metric_info": {"metric_name": "tone",
                        "metric_value_info": {"interval": {"min_value": -1.0, "max_value": 1.0}}},
    }},
    "user_simulator_config": {"model": "gemini-2.5-pro", "max_allowed_invocations": 3},
}


def test_every_part_of_a_camelcase_config_is_read_as_its_snake_case_twin(tmp_path: Path) -> None:
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config
    from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion

    from adk_eval_action.adk.files.criteria import criterion_field, judge_options, typed_criterion

    loaded = {}
    for name, data in (("camel", CAMEL_EVERYTHING), ("snake", SNAKE_EVERYTHING)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        loaded[name] = load_eval_config(path)
    camel, snake = loaded["camel"], loaded["snake"]
    assert camel.recorded() == snake.recorded()
    assert camel.metric_meta == snake.metric_meta
    assert (camel.metric_meta["tone"].min_value, camel.metric_meta["tone"].max_value) == (-1, 1)
    assert camel.warnings == snake.warnings == []
    metrics = {m.metric_name: m for m in get_eval_metrics_from_config(camel.eval_config)}
    trajectory = typed_criterion(
        "tool_trajectory_avg_score", camel.eval_config.criteria["tool_trajectory_avg_score"])
    assert trajectory.match_type == ToolTrajectoryCriterion.MatchType.IN_ORDER
    options = judge_options(metrics["hallucinations_v1"])
    assert options is not None and (options.judge_model, options.num_samples) == (JUDGE, 2)
    assert criterion_field(metrics["hallucinations_v1"], "evaluate_intermediate_nl_responses")
    simulator = camel.eval_config.user_simulator_config
    assert simulator is not None
    assert (simulator.model, simulator.max_allowed_invocations) == ("gemini-2.5-pro", 3)


def test_the_read_criterion_survives_adks_own_copy_of_it() -> None:
    """LocalEvalService builds each EvalMetricResult from ``eval_metric.model_dump()``
    (google.adk.evaluation.local_eval_service); google-adk 1.x dumps the criterion as a plain
    BaseCriterion, so what the loader keeps must survive that copy on every version."""
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config
    from google.adk.evaluation.eval_metrics import EvalMetricResult, EvalStatus

    from adk_eval_action.adk.files.criteria import criterion_rubrics
    from adk_eval_action.adk.files.lint import judge_model_for

    config = load_eval_config(PACK / CONFIG).eval_config
    [metric] = [m for m in get_eval_metrics_from_config(config) if m.metric_name == RUBRIC]
    copied = EvalMetricResult(eval_status=EvalStatus.PASSED, **metric.model_dump())
    assert judge_model_for(copied) == JUDGE
    assert [r.rubric_id for r in criterion_rubrics(RUBRIC, copied.criterion)] == [
        "on_topic", "names_the_fog"]

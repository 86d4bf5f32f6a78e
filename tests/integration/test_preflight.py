"""Preflight (adk.evaluate.preflight) on real ADK agents, registries and eval configs.

What is refused is checked against what ADK itself does with the same input: a Gemini
client without credentials raises in google-genai, an unknown judge model raises in ADK's
LLMRegistry, an unimportable custom metric raises in ADK's custom metric evaluator.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.adk.agents import LlmAgent
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.models import LLMRegistry
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools.agent_tool import AgentTool

from adk_eval_action.adk.evaluate.preflight import SuiteToCheck, check_suites, preflight
from adk_eval_action.adk.runtime.credentials import missing_google_credentials
from adk_eval_action.project.discovery import Suite
from adk_eval_action.testing.standins import ScriptedLlm

KEY = {"GOOGLE_API_KEY": "k"}
TRAJECTORY = {"criteria": {"tool_trajectory_avg_score": 1.0}}


def _suite(agent: Any = None, config: dict[str, Any] | None = None, **kw: Any) -> SuiteToCheck:
    return SuiteToCheck(
        name="s",
        root_agent=agent,
        eval_config=EvalConfig.model_validate(config or TRAJECTORY),
        **{"eval_config_file": "eval/test_config.json", **kw},
    )


def _gemini_agent(name: str = "helper", **kw: Any) -> LlmAgent:
    return LlmAgent(name=name, model="gemini-2.5-flash", instruction="Help.", **kw)


def test_a_gemini_agent_without_a_key_is_refused_once_naming_the_variables(
    monkeypatch: pytest.MonkeyPatch,
):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    # What google-genai itself does without a key (the error ADK hit at run time).
    with pytest.raises(ValueError, match="No API key was provided"):
        genai.Client()

    report = preflight([_suite(_gemini_agent()), _suite(_gemini_agent("other"))], {})

    assert [p.kind for p in report.problems] == ["credentials"]
    message = report.problems[0].message
    for needed in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        assert needed in message
    assert "agent `helper`" in message and "agent `other`" in message
    assert ", but `gemini-2.5-flash` (agent `helper`), `gemini-2.5-flash` (agent `other`) " \
        "need them; " in message
    [one] = preflight([_suite(_gemini_agent())], {}).problems
    assert ", but `gemini-2.5-flash` (agent `helper`) needs them; " in one.message
    assert report.missing_credentials


@pytest.mark.parametrize(
    ("environ", "refused"),
    [
        ({"GOOGLE_API_KEY": "k"}, False),
        ({"GEMINI_API_KEY": "k"}, False),
        ({"GOOGLE_API_KEY": "  "}, True),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, True),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": "k"}, False),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "false"}, True),
        ({"GOOGLE_GENAI_USE_ENTERPRISE": "1", "GOOGLE_CLOUD_PROJECT": "p"}, True),
    ],
)
def test_credential_rules_follow_google_genai(environ: dict[str, str], refused: bool):
    assert (missing_google_credentials(environ, adc=lambda _: None) is not None) is refused


def test_vertex_with_application_default_credentials_is_accepted(tmp_path: Path):
    credentials = tmp_path / "sa.json"
    credentials.write_text("{}", encoding="utf-8")
    environ = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "p",
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
    }
    assert missing_google_credentials(environ) is None
    assert missing_google_credentials(
        {**environ, "GOOGLE_APPLICATION_CREDENTIALS": "/nope"}, adc=lambda _: None
    )


def test_models_the_preflight_cannot_judge_are_not_refused(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    # A key given to the model itself, and a provider whose only missing setting has a
    # default (LiteLLM calls Ollama on localhost:11434 without OLLAMA_API_BASE).
    keyed = LlmAgent(name="keyed", model=LiteLlm(model="openai/gpt-4o", api_key="k"))
    local = LlmAgent(name="local", model=LiteLlm(model="ollama/llama3"))
    scripted = LlmAgent(name="scripted", model=ScriptedLlm(model="scripted-x"))

    report = preflight([_suite(keyed), _suite(local), _suite(scripted)], {})

    assert report.problems == []
    assert [(m.model, m.google) for m in report.models] == [
        ("openai/gpt-4o", False),
        ("ollama/llama3", False),
        ("scripted-x", False),
    ]


def test_a_litellm_model_without_its_providers_key_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
):
    import litellm

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # LiteLLM's own rule, read independently of the preflight.
    assert litellm.validate_environment("openai/gpt-4o")["missing_keys"] == ["OPENAI_API_KEY"]
    agent = LlmAgent(name="lite", model=LiteLlm(model="anthropic/claude-3-5-sonnet"))
    config = _rubric_config(judge_model="openai/gpt-4o")

    report = preflight([_suite(agent, config)], KEY)

    assert [(p.kind, p.file, p.field) for p in report.problems] == [
        ("credentials", None, None),
        (
            "credentials",
            "eval/test_config.json",
            "criteria.rubric_based_final_response_quality_v1.judge_model_options.judge_model",
        ),
    ]
    agent_problem, judge_problem = (p.message for p in report.problems)
    assert "agent `lite`" in agent_problem and "ANTHROPIC_API_KEY" in agent_problem
    assert "`openai/gpt-4o`" in judge_problem and "OPENAI_API_KEY" in judge_problem
    assert report.missing_credentials

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-other-secret")
    assert preflight([_suite(agent, config)], {**KEY, **os.environ}).problems == []


def test_sub_agents_and_agents_used_as_tools_are_walked():
    worker = LlmAgent(name="worker", model="gemini-2.5-pro")
    tool_agent = LlmAgent(name="searcher", model="gemini-2.5-flash-lite")
    inherits = LlmAgent(name="inherits")  # no model: ADK takes the parent's
    root = LlmAgent(
        name="root",
        model=ScriptedLlm(model="scripted-root"),
        sub_agents=[worker, inherits],
        tools=[AgentTool(agent=tool_agent)],
    )

    report = preflight([_suite(root)], KEY)

    found = {m.where: m.model for m in report.models}
    assert found == {
        "agent `root`": "scripted-root",
        "agent `worker`": "gemini-2.5-pro",
        "agent `inherits`": "scripted-root",
        "agent `searcher`": "gemini-2.5-flash-lite",
    }


def test_an_agent_model_no_registry_knows_is_refused():
    with pytest.raises(ValueError):
        LLMRegistry.resolve("acme-7b")

    report = preflight([_suite(LlmAgent(name="a", model="acme-7b"))], KEY)

    assert [(p.kind, p.suite) for p in report.problems] == [("agent", "s")]
    assert "acme-7b" in report.problems[0].message


def _rubric_config(**options: Any) -> dict[str, Any]:
    criterion: dict[str, Any] = {
        "threshold": 0.5,
        "rubrics": [{"rubric_id": "r", "rubric_content": {"text_property": "Is polite."}}],
    }
    if options:
        criterion["judge_model_options"] = options
    return {"criteria": {"rubric_based_final_response_quality_v1": criterion}}


def test_adk_default_judge_needs_google_credentials_too():
    report = preflight([_suite(None, _rubric_config())], {})

    assert [(m.model, m.role, m.google) for m in report.models] == [
        ("gemini-2.5-flash", "judge", True)
    ]
    assert [p.kind for p in report.problems] == ["credentials"]
    assert "judge of `rubric_based_final_response_quality_v1`" in report.problems[0].message


@pytest.mark.parametrize("judge", ["acme-judge-7b", "nosuchprovider/x"])
def test_a_judge_model_no_registry_resolves_is_refused_naming_the_field(judge: str):
    report = preflight([_suite(None, _rubric_config(judge_model=judge))], KEY)

    [problem] = report.problems
    assert (problem.kind, problem.file, problem.field) == (
        "judge",
        "eval/test_config.json",
        "criteria.rubric_based_final_response_quality_v1.judge_model_options.judge_model",
    )
    assert judge in problem.message
    assert "register_standins()" not in problem.message


def test_a_stand_in_name_unknown_to_the_registry_says_how_to_register_them():
    """testing.standins registers nothing on import: a process that did not call
    register_standins() (``adk-eval-action run``) hears where to call it."""
    report = preflight([_suite(None, _rubric_config(judge_model="stand-in-jury"))], KEY)

    [problem] = report.problems
    assert problem.message.endswith(
        "register the judge's BaseLlm class (adk_eval_action.testing's stand-in models: call "
        "`register_standins()` from adk_eval_action.testing.standins in the agent package's "
        "`__init__.py`)")


def _custom(name: str) -> dict[str, Any]:
    return {
        "criteria": {"mine": 0.5},
        "custom_metrics": {"mine": {"code_config": {"name": name}}},
    }


def test_custom_metric_functions_must_import_and_be_callable(tmp_path: Path, monkeypatch):
    package = tmp_path / "pf_metrics"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "metrics.py").write_text("NOT_A_FUNCTION = 3\ndef ok(*a):\n    pass\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))

    report = preflight(
        [
            _suite(None, _custom("pf_metrics.metrics.ok")),
            _suite(None, _custom("pf_metrics.nowhere.fn")),
            _suite(None, _custom("pf_metrics.metrics.NOT_A_FUNCTION")),
        ],
        KEY,
    )

    assert [(p.kind, p.field) for p in report.problems] == [
        ("custom_metric", "custom_metrics.mine.code_config.name")
    ] * 2
    assert "pf_metrics.nowhere.fn" in report.problems[0].message
    assert "NOT_A_FUNCTION" in report.problems[1].message
    sys.modules.pop("pf_metrics.metrics", None)


def test_unknown_metrics_and_empty_criteria_are_config_errors():
    report = preflight(
        [
            _suite(None, {"criteria": {"tool_trajectory_avg_scor": 1.0}}),
            _suite(None, {"criteria": {}}),
        ],
        KEY,
    )

    assert [(p.kind, p.field) for p in report.problems] == [
        ("config", "criteria.tool_trajectory_avg_scor"),
        ("config", "criteria"),
    ]


def test_the_user_simulator_model_is_checked_for_scenario_suites():
    config = {**_rubric_config(), "user_simulator_config": {"model": "acme-sim"}}

    assert preflight([_suite(None, config)], KEY).problems == []
    report = preflight([_suite(None, config, has_scenarios=True)], KEY)

    assert [(p.kind, p.field) for p in report.problems] == [
        ("config", "user_simulator_config.model")
    ]


@pytest.mark.parametrize("file", ["eval/test_config.json", None])
def test_metrics_without_user_simulation_are_refused_for_scenario_suites(file: str | None):
    # ADK's default criteria (no eval config): both need expected invocations.
    config = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8,
                           **_rubric_config()["criteria"]}}
    cases = [f"s.evalset.json: c{i}" for i in range(5)]

    assert preflight([_suite(None, config, eval_config_file=file)], KEY).problems == []
    report = preflight([_suite(None, config, eval_config_file=file, has_scenarios=True,
                               scenario_cases=cases)], KEY)

    assert [(p.kind, p.file, p.field) for p in report.problems] == [
        ("config", file, "criteria.tool_trajectory_avg_score"),
        ("config", file, "criteria.response_match_score"),
    ]
    message = report.problems[0].message
    assert message.startswith(
        "metric `tool_trajectory_avg_score` does not support user simulation: "
        "`conversation_scenario` eval cases (`s.evalset.json: c0`, `s.evalset.json: c1`, "
        "`s.evalset.json: c2` and 2 more) have no expected invocations"
    )
    fix = "remove it from this eval config" if file else "one of ADK's default criteria"
    assert fix in message


def test_vertex_evaluated_metrics_need_a_project():
    config = {"criteria": {"safety_v1": 0.8}}

    report = preflight([_suite(None, config)], {})

    assert [(p.kind, p.field) for p in report.problems] == [("credentials", "criteria.safety_v1")]
    environ = {"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}
    assert preflight([_suite(None, config)], environ).problems == []


FACTORY_AGENT = """
import asyncio
import contextlib
from pathlib import Path

from google.adk.agents import LlmAgent


async def get_agent_async():
    stack = contextlib.AsyncExitStack()
    loop = asyncio.get_running_loop()

    async def close():
        same = asyncio.get_running_loop() is loop
        Path(__file__).with_name("closed.txt").write_text(f"same loop: {same}")

    stack.push_async_callback(close)
    return LlmAgent(name="made", model="gemini-2.5-flash", instruction="Hi."), stack
"""


def test_check_suites_walks_a_factory_agent_and_closes_what_it_opened(tmp_path: Path):
    agent_dir = tmp_path / "factory_agent"
    agent_dir.mkdir()
    (agent_dir / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (agent_dir / "agent.py").write_text(FACTORY_AGENT, encoding="utf-8")
    config = tmp_path / "test_config.json"
    config.write_text('{"criteria": {"tool_trajectory_avg_score": 1.0}}', encoding="utf-8")
    suite = Suite(
        name="factory",
        agent_dir=agent_dir,
        eval_set_paths=[],
        eval_config_path=config,
    )

    report = asyncio.run(check_suites([suite], tmp_path, {}))

    assert [(m.model, m.where) for m in report.models] == [("gemini-2.5-flash", "agent `made`")]
    assert [p.kind for p in report.problems] == ["credentials"]
    # The factory's exit stack was closed, on the loop that made it; the module is out of
    # sys.modules again.
    assert (agent_dir / "closed.txt").read_text() == "same loop: True"
    assert "factory_agent" not in sys.modules


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": []}]}', False),
        ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", '
         '"conversation_scenario": {"starting_prompt": "Hi"}}]}', True),
        ('{"evalSetId": "s", "evalCases": [{"evalId": "c", '
         '"conversationScenario": {"startingPrompt": "Hi"}}]}', True),
    ],
    ids=["none", "snake_case", "camelCase"],
)
def test_eval_sets_are_parsed_for_scenarios_only_when_a_file_names_the_field(
    tmp_path: Path, text: str, expected: bool
):
    """adk.files.prepare.may_have_scenarios: the preflight parses a suite's eval sets (again:
    the evaluation parses them too) only when one names the field, in either spelling."""
    from adk_eval_action.adk.files.prepare import may_have_scenarios
    from adk_eval_action.project.discovery import Suite

    plain = tmp_path / "plain.evalset.json"
    plain.write_text('{"eval_set_id": "p", "eval_cases": []}', encoding="utf-8")
    other = tmp_path / "other.evalset.json"
    other.write_text(text, encoding="utf-8")
    missing = tmp_path / "missing.evalset.json"
    suite = Suite(name="s", agent_dir=tmp_path, eval_set_paths=[missing, plain, other])

    assert may_have_scenarios(suite) is expected

"""Small repositories in the layouts of Google's own ADK projects, written in our words with
stand-in models (``scripted-*`` agents, the ``stand-in-judge``):

* :func:`starter_pack`: GoogleCloudPlatform/agent-starter-pack's template: the agent in
  ``app/``, eval sets in ``tests/eval/evalsets/*.evalset.json``, the eval config in
  ``tests/eval/eval_config.json``, and the Makefile whose ``eval`` target runs
  ``adk eval ./app <evalset> --config_file_path=tests/eval/eval_config.json``;
* :func:`adk_samples`: google/adk-samples: ``customer-service/customer_service/`` (the agent
  package) beside ``customer-service/eval/eval_data/`` (a legacy flat list and its
  ``test_config.json``);
* :func:`adk_python`: google/adk-python's integration fixtures: one agent,
  ``tests/integration/fixture/home_automation_agent``, with three folders of eval sets,
  each with its own ``test_config.json`` (three suites), and eval ids that are paths.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STARTER_PACK_AGENT = '''\
from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule


def get_weather(query: str) -> str:
    """The weather of a place."""
    return "It's 60 degrees and foggy." if "sf" in query.lower() else "It's 90 degrees and sunny."


root_agent = LlmAgent(
    name="root_agent",
    model=ScriptedLlm(model="scripted-starter", rules=[
        ScriptRule(pattern=r"weather in (?P<city>[A-Za-z ]+)",
                   tool_calls=[ScriptedToolCall(name="get_weather", args={"query": "{city}"})],
                   reply="Here is the weather: {result}"),
        ScriptRule(pattern=r"hello|hi", reply="Hello! How can I help you today?"),
    ]),
    instruction="You help with the weather.",
    tools=[get_weather],
)
'''

# Cases as the template writes them: the user's turns only, no expected answer or tool call.
STARTER_PACK_EVALSET = {
    "eval_set_id": "basic_eval",
    "name": "Basic agent evaluation",
    "eval_cases": [
        {"eval_id": "greeting",
         "conversation": [{"user_content": {"parts": [{"text": "Hello, who are you?"}]}}],
         "session_input": {"app_name": "app", "user_id": "eval_user", "state": {}}},
        {"eval_id": "weather_query",
         "conversation": [{"user_content": {"parts": [{"text": "What is the weather in SF"}]}}],
         "session_input": {"app_name": "app", "user_id": "eval_user", "state": {}}},
    ],
}

STARTER_PACK_CONFIG = {
    "criteria": {
        "rubric_based_final_response_quality_v1": {
            "threshold": 0.8,
            "judge_model_options": {"judge_model": "stand-in-judge", "num_samples": 1},
            "rubrics": [
                {"rubric_id": "on_topic",
                 "rubric_content": {"text_property": 'The response mentions "weather".'}},
            ],
        }
    }
}

MAKEFILE = """\
eval:
\tuv run adk eval ./app $${EVALSET:-tests/eval/evalsets/basic.evalset.json} \\
\t\t$(if $(wildcard tests/eval/eval_config.json),--config_file_path=tests/eval/eval_config.json,)
"""


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def starter_pack(root: Path) -> Path:
    """The agent-starter-pack layout in ``root`` (module docstring); returns ``root``."""
    _write(root / "app" / "__init__.py", "from . import agent\n")
    _write(root / "app" / "agent.py", STARTER_PACK_AGENT)
    _write(root / "tests" / "eval" / "evalsets" / "basic.evalset.json", STARTER_PACK_EVALSET)
    _write(root / "tests" / "eval" / "eval_config.json", STARTER_PACK_CONFIG)
    _write(root / "tests" / "unit" / "test_dummy.py", "def test_nothing():\n    pass\n")
    _write(root / "Makefile", MAKEFILE)
    return root


SAMPLES_AGENT = '''\
from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule


def access_cart_information(customer_id: str) -> dict:
    """The items in a customer's cart."""
    return {"items": ["potting soil", "fertilizer"]}


root_agent = LlmAgent(
    name="customer_service",
    model=ScriptedLlm(model="scripted-shop", rules=[
        ScriptRule(pattern=r"cart",
                   tool_calls=[ScriptedToolCall(name="access_cart_information",
                                                args={"customer_id": "123"})],
                   reply="You have potting soil and fertilizer in your cart."),
        ScriptRule(pattern=r".", reply="Hi there! How can I help?"),
    ]),
    instruction="You serve the customers of a garden shop.",
    tools=[access_cart_information],
)
'''

SAMPLES_TURNS = [
    {"query": "hi", "expected_tool_use": [], "reference": "Hi there! How can I help?"},
    {"query": "what is in my cart?",
     "expected_tool_use": [{"tool_name": "access_cart_information",
                            "tool_input": {"customer_id": "123"}}],
     "reference": "You have potting soil and fertilizer in your cart."},
]


def adk_samples(root: Path) -> Path:
    """One agent of the adk-samples layout under ``root/customer-service``; returns the
    project folder."""
    project = root / "customer-service"
    _write(project / "customer_service" / "__init__.py", "from . import agent\n")
    _write(project / "customer_service" / "agent.py", SAMPLES_AGENT)
    data = project / "eval" / "eval_data"
    _write(data / "simple.test.json", SAMPLES_TURNS)
    _write(data / "test_config.json", {"criteria": {"tool_trajectory_avg_score": 1.0,
                                                    "response_match_score": 0.5}})
    return project


HOME_AGENT = '''\
from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule

_DEVICES = {"device_1": "ON", "device_2": "OFF", "device_3": "ON"}


def get_device_info(device_id: str) -> dict:
    """A device's status."""
    return {"device_id": device_id, "status": _DEVICES.get(device_id, "UNKNOWN")}


def set_device_info(device_id: str, status: str) -> dict:
    """Sets a device's status."""
    return {"device_id": device_id, "status": status}


root_agent = LlmAgent(
    name="home_automation_agent",
    model=ScriptedLlm(model="scripted-home", rules=[
        ScriptRule(pattern=r"turn (?P<status>on|off) (?P<device>device_\\d)",
                   tool_calls=[ScriptedToolCall(name="set_device_info",
                                                args={"device_id": "{device}",
                                                      "status": "{status}"})],
                   reply="I have set {device} to {status}."),
        ScriptRule(pattern=r"status of (?P<device>device_\\d)",
                   tool_calls=[ScriptedToolCall(name="get_device_info",
                                                args={"device_id": "{device}"})],
                   reply="{device} is {result[status]}."),
    ]),
    instruction="You control the devices of a home.",
    tools=[get_device_info, set_device_info],
)
'''

HOME = "tests/integration/fixture/home_automation_agent"


def _home_turn(text: str, reply: str, tool: str, args: dict[str, str]) -> dict[str, Any]:
    return {
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": {"role": "model", "parts": [{"text": reply}]},
        "intermediate_data": {"tool_uses": [{"name": tool, "args": args}],
                              "tool_responses": [], "intermediate_responses": []},
    }


def _home_eval_set(relative: str, set_id: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """An eval set as adk-python's fixtures write them: one case whose eval id is the
    file's path from the repository root."""
    return {"eval_set_id": set_id, "name": set_id, "eval_cases": [{
        "eval_id": relative, "conversation": turns,
        "session_input": {"app_name": "home_automation_agent", "user_id": "test_user"},
    }]}


HOME_SETS = {
    # file (relative to the agent) -> (eval set id, turns)
    "simple_test.test.json": ("b305bd06", [_home_turn(
        "Turn off device_2", "I have set device_2 to off.", "set_device_info",
        {"device_id": "device_2", "status": "off"})]),
    "test_files/simple_test.test.json": ("9100bfc9", [_home_turn(
        "What is the status of device_1?", "device_1 is ON.", "get_device_info",
        {"device_id": "device_1"})]),
    "test_files/memorizing_past_events/eval_data.test.json": ("94553685", [
        _home_turn("Turn on device_3", "I have set device_3 to on.", "set_device_info",
                   {"device_id": "device_3", "status": "on"}),
        _home_turn("What is the status of device_3?", "device_3 is ON.", "get_device_info",
                   {"device_id": "device_3"}),
    ]),
}
HOME_CONFIGS = {
    "test_config.json": {"criteria": {"tool_trajectory_avg_score": 1.0}},
    "test_files/test_config.json": {"criteria": {"tool_trajectory_avg_score": 1.0}},
    "test_files/memorizing_past_events/test_config.json": {
        "criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}},
}


def adk_python(root: Path) -> Path:
    """adk-python's home_automation_agent fixture shape in ``root`` (three suites of one
    agent); returns the agent folder."""
    agent = root / HOME
    _write(agent / "__init__.py", "from . import agent\n")
    _write(agent / "agent.py", HOME_AGENT)
    for relative, (set_id, turns) in HOME_SETS.items():
        _write(agent / relative, _home_eval_set(f"{HOME}/{relative}", set_id, turns))
    for relative, config in HOME_CONFIGS.items():
        _write(agent / relative, config)
    return agent


MONOREPO_AGENT = '''\
from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm

root_agent = LlmAgent(
    name="{name}", instruction="Answer in one word.",
    model=ScriptedLlm(model="scripted-{name}", default_reply="{reply}"),
)
'''


def agent_monorepo(root: Path, count: int, dependencies: dict[int, str] | None = None,
                   cases: int = 2) -> Path:
    """google/adk-samples' layout with ``count`` agents on the scripted stand-in model:
    ``python/agents/agent-NN/`` holds the ``agent_NN`` package, ``eval/`` with one eval set
    of ``cases`` eval cases and its ``test_config.json``, and, for the indexes of
    ``dependencies``, the agent's own dependency file (``pyproject.toml`` when the text
    holds ``[project]`` or ``[tool``, else ``requirements.txt``). Returns ``root``."""
    for index in range(count):
        name = f"agent_{index:02d}"
        project = root / "python" / "agents" / f"agent-{index:02d}"
        _write(project / name / "__init__.py", "from . import agent\n")
        _write(project / name / "agent.py", MONOREPO_AGENT.format(name=name, reply="yes"))
        eval_cases = [{"eval_id": f"case_{n}", "conversation": [{
            "invocation_id": f"case_{n}-1",
            "user_content": {"role": "user", "parts": [{"text": f"Question {n}?"}]},
            "final_response": {"role": "model", "parts": [{"text": "yes"}]}}],
            "session_input": {"app_name": name, "user_id": "u", "state": {}}}
            for n in range(cases)]
        _write(project / "eval" / f"{name}.evalset.json",
               {"eval_set_id": name, "eval_cases": eval_cases})
        _write(project / "eval" / "test_config.json",
               {"criteria": {"response_match_score": 0.8}})
        text = (dependencies or {}).get(index)
        if text is not None:
            file = "pyproject.toml" if "[project]" in text or "[tool" in text else \
                "requirements.txt"
            _write(project / file, text)
    return root

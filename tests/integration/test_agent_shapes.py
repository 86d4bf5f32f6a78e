"""Every shape of agent folder google-adk's loader loads (project/agent_shapes.py,
adk/runtime/agent.py), told apart by discovery without importing, and loaded as ADK loads
them; what is not an agent is said with what ADK accepts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adk_eval_action.adk.runtime.agent import AgentLoadError, ImportScope, load_agent
from adk_eval_action.adk.runtime.case_failures import missing_variable
from adk_eval_action.adk.runtime.import_hints import import_hint
from adk_eval_action.project.agent_shapes import is_agent_dir, typescript_adk

AGENT = """
from google.adk.agents import LlmAgent
from adk_eval_action.testing.standins import ScriptedLlm
{name} = LlmAgent(name="{agent}", model=ScriptedLlm(model="scripted-shape"), instruction="Hi.")
"""

SHAPES = {
    # agent.py, imported by __init__.py (adk eval's and the templates' shape)
    "agent_py": {"__init__.py": "from . import agent\n",
                 "agent.py": AGENT.format(name="root_agent", agent="agent_py")},
    # agent.py that __init__.py does not import (google-adk imports `<name>.agent`)
    "agent_py_alone": {"__init__.py": "",
                       "agent.py": AGENT.format(name="root_agent", agent="agent_py_alone")},
    # __init__.py exports root_agent (AgentLoader: agents_dir/{agent_name}/__init__.py)
    "init_export": {"__init__.py": "from .core import root_agent\n",
                    "core.py": AGENT.format(name="root_agent", agent="init_export")},
    "init_defines": {"__init__.py": AGENT.format(name="root_agent", agent="init_defines")},
    # __init__.py with a factory
    "init_factory": {"__init__.py": AGENT.format(name="_made", agent="init_factory")
                     + "\nasync def get_agent_async():\n    return _made, None\n"},
    # root_agent.yaml (an agent config)
    "yaml_config": {"__init__.py": "", "root_agent.yaml":
                    "agent_class: LlmAgent\nname: yaml_config\nmodel: scripted-yaml\n"
                    "instruction: Answer briefly.\n"},
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _load(agent_dir: Path, root: Path) -> object:
    async def go() -> object:
        with ImportScope([agent_dir], root):
            return (await load_agent(agent_dir, root)).root_agent
    return asyncio.run(go())


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_adk_loads_is_an_agent_folder_and_loads(shape: str, tmp_path: Path) -> None:
    agent_dir = _write(tmp_path / "agents" / shape, SHAPES[shape])
    assert is_agent_dir(agent_dir)
    agent = _load(agent_dir, tmp_path)
    assert getattr(agent, "name", None) == shape


@pytest.mark.parametrize("init", [
    "", "# the root_agent lives elsewhere\n", "from .tools import helper\n",
    '"""The app of the shop."""\n',
])
def test_a_package_that_exposes_no_agent_is_not_one(init: str, tmp_path: Path) -> None:
    folder = _write(tmp_path / "helpers", {"__init__.py": init})
    assert not is_agent_dir(folder)


def test_a_package_without_an_agent_says_what_adk_accepts(tmp_path: Path) -> None:
    folder = _write(tmp_path / "repo" / "backend" / "tools", {"__init__.py": "X = 1\n"})
    with pytest.raises(AgentLoadError) as raised:
        _load(folder, tmp_path / "repo")
    message = str(raised.value)
    assert message.startswith("agent backend/tools: no agent found (google-adk loads an agent "
                              "folder whose `__init__.py` exposes `root_agent`")
    assert "root_agent.yaml" in message


def test_an_import_error_names_the_repository_relative_place(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = _write(root / "backend" / "my_agent", {
        "__init__.py": "from . import agent\n",
        "agent.py": "import os\n\nraise RuntimeError('no database')\n"})
    with pytest.raises(AgentLoadError) as raised:
        _load(folder, root)
    assert str(raised.value) == ("agent backend/my_agent failed to import: RuntimeError: no "
                                 "database (at backend/my_agent/agent.py:3)")
    assert raised.value.line == 3


def test_the_hint_tells_a_missing_package_from_the_repositorys_own_code(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    agent_dir = _write(root / "backend" / "src" / "app", {"__init__.py": ""})
    (root / "backend" / "requirements.txt").write_text("google-cloud-firestore>=2\n")
    third = ModuleNotFoundError("No module named 'google.cloud.firestore'",
                                name="google.cloud.firestore")
    assert import_hint(third, agent_dir, root) == (
        "`google.cloud.firestore` is not installed where the evaluation runs: install the "
        "agent's dependencies: name backend/requirements.txt, which lists it, as the suite's "
        "`requirements` in adk-eval.yaml (`adk-eval-action init` does), or in the action's "
        "`requirements` input (locally: `pip install -r backend/requirements.txt`)")
    own = ModuleNotFoundError("No module named 'src'", name="src")
    assert "add backend to PYTHONPATH" in import_hint(own, agent_dir, root)
    other = RuntimeError("boom")
    assert import_hint(other, agent_dir, root).startswith("fix the agent's code")


def test_a_typescript_project_is_told_by_its_package_json_or_agent_ts(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"dependencies": {"@google/adk": "^0.2.0"}}')
    (tmp_path / "tests").mkdir()
    assert typescript_adk(tmp_path / "tests", tmp_path) == tmp_path / "package.json"
    (tmp_path / "package.json").write_text('{"dependencies": {"express": "^4"}}')
    assert typescript_adk(tmp_path / "tests", tmp_path) is None
    (tmp_path / "tests" / "agent.ts").write_text("export const rootAgent = 1;\n")
    assert typescript_adk(tmp_path / "tests", tmp_path) == tmp_path / "tests" / "agent.ts"


def test_a_key_error_of_os_environ_names_the_variable() -> None:
    import os

    try:
        os.environ["ADK_EVAL_SURELY_UNSET_VARIABLE"]
    except KeyError as error:
        assert missing_variable(error) == "ADK_EVAL_SURELY_UNSET_VARIABLE"
    assert missing_variable(KeyError("ORDERS_DB_URL")) is None  # a dict's, not the environment's

"""Suites from how a repository runs its evals (project/commands.py,
project/evaluator_calls.py) and eval sets by content (project/evalset_files.py), on small
hand-written files: what google-adk's CLI and AgentEvaluator would run is what is found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_action.project.commands import command_suites
from adk_eval_action.project.declared import declared_suites
from adk_eval_action.project.evalset_files import holds_eval_set
from adk_eval_action.project.evaluator_calls import evaluator_suites

EVAL_SET = {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": []}]}


def _tree(root: Path, files: dict[str, str | dict | list]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return root


def _agent(root: Path, folder: str) -> None:
    _tree(root, {f"{folder}/__init__.py": "from . import agent\n",
                 f"{folder}/agent.py": "root_agent = None\n"})


# ------------------------------------------------------------------- eval sets by content


@pytest.mark.parametrize("data", [
    EVAL_SET,
    {"evalSetId": "s", "evalCases": []},
    # ADK writes eval_set_id first: seen however long the rest (cut by the head)
    {"eval_set_id": "s", "name": "s", "description": "d" * 40_000, "eval_cases": []},
    [{"query": "hi", "expected_tool_use": [], "reference": "hello"}],
    [{"name": "c", "data": [{"query": "hi"}], "initial_session": {}}],
], ids=["snake", "camel", "long-description", "legacy-turns", "legacy-cases"])
def test_a_json_file_holding_an_eval_set_is_one_whatever_its_name(
    data: object, tmp_path: Path,
) -> None:
    path = tmp_path / "smoke_eval.json"
    path.write_text(json.dumps(data))
    assert holds_eval_set(path)


@pytest.mark.parametrize("data", [
    {"eval_set_result_id": "r", "eval_set_id": "s", "eval_case_results": []},  # ADK's result
    {"criteria": {"response_match_score": 0.8}},  # an eval config
    {"schema_version": 2, "suites": [{"eval_sets": [{"eval_set_id": "s"}]}]},  # ours
    [{"name": "x", "version": "1"}],
    ["eval_cases"],
    "not json {",
], ids=["result", "eval-config", "results-file", "list-of-objects", "list-of-strings", "text"])
def test_other_json_files_are_not(data: object, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    assert not holds_eval_set(path)


# ------------------------------------------------------------------- adk eval commands


def test_a_makefile_command_with_variables_globs_and_make_conditions(tmp_path: Path) -> None:
    """agent-starter-pack's `make eval` (`$${EVALSET:-...}`, `$(if $(wildcard ...))`) and
    a variable of the Makefile."""
    root = tmp_path
    _agent(root, "app")
    _tree(root, {"tests/eval/evalsets/basic.evalset.json": EVAL_SET,
                 "tests/eval/evalsets/extra_eval.json": EVAL_SET,
                 "tests/eval/eval_config.json": {"criteria": {}}})
    text = ("APP := ./app\n"
            "eval:\n\tuv run adk eval $(APP) $${EVALSET:-tests/eval/evalsets/*.json} \\\n"
            "\t\t$(if $(wildcard tests/eval/eval_config.json),"
            "--config_file_path=tests/eval/eval_config.json,)\n")
    (suite,) = command_suites(root / "Makefile", text, root)
    assert suite.agent_dir == (root / "app").resolve()
    assert [p.name for p in suite.eval_sets] == ["basic.evalset.json", "extra_eval.json"]
    assert suite.eval_config == (root / "tests/eval/eval_config.json").resolve()
    assert suite.source == "Makefile:3"


def test_make_conditions_nested_as_customised_starter_packs_write_them(tmp_path: Path) -> None:
    _agent(tmp_path, "customer_service")
    _tree(tmp_path, {"tests/eval/evalsets/basic.evalset.json": EVAL_SET,
                     "tests/eval/eval_config.json": {"criteria": {}},
                     "tests/eval/other.json": {"criteria": {}}})
    text = ("eval:\n\tuv run adk eval ./customer_service "
            "$${EVALSET:-tests/eval/evalsets/basic.evalset.json} \\\n"
            "\t\t$(if $(EVAL_CONFIG),--config_file_path=$(EVAL_CONFIG),$(if $(wildcard "
            "tests/eval/eval_config.json),--config_file_path=tests/eval/eval_config.json,))\n")
    (suite,) = command_suites(tmp_path / "Makefile", text, tmp_path)
    assert suite.eval_config is not None and suite.eval_config.name == "eval_config.json"
    given = "EVAL_CONFIG = tests/eval/other.json\n" + text
    (suite,) = command_suites(tmp_path / "Makefile", given, tmp_path)
    assert suite.eval_config is not None and suite.eval_config.name == "other.json"


@pytest.mark.parametrize("line, expected", [
    # `cd DIR &&` before it: paths from DIR
    ("cd backend && .venv/bin/adk eval app ../tests/eval/x_eval.json "
     "--config_file_path ../tests/eval/cfg.json", ("backend/app", ["x_eval.json"], "cfg.json")),
    # eval case ids after a colon; a flag; no config, one file: test_config.json beside
    ("adk eval backend/app tests/eval/x_eval.json:case_1,case_2 --print_detailed_results",
     ("backend/app", ["x_eval.json"], "test_config.json")),
    # an unknown variable: not a suite
    ("adk eval $(AGENT) tests/eval/x_eval.json", None),
    # a file that is not an eval set (the eval config given as one): not a suite
    ("adk eval backend/app tests/eval/cfg.json", None),
], ids=["cd", "cases", "unknown-variable", "not-an-eval-set"])
def test_a_script_line_is_read_as_adk_eval_reads_it(
    line: str, expected: tuple[str, list[str], str] | None, tmp_path: Path,
) -> None:
    _agent(tmp_path, "backend/app")
    _tree(tmp_path, {"tests/eval/x_eval.json": EVAL_SET, "tests/eval/cfg.json": {"criteria": {}},
                     "tests/eval/test_config.json": {"criteria": {}}})
    found = command_suites(tmp_path / "scripts/eval.sh", f"#!/bin/sh\nset -e\n{line}\n",
                           tmp_path)
    if expected is None:
        assert found == []
        return
    (suite,) = found
    agent, files, config = expected
    assert suite.agent_dir == (tmp_path / agent).resolve()
    assert [p.name for p in suite.eval_sets] == files
    assert suite.eval_config is not None and suite.eval_config.name == config


def test_commands_in_a_workflow_pyproject_and_readme_and_first_source_wins(
    tmp_path: Path,
) -> None:
    _agent(tmp_path, "agent_a")
    _tree(tmp_path, {
        "evals/a_eval.json": EVAL_SET,
        "evals/b_eval.json": EVAL_SET,
        "README.md": "Run:\n\n```bash\nadk eval agent_a evals/a_eval.json evals/b_eval.json\n"
                     "```\n\nNot code: adk eval agent_a evals/nothing.json\n",
        ".github/workflows/ci.yml": "jobs:\n  eval:\n    steps:\n      - run: |\n"
                                    "          uv sync\n"
                                    "          adk eval agent_a evals/a_eval.json\n",
        "pyproject.toml": '[tool.poe.tasks]\neval-b = "adk eval agent_a evals/b_eval.json"\n',
    })
    found = declared_suites(tmp_path)
    # Each (agent, files, config) once: pyproject's and the workflow's (commands) before
    # the README's (prose); a line outside a code block is prose, not a command.
    assert [(s.source, [p.name for p in s.eval_sets]) for s in found] == [
        ("pyproject.toml:2", ["b_eval.json"]),
        (".github/workflows/ci.yml:6", ["a_eval.json"]),
        ("README.md:4", ["a_eval.json", "b_eval.json"]),
    ]


# ------------------------------------------------------------------- AgentEvaluator calls


def test_agent_evaluator_calls_as_adk_samples_and_others_write_them(tmp_path: Path) -> None:
    root = tmp_path
    _agent(root, "proj/customer_service")
    _tree(root, {
        "proj/eval/data/simple.test.json": [{"query": "hi", "reference": "hello"}],
        "proj/eval/data/sub/more.test.json": [{"query": "hi", "reference": "hello"}],
        "proj/eval/data/sub/test_config.json": {"criteria": {}},
        "proj/eval/data/notes.evalset.json": EVAL_SET,  # AgentEvaluator takes *.test.json only
    })
    text = '''
import os
import pathlib
from google.adk.evaluation.agent_evaluator import AgentEvaluator

DATA = pathlib.Path(__file__).parent / "data"

async def test_one():
    await AgentEvaluator.evaluate(
        "customer_service",
        os.path.join(os.path.dirname(__file__), "data/simple.test.json"),
        num_runs=1,
    )

def test_folder():
    AgentEvaluator.evaluate(agent_module="customer_service.agent",
                            eval_dataset_file_path_or_dir=str(DATA))

def test_computed(name):
    AgentEvaluator.evaluate("customer_service", load_path(name))
'''
    found = evaluator_suites(root / "proj/eval/test_eval.py", text, root)
    assert [(s.source, [p.name for p in s.eval_sets],
             s.eval_config.name if s.eval_config else None) for s in found] == [
        ("proj/eval/test_eval.py:9", ["simple.test.json"], None),
        # The folder: each *.test.json under it, grouped by the test_config.json beside it.
        ("proj/eval/test_eval.py:16", ["simple.test.json"], None),
        ("proj/eval/test_eval.py:16", ["more.test.json"], "test_config.json"),
    ]
    assert {s.agent_dir for s in found} == {(root / "proj/customer_service").resolve()}


def test_what_a_command_names_outside_the_repository_is_not_taken(tmp_path: Path) -> None:
    """A README may name any path; discovery imports no agent and reads no eval set from
    outside the repository it was given."""
    outside = tmp_path / "elsewhere"
    _agent(outside, "agent_x")
    _tree(outside, {"x_eval.json": EVAL_SET})
    root = _tree(tmp_path / "repo", {
        "README.md": f"```\nadk eval {outside}/agent_x {outside}/x_eval.json\n"
                     "adk eval ../elsewhere/agent_x ../elsewhere/x_eval.json\n```\n",
        "tests/test_eval.py": "from google.adk.evaluation.agent_evaluator import AgentEvaluator\n"
                              "def test():\n    AgentEvaluator.evaluate('agent_x', "
                              f"'{outside}/x_eval.json')\n"})
    assert declared_suites(root) == []


def test_unreadable_and_hostile_sources_are_skipped(tmp_path: Path) -> None:
    """A Makefile that is a FIFO, a README over the size limit, a test file that does not
    parse or whose constants refer to each other: no suite, no hang, no error."""
    import os

    root = tmp_path
    _agent(root, "app")
    _tree(root, {"x_eval.json": EVAL_SET,
                 "README.md": "```\nadk eval app x_eval.json\n```\n" + "#" * (2 * 1024 * 1024),
                 "tests/test_a_eval.py": "A = B\nB = A\nAgentEvaluator.evaluate('app', A)\n",
                 "tests/test_b_eval.py": "AgentEvaluator.evaluate(" * 200})
    os.mkfifo(root / "Makefile")
    assert declared_suites(root) == []

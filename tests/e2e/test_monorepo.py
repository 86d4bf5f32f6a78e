"""A monorepo as a team keeps one (examples/monorepo: three agents, the order desk with a
dependency of its own), plus an agent that does not import (a dependency nobody installed),
through the action as GitHub's runner starts it, with GitHub's REST and artifact API the
local stand-in:

1. `init` writes adk-eval.yaml (the order desk's requirements file named) and the workflow;
2. a push to main records: the order desk's own requirements are installed for real (pip,
   in its folder) before the run; the broken agent makes the run incomplete (exit 2) and
   costs nothing else: every other suite is complete, and the history written beside the
   results holds the suites that completed and not the broken one;
3. a pull request that makes the forecast agent guess (a regression) finds main's artifact
   through the artifact API (`baseline: auto`): the forecast agent is compared with its
   recorded results and the check fails (exit 1); the broken agent, failing exactly as on
   main, is named without a baseline and does not decide the check.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from adk_eval_action import action as action_module
from adk_eval_action.action import action_command
from adk_eval_action.cli import main
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.results.history_file_io import load_history
from conftest import git as _git
from conftest import load_json
from support.artifact_stub import ArtifactStub, Token
from support.runner import runner_inputs

ROOT = Path(__file__).resolve().parents[2]
REPO, TOKEN = "octo/agents", "ghs_monorepotoken012"
SERVER = "https://github.example"
SELENIUM = "No module named 'selenium'"
BROKEN_AGENT = '''"""Brand search: needs selenium, which nobody installed."""
from google.adk.agents import LlmAgent
from selenium import webdriver  # noqa: F401

root_agent = LlmAgent(name="brand_search_agent", model="gemini-2.5-flash", instruction="x")
'''


def _commit(root: Path, message: str) -> str:
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message)
    return _git(root, "rev-parse", "HEAD")


def _repository(ws: Path) -> None:
    """examples/monorepo, and agents/brand_search, which does not import."""
    shutil.copytree(ROOT / "examples" / "monorepo", ws,
                    ignore=shutil.ignore_patterns("__pycache__", ".adk", "adk-eval-*"))
    agent = ws / "agents" / "brand_search"
    (agent / "brand_search_agent").mkdir(parents=True)
    (agent / "brand_search_agent" / "__init__.py").write_text("from . import agent\n")
    (agent / "brand_search_agent" / "agent.py").write_text(BROKEN_AGENT)
    (agent / "eval").mkdir()
    shutil.copy(ws / "agents/faq/eval/faq.evalset.json", agent / "eval" / "brand.evalset.json")
    shutil.copy(ws / "agents/faq/eval/test_config.json", agent / "eval" / "test_config.json")
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")


def _env(ws: Path, stub: ArtifactStub, event: dict[str, Any], name: str,
         run_id: int) -> dict[str, str]:
    (ws.parent / "event.json").write_text(json.dumps(event))
    env = runner_inputs(ROOT / "action.yml", {}, token=TOKEN)  # every input at its default
    env.update({
        "INPUT_WORKING_DIRECTORY": str(ws), "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(ws.parent / "event.json"),
        "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": stub.api_url, "GITHUB_SERVER_URL": SERVER,
        "GITHUB_RUN_ID": str(run_id), "GITHUB_SHA": event.get("after", "f" * 40),
        "GITHUB_REF": event.get("ref", "refs/pull/12/merge"),
        "GITHUB_WORKSPACE": str(ws), "GITHUB_OUTPUT": str(ws.parent / f"output{run_id}.txt"),
        "GITHUB_STEP_SUMMARY": str(ws.parent / f"summary{run_id}.md"),
    })
    return env


def _uploaded(ws: Path) -> bytes:
    """What the written workflow's upload step keeps of the workspace (its `path` lines)."""
    workflow = yaml.safe_load((ws / ".github/workflows/adk-eval.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    (upload,) = [s for s in steps if (s.get("with") or {}).get("name") == "adk-eval-results"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in upload["with"]["path"].split():
            if (ws / name).is_file():
                archive.write(ws / name, name)
    return buffer.getvalue()


@pytest.fixture
def stub():
    with ArtifactStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as server:
        yield server


@pytest.mark.slow  # two runs of four agents and a real installer: ~90 s
def test_init_push_and_pull_request_in_a_monorepo(tmp_path, stub, monkeypatch):
    ws = tmp_path / "ws"
    _repository(ws)
    monkeypatch.chdir(ws)
    initialised = CliRunner().invoke(main, ["init", "--num-runs", "3"])
    assert initialised.exit_code == 0, initialised.output
    assert "suite orders_agent: own dependencies agents/orders/requirements.txt (1 " \
        "requirement), installed by the action before the suite runs" in initialised.output
    pushed_sha = _commit(ws, "the agents, adk-eval.yaml and the workflow")
    monkeypatch.chdir(tmp_path)
    # The restart after installing is the process's own (os.execv); here the run goes on
    # in this process with what the restart would be given.
    restarts: list[Any] = []
    monkeypatch.setattr(action_module, "restart_without_requirements",
                        lambda start, failed=None: restarts.append(failed))

    push = {"ref": "refs/heads/main", "after": pushed_sha,
            "repository": {"full_name": REPO, "default_branch": "main"}}
    done = CliRunner().invoke(action_command, [], env=_env(ws, stub, push, "push", 1))
    assert done.exit_code == 2, done.output  # the broken agent: incomplete
    assert "requirements of suite orders_agent: agents/orders/requirements.txt" in done.output
    assert "-r requirements.txt" in done.output and restarts == [{}]
    results = load_json(ws / "adk-eval-results.json")
    suites = {s["name"]: s for s in results["suites"]}
    assert [e["kind"] for e in suites["brand_search_agent"]["errors"]] == ["agent"]
    assert SELENIUM in suites["brand_search_agent"]["errors"][0]["message"]
    for name in ("faq_agent", "orders_agent", "weather_agent"):
        assert suites[name]["errors"] == []
        assert all(r["status"] == "passed" for e in suites[name]["eval_sets"]
                   for c in e["eval_cases"] for r in c["runs"]), name
    (recorded,) = load_history(ws / "adk-eval-history.json").runs
    assert [s.name for s in recorded.suites] == ["faq_agent", "orders_agent", "weather_agent"]
    assert recorded.commit == pushed_sha
    assert "history: this run is recorded without the suites it left incomplete: " \
        "brand_search_agent (agent: " in done.output
    stub.add_artifact(pushed_sha, _uploaded(ws), conclusion="failure")

    # The pull request: the forecast agent guesses instead of looking the forecast up.
    for name in ("adk-eval-results.json", "adk-eval-history.json", "adk-eval-comment.md",
                 "adk-eval-pr.json", "adk-eval-report.html"):
        (ws / name).unlink(missing_ok=True)  # the pull request's checkout has none
    _git(ws, "checkout", "-q", "-b", "feature")
    agent = ws / "agents/weather/weather_agent/agent.py"
    agent.write_text(agent.read_text().replace(
        "Look the forecast up with get_forecast and", "Guess the forecast, never look it up;"))
    head = _commit(ws, "make the forecast agent guess")
    stub.add_commits([pushed_sha])
    stub.set_merge_base("main", head, pushed_sha)
    stub.add_pull(12, head)
    pull = {"action": "synchronize", "number": 12, "pull_request": {
        "number": 12, "head": {"sha": head, "ref": "feature", "repo": {"full_name": REPO}},
        "base": {"sha": pushed_sha, "ref": "main", "repo": {"full_name": REPO}}},
        "repository": {"full_name": REPO, "default_branch": "main"}}
    done = CliRunner().invoke(action_command, [], env=_env(ws, stub, pull, "pull_request", 2))
    assert done.exit_code == 1, done.output  # the regression fails the check
    (comment,) = [c["body"] for c in stub.comments(12)]
    assert "❌ **ADK eval failed**: 4/6 eval cases passed" in comment  # brand_search apart
    assert f"commit [`{pushed_sha[:7]}`]" in comment  # main's recorded results, via the API
    (line,) = [x for x in comment.splitlines()
               if x.startswith("- No baseline for suite `brand_search_agent`: ")]
    assert line.startswith("- No baseline for suite `brand_search_agent`: its baseline run "
                           "was incomplete (agent setup: ")
    assert "selenium" in line and line.endswith(
        "; this run fails the same way: the base branch's own breakage, which does not "
        "decide this check.")
    tables = _suite_tables(comment)
    assert any(re.search(r"`tool_trajectory_avg_score`[^|]* \| 1\.000 \| 0\.000 \| −1\.000", row)
               for row in tables["weather\\_agent"])
    for suite in ("faq\\_agent", "orders\\_agent"):
        assert any("±0" in row for row in tables[suite]), suite


def test_a_suite_whose_dependencies_do_not_install_is_the_only_one_incomplete(
        tmp_path, stub, monkeypatch):
    """The order desk's requirements name a wheel that is not there: the real installer
    fails for that suite alone, which is recorded incomplete naming its file (and not
    imported), while the other suites run."""
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "examples" / "monorepo", ws,
                    ignore=shutil.ignore_patterns("__pycache__", ".adk", "adk-eval-*"))
    (ws / "agents/orders/requirements.txt").write_text(
        "./wheels/orders_book-1.0-py3-none-any.whl\n")
    _git(ws, "init", "-q", "-b", "main")
    sha = _commit(ws, "agents")
    restarts: list[Any] = []
    monkeypatch.setattr(action_module, "restart_without_requirements",
                        lambda start, failed=None: restarts.append(failed))
    push = {"ref": "refs/heads/main", "after": sha,
            "repository": {"full_name": REPO, "default_branch": "main"}}
    env = _env(ws, stub, push, "push", 1)
    env["INPUT_PATHS"] = "agents/orders\nagents/faq"
    done = CliRunner().invoke(action_command, [], env=env)
    assert done.exit_code == 2, done.output
    (failed,) = restarts
    assert list(failed) == ["orders_agent"]
    assert failed["orders_agent"].file == "agents/orders/requirements.txt"
    suites = {s["name"]: s for s in load_json(ws / "adk-eval-results.json")["suites"]}
    assert set(suites) == {"faq_agent", "orders_agent"}  # the paths input chose them
    (error,) = suites["orders_agent"]["errors"]
    assert (error["kind"], error["file"]) == ("agent", "agents/orders/requirements.txt")
    assert error["message"].startswith("agents/orders/requirements.txt did not install: ")
    assert all(c["runs"] == [] for e in suites["orders_agent"]["eval_sets"]
               for c in e["eval_cases"])
    assert suites["faq_agent"]["errors"] == []
    # Recorded without the order desk: faq's history is written.
    (recorded,) = load_history(ws / "adk-eval-history.json").runs
    assert [s.name for s in recorded.suites] == ["faq_agent"]


def test_the_restart_gets_the_suites_that_did_not_install(tmp_path, monkeypatch):
    from adk_eval_action.project.dependencies import DependencyFailure
    from adk_eval_action.run import requirements

    started: list[list[str]] = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: started.append(argv))
    monkeypatch.setattr(sys, "argv", ["adk-eval-action", "action"])
    failed = {"orders": DependencyFailure(file="agents/orders/requirements.txt", message="m")}
    requirements.restart_without_requirements(tmp_path, failed)
    (argv,) = started
    assert argv[-4:-1] == ["action", "--skip-requirements", "--install-failures"]
    assert requirements.read_install_failures(Path(argv[-1])) == failed
    assert not Path(argv[-1]).exists()  # read once, then gone
    assert requirements.read_install_failures(None) is None


def _suite_tables(comment: str) -> dict[str, list[str]]:
    """The comment's main table rows by suite (a table under each suite's bold name)."""
    tables: dict[str, list[str]] = {}
    suite = None
    for line in comment.splitlines():
        if line.startswith("**") and line.endswith("**"):
            suite = line.strip("*")
            if suite in tables:  # a later table of the suite's (efficiency, eval cases, …)
                suite = None
        elif suite is not None and line.startswith("| `"):
            tables.setdefault(suite, []).append(line)
        elif not line.startswith("|") and line:
            suite = None if not line.startswith("**") else suite
    return tables

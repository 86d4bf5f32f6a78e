"""Shared fixtures: a copy of the bundled example repository and an in-process CLI runner.

Every test that evaluates runs real google-adk code (LocalEvalService, its evaluators and
judge prompts) on agents whose models are the deterministic stand-ins of
``adk_eval_action.testing.standins``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from adk_eval_action.baseline.models import BaselineContext
from adk_eval_action.cli import main
from adk_eval_action.github.logs import GitHubFormatter, PlainFormatter, log_to
from adk_eval_action.settings import RunRequest, load_request
from adk_eval_action.testing.standins import register_standins

REPO = Path(__file__).resolve().parents[1]

# Tests name the stand-in models (scripted-*, stand-in-judge*) in agents and eval configs of
# their own, which do not all import the example agent that registers them.
register_standins()
EXAMPLES = REPO / "examples"
SHARED = REPO.parent / "shared"


@pytest.fixture
def example_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of ``examples/`` as the current directory (a repository root)."""
    root = tmp_path / "repo"
    shutil.copytree(
        EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".adk", "adk-eval-*")
    )
    monkeypatch.chdir(root)
    return root


CliRun = Callable[..., Result]


@pytest.fixture
def cli() -> CliRun:
    """Runs ``adk-eval-action ARGS`` in process; returns click's Result (exit_code, output)."""

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return run


def load_json(path: Path) -> Any:
    """Parsed JSON of a file."""
    return json.loads(path.read_text(encoding="utf-8"))


def case_runs(results: dict[str, Any], eval_id: str) -> list[dict[str, Any]]:
    """The runs of an eval case, searched through every suite and eval set."""
    for suite in results["suites"]:
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                if case["eval_id"] == eval_id:
                    return case["runs"]
    raise KeyError(eval_id)


def metric(run: dict[str, Any], name: str) -> dict[str, Any]:
    """One metric result of a run, by name."""
    return next(m for m in run["metrics"] if m["metric_name"] == name)


class Console:
    """What this package logs while a test runs, as the CLI prints it (``lines``) or as the
    runner's log takes it (with ``GitHubFormatter``)."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    @property
    def lines(self) -> list[str]:
        return self.stream.getvalue().splitlines()


@pytest.fixture
def console() -> Iterator[Console]:
    """The log as the CLI prints it (github.logs.PlainFormatter)."""
    out = Console()
    with log_to(out.stream, PlainFormatter()):
        yield out


@pytest.fixture
def runner_log() -> Iterator[Console]:
    """The log as the action prints it for the runner (github.logs.GitHubFormatter)."""
    out = Console()
    with log_to(out.stream, GitHubFormatter()):
        yield out


def request_for(github: BaselineContext | None = None, **flags: Any) -> RunRequest:
    """The pipeline's run in the current directory, with these CLI flags (option names,
    as :data:`adk_eval_action.settings.OPTIONS`) over its adk-eval.yaml."""
    request = load_request(Path.cwd(), flags=flags)
    return request.model_copy(update={"github": github}) if github else request


@pytest.fixture
def keep_cwd() -> Any:
    """Restores the working directory after a test that changes it."""
    cwd = Path.cwd()
    yield
    os.chdir(cwd)

"""The action's container, started the way GitHub's runner starts it.

Builds the image from the Dockerfile with podman (no Docker engine on these machines; see
`.ci/container.sh`), then runs it like ContainerActionHandler does: workspace mounted at
/github/workspace as the working directory, the event at /github/workflow/event.json, the
file commands under /github/file_commands, HOME=/github/home, every input of action.yml as
INPUT_<NAME> (its default when the workflow gives none), GITHUB_* variables, and
GITHUB_API_URL pointing at the REST stand-in on this host (`--network host`). The example
agents run on `gemini-2.5-flash` against the session's fake Gemini API on this host
(GOOGLE_GEMINI_BASE_URL and a dummy GOOGLE_API_KEY, as a workflow's `env:` passes a secret),
unless a test starts the container without model credentials (a fork's pull request).

Skips, saying why, only where podman cannot run containers. Set ADK_EVAL_REQUIRE_CONTAINER=1
(CI on a machine prepared by .ci/container.sh) to make that a failure instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker
from conftest import HOST_CA_FILE
from e2e.test_action import SUITE_YAML  # the same two suites as the in-process action test
from support.github_stub import GitHubStub, Token
from support.runner import (
    podman_build_command,
    remove_podman_image,
    runner_inputs,
)

pytestmark = pytest.mark.container  # podman, minutes: left out by scripts/test.sh --quick

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# One tag per checkout: several worktrees on one machine must not replace each other's image
# between its build and its run.
IMAGE = f"localhost/adk-eval-action:test-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]}"
REPO = "octo/agents"
TOKEN = "ghs_containertoken555"
HEAD = "c0ffee" + "0" * 34


def _podman_problem() -> str | None:
    """Why podman cannot run a container here, or None when it can."""
    if shutil.which("podman") is None:
        return "podman is not installed (run .ci/container.sh to prepare this machine)"
    probe = subprocess.run(
        ["podman", "run", "--rm", "--network", "host", "docker.io/library/debian:bookworm-slim",
         "true"], capture_output=True, text=True, timeout=120, check=False,
    )
    if probe.returncode != 0:
        return f"podman cannot run a container here: {probe.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    """The action's image, built for this module and removed with the images its build left
    (stages, cached layers) when the module ends, passed or failed: the next run builds it
    again anyway, what a failure needs is in its message, and images kept per checkout
    filled the disk. ADK_EVAL_KEEP_IMAGE=1 keeps it (to start it by hand)."""
    problem = _podman_problem()
    if problem:
        if os.environ.get("ADK_EVAL_REQUIRE_CONTAINER") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    try:
        started = time.monotonic()
        built = subprocess.run(podman_build_command(IMAGE, ROOT, HOST_CA_FILE),
                               capture_output=True, text=True, timeout=1800, check=False)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        print(f"image built in {time.monotonic() - started:.0f} s")
        yield IMAGE
    finally:
        if os.environ.get("ADK_EVAL_KEEP_IMAGE") != "1":
            left = remove_podman_image(IMAGE)
            print(f"image removed; {len(left)} image(s) of its build kept (still in use)")


class Runner:
    """Lays out the runner's host folders and starts the container like the runner does."""

    def __init__(self, root: Path, stub: GitHubStub, model_env: dict[str, str]) -> None:
        self.root = root
        self.stub = stub
        self.model_env = model_env
        self.workspace = root / "workspace"
        shutil.copytree(EXAMPLES, self.workspace,
                        ignore=shutil.ignore_patterns(".adk", "__pycache__", "monorepo"))
        (self.workspace / "adk-eval.yaml").write_text(
            SUITE_YAML.format(agent="travel_agent_regressed"))
        (self.workspace / "baseline.yaml").write_text(SUITE_YAML.format(agent="travel_agent"))
        for name in ("workflow", "file_commands", "home"):
            (root / name).mkdir()

    def run(self, event_name: str, payload: dict, token: str = TOKEN,
            model_env: dict[str, str] | None = None, **inputs: Any) -> tuple[int, str, dict, str]:
        """One step: returns exit code, log, outputs and the step summary. ``model_env``
        (default: the runner's) is the model credentials the workflow passes."""
        (self.root / "workflow" / "event.json").write_text(json.dumps(payload))
        step = f"{time.monotonic_ns()}"
        output = self.root / "file_commands" / f"set_output_{step}"
        summary = self.root / "file_commands" / f"step_summary_{step}"
        output.touch()
        summary.touch()
        env = {
            **runner_inputs(ROOT / "action.yml", inputs, token=TOKEN),
            "INPUT_GITHUB_TOKEN": token,
            "HOME": "/github/home", "CI": "true", "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.stub.api_url, "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "e" * 40,
            "GITHUB_REF": "refs/pull/12/merge",
            "GITHUB_OUTPUT": f"/github/file_commands/{output.name}",
            "GITHUB_STEP_SUMMARY": f"/github/file_commands/{summary.name}",
            **(self.model_env if model_env is None else model_env),
        }
        command = ["podman", "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
        for host, inside in (("workspace", "workspace"), ("workflow", "workflow"),
                             ("file_commands", "file_commands"), ("home", "home")):
            command += ["-v", f"{self.root / host}:/github/{inside}"]
        for key, value in env.items():
            command += ["-e", f"{key}={value}"]
        done = subprocess.run([*command, IMAGE], capture_output=True, text=True, timeout=900,
                              check=False)
        log = done.stdout + done.stderr
        outputs = {m.group(1): m.group(3) for m in re.finditer(
            r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", output.read_text(), re.S | re.M)}
        return done.returncode, log, outputs, summary.read_text()


def test_container_run_as_the_runner_does(image, tmp_path, gemini_api):
    with GitHubStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as stub:
        runner = Runner(tmp_path, stub, gemini_api.env())
        stub.add_pull(12, HEAD)

        # A push to main records the baseline: no PR for that commit, results only.
        started = time.monotonic()
        code, log, outputs, _ = runner.run(
            "push", {"after": "e" * 40, "ref": "refs/heads/main"},
            config="baseline.yaml", results_path="baseline/adk-eval-results.json",
        )
        first_run = time.monotonic() - started
        assert code == 0, log[-4000:]
        assert outputs["passed"] == "true"
        assert outputs["results_path"] == "baseline/adk-eval-results.json"
        assert stub.comments() == []

        pull_request = {
            "action": "synchronize", "number": 12,
            "pull_request": {
                "number": 12,
                "head": {"sha": HEAD, "ref": "feature", "repo": {"full_name": REPO}},
                "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
            },
        }
        # Already satisfied, so pip needs no index; the process still restarts after it.
        (runner.workspace / "agent-requirements.txt").write_text("requests\n")
        inputs: dict[str, Any] = {
            "config": "adk-eval.yaml", "baseline": "baseline/adk-eval-results.json",
            "comment_key": "travel", "requirements": "agent-requirements.txt"}
        code, log, outputs, summary = runner.run("pull_request", pull_request, **inputs)
        assert code == 1, log[-4000:]  # the regressed agent fails the gate
        assert "-r agent-requirements.txt" in log and "::group::Run evaluations" in log
        assert TOKEN not in log.replace(f"::add-mask::{TOKEN}", "")

        [comment] = stub.comments(12)
        body = comment["body"]
        assert body.rstrip().endswith(comment_marker("travel"))
        assert "https://github.example/octo/agents/actions/runs/1001" in body
        # the metric cell carries its threshold (`… ≥ 1`)
        assert re.search(r"`tool_trajectory_avg_score`(?: ≥ [\d.]+)? \| 1\.000 \| 0\.750 \| "
                         r"−0\.250", body)
        assert re.search(r"`friendly`.*\| 1\.000 \| 0\.667 \| −0\.333", body)  # per-rubric
        assert '+ get_weather(city="paris")' in body  # why: the wrong argument
        assert outputs["passed"] == "false" and outputs["comment_url"] == comment["html_url"]
        assert json.loads(outputs["metrics"])["travel/politeness"]["baseline"] == 1.0
        assert outputs["comment_path"] == "adk-eval-comment.md"
        assert (runner.workspace / "adk-eval-results.json").is_file()
        assert "ADK eval" in summary and "PR comment created" in summary
        assert re.search(r"^::error file=travel_agent/eval/travel\.evalset\.json,line=\d+",
                         log, re.M)
        assert "::group::Suite travel" in log

        code, log, outputs, summary = runner.run("pull_request", pull_request, **inputs)
        assert code == 1, log[-4000:]
        [updated] = stub.comments(12)
        assert updated["id"] == comment["id"]
        assert len(stub.requests("POST")) == 1 and len(stub.requests("PATCH")) == 1
        assert "PR comment updated" in summary
        print(f"first container run {first_run:.0f} s")


def test_fork_recipe_in_the_container(image, tmp_path, gemini_api):
    """A fork's PR run keeps its verdict with a read-only token; the workflow_run commenter
    posts the saved comment after checking it against the API."""
    read_only = "ghs_readonly_fork_token"
    tokens = {TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True),
              read_only: Token(DEFAULT_BOT_LOGIN, writable=False, installation=True)}
    with GitHubStub(tokens=tokens) as stub:
        runner = Runner(tmp_path, stub, gemini_api.env())
        stub.add_pull(13, HEAD, fork=True)
        fork_pr = {"number": 13, "pull_request": {
            "number": 13,
            "head": {"sha": HEAD, "ref": "patch-1",
                     "repo": {"full_name": "forker/agents", "fork": True}},
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
        }}
        code, log, outputs, summary = runner.run(
            "pull_request", fork_pr, token=read_only, config="baseline.yaml", baseline="none")
        assert code == 0, log[-4000:]  # the 403 on the comment does not fail the check
        assert "::warning title=PR comment not posted::" in log
        assert "fork recipe" in summary and stub.comments() == []
        assert outputs["passed"] == "true" and outputs["comment_url"] == ""

        artifact = runner.workspace / "downloaded"
        artifact.mkdir()
        for name in ("adk-eval-comment.md", "adk-eval-pr.json"):
            shutil.copy(runner.workspace / name, artifact / name)
        workflow_run = {"workflow_run": {
            "head_sha": HEAD, "head_branch": "patch-1", "event": "pull_request",
            "pull_requests": [], "repository": {"full_name": REPO},
            "head_repository": {"full_name": "forker/agents"},
        }}
        code, log, outputs, _ = runner.run("workflow_run", workflow_run,
                                           comment_artifact="downloaded")
        assert code == 0, log[-4000:]
        [comment] = stub.comments(13)
        assert outputs["comment_url"] == comment["html_url"]
        assert comment["body"].rstrip().endswith(comment_marker("default"))
        assert any(r.path.endswith("/pulls/13") for r in stub.requests("GET"))


FORK_PR = {"number": 14, "pull_request": {
    "number": 14,
    "head": {"sha": HEAD, "ref": "patch-2", "repo": {"full_name": "forker/agents", "fork": True}},
    "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
}}


def test_fork_pull_request_without_model_credentials(image, tmp_path, gemini_api):
    """A fork's pull request gets no secrets: no GOOGLE_API_KEY reaches the container.
    `fail` (the default) stops before any agent runs with exit 2 and the message; `skip`
    exits 0 with a notice, an empty `passed` output and no comment that claims a pass."""
    read_only = "ghs_readonly_fork_token_2"
    tokens = {read_only: Token(DEFAULT_BOT_LOGIN, writable=False, installation=True)}
    no_key = {"GOOGLE_GEMINI_BASE_URL": gemini_api.base_url}  # what the workflow sets; no key
    with GitHubStub(tokens=tokens) as stub:
        runner = Runner(tmp_path, stub, no_key)
        stub.add_pull(14, HEAD, fork=True)
        gemini_api.clear_calls()

        started = time.monotonic()
        code, log, outputs, summary = runner.run(
            "pull_request", FORK_PR, token=read_only, config="baseline.yaml", baseline="none")
        failed_in = time.monotonic() - started
        assert code == 2, log[-4000:]
        assert "GOOGLE_API_KEY" in log and "GEMINI_API_KEY" in log
        assert "comes from forker/agents" in log and "on_missing_credentials: skip" in log
        assert "comes from forker/agents" in summary and "GOOGLE\\_API\\_KEY" in summary
        assert outputs["passed"] == "false"
        assert gemini_api.calls == []  # no agent ran, no judge was called

        code, log, outputs, summary = runner.run(
            "pull_request", FORK_PR, token=read_only, config="baseline.yaml", baseline="none",
            on_missing_credentials="skip")
        assert code == 0, log[-4000:]
        assert re.search(r"^::notice title=ADK eval skipped::.*GOOGLE_API_KEY", log, re.M)
        assert outputs["passed"] == ""
        assert "ADK eval skipped" in summary and "✅" not in summary
        assert stub.comments() == []  # the read-only token posts nothing; nothing claims a pass
        comment = (runner.workspace / "adk-eval-comment.md").read_text(encoding="utf-8")
        assert "ADK eval skipped" in comment and "✅" not in comment
        assert gemini_api.calls == []
        print(f"refused in {failed_in:.0f} s (container start and google-adk import included)")

"""A repository, a runner and a GitHub for the hostile-input suite (test_hostile.py).

:class:`Workspace` is a copy of ``examples/`` (the offline travel agent, a stand-in model)
plus a hostile agent package (``hostile_agent``: its scripted model echoes whatever the
case puts in its reply, environment values included), a pull request event, the runner's
output and summary files, secrets in the environment, and the local GitHub REST stand-in
(tests/github_stub.py) holding comments that are not ours. :meth:`Workspace.action` runs
``adk-eval-action action`` in this process as the runner starts it; :meth:`Workspace.cli`
runs the CLI. The :class:`Run` they return has everything a case is checked on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from adk_eval_action.action import action_command
from adk_eval_action.adk.evaluate import scheduler
from adk_eval_action.adk.evaluate.plan import Plan
from adk_eval_action.cli import main
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker
from adk_eval_action.results.io import load_results
from adk_eval_action.results.stream import SuiteRecords, hand_over
from support.artifact_stub import ArtifactStub
from support.github_stub import GitHubStub, Token
from support.runner import runner_inputs

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
ACTION_YML = ROOT / "action.yml"
REPO = "octo/agents"
TOKEN = "ghs_hostileToken0123456789abcdef"
#: Secrets in the environment of every case: the agent may read and echo them.
GOOGLE_API_KEY = "AIzaSyHOSTILE-fake-key-0123456789"
DB_PASSWORD = "hunter2-but-longer-than-eight"
SECRETS = (TOKEN, GOOGLE_API_KEY, DB_PASSWORD)
HEAD = "a" * 40
#: Another workflow's comment (same bot login) that quotes our marker mid-body, and a
#: person's comment: neither may ever change.
FOREIGN_BODY = (f"Coverage report\n\nOur bot once wrote {comment_marker('default')} here.\n"
                "<!-- coverage-action -->\n")
PERSON_BODY = "LGTM @octocat, see #3"

HOSTILE_AGENT = '''\
"""A hostile agent: its scripted model answers with REPLY (formatted with os.environ)."""
import collections
import os

from google.adk.agents import LlmAgent

from adk_eval_action.testing.standins import ScriptedLlm, register_standins

register_standins()
REPLY = {reply!r}
root_agent = LlmAgent(
    name="hostile_agent",
    model=ScriptedLlm(model="scripted-hostile", default_reply=REPLY.format_map(
        {{"env": collections.defaultdict(str, os.environ)}})),
    instruction="Answer.",
)
{extra}
'''


@dataclass
class Run:
    """What one start of the action (or the CLI) left behind.

    ``log`` is everything it printed; ``files`` maps each file it wrote (results, comment,
    PR context, summary, outputs) to its text; ``outputs`` are the step outputs.
    """

    exit_code: int
    log: str
    seconds: float
    workspace: Workspace
    files: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    exception: BaseException | None = None

    @property
    def results(self) -> dict[str, Any] | None:
        text = self.files.get("adk-eval-results.json")
        return json.loads(text) if text else None

    @property
    def comment_file(self) -> str | None:
        return self.files.get("adk-eval-comment.md")


class Workspace:
    """One case's repository and runner (see the module docstring)."""

    def __init__(self, tmp: Path, stub: ArtifactStub) -> None:
        self.tmp = tmp
        self.root = tmp / "workspace"
        shutil.copytree(EXAMPLES, self.root, ignore=shutil.ignore_patterns(
            ".adk", "__pycache__", "adk-eval-*", "monorepo"))
        self.stub = stub
        #: Servers and other resources of the row, closed once its checks are done.
        self.later = contextlib.ExitStack()
        self.others: list[GitHubStub] = []  # other_server()
        #: The session's fake Gemini API (tests/conftest.py ``gemini_api``), whose faults a
        #: row may set (they are undone after each test).
        self.gemini: Any = None
        self.event = tmp / "event.json"
        self.inputs: dict[str, str] = {"paths": "travel_agent", "baseline": "none"}
        self.env: dict[str, str] = {}
        self.write_event({"action": "synchronize", "number": 12, "pull_request": {
            "number": 12,
            "head": {"sha": HEAD, "ref": "feature", "repo": {"full_name": REPO}},
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
        }, "repository": {"full_name": REPO, "default_branch": "main"}})
        stub.add_pull(12, HEAD)
        self.foreign = stub.add_comment(12, FOREIGN_BODY, DEFAULT_BOT_LOGIN)
        self.person = stub.add_comment(12, PERSON_BODY, "octocat")

    # -- building the repository

    def write_event(self, payload: Any) -> None:
        self.event.write_text(json.dumps(payload) if not isinstance(payload, str) else payload)

    def hostile_agent(self, reply: str, cases: list[str] | None = None, extra: str = "",
                      threshold: float = 0.7) -> Path:
        """``hostile_agent/`` answering ``reply`` (``{env[NAME]}`` reads the environment)
        with an eval set of ``cases`` (eval ids, one invocation each); returns the eval
        set file. ``extra`` is more module code of the agent."""
        agent = self.root / "hostile_agent"
        (agent / "eval").mkdir(parents=True, exist_ok=True)
        (agent / "__init__.py").write_text("from . import agent  # noqa: F401\n")
        (agent / "agent.py").write_text(HOSTILE_AGENT.format(reply=reply, extra=extra))
        eval_cases = [{"eval_id": eval_id, "conversation": [{
            "invocation_id": f"i{n}",
            "user_content": {"role": "user", "parts": [{"text": "Say something."}]},
            "final_response": {"role": "model", "parts": [{"text": "Something polite."}]},
        }]} for n, eval_id in enumerate(cases or ["hostile_case"])]
        eval_set = agent / "eval" / "hostile.evalset.json"
        eval_set.write_text(json.dumps({"eval_set_id": "hostile", "eval_cases": eval_cases}))
        (agent / "eval" / "test_config.json").write_text(json.dumps(
            {"criteria": {"response_match_score": threshold}}))
        self.inputs["paths"] = "hostile_agent"
        return eval_set

    def config(self, data: dict[str, Any] | str, name: str = "adk-eval.yaml") -> Path:
        path = self.root / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
        self.inputs["config"] = name
        return path

    def other_server(self) -> GitHubStub:
        """A second GitHub stand-in (another origin, knowing no token) that records every
        request sent to it: where a hostile answer may try to send the token."""
        self.others.append(self.later.enter_context(GitHubStub(tokens={})))
        return self.others[-1]

    # -- running

    def runner_env(self) -> dict[str, str]:
        """The environment the runner gives the action: every input (action.yml's default
        unless set), GITHUB_*, the output and summary files, and the secrets."""
        env = runner_inputs(ACTION_YML, self.inputs, token=TOKEN)
        env.update({
            "INPUT_WORKING_DIRECTORY": str(self.root),
            "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(self.event), "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.stub.api_url, "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": "4242", "GITHUB_SHA": "f" * 40, "GITHUB_WORKSPACE": str(self.root),
            "GITHUB_OUTPUT": str(self.tmp / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(self.tmp / "summary.md"),
            "GITHUB_TOKEN": TOKEN, "GOOGLE_API_KEY": GOOGLE_API_KEY,
            "DB_PASSWORD": DB_PASSWORD,
        })
        env.update(self.env)
        return env

    def action(self) -> Run:
        """``adk-eval-action action`` as the runner starts it (in this process)."""
        return self._invoke(action_command, [], self.runner_env())

    def cli(self, *args: str, cwd: Path | None = None) -> Run:
        """``adk-eval-action ARGS`` in the workspace (or in its folder ``cwd``), with the
        secrets in the environment."""
        env = {"GOOGLE_API_KEY": GOOGLE_API_KEY, "DB_PASSWORD": DB_PASSWORD, **self.env}
        previous = Path.cwd()
        os.chdir(cwd or self.root)
        try:
            return self._invoke(main, list(args), env)
        finally:
            os.chdir(previous)

    def _invoke(self, command: Any, args: list[str], env: dict[str, str]) -> Run:
        started = time.monotonic()
        result = CliRunner().invoke(command, args, env=env)
        run = Run(exit_code=result.exit_code, log=result.output,
                  seconds=time.monotonic() - started, workspace=self,
                  exception=result.exception if not isinstance(result.exception, SystemExit)
                  else None)
        for path in [*self.root.glob("adk-eval-*"), *self.root.glob("*.md"),
                     self.tmp / "summary.md", self.tmp / "output.txt"]:
            if path.is_file() and path.name != "README.md":
                run.files[path.name] = path.read_text(encoding="utf-8")
        run.outputs = _outputs(run.files.get("output.txt", ""))
        return run


def _outputs(text: str) -> dict[str, str]:
    return {m.group(1): m.group(3) for m in
            re.finditer(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.S | re.M)}


def stub_for_case() -> ArtifactStub:
    """The GitHub stand-in (with the Actions artifact endpoints) and the workflow token
    (an installation token)."""
    return ArtifactStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)})


def replay_evaluation(monkeypatch: pytest.MonkeyPatch, results: Path) -> list[list[str]]:
    """google-adk's evaluation of the suites (``adk.evaluate.scheduler.evaluate_suites``) gives the
    suites' records of ``results``, a results file of the same project evaluated earlier in
    the session, instead of evaluating again; everything before and after it is as in a
    real run (discovery, the preflight, saving the results, the baseline, publishing).

    Returns the names of the suites replayed, one list per evaluation. Raises KeyError (in
    the run, an "internal error") for a suite ``results`` does not hold.
    """
    recorded = {s.name: s for s in load_results(results).suites}
    replays: list[list[str]] = []

    async def evaluate_suites(suites: list[Any], settings: Any, hooks: Any = None,
                              calls: Any = None, sink: SuiteRecords | None = None,
                              refused: Any = None) -> scheduler.Evaluation:
        sink = sink if sink is not None else SuiteRecords()
        replays.append([suite.name for suite in suites])
        for suite in suites:
            hand_over(sink, recorded[suite.name].model_copy(deep=True))
        return scheduler.Evaluation(sink.suite_records(), Plan())

    monkeypatch.setattr(scheduler, "evaluate_suites", evaluate_suites)
    return replays

"""A pull request whose models have no credentials, as the action runs it (INPUT_*, GITHUB_*,
the REST stand-in as GitHub), on an eval set of 7 eval cases: with ``on_missing_credentials:
fail`` the run says why once (one error annotation, exit 2, every file written); with
``skip`` it posts a comment that says skipped, one notice and nothing else (no error
annotation, no baseline lookup, exit 0).

The credentials message counted in the log is the one the results file records, and the
fork's note is the one GitHub's rule gives (workflows of pull requests from forks get no
repository secrets: "Using secrets in GitHub Actions").
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval_action.action import action_command
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker
from e2e.test_action import (
    EXAMPLES,
    HEAD,
    TOKEN,
    pull_request_event,
    read_outputs,
    runner_env,
)
from support.github_stub import GitHubStub, Token

CASES = 7
NO_KEY = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")


def seven_case_workspace(root: Path) -> Path:
    """The good example agent (gemini-2.5-flash, ADK's default judge) with one eval set of
    7 eval cases: the example's 4, and 3 copies under new ids."""
    ws = root / "workspace"
    shutil.copytree(EXAMPLES / "travel_agent", ws / "travel_agent",
                    ignore=shutil.ignore_patterns(".adk", "__pycache__"))
    (ws / "travel_agent/eval/legacy_weather.test.json").unlink()
    eval_set = ws / "travel_agent/eval/travel.evalset.json"
    data = json.loads(eval_set.read_text(encoding="utf-8"))
    cases = data["eval_cases"]
    for index in range(CASES - len(cases)):
        copy = json.loads(json.dumps(cases[index]))
        copy["eval_id"] = f"{copy['eval_id']}_again"
        cases.append(copy)
    eval_set.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return ws


def _annotations(output: str, kind: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(f"::{kind} ")
            or line.startswith(f"::{kind}::")]


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, gemini_api) -> None:
    for name in NO_KEY:
        monkeypatch.delenv(name, raising=False)
    gemini_api.clear_calls()


def test_missing_credentials_fail_says_it_once_and_skip_posts_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_credentials: None, gemini_api,
):
    ws = seven_case_workspace(tmp_path)
    eval_set = json.loads((ws / "travel_agent/eval/travel.evalset.json").read_text())
    assert len({c["eval_id"] for c in eval_set["eval_cases"]}) == CASES
    monkeypatch.chdir(tmp_path)
    event = pull_request_event(tmp_path / "event.json", fork=True)
    with GitHubStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as stub:
        stub.add_pull(12, HEAD, fork=True)

        failed = CliRunner().invoke(action_command, [], env=runner_env(ws, stub, event))
        assert failed.exit_code == 2, failed.output
        results = json.loads((ws / "adk-eval-results.json").read_text(encoding="utf-8"))
        [error] = [e for e in results["errors"] if e["kind"] == "credentials"]
        message = error["message"]
        assert len(message) > 400 and "GOOGLE_API_KEY" in message
        assert "comes from forker/agents" in message  # the fork's note, with its advice
        assert "set on_missing_credentials: skip" in message
        # Once in the whole log, as the one error annotation; no case is annotated.
        assert failed.output.count(message) == 1
        [annotation] = _annotations(failed.output, "error")
        assert annotation.startswith("::error title=adk-eval-action::no model credentials: ")
        assert _annotations(failed.output, "warning") == []
        assert results["complete"] is False and results["suites"] == []
        [first] = stub.comments(12)
        assert "ADK eval incomplete** (no model credentials)" in first["body"]
        assert "errored" not in first["body"] and "Eval cases" not in first["body"]
        summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
        assert "ADK eval incomplete" in summary
        assert read_outputs(tmp_path / "output.txt")["passed"] == "false"
        assert (ws / "adk-eval-comment.md").is_file()

        (tmp_path / "summary.md").unlink()
        before = len(stub.requests())
        skipped = CliRunner().invoke(action_command, [], env=runner_env(
            ws, stub, event, on_missing_credentials="skip"))
        assert skipped.exit_code == 0, skipped.output
        assert _annotations(skipped.output, "error") == []
        assert _annotations(skipped.output, "warning") == []
        [notice] = _annotations(skipped.output, "notice")
        assert notice.startswith("::notice title=ADK eval skipped::ADK eval skipped: no model "
                                 "credentials: ")
        # The fork is named, without advising the option that is already set.
        assert "comes from forker/agents" in notice
        assert "on_missing_credentials" not in notice
        assert skipped.output.count("no model credentials") == 1
        # No baseline was looked up: the only calls are the comment's.
        paths = [r.path for r in stub.requests()[before:]]
        assert paths and all(re.search(r"/pulls/12$|/user$|/issues/(12/)?comments", p)
                             for p in paths), paths
        [comment] = stub.comments(12)
        assert comment["id"] == first["id"]  # the sticky comment now says skipped
        body = comment["body"]
        assert "⏭️ **ADK eval skipped**: no model credentials" in body
        assert comment_marker("default") in body
        for absent in ("errored", "Eval cases", "incomplete", "✅", "No baseline"):
            assert absent not in body
        assert "ADK eval skipped" in (tmp_path / "summary.md").read_text(encoding="utf-8")
        assert read_outputs(tmp_path / "output.txt")["passed"] == ""
        results = json.loads((ws / "adk-eval-results.json").read_text(encoding="utf-8"))
        assert results["metadata"]["skipped"].startswith("no model credentials")
        assert results["errors"] == [] and results["suites"] == []
    assert gemini_api.calls == []  # no agent ran, no judge was called

"""The action without any history input or flag: two pushes to the default branch each
find the previous recorded artifact through the REST stand-in (its artifacts API), read the
history inside, and write the next one beside the results; the workflow's upload step (the
paths README's workflow uploads) keeps it in the artifact; a pull request then reads the
history from its baseline artifact. Real pipeline on the example agent; GitHub is
tests/artifact_stub.py."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from adk_eval_action.action import action_command
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.results.history_file_io import load_history
from conftest import commit_all, copy_examples
from conftest import git as _git
from support.artifact_stub import ArtifactStub, Token
from support.runner import runner_inputs

ROOT = Path(__file__).resolve().parents[2]
REPO, TOKEN = "octo/agents", "ghs_historytoken0123"
SERVER = "https://github.example"


def _note_commit(root: Path, text: str) -> str:
    (root / "NOTES.md").write_text(text)
    _git(root, "add", "NOTES.md")
    _git(root, "commit", "-qm", text)
    return _git(root, "rev-parse", "HEAD")


def uploaded_paths() -> list[str]:
    """The files README's workflow uploads as the results artifact (its upload step)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Getting started", 1)[1].split("\n## ", 1)[0]
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if "jobs:" in b]
    steps = next(iter(yaml.safe_load(block)["jobs"].values()))["steps"]
    upload = next(s for s in steps if s.get("with", {}).get("name") == "adk-eval-results")
    return [p.strip() for p in upload["with"]["path"].splitlines() if p.strip()]


def upload(ws: Path) -> bytes:
    """What actions/upload-artifact keeps of the workspace: the listed files that exist."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in uploaded_paths():
            if (ws / name).is_file():
                archive.write(ws / name, name)
    return buffer.getvalue()


def env_for(ws: Path, stub: ArtifactStub, event: dict, name: str, run_id: int) -> dict[str, str]:
    """The runner's environment with every input at action.yml's default (no history
    input exists, none is given)."""
    (ws.parent / "event.json").write_text(json.dumps(event))
    env = runner_inputs(ROOT / "action.yml", {"paths": "travel_agent"}, token=TOKEN)
    env.update({
        "INPUT_WORKING_DIRECTORY": str(ws), "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(ws.parent / "event.json"),
        "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": stub.api_url, "GITHUB_SERVER_URL": SERVER,
        "GITHUB_RUN_ID": str(run_id), "GITHUB_SHA": event.get("after", "f" * 40),
        "GITHUB_REF": event.get("ref", "refs/pull/12/merge"),
        "GITHUB_WORKSPACE": str(ws), "GITHUB_OUTPUT": str(ws.parent / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(ws.parent / f"summary{run_id}.md"),
    })
    return env


def push(ws: Path, stub: ArtifactStub, sha: str, run_id: int) -> str:
    """A push to main at ``sha``: the action, then the upload step; its log."""
    _git(ws, "checkout", "-q", sha)
    event = {"ref": "refs/heads/main", "after": sha,
             "repository": {"full_name": REPO, "default_branch": "main"}}
    done = CliRunner().invoke(action_command, [], env=env_for(ws, stub, event, "push", run_id))
    assert done.exit_code == 0, done.output
    stub.add_artifact(sha, upload(ws), created_at=f"2026-01-0{run_id % 10}T00:00:00Z")
    return done.output


@pytest.fixture
def stub():
    with ArtifactStub(tokens={TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True)}) as server:
        yield server


def test_pushes_carry_the_history_and_a_pull_request_reads_it(tmp_path, stub, monkeypatch):
    ws = copy_examples(tmp_path / "workspace")
    commit_all(ws)
    first, second = _note_commit(ws, "one"), _note_commit(ws, "two")
    _git(ws, "checkout", "-q", "-b", "feature")
    head = _note_commit(ws, "the pull request")
    stub.add_commits([second, first])
    stub.set_merge_base("main", head, second)
    stub.add_pull(12, head)
    monkeypatch.chdir(tmp_path)

    log = push(ws, stub, first, 1)
    assert "a new history starts" in log, log
    one = load_history(ws / "adk-eval-history.json")
    assert [r.commit for r in one.runs] == [first] and one.repository == REPO
    assert one.runs[0].run_url == f"{SERVER}/{REPO}/actions/runs/1"

    log = push(ws, stub, second, 2)
    # The recording run's own summary charts the run before it, then itself.
    assert f'x-axis ["{first[:7]}", "head"]' in (tmp_path / "summary2.md").read_text()
    assert f"history: 1 recorded run(s) from artifact adk-eval-results of commit {first[:12]}" in (
        log)
    two = load_history(ws / "adk-eval-history.json")
    assert [r.commit for r in two.runs] == [first, second]
    assert two.runs[0] == one.runs[0]

    (ws / "adk-eval-history.json").unlink()  # the pull request's checkout has none
    _git(ws, "checkout", "-q", "feature")
    event = {"action": "synchronize", "number": 12, "pull_request": {
        "number": 12, "head": {"sha": head, "ref": "feature", "repo": {"full_name": REPO}},
        "base": {"sha": second, "ref": "main", "repo": {"full_name": REPO}}},
        "repository": {"full_name": REPO, "default_branch": "main"}}
    done = CliRunner().invoke(action_command, [],
                              env=env_for(ws, stub, event, "pull_request", 3))
    assert done.exit_code == 0, done.output
    (comment,) = [c["body"] for c in stub.comments(12)]

    assert (f"Baseline: artifact adk-eval-results · commit [`{second[:7]}`]"
            f"({SERVER}/{REPO}/commit/{second}) · [recorded run]({stub.base_url}/{REPO}/"
            "actions/runs/") in comment
    assert "the merge-base with main itself" in comment
    assert "History of main: 2 recorded runs (from the baseline artifact adk-eval-results)" in (
        comment)
    summary = (tmp_path / "summary3.md").read_text()
    charts = re.findall(r"x-axis \[(\"[0-9a-f]{7}\", .*?)\]", summary)
    assert charts and all(c.split(", ") == [f'"{first[:7]}"', f'"{second[:7]}"', '"head"']
                          for c in charts)
    assert not (ws / "adk-eval-history.json").exists()  # a pull request writes none


def test_the_upload_paths_of_readme_init_and_docs_carry_the_history():
    assert "adk-eval-history.json" in uploaded_paths()
    docs = (ROOT / "docs" / "action.md").read_text()
    assert "            adk-eval-history.json\n" in docs


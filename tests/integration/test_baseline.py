"""Baseline strategies against real google-adk runs of the offline example agent:
artifact (REST stand-in with a redirect to a blob host), rerun (temporary git repositories,
also shallow), file, auto, record, and unreadable baselines."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from pydantic import ValidationError

from adk_eval_action.baseline import artifact as artifact_module
from adk_eval_action.baseline.artifact import download_artifact_zip, results_from_zip
from adk_eval_action.baseline.models import (
    ArtifactDownloadError,
    BaselineContext,
    BaselineRequest,
    BaselineUnreadable,
    RerunBudget,
    ResolvedBaseline,
    format_age,
)
from adk_eval_action.baseline.rerun import default_base_ref, find_merge_base, rerun_command
from adk_eval_action.baseline.resolve import resolve_baseline
from adk_eval_action.cli import main
from adk_eval_action.errors import ConfigError
from adk_eval_action.git import Git, trusting_environment
from adk_eval_action.github.event import EventContext
from adk_eval_action.github.publish import PublishTarget, RunnerEnv
from adk_eval_action.github.transport import GitHubClient
from adk_eval_action.report.format import md
from adk_eval_action.results.io import load_results, save_results
from adk_eval_action.results.model import RunResults
from adk_eval_action.run.pipeline import finish, run_pipeline
from adk_eval_action.settings import BaselineSpec, RunSettings
from conftest import Console, SharedRun, commit_all, request_for, working_directory
from support.artifact_stub import ArtifactStub, Token
from support.tables import compare


def resolve(*args, **kwargs):
    """The baseline stage's resolve_baseline, run on an event loop of its own."""
    return asyncio.run(resolve_baseline(*args, **kwargs))

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REPO = "octo/agents"
TOKEN = "ghs_artifacttoken"
NOW = dt.datetime(2026, 1, 3, 12, 0, tzinfo=dt.timezone.utc)
MERGE_BASE = "a" * 40
PARENT = "b" * 40
GRANDPARENT = "c" * 40
HEAD_SHA = "d" * 40


pytestmark = pytest.mark.usefixtures("keep_cwd")  # tests here chdir into example folders


@pytest.fixture
def good_results(good_run: SharedRun) -> Path:
    """Results of the good example agent (the baseline of the regressed one): the session's
    shared run (read-only)."""
    assert good_run.exit_code == 0, good_run.output
    return good_run.results


def zipped(files: dict[str, bytes] | dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# --------------------------------------------------------------------------- small rules


def test_the_baseline_spec_is_parsed_once_into_a_typed_value():
    def parsed(value: object) -> tuple[str, Path | None]:
        spec = BaselineSpec.model_validate(value)
        return spec.mode, spec.path

    assert parsed(None) == parsed("") == parsed("  ") == ("auto", None)
    assert parsed("ReRun") == ("rerun", None)
    assert parsed(Path("none")) == ("none", None)
    assert parsed(" out/base.json ") == ("file", Path("out/base.json"))
    assert str(BaselineSpec.model_validate("out/base.json")) == "out/base.json"
    assert BaselineRequest(spec="ARTIFACT").spec == BaselineSpec(mode="artifact")
    # It serialises back to the text it came from (a settings dump reads as before).
    assert RunSettings(baseline="rerun").model_dump()["baseline"] == "rerun"
    with pytest.raises(ValidationError):
        BaselineSpec(mode="file")  # a file without its path


def test_format_age():
    assert format_age("2026-01-01T12:00:00+00:00", NOW) == "2 days"
    assert format_age("2026-01-03T07:00:00Z", NOW) == "5 h"
    assert format_age("2026-01-03T11:59:50Z", NOW) == "less than an hour"
    assert format_age("not a time", NOW) is None and format_age(None, NOW) is None


def test_note_names_source_commit_run_and_age():
    note = ResolvedBaseline(
        results=RunResults(), source="artifact", label="artifact adk-eval-results",
        commit=MERGE_BASE, relation="merge-base with main",
        run_url="https://github.com/octo/agents/actions/runs/7",
        recorded_at="2026-01-01T12:00:00Z",
    ).note(NOW)
    assert note == (
        f"artifact adk-eval-results, commit {MERGE_BASE[:12]} (merge-base with main), "
        "run https://github.com/octo/agents/actions/runs/7, recorded 2 days ago"
    )
    assert len(note) < 300  # the comment template cuts the note at 300 characters


# --------------------------------------------------------------------------- artifact


@pytest.fixture
def stub():
    with ArtifactStub(tokens={TOKEN: Token("github-actions[bot]", installation=True)}) as server:
        server.add_commits([MERGE_BASE, PARENT, GRANDPARENT])
        server.set_merge_base("main", HEAD_SHA, MERGE_BASE)
        yield server


def event_for(stub: ArtifactStub) -> EventContext:
    """The pull request event of the run (the head, the base branch) on the stub."""
    return EventContext(repository=REPO, api_url=stub.api_url, server_url=stub.base_url,
                        head_sha=HEAD_SHA, base_ref="main", event_name="pull_request")


def context_for(stub: ArtifactStub, **kw) -> BaselineContext:
    return BaselineContext(
        repository=REPO, api_url=stub.api_url, server_url=stub.base_url, token=TOKEN,
        head_sha=HEAD_SHA, base_ref="main", event_name="pull_request", **kw,
    )


def artifact_options(stub: ArtifactStub, **kw) -> BaselineRequest:
    return BaselineRequest(spec="artifact", github=context_for(stub), **kw)


def head_of(results_file: Path) -> RunResults:
    return load_results(results_file)


def test_blob_host_rejects_a_token(stub):
    """The stand-in behaves as the blob store does: a second credential is a 400."""
    artifact = stub.add_artifact(MERGE_BASE, b"zip")
    url = f"{stub.blob.base_url}/blobs/blob-{artifact['id']}?sig=abc"
    assert requests.get(url, headers={"Authorization": "Bearer x"}, timeout=5).status_code == 400
    assert requests.get(url, timeout=5).content == b"zip"
    expired = stub.add_artifact(MERGE_BASE, b"zip", expired=True)
    client_response = requests.get(
        f"{stub.api_url}/repos/{REPO}/actions/artifacts/{expired['id']}/zip",
        headers={"Authorization": f"Bearer {TOKEN}"}, allow_redirects=False, timeout=5,
    )
    assert client_response.status_code == 410


def test_artifact_skips_expired_and_pull_request_runs(stub, good_results):
    data = zipped({"adk-eval-results.json": good_results.read_bytes()})
    stub.add_artifact(GRANDPARENT, data, created_at="2025-12-20T00:00:00Z")
    chosen = stub.add_artifact(PARENT, data, created_at="2026-01-01T00:00:00Z")
    stub.add_artifact(MERGE_BASE, data, expired=True, created_at="2026-01-02T00:00:00Z")
    stub.add_artifact(MERGE_BASE, data, event="pull_request", created_at="2026-01-02T02:00:00Z")
    stub.add_artifact(MERGE_BASE, data, fork=True, created_at="2026-01-02T03:00:00Z")
    stub.add_artifact(MERGE_BASE, data, name="other-name", created_at="2026-01-02T04:00:00Z")
    head = head_of(good_results)
    baseline, note = resolve(artifact_options(stub), head, now=NOW)
    assert baseline is not None and baseline.suites[0].name == "travel_agent"
    run_url = stub.runs[chosen["workflow_run"]["id"]]["html_url"]
    assert note.startswith(f"artifact adk-eval-results, commit {PARENT[:12]} (1 first-parent")
    assert run_url in note and "merge-base with main" in note
    # The blob host got the download, without the token.
    assert stub.blob.seen_headers and all(
        "Authorization" not in h and TOKEN not in json.dumps(h) for h in stub.blob.seen_headers
    )
    zips = [r for r in stub.requests("GET") if r.path.endswith("/zip")]
    assert [r.path.split("/")[-2] for r in zips] == [str(chosen["id"])]
    assert all(r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in zips)


def test_artifact_of_the_merge_base_wins_and_pages_are_followed(stub, good_results):
    data = zipped({"adk-eval-results.json": good_results.read_bytes()})
    stub.add_artifact(MERGE_BASE, data, created_at="2025-12-01T00:00:00Z")
    for index in range(120):  # newer artifacts of unrelated commits push it to page 2
        stub.add_artifact(f"{index:040x}", b"", created_at="2026-01-02T00:00:00Z")
    baseline, note = resolve(artifact_options(stub), head_of(good_results),
                                      now=NOW)
    assert baseline is not None
    assert f"commit {MERGE_BASE[:12]} (merge-base with main)" in note
    pages = [r for r in stub.requests("GET") if r.path.endswith("/actions/artifacts")]
    assert len(pages) == 2


def test_no_artifact_is_no_baseline_with_the_reason(stub, good_results):
    stub.add_artifact(MERGE_BASE, b"", expired=True)
    baseline, note = resolve(artifact_options(stub), head_of(good_results))
    assert baseline is None
    assert "no artifact adk-eval-results" in note and MERGE_BASE[:12] in note


def test_permission_error_says_actions_read(stub, good_results):
    stub.add_artifact(MERGE_BASE, zipped({"adk-eval-results.json": b"{}"}))
    stub.fail_next(403, message="Resource not accessible by integration", path=r"/zip$")
    baseline, note = resolve(artifact_options(stub), head_of(good_results))
    assert baseline is None and "actions: read" in note


@pytest.mark.parametrize("content, expected", [
    ("corrupt", "not a valid zip"),
    ("schema", "schema_version 99"),
    ("suites", "are not the head's"),
    ("empty", "holds no adk-eval-results.json"),
])
def test_unreadable_artifact_is_no_baseline(stub, good_results, content, expected, console):
    good = json.loads(good_results.read_text())
    if content == "corrupt":
        data = b"PK\x03\x04 this is not a zip"
    elif content == "schema":
        data = zipped({"adk-eval-results.json": json.dumps({**good, "schema_version": 99})})
    elif content == "suites":
        # Another suite: another name and agent (a renamed suite of the same agent and
        # eval sets is the head's own: results.identity).
        renamed = {**good, "suites": [{**s, "name": "other_agent", "agent": "other_agent"}
                                      for s in good["suites"]]}
        data = zipped({"adk-eval-results.json": json.dumps(renamed)})
    else:
        data = zipped({"notes.txt": b"hello"})
    stub.add_artifact(MERGE_BASE, data)
    baseline, note = resolve(artifact_options(stub), head_of(good_results))
    assert baseline is None and expected in note
    assert any(line.startswith("warning: baseline not used") for line in console.lines)


def test_only_the_results_member_of_an_artifact_is_read(good_results, monkeypatch):
    """adk-eval-results.json (any folder), else the one other JSON member bar the PR
    context; several others are refused unread, as a member over the limit is."""
    good = good_results.read_bytes()
    many = zipped({f"part{i}.json": b"[" * 1000 for i in range(40)})
    named = zipped({"junk.json": b"[", "out/adk-eval-results.json": good,
                    "adk-eval-pr.json": b"{}"})
    renamed = zipped({"results.json": good, "adk-eval-pr.json": b"{}"})
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def counting(self, member, *args, **kwargs):
        opened.append(getattr(member, "filename", member))
        return real_open(self, member, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", counting)
    with pytest.raises(BaselineUnreadable, match=(
            r"holds no adk-eval-results\.json \(it holds 40 other JSON files\)")):
        results_from_zip(many)
    assert opened == []
    assert results_from_zip(named).suites and opened == ["out/adk-eval-results.json"]
    assert results_from_zip(renamed).suites and opened[-1] == "results.json"
    monkeypatch.setattr(artifact_module, "MAX_RESULTS_BYTES", len(good) - 1)
    with pytest.raises(BaselineUnreadable, match=r"results\.json in the artifact is too large"):
        results_from_zip(renamed)
    assert opened[-1] == "results.json" and len(opened) == 2


def test_reading_an_artifact_stops_at_the_lookups_deadline(good_results):
    data = zipped({"adk-eval-results.json": good_results.read_bytes()})
    with pytest.raises(BaselineUnreadable, match="outlasted the baseline lookup's time"):
        results_from_zip(data, deadline=time.monotonic() - 1)


def test_artifact_end_to_end_comment_names_the_baseline(stub, good_results, tmp_path):
    stub.add_artifact(MERGE_BASE, zipped({"adk-eval-results.json": good_results.read_bytes()}))
    os.chdir(EXAMPLES)
    request = request_for(baseline="artifact", github_token=TOKEN,
                          config=Path("regressed.adk-eval.yaml"),
                          results_path=tmp_path / "head.json")
    outcome = run_pipeline(request, PublishTarget.from_settings(
        request.settings, RunnerEnv(event=event_for(stub)), request.workdir, ()))
    assert outcome.exit_code == 1  # the regressed agent fails its gate against the baseline
    comment = outcome.comment_markdown
    # The trust line: the commit linked, its run, its age, its distance from the merge-base.
    assert (f"Baseline: artifact adk-eval-results · commit [`{MERGE_BASE[:7]}`]"
            f"({stub.base_url}/{REPO}/commit/{MERGE_BASE}) · [recorded run](") in comment
    assert "the merge-base with main itself" in comment
    assert "/actions/runs/" in comment
    assert outcome.comparison.baseline_note.startswith(
        "artifact adk-eval-results, commit " + MERGE_BASE[:12])
    assert outcome.comparison and outcome.comparison.has_baseline


# --------------------------------------------------------------------------- auto, none, record


def test_auto_without_github_and_rerun_off_is_none(good_results):
    baseline, note = resolve(BaselineRequest(), head_of(good_results))
    assert baseline is None
    assert "no GitHub context" in note and "baseline_rerun is off" in note


def test_auto_joins_its_reasons_without_a_stray_full_stop(stub, good_results):
    # GitHub's 404 message is a sentence of its own; joined with the next reason it reads
    # "… private resources); baseline_rerun is off", never "….;".
    stub.fail_next(404, message="Not Found", path=r"/artifacts")
    baseline, note = resolve(BaselineRequest(github=context_for(stub)), head_of(good_results))
    assert baseline is None
    assert "(GitHub answers 404 rather than 403 for private resources); baseline_rerun is off" \
        in note
    assert ".;" not in note


def test_auto_prefers_the_artifact(stub, good_results):
    stub.add_artifact(MERGE_BASE, zipped({"adk-eval-results.json": good_results.read_bytes()}))
    options = BaselineRequest(github=context_for(stub), baseline_rerun=True)
    baseline, note = resolve(options, head_of(good_results))
    assert baseline is not None and note.startswith("artifact adk-eval-results")


def test_record_and_none(good_results):
    head = head_of(good_results)
    baseline, note = resolve(BaselineRequest(record=True), head)
    # The action writes the file; the workflow's actions/upload-artifact step uploads it.
    assert baseline is None and note == (
        "this run records the baseline: later pull requests compare with its results file "
        "once the workflow's upload step keeps it as artifact adk-eval-results")
    baseline, note = resolve(BaselineRequest(spec="none"), head)
    assert baseline is None and note == "baseline none requested"


def test_file_baseline_and_unreadable_file(good_results, tmp_path):
    head = head_of(good_results)
    baseline, note = resolve(BaselineRequest(spec=str(good_results)), head)
    assert baseline is not None and note.startswith("file adk-eval-results.json, commit")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="could not be read.*not valid JSON"):
        resolve(BaselineRequest(spec=broken), head)


def test_version_and_hash_mismatch_appear_in_the_comment(good_results, tmp_path):
    head = head_of(good_results)
    base = head.model_copy(deep=True)
    base.metadata.adk_version = "1.18.0"
    base.suites[0].eval_sets[0].content_hash = "sha256:" + "0" * 64
    base.suites[0].judge_models = {"rubric_based_final_response_quality_v1": "gemini-2.5-pro"}
    base.suites[0].num_runs = 3
    base_file = tmp_path / "base.json"
    save_results(base, base_file)
    baseline, note = resolve(BaselineRequest(spec=base_file), head)
    assert baseline is not None and "re-scored" not in note  # an eval set changed
    outcome = finish(head, baseline, note, request_for())
    comment = outcome.comment_markdown
    assert "not measured the same way" in comment
    assert "google-adk 1.18.0 (baseline)" in comment
    assert md(f"eval set `{base.suites[0].eval_sets[0].eval_set_id}` changed") in comment
    assert "judge models differ" in comment and md("num_runs 3 (baseline) vs 1") in comment


# --------------------------------------------------------------------------- rerun (git)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd, capture_output=True, text=True, check=True, env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def agent_repo(tmp_path_factory) -> dict[str, Any]:
    """A git repository: `main` holds the example agent; `pr` (branched from it) changes the
    agent's instruction ("Be blunt", which the fake Gemini API answers with the regressed
    replies of examples/gemini_fake.yaml); `main` then moves on with an unrelated commit,
    so the merge-base is not main's tip."""
    repo = tmp_path_factory.mktemp("repo") / "agents"
    shutil.copytree(
        EXAMPLES / "travel_agent", repo / "travel_agent",
        ignore=shutil.ignore_patterns("__pycache__", ".adk"),
    )
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base agent")
    merge_base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "pr")
    agent = repo / "travel_agent" / "agent.py"
    blunt = agent.read_text().replace(
        "instruction=INSTRUCTION,", 'instruction=INSTRUCTION + " Be blunt.",'
    )
    assert blunt != agent.read_text()
    agent.write_text(blunt)
    git(repo, "commit", "-qam", "agent: blunter replies")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("agents\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "docs")
    git(repo, "checkout", "-q", "pr")
    return {"path": repo, "merge_base": merge_base}


def _scores(comparison) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(metric) -> (baseline mean, head mean), timing metrics left out (wall clock)."""
    return {
        (m.suite, m.metric_name): (
            m.baseline.mean if m.baseline else None, m.head.mean if m.head else None,
        )
        for m in comparison.metrics if m.metric_name != "invocation_duration_v1"
    }


def shallow_clone(agent_repo: dict[str, Any], target: Path) -> Path:
    """A depth-1 clone of the PR branch, as a CI checkout or a laptop's quick clone has it:
    origin's HEAD names main, which is not fetched."""
    repo: Path = agent_repo["path"]
    git(target.parent, "clone", "-q", "--depth", "1", "--branch", "pr", repo.as_uri(),
        str(target))
    git(target, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    assert git(target, "rev-parse", "--is-shallow-repository") == "true"
    return target


def test_merge_base_is_not_the_base_branch_tip(agent_repo, console: Console):
    repo: Path = agent_repo["path"]
    found = find_merge_base(Git(repo), "main", "HEAD")
    assert found == agent_repo["merge_base"]
    assert found != git(repo, "rev-parse", "main")
    assert console.lines == []  # everything was local: nothing fetched


def test_shallow_clone_fetches_the_base_and_unshallows(
    agent_repo, tmp_path, monkeypatch, console: Console
):
    clone = shallow_clone(agent_repo, tmp_path / "clone")
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file")
    assert default_base_ref(Git(clone)) == "main"  # from origin/HEAD
    found = find_merge_base(Git(clone), "main", git(clone, "rev-parse", "HEAD"))
    assert found == agent_repo["merge_base"]
    assert console.lines == ["baseline: fetching main (unshallow)"]
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"


def test_rerun_command_repeats_the_head_run_inside_the_worktree(tmp_path):
    repo_root, worktree = tmp_path / "repo", tmp_path / "tree"
    request = BaselineRequest(
        spec="rerun", paths=[Path("travel_agent"), tmp_path / "elsewhere"],
        config=Path("adk-eval.yaml"), num_runs=3, parallelism=2,
    )
    command = rerun_command(request, repo_root, repo_root / "sub", worktree, tmp_path / "r.json")
    assert command[1:4] == ["-m", "adk_eval_action.cli", "run"]
    assert command[4:] == [
        str(worktree / "sub" / "travel_agent"), str(tmp_path / "elsewhere"),
        "--config", str(worktree / "sub" / "adk-eval.yaml"),
        "--baseline", "none", "--results-out", str(tmp_path / "r.json"),
        "--num-runs", "3", "--parallelism", "2",
    ]


@pytest.mark.slow  # the base evaluation runs in a child process, as the design requires
def test_rerun_on_a_shallow_clone_evaluates_the_merge_base_in_a_worktree(
    agent_repo, tmp_path, monkeypatch, console: Console
):
    """The laptop/CI command end to end: `run . --baseline rerun` in a depth-1 clone of the
    PR branch, the base branch from origin's HEAD."""
    repo: Path = agent_repo["path"]
    merge_base: str = agent_repo["merge_base"]
    clone = shallow_clone(agent_repo, tmp_path / "clone")
    for key, value in {**GIT_ENV, "GIT_ALLOW_PROTOCOL": "file"}.items():
        monkeypatch.setenv(key, value)
    os.chdir(clone)
    outcome = run_pipeline(request_for(
        baseline="rerun", results_path=tmp_path / "head.json",
    ))
    assert outcome.exit_code in (0, 1), "\n".join(console.lines)
    comparison = outcome.comparison
    assert comparison is not None and comparison.has_baseline
    assert comparison.baseline_metadata and comparison.baseline_metadata.git_sha == merge_base
    note = comparison.baseline_note
    assert note.startswith(f"re-run in a git worktree, commit {merge_base[:12]} (merge-base "
                           "with main)")
    assert "LLM calls of two evaluations" in note
    assert "Baseline: re-run in a git worktree, this check made the LLM calls of two " \
        f"evaluations · commit `{merge_base[:7]}`" in outcome.comment_markdown
    assert "baseline: fetching main (unshallow)" in console.lines
    # The worktree is gone and the checkout is untouched.
    assert git(clone, "worktree", "list").count("\n") == 0
    assert git(clone, "status", "--porcelain") == ""
    # The deltas equal those of evaluating each commit by hand.
    by_hand = tmp_path / "by-hand"
    git(repo, "worktree", "add", "-q", "--detach", str(by_hand), merge_base)
    try:
        with working_directory(by_hand):
            done = CliRunner().invoke(main, ["run", ".", "--baseline", "none", "--results-out",
                                             str(tmp_path / "base.json")],
                                      catch_exceptions=False)
        assert done.exit_code in (0, 1), done.output
    finally:
        git(repo, "worktree", "remove", "--force", str(by_hand))
    manual = compare(load_results(tmp_path / "head.json"), load_results(tmp_path / "base.json"),
                     "by hand")
    assert _scores(comparison) == _scores(manual)
    rows = {m.metric_name: m for m in comparison.metrics}
    assert rows["response_match_score"].delta is not None
    assert rows["response_match_score"].delta < 0  # "Celsius" dropped from the replies


def test_a_rerun_spends_only_what_is_left_of_the_runs_budget(good_results, tmp_path):
    """The head spent part of the budget: the base commit's run gets the rest as its own
    flags, and none is made once a limit is spent."""
    request = BaselineRequest(spec="rerun")
    left = RerunBudget(max_model_calls=7, max_tokens=1200, max_usd=0.25)
    command = rerun_command(request, tmp_path, tmp_path, tmp_path / "tree", tmp_path / "r.json",
                            left)
    assert command[-6:] == ["--max-model-calls", "7", "--max-tokens", "1200",
                            "--max-usd", "0.25"]
    os.chdir(tmp_path)
    baseline, note = resolve(request, head_of(good_results),
                             budget=RerunBudget(max_model_calls=0))
    assert baseline is None
    assert "the run's budget (max_model_calls) was spent on the head" in note


def test_rerun_outside_git_is_no_baseline(good_results, tmp_path):
    os.chdir(tmp_path)
    baseline, note = resolve(
        BaselineRequest(spec="rerun"), head_of(good_results)
    )
    assert baseline is None and "not inside a git checkout" in note


def test_a_child_trusts_every_directory_and_keeps_the_config_it_was_given(tmp_path):
    """git itself reads the entries (git-config(1) "ENVIRONMENT"): the one given before
    and ``safe.directory=*`` after it."""
    given = {**os.environ, **GIT_ENV, "GIT_CONFIG_COUNT": "1",
             "GIT_CONFIG_KEY_0": "adkeval.given", "GIT_CONFIG_VALUE_0": "yes"}
    env = trusting_environment(given)

    def read(key: str) -> str:
        return subprocess.run(["git", "config", "--get-all", key], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=True).stdout.strip()

    assert (read("adkeval.given"), read("safe.directory")) == ("yes", "*")


def test_the_artifact_download_counts_against_the_budget_and_is_capped(stub, monkeypatch):
    """The zip comes through the client's time budget and under MAX_ZIP_BYTES: a zip
    above the cap, or a budget already spent, is a download error (no baseline, said)."""
    data = bytes(range(256)) * 40  # 10,240 bytes
    artifact = stub.add_artifact(MERGE_BASE, data)
    client = GitHubClient(TOKEN, stub.api_url, budget=60.0)
    assert download_artifact_zip(client, REPO, artifact["id"]) == data
    assert 0 < client.budget.used < 60.0
    monkeypatch.setattr(artifact_module, "MAX_ZIP_BYTES", 10_000)
    with pytest.raises(ArtifactDownloadError, match="passed 10,000 bytes"):
        download_artifact_zip(client, REPO, artifact["id"])
    client.budget.spend(60.0)
    with pytest.raises(ArtifactDownloadError, match="budget .* is spent"):
        download_artifact_zip(client, REPO, artifact["id"])


def test_run_metadata_records_the_head_sha_and_its_branch(tmp_path: Path) -> None:
    """The results file's ``metadata.git_sha``/``git_ref`` (one git call): the commit and
    branch checked out; ``HEAD`` as the ref when detached; neither outside a repository."""
    from adk_eval_action.run.evaluation import run_metadata

    assert (run_metadata(tmp_path).git_sha, run_metadata(tmp_path).git_ref) == (None, None)
    (tmp_path / "a.txt").write_text("a")
    sha = commit_all(tmp_path)
    meta = run_metadata(tmp_path)
    assert (meta.git_sha, meta.git_ref) == (sha, "main")
    Git(tmp_path)("checkout", "-q", "--detach")
    meta = run_metadata(tmp_path)
    assert (meta.git_sha, meta.git_ref) == (sha, "HEAD")


@pytest.mark.parametrize("baseline, results_out", [
    ("adk-eval-results.json", None),  # the default results path
    ("base/link.json", "./base/../adk-eval-results.json"),  # a link, another spelling
])
def test_a_run_that_would_overwrite_its_baseline_is_refused(
    good_results, example_repo, gemini_api, baseline, results_out,
):
    """``run --baseline adk-eval-results.json`` (the default --results-out) would compare
    with the file and then overwrite it: refused (exit 2) before any model call, the file
    byte for byte as it was, the comment saying to pass another --results-out."""
    shutil.copy(good_results, example_repo / "adk-eval-results.json")
    (example_repo / "base").mkdir()
    (example_repo / "base" / "link.json").symlink_to(example_repo / "adk-eval-results.json")
    before = (example_repo / "adk-eval-results.json").read_bytes()
    calls = len(gemini_api.calls)
    flags = ["--results-out", results_out] if results_out else []
    result = CliRunner().invoke(main, ["run", "travel_agent", "--baseline", baseline, *flags,
                                       "--comment-out", "c.md"])
    assert result.exit_code == 2, result.output
    said = (f"the results file would overwrite the baseline file it compares with "
            f"(--baseline {baseline}); pass another --results-out")
    assert said in result.output
    assert (example_repo / "adk-eval-results.json").read_bytes() == before
    assert len(gemini_api.calls) == calls
    comment = (example_repo / "c.md").read_text()
    assert "ADK eval incomplete** (configuration error): nothing was evaluated" in comment
    assert md(said) in comment and "recorded in" not in comment


def test_a_results_file_beside_the_baseline_is_written(good_results, tmp_path):
    """The check compares the files, not their names: ``--results-out head.json`` beside
    a baseline of the same folder runs (and --baseline none never refuses)."""
    from adk_eval_action.baseline.request import refuse_overwriting_baseline

    shutil.copy(good_results, tmp_path / "adk-eval-results.json")
    for baseline, results in [("adk-eval-results.json", "head.json"),
                              ("none", "adk-eval-results.json")]:
        request = request_for(baseline=baseline, results_path=Path(results))
        request = request.model_copy(update={"workdir": tmp_path})
        refuse_overwriting_baseline(request)  # does not raise

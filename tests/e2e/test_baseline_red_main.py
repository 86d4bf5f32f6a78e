"""A recording run is a baseline whatever its gate said (issue 11, item 6): the artifact
lookup reads whether the results file is complete, not the conclusion of the run that
uploaded it. Real runs of the example agents; GitHub is the artifact stand-in."""

from __future__ import annotations

import asyncio
import io
import os
import zipfile
from pathlib import Path

import pytest

from adk_eval_action.baseline.models import BaselineContext, BaselineRequest
from adk_eval_action.baseline.resolve import resolve_baseline
from adk_eval_action.results.io import load_results
from adk_eval_action.run.pipeline import run_pipeline
from conftest import copy_examples, load_json, request_for
from support.artifact_stub import ArtifactStub, Token

REPO, TOKEN = "octo/agents", "ghs_artifacttoken"
MERGE_BASE, PARENT, HEAD_SHA = "a" * 40, "b" * 40, "d" * 40


def _record(tmp: Path, **options) -> tuple[int, Path]:
    """Runs the pipeline as a recording run on the default branch would; returns its exit
    code and results file."""
    out = tmp / "adk-eval-results.json"
    outcome = run_pipeline(request_for(baseline="none", record=True, results_path=out, **options))
    return outcome.exit_code, out


def _copy_of_examples(tmp: Path) -> Path:
    """A fresh copy of examples/ as the current folder. Absolute paths below: agent folders
    of other tests' copies may be on sys.path already, and must not be imported instead."""
    repo = copy_examples(tmp / "repo")
    os.chdir(repo)
    return repo


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, good_run) -> dict[str, Path]:
    """Results of three runs: green (``good_run``: the good agent, exit 0), red (a
    recording run of the regressed agent, whose gate fails: exit 1) and incomplete (a
    recording run whose agent does not import: exit 2)."""
    files = {"green": good_run.results}
    cwd = Path.cwd()
    repo = _copy_of_examples(tmp_path_factory.mktemp("examples"))
    code, files["red"] = _record(
        tmp_path_factory.mktemp("red"), config=repo / "regressed.adk-eval.yaml"
    )
    assert code == 1
    broken = _copy_of_examples(tmp_path_factory.mktemp("broken"))
    (broken / "travel_agent_regressed/agent.py").write_text("import not_a_module_anywhere\n")
    code, files["incomplete"] = _record(
        tmp_path_factory.mktemp("incomplete"), config=broken / "regressed.adk-eval.yaml"
    )
    assert code == 2
    os.chdir(cwd)
    return files


def _zip(results: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("adk-eval-results.json", results.read_bytes())
    return buffer.getvalue()


@pytest.fixture
def stub():
    with ArtifactStub(tokens={TOKEN: Token("github-actions[bot]", installation=True)}) as server:
        server.add_commits([MERGE_BASE, PARENT])
        server.set_merge_base("main", HEAD_SHA, MERGE_BASE)
        yield server


def _request(stub: ArtifactStub) -> BaselineRequest:
    return BaselineRequest(spec="artifact", github=BaselineContext(
        repository=REPO, api_url=stub.api_url, server_url=stub.base_url, token=TOKEN,
        head_sha=HEAD_SHA, base_ref="main", event_name="pull_request",
    ))


def test_results_files_say_whether_they_are_complete(recorded):
    assert load_json(recorded["green"])["complete"] is True
    assert load_json(recorded["red"])["complete"] is True  # its gate failed; nothing missing
    assert load_json(recorded["incomplete"])["complete"] is False


def test_the_artifact_of_a_red_main_commit_is_found_and_used(stub, recorded, console):
    stub.add_artifact(PARENT, _zip(recorded["green"]), created_at="2026-01-01T00:00:00Z")
    red = stub.add_artifact(MERGE_BASE, _zip(recorded["red"]), conclusion="failure",
                            created_at="2026-01-02T00:00:00Z")
    head = load_results(recorded["green"])
    baseline, note = asyncio.run(resolve_baseline(_request(stub), head))
    assert baseline is not None
    assert f"commit {MERGE_BASE[:12]} (merge-base with main)" in note
    assert baseline.suites == load_results(recorded["red"]).suites  # the red run's scores
    assert any(f"artifact {red['id']}" in line and "concluded failure" in line
               for line in console.lines)


def test_an_artifact_without_a_complete_suite_is_skipped_for_an_older_one(stub, recorded, console):
    stub.add_artifact(PARENT, _zip(recorded["red"]), conclusion="failure",
                      created_at="2026-01-01T00:00:00Z")
    skipped = stub.add_artifact(MERGE_BASE, _zip(recorded["incomplete"]), conclusion="failure",
                                created_at="2026-01-02T00:00:00Z")
    baseline, note = asyncio.run(resolve_baseline(_request(stub), load_results(recorded["green"])))
    assert baseline is not None and f"commit {PARENT[:12]}" in note
    assert any(f"artifact {skipped['id']}" in line and "no suite of its results is complete"
               in line for line in console.lines)


def test_only_artifacts_without_a_complete_suite_is_no_baseline_saying_why(stub, recorded):
    stub.add_artifact(MERGE_BASE, _zip(recorded["incomplete"]), conclusion="success")
    baseline, note = asyncio.run(resolve_baseline(_request(stub), load_results(recorded["green"])))
    assert baseline is None
    assert "1 artifact(s) were skipped because no suite of their results is complete" in note

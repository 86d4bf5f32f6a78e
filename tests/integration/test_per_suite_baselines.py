"""Per-suite completeness (docs/baselines.md, "Per-suite completeness"): a baseline whose
run was incomplete for some suites is still the baseline of every suite that completed,
through a baseline file and through GitHub's artifact API (the REST stand-in); the comment
names each suite left without a baseline and why, one line each; a recording run writes
the history of the suites that completed and names those it left out. Hand-built results
files (tests/support/results_builder.py): no agent needs to run."""

from __future__ import annotations

import asyncio
import io
import zipfile
from pathlib import Path

import pytest

from adk_eval_action.analysis.verdict import HistoryInput
from adk_eval_action.baseline.models import BaselineContext, BaselineRequest
from adk_eval_action.baseline.resolve import resolve_baseline
from adk_eval_action.results.history_file_io import load_history
from adk_eval_action.results.io import save_results
from adk_eval_action.results.model import CaseStatus, ErrorRecord, RunRecord, RunResults
from adk_eval_action.run.branch_history import record_history
from conftest import load_json, request_for
from support.artifact_stub import ArtifactStub, Token
from support.results_builder import metric, results

SELENIUM = "No module named 'selenium'"
REPO, TOKEN = "octo/agents", "ghs_persuitetoken01"
MERGE_BASE, PARENT, HEAD_SHA = "a" * 40, "b" * 40, "d" * 40


def _suites(scores: dict[str, float], sha: str = "0123456789abcdef0123") -> RunResults:
    """One suite per name, two eval cases each scoring ``score`` on response_match_score."""
    merged: RunResults | None = None
    for name, score in scores.items():
        one = results({f"{name}_1": [[metric("response_match_score", score)]],
                       f"{name}_2": [[metric("response_match_score", score)]]},
                      suite=name, sha=sha)
        if merged is None:
            merged = one
        else:
            merged.suites += one.suites
    assert merged is not None
    return merged


def _broken(run: RunResults, name: str) -> RunResults:
    """``run`` with suite ``name`` incomplete: its agent did not import (its runs errored,
    one case kept a partial score that must never be compared)."""
    suite = next(s for s in run.suites if s.name == name)
    first, second = suite.eval_sets[0].eval_cases
    second.runs = [RunRecord(run=1, status=CaseStatus.ERROR, error=SELENIUM, error_kind="agent")]
    suite.errors.append(ErrorRecord(kind="agent", message=SELENIUM, suite=name,
                                    file=f"{name}/agent.py", line=3))
    assert first.runs[0].metrics[0].score is not None
    return run


def test_a_baseline_file_incomplete_for_one_suite_is_the_baseline_of_the_others(
        tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    save_results(_broken(_suites({"alpha": 0.9, "brand_search": 0.9}), "brand_search"),
                 tmp_path / "base.json")
    save_results(_suites({"alpha": 0.3, "brand_search": 0.9, "gamma": 0.9}), tmp_path / "h.json")
    done = cli("compare", "h.json", "--baseline", "base.json", "--comment-out", "c.md",
               "--json-out", "c.json")
    assert done.exit_code == 1, done.output
    comment = (tmp_path / "c.md").read_text()
    assert "Baseline: file base.json, its run was incomplete for 1 of 2 suites (no baseline " \
        "for them)" in comment
    assert ("\n\n- No baseline for suite `brand_search`: its baseline run was incomplete "
            "(agent setup: No module named 'selenium').\n- No baseline for suite `gamma`: "
            "not in the baseline run (a new suite, or its agent or eval sets moved).\n\n"
            ) in comment
    comparison = load_json(tmp_path / "c.json")
    rows = {m["suite"]: m for m in comparison["metrics"]}
    # alpha is compared with its recorded scores; brand_search's partial score is not.
    assert rows["alpha"]["baseline"]["mean"] == 0.9 and rows["alpha"]["delta"] == pytest.approx(
        -0.6)
    assert rows["brand_search"]["baseline"] is None and rows["gamma"]["baseline"] is None
    assert [(g["suite"], g["why"]) for g in comparison["suites_without_baseline"]] == [
        ("brand_search", "incomplete"), ("gamma", "absent")]
    assert "alpha_1" in comment and "newly failing" in comment.lower()
    # brand_search's cases were in the baseline (which could not score them): not new.
    changes = {c["eval_id"]: c["change"] for c in comparison["cases"]}
    assert (changes["brand_search_1"], changes["brand_search_2"]) == ("unchanged", "unchanged")
    assert (changes["gamma_1"], changes["gamma_2"]) == ("new", "new")
    # Not also called a comparability problem: the lines above say it.
    assert "has no baseline" not in comment


def _zip(path: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("adk-eval-results.json", path.read_bytes())
    return buffer.getvalue()


@pytest.fixture
def stub():
    with ArtifactStub(tokens={TOKEN: Token("github-actions[bot]", installation=True)}) as server:
        server.add_commits([MERGE_BASE, PARENT])
        server.set_merge_base("main", HEAD_SHA, MERGE_BASE)
        yield server


def _request(stub: ArtifactStub) -> BaselineRequest:
    return BaselineRequest(spec="auto", github=BaselineContext(
        repository=REPO, api_url=stub.api_url, server_url=stub.base_url, token=TOKEN,
        head_sha=HEAD_SHA, base_ref="main", event_name="pull_request"))


def test_the_nearest_artifact_is_the_baseline_of_its_complete_suites(tmp_path, stub, console):
    older = _suites({"alpha": 0.5, "brand_search": 0.5}, sha=PARENT)
    save_results(older, tmp_path / "older.json")
    partial = _broken(_suites({"alpha": 0.9, "brand_search": 0.9}, sha=MERGE_BASE),
                      "brand_search")
    save_results(partial, tmp_path / "partial.json")
    stub.add_artifact(PARENT, _zip(tmp_path / "older.json"), created_at="2026-01-01T00:00:00Z")
    stub.add_artifact(MERGE_BASE, _zip(tmp_path / "partial.json"), conclusion="failure",
                      created_at="2026-01-02T00:00:00Z")
    head = _suites({"alpha": 0.9, "brand_search": 0.9})
    baseline, note = asyncio.run(resolve_baseline(_request(stub), head))
    assert baseline is not None
    assert f"commit {MERGE_BASE[:12]} (merge-base with main)" in note
    assert "its run was incomplete for 1 of 2 suites (no baseline for them)" in note
    alpha, brand = baseline.suites
    assert alpha == partial.suites[0]  # the merge-base's own scores, not the older run's
    assert brand.eval_sets == [] and brand.errors[0].message == SELENIUM
    assert any("no baseline for the suites its run left incomplete: brand_search (agent: "
               "No module named 'selenium')" in line for line in console.lines)


def test_an_artifact_without_any_complete_suite_is_skipped(tmp_path, stub, console):
    save_results(_suites({"alpha": 0.5}, sha=PARENT), tmp_path / "older.json")
    stopped = _broken(_suites({"alpha": 0.9}, sha=MERGE_BASE), "alpha")
    save_results(stopped, tmp_path / "stopped.json")
    stub.add_artifact(PARENT, _zip(tmp_path / "older.json"), created_at="2026-01-01T00:00:00Z")
    skipped = stub.add_artifact(MERGE_BASE, _zip(tmp_path / "stopped.json"),
                                created_at="2026-01-02T00:00:00Z")
    baseline, note = asyncio.run(resolve_baseline(_request(stub), _suites({"alpha": 0.9})))
    assert baseline is not None and f"commit {PARENT[:12]}" in note
    assert any(f"artifact {skipped['id']}" in line and "no suite of its results is complete"
               in line for line in console.lines)


def test_a_recording_run_writes_the_history_of_its_complete_suites(tmp_path, monkeypatch,
                                                                     console):
    monkeypatch.chdir(tmp_path)
    run = _broken(_suites({"alpha": 0.9, "brand_search": 0.9, "gamma": 0.7}), "brand_search")
    out = tmp_path / "adk-eval-history.json"
    assert record_history(run, request_for(), HistoryInput(), out, None, None) == out
    (recorded,) = load_history(out).runs
    assert [s.name for s in recorded.suites] == ["alpha", "gamma"]
    assert [m.mean for s in recorded.suites for m in s.metrics] == [0.9, 0.7]
    assert any("recorded without the suites it left incomplete: brand_search (agent: No "
               "module named 'selenium')" in line for line in console.lines)

    # The next run, with nothing complete, carries that history forward unchanged.
    stopped = run.model_copy(update={"errors": [ErrorRecord(kind="internal", message="bug")]})
    carried = HistoryInput(history=load_history(out))
    assert record_history(stopped, request_for(), carried, out, None, None) == out
    assert load_history(out).runs == [recorded]
    assert any("carried forward without this run (no suite of it is complete)" in line
               for line in console.lines)


def test_a_suite_failing_as_on_the_baseline_does_not_decide_the_check(tmp_path, monkeypatch,
                                                                       cli):
    """The base branch's own breakage: the head fails the same way (same errors), so the
    other suites decide; a head failing otherwise stays incomplete (exit 2)."""
    monkeypatch.chdir(tmp_path)
    save_results(_broken(_suites({"alpha": 0.9, "brand_search": 0.9}), "brand_search"),
                 tmp_path / "base.json")
    save_results(_broken(_suites({"alpha": 0.3, "brand_search": 0.9}), "brand_search"),
                 tmp_path / "same.json")
    done = cli("compare", "same.json", "--baseline", "base.json", "--comment-out", "c.md")
    assert done.exit_code == 1, done.output  # alpha's failure decides, not brand_search
    comment = (tmp_path / "c.md").read_text()
    assert "❌ **ADK eval failed**: 0/2 eval cases passed" in comment  # brand_search apart
    assert "(agent setup: No module named 'selenium'); this run fails the same way: the " \
        "base branch's own breakage, which does not decide this check." in comment
    # A pass beside a suite still broken says so in the headline: never a plain ✅.
    save_results(_broken(_suites({"alpha": 0.9, "brand_search": 0.9}), "brand_search"),
                 tmp_path / "fine.json")
    done = cli("compare", "fine.json", "--baseline", "base.json", "--comment-out", "f.md")
    assert done.exit_code == 0, done.output
    assert ("gate PASSED with warnings: 2/2 eval cases passed; suite `brand_search` could "
            "not be evaluated, as on the base branch (not decided here)") in done.output
    assert ("⚠️ **ADK eval passed with warnings**: 2/2 eval cases passed; suite "
            "`brand_search` could not be evaluated, as on the base branch (not decided "
            "here)") in (tmp_path / "f.md").read_text()
    other = _broken(_suites({"alpha": 0.9, "brand_search": 0.9}), "brand_search")
    other.suites[1].errors[0].message = "No module named 'playwright'"
    save_results(other, tmp_path / "other.json")
    done = cli("compare", "other.json", "--baseline", "base.json", "--comment-out", "o.md")
    assert done.exit_code == 2, done.output
    assert "⚠️ **ADK eval incomplete** (agent setup)" in (tmp_path / "o.md").read_text()

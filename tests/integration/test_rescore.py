"""Re-scoring a baseline's recorded invocations under the head's eval config, with real
google-adk evaluators and the stand-in judge (no agent run)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from functools import partial
from pathlib import Path

import pytest

from adk_eval_action.adk.evaluate.rescore import rescore_baseline, rescore_reason
from adk_eval_action.baseline.models import BaselineRequest
from adk_eval_action.baseline.resolve import resolve_baseline
from adk_eval_action.results.io import load_results
from adk_eval_action.run.evaluation import find_suites
from adk_eval_action.run.pipeline import run_pipeline
from conftest import SharedRun, request_for


def resolve(*args, **kwargs):
    """The baseline stage's resolve_baseline, run on an event loop of its own."""
    return asyncio.run(resolve_baseline(*args, **kwargs))

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NEW_RUBRIC = {
    "rubric_id": "says_degrees",
    "rubric_content": {"text_property": 'The final answer mentions "degrees".'},
    "type": "FINAL_RESPONSE_QUALITY",
}


pytestmark = pytest.mark.usefixtures("keep_cwd")  # tests here chdir into example folders


def copy_agent(target: Path) -> Path:
    """A copy of the example agent in its own folder (same suite name, same eval sets)."""
    shutil.copytree(
        EXAMPLES / "travel_agent", target / "travel_agent",
        ignore=shutil.ignore_patterns("__pycache__", ".adk"),
    )
    return target


def edit_config(folder: Path, edit) -> None:
    path = folder / "travel_agent" / "eval" / "test_config.json"
    config = json.loads(path.read_text())
    edit(config)
    path.write_text(json.dumps(config, indent=2))


@pytest.fixture
def baseline_file(good_run: SharedRun) -> Path:
    """Results of the example agent under the example's own eval config (the session's
    shared run, read-only)."""
    assert good_run.exit_code == 0, good_run.output
    return good_run.results


def add_rubric_and_metric(config: dict) -> None:
    """A new rubric, a new LLM-judged metric and a stricter threshold: config-only changes."""
    rubric_metric = config["criteria"]["rubric_based_final_response_quality_v1"]
    rubric_metric["rubrics"].append(NEW_RUBRIC)
    config["criteria"]["final_response_match_v2"] = {
        "threshold": 0.5,
        "judge_model_options": {"judge_model": "stand-in-judge", "num_samples": 1},
    }
    config["criteria"]["response_match_score"] = 0.75


def test_new_rubric_and_metric_are_rescored_not_missing(baseline_file, tmp_path, console):
    head_folder = copy_agent(tmp_path)
    edit_config(head_folder, add_rubric_and_metric)
    os.chdir(head_folder)
    outcome = run_pipeline(request_for(baseline=str(baseline_file),
                                      results_path=tmp_path / "head.json"))
    comparison = outcome.comparison
    assert comparison is not None and comparison.has_baseline
    assert "re-scored under the head's eval config (travel_agent), no agent run" in (
        comparison.baseline_note
    )
    assert "re-scored under the head" in outcome.comment_markdown
    assert any("re-scoring suite travel_agent" in line for line in console.lines)
    rubric = next(r for r in comparison.rubrics if r.rubric_id == "says_degrees")
    assert rubric.baseline_mean is not None and rubric.baseline_n > 0
    assert rubric.baseline_mean == rubric.head_mean  # same agent, same judge rules
    metrics = {m.metric_name: m for m in comparison.metrics}
    new_metric = metrics["final_response_match_v2"]
    assert new_metric.only_in is None and new_metric.baseline is not None
    assert new_metric.baseline.mean is not None and new_metric.delta == 0
    # The stricter threshold applies to the re-scored baseline too.
    assert metrics["response_match_score"].baseline.threshold == 0.75
    for row in comparison.metrics:
        if not row.informational:
            assert row.delta == 0, row.metric_name
    # Scored under one config, so the eval config is no longer a comparability note.
    assert not any("eval config changed" in note for note in comparison.comparability)
    # The re-scoring judges' calls are the run's too (retried, counted, budgeted), outside
    # any case run of the head.
    head = load_results(tmp_path / "head.json")
    counts = head.metadata.model_calls
    in_cases = sum(u.calls for s in head.suites for e in s.eval_sets for c in e.eval_cases
                   for r in c.runs for u in r.usage or [])
    judged = sum(u.calls for u in counts.usage if u.role == "judge") if counts else 0
    assert counts is not None and counts.calls == sum(u.calls for u in counts.usage)
    assert counts.calls > in_cases and judged > 0
    # The baseline file itself is unchanged.
    recorded = load_results(baseline_file)
    names = {m.metric_name for s in recorded.suites for e in s.eval_sets for c in e.eval_cases
             for r in c.runs for m in r.metrics}
    assert "final_response_match_v2" not in names


def test_changed_eval_set_is_not_rescored(baseline_file, tmp_path):
    head_folder = copy_agent(tmp_path)
    edit_config(head_folder, add_rubric_and_metric)
    legacy = head_folder / "travel_agent" / "eval" / "legacy_weather.test.json"
    legacy.write_text(legacy.read_text() + "\n")  # same cases, different bytes
    os.chdir(head_folder)
    outcome = run_pipeline(request_for(baseline=str(baseline_file),
                                      results_path=tmp_path / "head.json"))
    comparison = outcome.comparison
    assert comparison is not None and "re-scored" not in comparison.baseline_note
    assert any("eval config changed" in n for n in comparison.comparability)
    assert any("legacy_weather` changed" in n for n in comparison.comparability)
    metrics = {m.metric_name: m for m in comparison.metrics}
    assert metrics["final_response_match_v2"].only_in == "head"  # listed, not compared


def test_rescore_reason(baseline_file):
    base = load_results(baseline_file).suites[0]
    assert rescore_reason(base, base) is None  # nothing changed
    head = base.model_copy(deep=True)
    head.eval_config_hash = "sha256:other"
    assert rescore_reason(base, head) is not None
    head.eval_sets[0].content_hash = "sha256:other"
    assert rescore_reason(base, head) is None  # an eval set changed too
    bare = base.model_copy(deep=True)
    for eval_set in bare.eval_sets:
        for case in eval_set.eval_cases:
            for run in case.runs:
                run.actual_invocations = None
    head = base.model_copy(deep=True)
    head.eval_config_hash = "sha256:other"
    assert rescore_reason(bare, head) is None  # nothing recorded to re-score


def test_rescore_keeps_unrecorded_runs_and_other_suites(baseline_file, tmp_path):
    """A run without recorded invocations stays as recorded; another suite is untouched."""
    base = load_results(baseline_file)
    case = base.suites[0].eval_sets[0].eval_cases[0]
    case.runs[0].actual_invocations = None
    extra = base.suites[0].model_copy(deep=True)
    extra.name = "another_suite"
    base.suites.append(extra)
    path = tmp_path / "base.json"
    path.write_text(base.model_dump_json())
    head_folder = copy_agent(tmp_path / "head")
    edit_config(head_folder, add_rubric_and_metric)
    os.chdir(head_folder)
    run_pipeline(request_for(baseline="none", results_path=tmp_path / "h.json"))
    head = load_results(tmp_path / "h.json")
    suites = find_suites(request_for())
    rescore = partial(rescore_baseline, suites=suites, parallelism=4,
                      repo_root=Path.cwd())
    baseline, note = resolve(BaselineRequest(spec=path), head, rescore=rescore)
    assert baseline is not None and "re-scored" in note

    def names(run) -> set[str]:
        return {m.metric_name for m in run.metrics}

    cases = [c for e in baseline.suites[0].eval_sets for c in e.eval_cases]
    assert "final_response_match_v2" not in names(cases[0].runs[0])
    assert len(cases) > 1
    assert all("final_response_match_v2" in names(r) for c in cases[1:] for r in c.runs)
    other = baseline.suites[1].eval_sets[0].eval_cases[0]
    assert all("final_response_match_v2" not in names(r) for r in other.runs)
    assert baseline.suites[0].eval_config_hash == head.suites[0].eval_config_hash

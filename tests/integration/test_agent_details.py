"""Each agent's details (instructions, tool declarations) once per suite in the results file
(results ``schema_version`` 2, :mod:`adk_eval_action.results.agentdetails`), on the
help-desk fixture (tests/fixtures/helpdesk: a 2 KB instruction, three tools, 2 eval cases x
6 invocations) run with the stand-in models through real google-adk.

``results-v1.json`` beside the fixture is what adk-eval-action 1.0.0 wrote for it (results
``schema_version`` 1, whitespace removed): the details in every invocation, and judged by
the plain stand-in judge. The judge of the fixture's eval config,
``stand-in-judge-tools``, answers ``rubric_based_tool_use_quality_v1`` from the tool
declarations ADK puts in its prompt (``<available_tools>``, from the invocation's
``app_details``), so a re-score that lost them scores differently.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.evaluate.rescore import rescore_suite
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import RunResults, SuiteRecord
from adk_eval_action.results.shards import merge_parts
from adk_eval_action.results.writer import merge_runs
from adk_eval_action.run.evaluation import find_suites
from conftest import SharedRun, request_for, shared_run, working_directory

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "helpdesk"
V1_FILE = FIXTURE / "results-v1.json"
TOOL_USE = "rubric_based_tool_use_quality_v1"
INVOCATIONS = 12  # 2 eval cases x 6 turns, one run


def fixture_copy(root: Path) -> Path:
    shutil.copytree(FIXTURE / "helpdesk", root / "helpdesk",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    return root


def agent_instruction() -> str:
    """The fixture agent's instruction, read from its module (not from any results)."""
    spec = importlib.util.spec_from_file_location("helpdesk_agent_for_test",
                                                  FIXTURE / "helpdesk" / "agent.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.root_agent.instruction


@pytest.fixture(scope="module")
def head_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    root = fixture_copy(tmp_path_factory.mktemp("helpdesk"))
    run = shared_run(root, "helpdesk", results="head.json")
    assert run.exit_code == 0, run.output
    return run


def invocations(suite: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for e in suite["eval_sets"] for c in e["eval_cases"] for r in c["runs"]
            for i in r["actual_invocations"]]


def tool_use_scores(suite: SuiteRecord) -> list[float | None]:
    return [m.score for e in suite.eval_sets for c in e.eval_cases for r in c.runs
            for m in r.metrics if m.metric_name == TOOL_USE]


def test_each_agents_details_are_written_once_per_suite(head_run: SharedRun):
    text = head_run.results.read_text(encoding="utf-8")
    written = json.loads(text)
    assert written["schema_version"] == 2
    [suite] = written["suites"]
    [(key, details)] = suite["agent_details"].items()
    instruction = agent_instruction()
    # ADK's AppDetails: the agent's instruction, then the sentence naming the agent.
    assert details["name"] == "helpdesk" and details["instructions"].startswith(instruction)
    [tools] = details["tool_declarations"]
    assert [f["name"] for f in tools["function_declarations"]] == [
        "lookup_order", "refund_order", "opening_hours"]
    assert [i["app_details"] for i in invocations(suite)] == (
        [{"agent_details": {"helpdesk": key}}] * INVOCATIONS)
    # The instruction's last policy is in the file once; schema 1 had it in every invocation.
    last_policy = instruction.splitlines()[-1]
    assert text.count(json.dumps(last_policy)[1:-1]) == 1
    assert V1_FILE.read_text(encoding="utf-8").count(json.dumps(last_policy)[1:-1]) == (
        INVOCATIONS)


def test_a_schema_1_file_still_loads_with_every_invocation_as_it_recorded_it():
    raw = json.loads(V1_FILE.read_text(encoding="utf-8"))
    assert raw["schema_version"] == 1 and "agent_details" not in raw["suites"][0]
    loaded = load_results(V1_FILE)
    assert loaded.schema_version == 2
    [suite] = loaded.suites
    assert len(suite.agent_details) == 1
    from adk_eval_action.results.agentdetails import expanded

    recorded = invocations(raw["suites"][0])
    shared = [i for e in suite.eval_sets for c in e.eval_cases for r in c.runs
              for i in r.actual_invocations or []]
    assert len(recorded) == len(shared) == INVOCATIONS
    assert [expanded(i, suite.agent_details) for i in shared] == recorded
    assert [len(r.metrics) for e in suite.eval_sets for c in e.eval_cases for r in c.runs] == [
        len(r["metrics"]) for e in raw["suites"][0]["eval_sets"] for c in e["eval_cases"]
        for r in c["runs"]]


def test_compare_with_a_schema_1_baseline(head_run: SharedRun, cli, keep_cwd):
    """The same agent's trajectory against the schema 1 file: no change."""
    with working_directory(head_run.root):
        result = cli("compare", "head.json", "--baseline", str(V1_FILE), "--fail-on", "none")
    assert result.exit_code == 0, result.output
    assert any(line.split()[:2] == ["helpdesk", "tool_trajectory_avg_score"]
               and line.split()[2:5] == ["1.000", "1.000", "+0.000"]
               for line in result.output.splitlines()), result.output


def _rescored(root: Path, baseline: SuiteRecord, head: SuiteRecord) -> SuiteRecord:
    with working_directory(root):
        [suite] = find_suites(request_for())
        return asyncio.run(rescore_suite(suite, head, baseline, parallelism=2, repo_root=root))


def _reads_v1_invocations() -> bool:
    """Whether the installed google-adk's ``Invocation`` reads the invocations google-adk
    2.13 recorded in the schema 1 file (1.x has no ``duration`` fields, and refuses
    unknown ones)."""
    from google.adk.evaluation.eval_case import Invocation
    from pydantic import ValidationError

    raw = json.loads(V1_FILE.read_text(encoding="utf-8"))
    try:
        Invocation.model_validate({**invocations(raw["suites"][0])[0], "rubrics": None})
    except ValidationError:
        return False
    return True


def test_rescoring_gives_the_judge_the_tool_declarations(head_run: SharedRun, keep_cwd):
    head = load_results(head_run.results).suites[0]
    # The run itself: both declared tools found in every judge prompt.
    assert tool_use_scores(head) == [1.0, 1.0]
    from_v2 = _rescored(head_run.root, load_results(head_run.results).suites[0], head)
    assert tool_use_scores(from_v2) == tool_use_scores(head)
    # Without the details the judge is told "Agent has no tools.": the check can fail.
    bare = load_results(head_run.results).suites[0]
    bare.agent_details.clear()
    for run in (r for e in bare.eval_sets for c in e.eval_cases for r in c.runs):
        for invocation in run.actual_invocations or []:
            invocation.pop("app_details")
    assert tool_use_scores(_rescored(head_run.root, bare, head)) == [0.0, 0.0]
    # A key the table does not hold is a run that could not be re-scored, said so.
    dangling = load_results(head_run.results).suites[0]
    dangling.agent_details.clear()
    errors = {r.error for e in _rescored(head_run.root, dangling, head).eval_sets
              for c in e.eval_cases for r in c.runs}
    assert len(errors) == 1 and next(iter(errors)).startswith(
        "recorded invocations could not be re-scored")


def test_a_schema_1_baseline_rescores_as_the_same_results_in_schema_2(
    head_run: SharedRun, keep_cwd,
):
    if not _reads_v1_invocations():
        pytest.skip("this google-adk cannot read the invocations google-adk 2.13 recorded")
    head = load_results(head_run.results).suites[0]
    # The schema 1 file, loaded as it was written (details inline) and as io brings it to 2.
    raw = RunResults.model_validate_json(V1_FILE.read_bytes()).suites[0]
    assert tool_use_scores(raw) != [1.0, 1.0]  # recorded by the plain stand-in judge
    from_v1_inline = _rescored(head_run.root, raw, head)
    from_v1 = _rescored(head_run.root, load_results(V1_FILE).suites[0], head)
    assert tool_use_scores(from_v1_inline) == tool_use_scores(from_v1) == (
        tool_use_scores(head)) == [1.0, 1.0]


def test_shards_and_adaptive_repeats_keep_the_details_their_runs_refer_to(
    tmp_path: Path, head_run: SharedRun,
):
    root = fixture_copy(tmp_path)
    parts = [shared_run(root, "helpdesk", "--shard", f"{k}/2", results=f"part{k}.json")
             for k in (1, 2)]
    loaded = [(p.results.name, load_results(p.results)) for p in parts]
    assert all(len(r.suites[0].agent_details) == 1 for _, r in loaded)
    merged = merge_parts(loaded).suites[0]
    keys = {i["app_details"]["agent_details"]["helpdesk"] for i in invocations(
        merged.model_dump())}
    assert keys and keys <= set(merged.agent_details)

    results = load_results(head_run.results)
    extra = results.suites[0].model_copy(deep=True)
    results.suites[0].agent_details.clear()
    assert merge_runs(results, extra) == 2
    keys = {i["app_details"]["agent_details"]["helpdesk"] for i in invocations(
        results.suites[0].model_dump())}
    assert keys <= set(results.suites[0].agent_details)

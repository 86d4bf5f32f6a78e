"""The default branch's history end to end through the real pipeline (google-adk's
LocalEvalService on a noisy stand-in agent): eight recording runs, each reading the
previous history and writing the next, then a pull request whose flaky eval case fails.
What each file and the comment must say is read back from the recorded results files
themselves (the independent source)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval_action.cli import main
from adk_eval_action.results.history_file_io import load_history
from adk_eval_action.run.pipeline import run_pipeline
from adk_eval_action.testing.noisy import SEED_VARIABLE
from conftest import commit_all, load_json, request_for

AGENT = '''"""A noisy stand-in agent: answers "yes" with the probability its question names."""
from google.adk.agents import LlmAgent

from adk_eval_action.testing.noisy import NoisyLlm

root_agent = LlmAgent(name="noisy_agent", model=NoisyLlm(model="noisy-1"), instruction="Answer.")
'''
QUESTIONS = {"steady_one": "Is water wet?", "steady_two": "Is the sky up?",
             "coin": "Heads (p=0.5)?"}
RECORDED = 8


def make_project(root: Path) -> None:
    """One agent folder with one eval set: two steady cases and one that is a coin flip."""
    agent = root / "noisy_agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(AGENT)
    cases = [{"eval_id": eval_id, "conversation": [{
        "invocation_id": f"{eval_id}-1",
        "user_content": {"parts": [{"text": question}], "role": "user"},
        "final_response": {"parts": [{"text": "yes"}], "role": "model"}}],
        "session_input": {"app_name": "noisy_agent", "user_id": "u", "state": {}}}
        for eval_id, question in QUESTIONS.items()]
    (agent / "eval" / "noisy.evalset.json").write_text(
        json.dumps({"eval_set_id": "noisy", "eval_cases": cases}))
    (agent / "eval" / "test_config.json").write_text(
        json.dumps({"criteria": {"response_match_score": 0.8}}))


def commit(root: Path, note: str) -> str:
    """A commit that changes no suite input (a note beside the agent)."""
    (root / "NOTES.md").write_text(note)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "add", "NOTES.md"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", note], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


def coin_status(results: Path) -> str:
    """The coin case's status in a results file, by ``adk eval``'s rule read here by hand:
    failed when one of its runs failed."""
    (case,) = [c for s in load_json(results)["suites"] for e in s["eval_sets"]
               for c in e["eval_cases"] if c["eval_id"] == "coin"]
    return "failed" if any(r["status"] == "failed" for r in case["runs"]) else case["runs"][0][
        "status"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """Eight recording runs of the default branch, one commit each, every one reading the
    history the one before wrote (``--history``) and writing the next (``--history-out``)."""
    root = tmp_path_factory.mktemp("history") / "repo"
    make_project(root)
    commit_all(root)
    with pytest.MonkeyPatch.context() as patch:  # the working folder and seed put back
        patch.chdir(root)
        previous = None
        for i in range(RECORDED):
            commit(root, f"note {i}")
            patch.setenv(SEED_VARIABLE, str(i))
            outcome = run_pipeline(request_for(
                paths=[Path("noisy_agent")], baseline="none", record=True, parallelism=1,
                results_path=root / f"r{i}.json", history=previous,
                history_out=root / f"h{i}.json"))
            assert outcome.exit_code in (0, 1)
            previous = root / f"h{i}.json"
    return root


def test_each_recording_run_carries_the_history_forward(recorded):
    runs = [load_history(recorded / f"h{i}.json").runs for i in range(RECORDED)]
    for i, history in enumerate(runs):
        assert len(history) == i + 1
        assert history[:-1] == (runs[i - 1] if i else [])  # the earlier runs, unchanged
        own = load_json(recorded / f"r{i}.json")
        assert history[-1].commit == own["metadata"]["git_sha"]
        assert history[-1].ref == "main"
    hashes = {r.suites[0].inputs_hash for r in runs[-1]}
    assert len(hashes) == 1 and None not in hashes  # a note changed, no suite input


@pytest.fixture(scope="module")
def pull_request(recorded) -> dict[str, str]:
    """A pull request on top of the last recorded commit whose run fails the coin case:
    the first seed that makes it fail (each run draws afresh)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(recorded)
        commit(recorded, "the pull request")
        for attempt in range(100, 116):
            patch.setenv(SEED_VARIABLE, str(attempt))
            outcome = run_pipeline(request_for(
                paths=[Path("noisy_agent")], parallelism=1, results_path=recorded / "head.json",
                baseline=str(recorded / f"r{RECORDED - 1}.json"),
                history=recorded / f"h{RECORDED - 1}.json",
                comment_out=recorded / "comment.md", summary_out=recorded / "summary.md"))
            if coin_status(recorded / "head.json") == "failed":
                break
        else:
            pytest.fail("the coin case passed under 16 seeds")
    return {"comment": (recorded / "comment.md").read_text(),
            "summary": (recorded / "summary.md").read_text(), "exit": str(outcome.exit_code)}


def test_the_summary_charts_every_gated_metric_over_the_recorded_runs(pull_request, recorded):
    charts = re.findall(r"```mermaid\n(xychart-beta\n.*?)```", pull_request["summary"], re.S)
    trend = [c for c in charts if "noisy_agent/response_match_score" in c]
    assert len(trend) == 1, pull_request["summary"]
    labels = re.search(r"x-axis \[(.*)\]", trend[0]).group(1).split(", ")
    commits = [load_json(recorded / f"r{i}.json")["metadata"]["git_sha"][:7]
               for i in range(RECORDED)]
    assert labels == [f'"{c}"' for c in commits] + ['"head"']  # >= 8 points, then the head
    values = re.search(r"line \[(.*)\]", trend[0]).group(1).split(", ")
    # Each recorded run's mean of the metric, from its own results file.
    means = []
    for i in range(RECORDED):
        scores = [r["metrics"][0]["score"] for s in load_json(recorded / f"r{i}.json")["suites"]
                  for e in s["eval_sets"] for c in e["eval_cases"] for r in c["runs"]]
        means.append(sum(scores) / len(scores))
    assert [float(v) for v in values[:-1]] == pytest.approx(means, abs=1e-4)


def test_the_comment_labels_the_flaky_case_and_names_the_baseline_commit(pull_request, recorded):
    comment = pull_request["comment"]
    assert pull_request["exit"] == "1"  # the coin case failed: the gate fails (no quarantine)
    failed = sum(coin_status(recorded / f"r{i}.json") == "failed" for i in range(RECORDED))
    assert 0 < failed < RECORDED, "the seeds made no flaky case"
    expected = (f"`coin` (noisy\\_agent) fails here: it failed {failed} of the last {RECORDED} "
                "recorded runs on main, with unchanged inputs")
    assert expected in comment, comment
    baseline_sha = load_json(recorded / f"r{RECORDED - 1}.json")["metadata"]["git_sha"]
    assert f"Baseline: file r{RECORDED - 1}.json · commit `{baseline_sha[:7]}` · recorded " in (
        comment)
    assert f"History of main: {RECORDED} recorded runs" in comment
    # The compact trend line of the metric: eight recorded runs, then the head (one suite:
    # no suite's name above the table).
    row = next(x for x in comment.splitlines() if x.startswith("| `response_match_score` | "))
    assert re.search(r"\| [▁▂▃▄▅▆▇█]{8} → [▁▂▃▄▅▆▇█] \|", row), row


def test_quarantine_and_pooling_through_compare(pull_request, recorded):
    """``compare --history``: the same pull request with ``--quarantine flaky`` passes and
    says why; ``--pool-runs 7`` pools the seven earlier recorded runs' runs of each case."""
    cwd = Path.cwd()
    os.chdir(recorded)
    try:
        done = CliRunner().invoke(main, [
            "compare", "head.json", "--baseline", f"r{RECORDED - 1}.json",
            "--history", f"h{RECORDED - 1}.json", "--quarantine", "flaky", "--pool-runs", "7",
            "--comment-out", "q.md"])
    finally:
        os.chdir(cwd)
    comment = (recorded / "q.md").read_text()
    assert done.exit_code == 0, done.output + comment
    assert "quarantined: it does not fail the gate (`gate.quarantine: flaky`)" in comment
    # 7 earlier recorded runs x 3 eval cases x 1 run each.
    assert "the baseline pools 21 scores of 7 earlier recorded runs" in comment

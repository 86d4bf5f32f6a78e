"""--changed-only in a temporary git repository: exactly the suites whose files changed are
evaluated (the stand-in models say which agents were called), the others are taken from
the baseline and marked reused; shared changes and a missing baseline mean a full run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval_action.cli import main
from conftest import commit_all, load_json, working_directory
from support.counting_models import CALLS, register, thanks, weather, write_agent

register()

JUDGE = {"threshold": 0.5,
         "judge_model_options": {"judge_model": "counting-judge", "num_samples": 1}}
CRITERIA = {"tool_trajectory_avg_score": 1.0, "final_response_match_v2": JUDGE}
SUITES = ("alpha", "beta", "gamma")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository of three suites (gamma's agent imports ``common.py`` from the root),
    committed, with its baseline recorded beside it (``../base.json``)."""
    root = tmp_path_factory.mktemp("changed") / "repo"
    root.mkdir()
    for name in SUITES:
        write_agent(root, name, {f"{name}_set": {f"{name}_case": [weather("Paris"), thanks()]}},
                    CRITERIA, model=f"counting-agent-{name}")
    (root / "common.py").write_text("GREETING = 'hello'\n")
    agent = root / "gamma" / "agent.py"
    agent.write_text("import common  # noqa: F401\n" + agent.read_text())
    (root / "README.md").write_text("# agents\n")
    (root / "requirements.txt").write_text("google-adk\n")
    commit_all(root)
    _run(root, "--baseline", "none", "--record", "--results-out", "../base.json")
    return root


def _run(root: Path, *args: str) -> tuple[int, str]:
    CALLS.clear()
    with working_directory(root):
        result = CliRunner().invoke(main, ["run", ".", "--quiet", *args],
                                    catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def repo(recorded: Path, tmp_path: Path) -> Path:
    """A fresh copy of the recorded repository (its git history too) and of the baseline."""
    copy = tmp_path / "repo"
    shutil.copytree(recorded, copy)
    shutil.copy(recorded.parent / "base.json", tmp_path / "base.json")
    return copy


def _changed_only(repo: Path, baseline: str = "../base.json") -> tuple[set[str], dict, str]:
    """Runs --changed-only; returns the agents called, the results and the log."""
    code, output = _run(repo, "--changed-only", "--baseline", baseline,
                        "--results-out", "../head.json", "--comment-out", "../comment.md")
    assert code == 0, output
    called = {c.model.removeprefix("counting-agent-") for c in CALLS.calls if c.role == "agent"}
    return called, load_json(repo.parent / "head.json"), output


def _reused(results: dict) -> set[str]:
    return {s["name"] for s in results["suites"] if s.get("reused_from")}


def test_an_unrelated_change_evaluates_nothing(repo: Path) -> None:
    (repo / "README.md").write_text("# agents\n\nNow with a paragraph.\n")
    called, results, output = _changed_only(repo)
    assert called == set()
    assert _reused(results) == set(SUITES)
    sha = load_json(repo.parent / "base.json")["metadata"]["git_sha"]
    assert {s["reused_from"] for s in results["suites"]} == {sha}
    assert "reused for 3 unchanged suite(s)" in (repo.parent / "comment.md").read_text()
    # The reused results are the baseline's: every delta is 0.
    assert "gate PASSED: 3/3 eval cases passed" in output


@pytest.mark.parametrize(
    "change, evaluated",
    [
        ("alpha/agent.py", "alpha"),
        ("beta/eval/beta_set.evalset.json", "beta"),
        ("gamma/eval/test_config.json", "gamma"),
    ],
)
def test_only_the_changed_suite_is_evaluated(repo: Path, change: str, evaluated: str) -> None:
    path = repo / change
    if path.suffix == ".json":
        path.write_text(json.dumps(json.loads(path.read_text()), indent=4))  # new bytes
    else:
        path.write_text(path.read_text() + "\n# changed\n")
    called, results, output = _changed_only(repo)
    assert called == {evaluated}
    assert _reused(results) == set(SUITES) - {evaluated}
    assert f"evaluating suite {evaluated}: " in output
    assert [s["name"] for s in results["suites"]] == list(SUITES)  # the suites' order
    # What this run spent is the evaluated suite's alone; a reused one's runs keep theirs.
    spent = {s["name"] for s in results["suites"] if s.get("usage")}
    assert spent == {evaluated}
    assert all(r.get("usage") for s in results["suites"] for e in s["eval_sets"]
               for c in e["eval_cases"] for r in c["runs"])


def test_a_committed_change_counts_too(repo: Path) -> None:
    (repo / "beta" / "agent.py").write_text((repo / "beta" / "agent.py").read_text() + "\n")
    commit_all(repo)  # one more commit on top of the baseline's
    called, _, _ = _changed_only(repo)
    assert called == {"beta"}


@pytest.mark.parametrize(
    "change, says",
    [
        ("common.py", "common.py, which an agent or custom metric imports, changed"),
        ("requirements.txt", "requirements.txt (requirements) changed"),
    ],
)
def test_a_shared_change_evaluates_everything(repo: Path, change: str, says: str) -> None:
    (repo / change).write_text((repo / change).read_text() + "\n# changed\n")
    called, results, output = _changed_only(repo)
    assert called == set(SUITES)
    assert _reused(results) == set()
    assert says in output


def test_an_adk_eval_yaml_change_that_moves_no_score_evaluates_nothing(repo: Path) -> None:
    # Gate settings decide pass/fail from the scores; they change no score, so every suite
    # is reused and the new gate judges the reused scores (min_pass_rate 1.0 still passes).
    (repo / "adk-eval.yaml").write_text("gate:\n  min_pass_rate: 1.0\n  fail_on: regression\n")
    called, results, output = _changed_only(repo)
    assert called == set()
    assert _reused(results) == set(SUITES)
    assert "gate PASSED: 3/3 eval cases passed" in output


def test_a_num_runs_change_in_adk_eval_yaml_evaluates_everything(repo: Path) -> None:
    (repo / "adk-eval.yaml").write_text("num_runs: 2\n")
    called, results, output = _changed_only(repo)
    assert called == set(SUITES)
    assert _reused(results) == set()
    assert "adk-eval.yaml's num_runs changed" in output
    assert all(len(case["runs"]) == 2 for suite in results["suites"]
               for eval_set in suite["eval_sets"] for case in eval_set["eval_cases"])


def test_no_baseline_means_a_full_run(repo: Path) -> None:
    called, results, output = _changed_only(repo, baseline="none")
    assert called == set(SUITES)
    assert "evaluating every suite: no baseline" in output
    assert _reused(results) == set()


def test_suites_recorded_under_older_names_are_reused(repo: Path) -> None:
    """A baseline recorded when suite names were longer (results.identity: the same agent
    and eval set folder) is reused under today's names."""
    base = repo.parent / "base.json"
    data = load_json(base)
    for suite in data["suites"]:
        suite["name"] = f"{suite['agent']}:{suite['agent']}/eval"
    base.write_text(json.dumps(data))
    (repo / "beta" / "agent.py").write_text((repo / "beta" / "agent.py").read_text() + "\n")
    called, results, _ = _changed_only(repo)
    assert called == {"beta"}
    assert _reused(results) == {"alpha", "gamma"}
    assert [s["name"] for s in results["suites"]] == list(SUITES)

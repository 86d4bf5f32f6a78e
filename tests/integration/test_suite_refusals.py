"""What the preflight finds in one suite of many refuses that suite alone: one team's typo
in its eval config, or a judge whose key the job lacks, costs no other agent in the
repository its evaluation (issue 30: one broken agent costs nothing else)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CliRun, load_json
from support.layouts import agent_monorepo

KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT")


def _config(root: Path, index: int, criteria: dict[str, object]) -> str:
    path = f"python/agents/agent-{index:02d}/eval/test_config.json"
    (root / path).write_text(json.dumps({"criteria": criteria}), encoding="utf-8")
    return path


def test_a_typo_and_a_missing_judge_key_refuse_their_suites_and_the_others_run(
    tmp_path: Path, cli: CliRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = agent_monorepo(tmp_path / "repo", 3, cases=2)
    typo = _config(root, 1, {"respons_match_score": 0.8})
    keyed = _config(root, 2, {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "gemini-2.5-flash"}}})
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(root)

    result = cli("run", "--results-out", "r.json", "--comment-out", "c.md")

    assert result.exit_code == 2, result.output
    results = load_json(root / "r.json")
    suites = {s["name"]: s for s in results["suites"]}
    healthy = suites["agent_00"]
    assert not healthy["errors"]
    runs = [r for e in healthy["eval_sets"] for c in e["eval_cases"] for r in c["runs"]]
    assert [r["status"] for r in runs] == ["passed", "passed"]
    [error] = suites["agent_01"]["errors"]
    assert (error["kind"], error["file"]) == ("config", typo)
    assert "`respons_match_score`" in error["message"]
    assert "(field `criteria.respons_match_score`)" in error["message"]
    assert error["hint"].endswith("this suite was not evaluated, the other suites were")
    [error] = suites["agent_02"]["errors"]
    assert (error["kind"], error["suite"]) == ("credentials", "agent_02")
    assert "GOOGLE_API_KEY" in error["message"] and keyed in error["message"]
    for refused in ("agent_01", "agent_02"):
        assert not [c for e in suites[refused]["eval_sets"] for c in e["eval_cases"]
                    for _ in c["runs"]]
    comment = (root / "c.md").read_text(encoding="utf-8")
    assert "respons_match_score" in comment and "agent_01" in comment
    assert "nothing was evaluated" not in comment


def test_a_problem_in_every_suite_still_stops_the_run_before_evaluation(
    tmp_path: Path, cli: CliRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = agent_monorepo(tmp_path / "repo", 2, cases=1)
    for index in range(2):
        _config(root, index, {"respons_match_score": 0.8})
    monkeypatch.chdir(root)

    result = cli("run", "--results-out", "r.json", "--comment-out", "c.md")

    assert result.exit_code == 2, result.output
    assert "nothing was evaluated" in result.output
    results = load_json(root / "r.json")
    assert [e["kind"] for e in results["errors"]] == ["config", "config"]
    # Each error says whose it is: the comment's reader has no results file at hand.
    comment = (root / "c.md").read_text(encoding="utf-8")
    for index in range(2):
        assert (f"suite agent\\_{index:02d}, `python/agents/agent-{index:02d}/eval/"
                "test_config.json`: metric `respons_match_score`") in comment

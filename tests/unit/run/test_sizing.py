"""The runs ``init`` writes (run/sizing.py): eval cases counted from the files as google-adk's
loader counts them, gated metrics from the eval config, and the fewest runs whose single
labelling of a collapsed case (p = 1 / C(2r, r)) the corrected level accepts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from adk_eval_action.adk.files.evalsets import load_eval_set
from adk_eval_action.project.discovery import Suite
from adk_eval_action.run.sizing import (
    FALLBACK_RUNS,
    choose_runs,
    eval_cases_in,
    gated_metrics_in,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("path", sorted((FIXTURES / "evalsets").glob("*.json"))
                         + sorted(FIXTURES.glob("customer_service/**/*.test.json")))
def test_eval_cases_are_counted_as_adks_loader_loads_them(path: Path) -> None:
    assert eval_cases_in(path) == len(load_eval_set(path).eval_set.eval_cases)


def test_empty_and_unreadable_eval_sets(tmp_path: Path) -> None:
    made = tmp_path / "new.evalset.json"
    made.write_text(json.dumps({"eval_set_id": "new", "eval_cases": [
        {"eval_id": "a", "conversation": []},
        {"eval_id": "b", "conversation": [], "conversation_scenario": {"starting_prompt": "hi"}},
    ]}))
    assert eval_cases_in(made) == 1  # `adk web`'s case saved before any chat does not run
    (tmp_path / "empty.test.json").write_text("[]")
    assert eval_cases_in(tmp_path / "empty.test.json") == 0
    (tmp_path / "bad.test.json").write_text("{not json")
    assert eval_cases_in(tmp_path / "bad.test.json") is None
    assert eval_cases_in(tmp_path / "missing.test.json") is None


def test_gated_metrics_leave_out_adks_efficiency_metrics(tmp_path: Path) -> None:
    config = tmp_path / "test_config.json"
    config.write_text(json.dumps({"criteria": {
        "tool_trajectory_avg_score": 1.0, "response_match_score": 0.8,
        "safety_v1": {"threshold": 0.9}, "token_usage_v1": {"threshold": 5000},
        "invocation_duration_v1": 10.0}}))
    assert gated_metrics_in(config) == 3
    assert gated_metrics_in(None) == 2  # ADK's default criteria
    (tmp_path / "broken.json").write_text("[")
    assert gated_metrics_in(tmp_path / "broken.json") == 2


def _suites(tmp_path: Path, shape: list[tuple[int, int]]) -> list[Suite]:
    """Suites of ``cases`` eval cases and ``metrics`` gated metrics each."""
    suites = []
    for index, (cases, metrics) in enumerate(shape):
        folder = tmp_path / f"s{index}"
        folder.mkdir()
        eval_set = folder / "x.evalset.json"
        eval_set.write_text(json.dumps({"eval_set_id": "x", "eval_cases": [
            {"eval_id": f"c{i}", "conversation": [{"invocation_id": "i"}]}
            for i in range(cases)]}))
        config = folder / "test_config.json"
        config.write_text(json.dumps({"criteria": {f"m{j}": 0.5 for j in range(metrics)}}))
        suites.append(Suite(name=f"s{index}", agent_dir=folder, eval_set_paths=[eval_set],
                            eval_config_path=config))
    return suites


def _by_hand(tests: int) -> int:
    """The fewest runs a side whose one labelling of C(2r, r) with every failing run on the
    head passes Benjamini-Hochberg's first rank at 0.05 / 1.05 among ``tests``."""
    return next(r for r in range(1, 9) if 1 / math.comb(2 * r, r) <= 0.05 / 1.05 / tests)


@pytest.mark.parametrize(("shape", "runs"), [
    ([(3, 1)], 4), ([(2, 2)], 4), ([(3, 3)], 4), ([(4, 2), (3, 2)], 5),
    ([(7, 12)], 5), ([(2, 13)], 6), ([(5, 20), (1, 24)], 6), ([(2, 45)], 7),
])
def test_the_runs_are_the_fewest_that_call_one_collapse(
    tmp_path: Path, shape: list[tuple[int, int]], runs: int
) -> None:
    assert _by_hand(sum(metrics for _, metrics in shape)) == runs
    choice = choose_runs(_suites(tmp_path, shape), None)
    assert (choice.runs, choice.sized) == (runs, True)
    assert set(choice.lines) == {f"s{i}" for i in range(len(shape))}
    assert all(line.endswith(f"would be called (p = {1 / math.comb(2 * runs, runs):.3g})")
               for line in choice.lines.values())


def test_runs_asked_for_are_kept_and_say_what_they_miss(tmp_path: Path) -> None:
    choice = choose_runs(_suites(tmp_path, [(3, 2)]), 2)
    assert (choice.runs, choice.sized) == (2, False)
    assert choice.lines["s0"].endswith(
        "would not be called (p = 0.167); 4 runs would call it")


def test_suites_beyond_the_test_within_cases_get_the_fallback(tmp_path: Path) -> None:
    choice = choose_runs(_suites(tmp_path, [(101, 2)]), None)
    assert choice.runs == FALLBACK_RUNS == 3
    assert "would not be called (p = 0.5)" in choice.lines["s0"]

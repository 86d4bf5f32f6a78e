"""Same agent, eval set and model: our scores equal what `adk eval` reports, and ADK's own
eval_history file serves as a baseline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from adk_eval_action.adk.history import load_any_results as load_results
from conftest import CliRun, load_json

# Wall-clock time differs between any two runs, so it is the one metric not compared.
NOT_COMPARED = {"invocation_duration_v1"}


def _adk_eval(example_repo: Path) -> Path:
    """Runs google-adk's own `adk eval` CLI on the example; returns its eval_history folder."""
    adk = Path(sys.executable).with_name("adk")
    env = {**os.environ, "PYTHONPATH": str(example_repo)}  # plain adk eval needs it for
    # `travel_agent.metrics.*`; our tool does not.
    completed = subprocess.run(
        [str(adk), "eval", "travel_agent", "travel_agent/eval/travel.evalset.json",
         "--config_file_path", "travel_agent/eval/test_config.json"],
        cwd=example_repo, env=env, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    history = example_repo / "travel_agent" / ".adk" / "eval_history"
    assert list(history.glob("*.evalset_result.json"))
    return history


def _scores(results: object) -> dict[tuple[str, str], float | None]:
    scores = {}
    for suite in results.suites:  # type: ignore[attr-defined]
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for metric in case.runs[0].metrics:
                    if metric.metric_name not in NOT_COMPARED:
                        scores[(case.eval_id, metric.metric_name)] = metric.score
    return scores


def test_scores_equal_adk_eval_and_history_is_a_baseline(example_repo: Path, cli: CliRun) -> None:
    history = _adk_eval(example_repo)
    result = cli(
        "run", "travel_agent/eval/travel.evalset.json", "--results-out", "ours.json",
        "--baseline", str(history), "--print-comment",
    )
    assert result.exit_code == 0, result.output
    ours = _scores(load_results(example_repo / "ours.json"))
    adk = _scores(load_results(history))
    assert set(adk) == set(ours)
    assert ours == adk
    assert ours[("weather_paris", "tool_trajectory_avg_score")] == 1.0
    comment = result.output
    assert "ADK eval\\_history" in comment or "ADK eval_history" in comment
    assert "| travel\\_agent | `response_match_score` | 1 | 1 | ±0 |" in comment
    baseline = load_json(next(history.glob("*.evalset_result.json")))
    assert baseline["eval_set_id"] == "travel"

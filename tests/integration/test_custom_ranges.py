"""A custom metric's value range is the one its ``metric_info`` declares, and only that one
bounds its threshold and its scores; results.json, the comment and the exit code agree.

ADK registers a custom metric without ``metric_info`` with a [0, 1] interval
(google.adk.evaluation.eval_config.CustomMetricConfig's documented default) and never checks
a score against it: ADK itself records such a metric's 10.0 as it was returned (checked
below with ADK's own registry), so that default is not the user's claim about the metric.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import CliRun, case_runs, load_json, metric

MEASURE = '''

def word_count(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """A measurement: 10.0 for every invocation and overall, reported as INFORMATIONAL."""
    status = getattr(EvalStatus, "INFORMATIONAL", EvalStatus.PASSED)
    per = [PerInvocationResult(actual_invocation=i, score=10.0, eval_status=status)
           for i in actual_invocations]
    return EvaluationResult(overall_score=10.0, overall_eval_status=status,
                            per_invocation_results=per)
'''


def _add_word_count(repo: Path, threshold: float, metric_info: dict[str, Any] | None) -> None:
    """The example with one more custom metric, ``word_count``, scoring 10.0 everywhere."""
    metrics = repo / "travel_agent/metrics.py"
    metrics.write_text(metrics.read_text() + MEASURE)
    path = repo / "travel_agent/eval/test_config.json"
    config = load_json(path)
    config["criteria"]["word_count"] = threshold
    custom: dict[str, Any] = {"code_config": {"name": "travel_agent.metrics.word_count"}}
    if metric_info is not None:
        custom["metric_info"] = metric_info
    config["custom_metrics"]["word_count"] = custom
    path.write_text(json.dumps(config, indent=2))


def _run(cli: CliRun) -> Any:
    return cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md",
               "--baseline", "none")


def _has_informational_status() -> bool:
    from google.adk.evaluation.eval_metrics import EvalStatus

    return hasattr(EvalStatus, "INFORMATIONAL")


def test_without_a_declared_range_a_measurement_of_10_is_recorded_and_shown(
    example_repo: Path, cli: CliRun
) -> None:
    from google.adk.evaluation.eval_config import EvalConfig

    from adk_eval_action.adk.compat import custom_metric_registry

    _add_word_count(example_repo, 0.0, None)
    path = example_repo / "travel_agent/eval/test_config.json"
    registry = custom_metric_registry(EvalConfig.model_validate(load_json(path)))
    registered = {m.metric_name: m for m in registry.get_registered_metrics()}
    interval = registered["word_count"].metric_value_info.interval
    assert interval is not None and (interval.min_value, interval.max_value) == (0.0, 1.0)

    result = _run(cli)

    assert result.exit_code == 0, result.output
    [run] = case_runs(load_json(example_repo / "r.json"), "weather_paris")
    words = metric(run, "word_count")
    assert words["score"] == 10.0 and words["status"] != "error"
    assert words.get("min_value") is None and words.get("max_value") is None
    assert words["informational"] is _has_informational_status()
    rows = [line for line in (example_repo / "c.md").read_text().splitlines()
            if "`word_count`" in line]
    # The informational metrics' table (google-adk 2.x), else the gated metrics' one, whose
    # metric cell carries its threshold.
    shown = "| `word_count` |" if words["informational"] else "| `word_count` ≥ 0 |"
    assert len(rows) == 1 and rows[0].startswith(f"{shown} 10.0 |"), rows
    assert not load_json(example_repo / "r.json")["suites"][0]["errors"]


def test_without_a_declared_range_a_threshold_above_one_is_taken(
    example_repo: Path, cli: CliRun
) -> None:
    # ADK's default [0, 1] would have refused this threshold as one no case could pass.
    _add_word_count(example_repo, 5.0, None)

    result = _run(cli)

    assert "outside its value range" not in result.output
    [run] = case_runs(load_json(example_repo / "r.json"), "weather_paris")
    assert metric(run, "word_count")["score"] == 10.0


@pytest.mark.parametrize("informational", [True, False])
def test_a_score_outside_the_declared_range_is_an_error_of_the_metrics_code(
    example_repo: Path, cli: CliRun, informational: bool
) -> None:
    if informational and not _has_informational_status():
        pytest.skip("google-adk before 2.x has no INFORMATIONAL status")
    _add_word_count(example_repo, 0.0, {"metric_name": "word_count", "metric_value_info": {
        "interval": {"min_value": 0.0, "max_value": 1.0}}})
    if not informational:
        metrics = example_repo / "travel_agent/metrics.py"
        metrics.write_text(metrics.read_text().replace(
            'getattr(EvalStatus, "INFORMATIONAL", EvalStatus.PASSED)', "EvalStatus.PASSED"))

    result = _run(cli)

    assert result.exit_code == 2, result.output
    reason = "score 10.0 is outside its value range [0.0, 1.0]: fix the metric's code"
    results = load_json(example_repo / "r.json")
    words = metric(case_runs(results, "weather_paris")[0], "word_count")
    assert words["status"] == "error" and "score" not in words and words["reason"] == reason
    [error] = results["suites"][0]["errors"]
    assert error["kind"] == "metric_code" and error["message"].endswith(reason)
    assert results["complete"] is False
    comment = (example_repo / "c.md").read_text()
    shown = reason.replace("[", "\\[").replace("]", "\\]")  # markdown-escaped
    assert "ADK eval incomplete" in comment and shown in comment

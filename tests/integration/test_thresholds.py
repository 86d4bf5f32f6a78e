"""A threshold no score can meet as meant is a config error (exit 2), not a red or green gate:
a boolean, NaN or infinity, or a number outside the metric's value range; in the eval config
(a number or a criterion's ``threshold``) and in ``adk-eval.yaml`` (``thresholds:``, and a
boolean ``num_runs``).

The independent source of each range is google-adk's own metric registry
(``MetricEvaluatorRegistry.get_registered_metrics``), and of NaN/booleans Python's json,
which reads ``NaN`` and ``true`` into the config ADK's EvalConfig then accepts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry

from conftest import CliRun, load_json

CONFIG = "travel_agent/eval/test_config.json"
RUBRIC = "rubric_based_final_response_quality_v1"


def _range(metric: str) -> str:
    infos = {m.metric_name: m for m in MetricEvaluatorRegistry().get_registered_metrics()}
    interval = infos[metric].metric_value_info.interval
    return f"[{interval.min_value}, {interval.max_value}]"


def _set_threshold(repo: Path, metric: str, raw: str) -> None:
    """Writes ``raw`` (JSON text, so ``NaN`` too) as ``metric``'s threshold."""
    config: dict[str, Any] = load_json(repo / CONFIG)
    if isinstance(config["criteria"][metric], dict):
        config["criteria"][metric]["threshold"] = "@T@"
    else:
        config["criteria"][metric] = "@T@"
    text = json.dumps(config, indent=2).replace('"@T@"', raw)
    (repo / CONFIG).write_text(text, encoding="utf-8")


def test_adk_itself_accepts_what_is_refused() -> None:
    # Why this is ours to refuse: ADK's model takes each of them without a word.
    for raw in ("NaN", "5", "-1", "true"):
        parsed = EvalConfig.model_validate(json.loads(f'{{"criteria": {{"m": {raw}}}}}'))
        assert parsed.criteria["m"] is not None


@pytest.mark.parametrize(
    ("metric", "raw", "problem"),
    [
        ("response_match_score", "NaN", "threshold nan is not a finite number"),
        ("response_match_score", "Infinity", "threshold inf is not a finite number"),
        ("response_match_score", "true", "threshold true is a boolean, not a number"),
        (
            "response_match_score",
            "5",
            "threshold 5 of `response_match_score` is outside its value range {range}: "
            "no eval case could pass",
        ),
        (
            "response_match_score",
            "-1",
            "threshold -1 of `response_match_score` is outside its value range {range}: "
            "no eval case could fail",
        ),
        (RUBRIC, "NaN", "threshold nan is not a finite number"),
        (
            RUBRIC,
            "1.5",
            f"threshold 1.5 of `{RUBRIC}` is outside its value range {{range}}: "
            "no eval case could pass",
        ),
        (RUBRIC, "false", "threshold false is a boolean, not a number"),
    ],
)
def test_a_threshold_no_score_can_meet_is_a_config_error(
    example_repo: Path, cli: CliRun, metric: str, raw: str, problem: str
) -> None:
    _set_threshold(example_repo, metric, raw)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    span = _range(metric)
    field = f"criteria.{metric}" + (".threshold" if metric == RUBRIC else "")
    expected = (
        f"{CONFIG} (field `{field}`): {problem.format(range=span)}; "
        f"give a number in {span}, the value range of `{metric}`"
    )
    assert expected in result.output.replace("\n", " "), result.output


def test_a_custom_metric_is_checked_against_its_declared_range(
    example_repo: Path, cli: CliRun
) -> None:
    # brevity declares [0.0, 1000.0] in the example's metric_info: 40 words is fine, 1001 not.
    _set_threshold(example_repo, "brevity", "1001")
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    assert (
        "threshold 1001 of `brevity` is outside its value range [0.0, 1000.0]"
        in result.output.replace("\n", " ")
    )


def _project(repo: Path, suite_extra: str) -> None:
    (repo / "adk-eval.yaml").write_text(
        "suites:\n  - name: travel_agent\n    agent: travel_agent\n"
        "    eval_sets: ['travel_agent/eval/*.evalset.json']\n"
        f"    eval_config: {CONFIG}\n{suite_extra}",
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("extra", "field", "problem"),
    [
        (
            "    thresholds: {response_match_score: true}\n",
            "suites[0].thresholds.response_match_score",
            "true is a boolean, not a number",
        ),
        (
            "    thresholds: {response_match_score: .nan}\n",
            "suites[0].thresholds.response_match_score",
            "finite number",
        ),
        ("    num_runs: true\n", "suites[0].num_runs", "true is a boolean, not a number"),
    ],
)
def test_adk_eval_yaml_refuses_a_boolean_or_nan_where_a_number_is_meant(
    example_repo: Path, cli: CliRun, extra: str, field: str, problem: str
) -> None:
    _project(example_repo, extra)
    result = cli("run", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    out = result.output.replace("\n", " ")
    assert f"adk-eval.yaml (field `{field}`)" in out, out
    assert problem in out, out


def test_an_adk_eval_yaml_threshold_outside_the_range_names_where_it_was_set(
    example_repo: Path, cli: CliRun
) -> None:
    _project(example_repo, "    thresholds: {response_match_score: 5}\n")
    result = cli("run", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    span = _range("response_match_score")
    assert (
        "(field `criteria.response_match_score, set by adk-eval.yaml "
        "`thresholds.response_match_score``): threshold 5.0 of `response_match_score` is "
        f"outside its value range {span}" in result.output.replace("\n", " ")
    ), result.output


@pytest.mark.parametrize(
    ("extra", "field", "said"),
    [
        # A misspelt metric: named in adk-eval.yaml, where it was written, not in the eval
        # config it was meant to change.
        ("    thresholds: {tool_trajectory_avg_scor: 0.5}\n",
         "suites[0].thresholds.tool_trajectory_avg_scor",
         "`tool_trajectory_avg_scor` is neither a google-adk metric nor declared in the eval "
         "config's `custom_metrics`; did you mean `tool_trajectory_avg_score`?"),
        ("    higher_is_better: {politenes: true}\n", "suites[0].higher_is_better.politenes",
         "`politenes` is neither a google-adk metric nor declared in the eval config's "
         "`custom_metrics`; did you mean `politeness`?"),
        # Reversing a google-adk metric would make its drop an improvement (a wrong tool
        # argument, 1.0 -> 0.5, read as "improved" and the gate passing).
        ("    higher_is_better: {tool_trajectory_avg_score: false}\n",
         "suites[0].higher_is_better.tool_trajectory_avg_score",
         "`tool_trajectory_avg_score` is a google-adk metric, higher is better, and "
         "google-adk decides its status that way; `higher_is_better` is for custom metrics: "
         "remove this entry"),
    ],
)
def test_adk_eval_yaml_overrides_name_known_metrics_in_their_direction(
    example_repo: Path, cli: CliRun, extra: str, field: str, said: str
) -> None:
    _project(example_repo, extra)
    result = cli("run", "--results-out", "r.json")
    assert result.exit_code == 2, result.output
    assert f"adk-eval.yaml (field `{field}`): {said}" in result.output.replace("\n", " ")
    [error] = load_json(example_repo / "r.json")["suites"][0]["errors"]
    assert (error["kind"], error["file"]) == ("config", "adk-eval.yaml")


def test_a_threshold_at_either_end_of_the_range_is_taken(example_repo: Path) -> None:
    from adk_eval_action.adk.files.evalconfig import load_eval_config

    for raw in ("0", "1", "0.0", "1.0"):
        _set_threshold(example_repo, "response_match_score", raw)
        loaded = load_eval_config(example_repo / CONFIG)
        assert loaded.eval_config.criteria["response_match_score"] == float(raw)
        assert not [w for w in loaded.warnings if "threshold" in w]

"""Same agent, eval set and model: our scores equal what `adk eval` reports, and ADK's own
eval_history file serves as a baseline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.cli.cli_tools_click import main as adk_main
from google.adk.evaluation.eval_result import EvalSetResult

from adk_eval_action.adk.compat import CUSTOM_METRIC_GETS_EVAL_METRIC
from adk_eval_action.adk.files.eval_history import load_any_results as load_results
from conftest import CliRun, as_adk_eval_starts, load_json

# Wall-clock time differs between any two runs, so it is the one metric not compared.
NOT_COMPARED = {"invocation_duration_v1"}
# `adk eval` imports the agent folder as the module `agent`; the example's custom metrics are
# `travel_agent.metrics.*`.
AGENT_MODULES = ("agent", "travel_agent")


@pytest.fixture
def adk_process(example_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process set up as `PYTHONPATH=<example_repo> adk eval` would start: no agent
    module of another test imported, the example on sys.path, and afterwards ADK's logging
    set-up (`logging.basicConfig`, the google_adk level) and its agent imports undone."""
    monkeypatch.syspath_prepend(str(example_repo))  # plain adk eval needs it for
    # `travel_agent.metrics.*`; our tool does not.
    with as_adk_eval_starts(monkeypatch, AGENT_MODULES):  # the copy has no .env to load
        yield


def _adk_eval(example_repo: Path) -> Path:
    """Runs google-adk's own `adk eval` CLI (its click command, in this process) on the
    example; returns its eval_history folder."""
    completed = CliRunner().invoke(adk_main, [
        "eval", "travel_agent", "travel_agent/eval/travel.evalset.json",
        "--config_file_path", "travel_agent/eval/test_config.json",
    ], catch_exceptions=False)
    assert completed.exit_code == 0, completed.output
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


# The example's custom metrics as a team on google-adk 1.23 writes them: that version calls
# (actual_invocations, expected_invocations, conversation_scenario) and sets the status from
# the threshold itself (google.adk.evaluation.custom_metric_evaluator there).
METRICS_OF_ADK_1_23 = """

def politeness_1_23(actual_invocations, expected_invocations, conversation_scenario):
    return _score_invocations(actual_invocations, expected_invocations, politeness_of,
                              lambda score: score >= DEFAULT_POLITENESS_THRESHOLD)


def brevity_1_23(actual_invocations, expected_invocations, conversation_scenario):
    return _score_invocations(
        actual_invocations, expected_invocations,
        lambda reply: float(len(reply.split()) <= DEFAULT_BREVITY_THRESHOLD),
        lambda score: score >= 1.0)
"""
# 1.23 passes a score >= its threshold, so its brevity is the share of brief replies.
BREVITY_OF_ADK_1_23 = {"criterion": 1.0, "interval": {"min_value": 0.0, "max_value": 1.0}}


def _custom_metrics_of_this_adk(example_repo: Path) -> None:
    """Where google-adk calls custom metrics the 1.23 way, points the copy's eval config at
    functions of that convention: that version's `adk eval` cannot run the example's own
    (a TypeError for the missing argument), while this tool runs both."""
    if CUSTOM_METRIC_GETS_EVAL_METRIC:
        return
    package = example_repo / "travel_agent"
    metrics = package / "metrics.py"
    metrics.write_text(metrics.read_text() + METRICS_OF_ADK_1_23)
    config_path = package / "eval" / "test_config.json"
    config = load_json(config_path)
    for name, custom in config["custom_metrics"].items():
        custom["code_config"]["name"] = f"travel_agent.metrics.{name}_1_23"
    config["criteria"]["brevity"] = BREVITY_OF_ADK_1_23["criterion"]
    config["custom_metrics"]["brevity"]["metric_info"]["metric_value_info"]["interval"] = (
        BREVITY_OF_ADK_1_23["interval"])
    config_path.write_text(json.dumps(config, indent=2))


def test_scores_equal_adk_eval_and_history_is_a_baseline(
    example_repo: Path, cli: CliRun, adk_process: None
) -> None:
    _custom_metrics_of_this_adk(example_repo)
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
    assert re.search(r"\| `response_match_score` [≥≤] [\d.]+ \| 1\.000 \| 1\.000 \| ±0", comment)
    baseline = load_json(next(history.glob("*.evalset_result.json")))
    assert baseline["eval_set_id"] == "travel"


def _write_history(folder: Path, result: EvalSetResult, timestamp: float) -> None:
    """``result`` saved under ``folder`` as created at ``timestamp``, named as ADK's
    LocalEvalSetResultsManager names its files (``{app}_{eval set}_{timestamp}``)."""
    result_id = f"travel_agent_{result.eval_set_id}_{timestamp}"
    saved = result.model_copy(
        update={"creation_timestamp": timestamp, "eval_set_result_id": result_id}
    )
    (folder / f"{result_id}.evalset_result.json").write_text(saved.model_dump_json())


def test_history_folder_holds_the_newest_result_of_each_eval_case(
    example_repo: Path, adk_process: None, tmp_path: Path
) -> None:
    """google-adk 1.x's `adk eval` saves one file per eval case, 2.x one per eval set: a
    folder with an older whole-set run and a newer run saved case by case loads every eval
    case once, with its newest scores."""
    history = _adk_eval(example_repo)
    written = [EvalSetResult.model_validate(load_json(p))
               for p in history.glob("*.evalset_result.json")]
    cases = [case for result in written for case in result.eval_case_results]
    newest = max(result.creation_timestamp for result in written)
    stale = [case.model_copy(deep=True) for case in cases]
    for case in stale:
        for metric in case.overall_eval_metric_results:
            metric.score = -5.0  # outside every range: would show if the old run were read
    folder = tmp_path / "travel_agent" / ".adk" / "eval_history"
    folder.mkdir(parents=True)
    _write_history(folder, written[0].model_copy(update={"eval_case_results": stale}),
                   newest - 100)
    for index, case in enumerate(cases):
        _write_history(folder, written[0].model_copy(update={"eval_case_results": [case]}),
                       newest + index)
    loaded = load_results(folder)
    assert _scores(loaded) == _scores(load_results(history))
    assert len(_scores(loaded)) > len(cases)  # every case, every metric
    assert [len(c.runs) for s in loaded.suites for e in s.eval_sets
            for c in e.eval_cases] == [1] * len(cases)

"""The one evaluation harness (adk/evaluate/harness.py) as the engine and re-scoring use it: real
google-adk evaluation of the example agent, on the caller's event loop, leaving sys.path,
sys.modules and the judge logger as they were."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
import types
from pathlib import Path

import pytest

from adk_eval_action.adk.evaluate.engine import EngineSettings, ErrorPlace
from adk_eval_action.adk.evaluate.recording import JUDGE_LOGGER
from adk_eval_action.adk.evaluate.rescore import rescore_suite
from adk_eval_action.adk.evaluate.scheduler import evaluate_suite
from adk_eval_action.adk.runtime.agent import AgentLoadError, ImportScope, load_agent
from adk_eval_action.project.discovery import Suite, discover_suites
from support.adk_features import JUDGE_ERRORS_NOT_EVALUATED

TIMEOUT_JUDGE = {
    "threshold": 0.5,
    "judge_model_options": {"judge_model": "stand-in-judge-timeout", "num_samples": 1},
}


def _suite(root: Path, agent: str = "travel_agent") -> Suite:
    (suite,) = discover_suites([root / agent], root)
    return suite


def _judge_logger_state() -> tuple[int, bool, list[logging.Handler]]:
    logger = logging.getLogger(JUDGE_LOGGER)
    return logger.level, logger.propagate, list(logger.handlers)


def _scores(record) -> dict[tuple[str, int, str], float | None]:
    return {
        (case.eval_id, run.run, m.metric_name): m.score
        for eval_set in record.eval_sets
        for case in eval_set.eval_cases
        for run in case.runs
        for m in run.metrics
    }


def _registered_metrics() -> set[str]:
    from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry

    return {m.metric_name for m in MetricEvaluatorRegistry().get_registered_metrics()}


def test_evaluation_leaves_the_process_as_it_was(example_repo: Path) -> None:
    """A same-named package from elsewhere is set aside during the run (the example's
    custom metrics resolve to the example's own module) and is back afterwards."""
    other = types.ModuleType("travel_agent")
    other.__file__ = "/elsewhere/travel_agent/__init__.py"
    sys.modules["travel_agent"] = other
    try:
        path_before = list(sys.path)
        logger_before = _judge_logger_state()
        modules_before = {k for k in sys.modules if k.startswith("travel_agent")}
        metrics_before = _registered_metrics()
        settings = EngineSettings(num_runs=2, parallelism=3, repo_root=example_repo)
        record = asyncio.run(evaluate_suite(_suite(example_repo), settings))
        assert sys.path == path_before
        assert sys.modules["travel_agent"] is other
        assert {k for k in sys.modules if k.startswith("travel_agent")} == modules_before
        assert _judge_logger_state() == logger_before
        # google-adk before 1.39 and 2.0 keep one class-level registry: the example's
        # custom metrics (politeness, brevity) must not stay known to later eval configs.
        assert _registered_metrics() == metrics_before
    finally:
        del sys.modules["travel_agent"]
    assert record.errors == []
    scores = _scores(record)
    # Two runs of every case, custom metrics included, in eval set and run order.
    assert scores[("currency_usd_eur", 1, "politeness")] == 1.0
    assert scores[("currency_usd_eur", 2, "brevity")] == 8.0
    for eval_set in record.eval_sets:
        for case in eval_set.eval_cases:
            assert [r.run for r in case.runs] == [1, 2]


def test_the_engine_runs_on_the_callers_event_loop(example_repo: Path) -> None:
    """Awaited from a running loop (no nested asyncio.run), sharing the loop with another
    task, and an agent made by ``get_agent_async`` is awaited on that loop."""
    folder = example_repo / "async_agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(
        "import asyncio\n"
        "from travel_agent.agent import root_agent as _agent\n\n"
        "async def get_agent_async():\n"
        "    await asyncio.sleep(0)\n"
        "    return _agent, None\n"
    )
    shutil.copy(example_repo / "travel_agent/eval/travel.evalset.json", folder / "eval")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def main():
        task = asyncio.create_task(ticker())
        record = await evaluate_suite(
            _suite(example_repo, "async_agent"), EngineSettings(repo_root=example_repo)
        )
        task.cancel()
        return record

    record = asyncio.run(main())
    assert record.errors == []
    assert ticks > 10  # the other task ran while cases were evaluated
    assert _scores(record)[("weather_paris", 1, "tool_trajectory_avg_score")] == 1.0


def test_import_scope_restores_what_it_set_aside(tmp_path: Path) -> None:
    for name in ("a", "b"):
        package = tmp_path / name / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"WHERE = {name!r}\n")
        (package / "agent.py").write_text("root_agent = object()\n")
    path_before = list(sys.path)

    async def where(folder: Path) -> str:
        with ImportScope([folder], tmp_path):
            await load_agent(folder)
            return sys.modules["pkg"].WHERE

    with ImportScope([tmp_path / "a" / "pkg"], tmp_path):
        import pkg  # type: ignore[import-not-found]  # noqa: F401 - the scope makes a/pkg importable

        outer = sys.modules["pkg"]
        assert outer.WHERE == "a"
        assert asyncio.run(where(tmp_path / "b" / "pkg")) == "b"  # a/pkg set aside
        assert sys.modules["pkg"] is outer  # and back
    assert "pkg" not in sys.modules and "pkg.agent" not in sys.modules
    assert sys.path == path_before


def test_agent_errors_name_the_file_and_line(tmp_path: Path) -> None:
    package = tmp_path / "broken_agent"
    package.mkdir()
    (package / "__init__.py").write_text("from . import agent\n")
    (package / "agent.py").write_text("x = 1\nraise RuntimeError('no model key')\n")
    with ImportScope([package], tmp_path), pytest.raises(AgentLoadError) as raised:
        asyncio.run(load_agent(package))
    assert "RuntimeError: no model key (at broken_agent/agent.py:2)" in str(raised.value)
    # The place, for the annotation: the file's second line raised (written above).
    assert raised.value.path is not None
    assert (raised.value.path.resolve(), raised.value.line) == (
        (package / "agent.py").resolve(), 2)


def test_rescoring_records_judge_failures_and_keeps_them_off_the_log(
    example_repo: Path,
) -> None:
    """Re-scoring goes through the same harness as the engine: a judge that times out is
    the metric's reason, and ADK's warning does not reach the log (it did before)."""
    settings = EngineSettings(repo_root=example_repo)
    baseline = asyncio.run(evaluate_suite(_suite(example_repo), settings))
    config_path = example_repo / "travel_agent/eval/test_config.json"
    config = json.loads(config_path.read_text())
    config["criteria"]["final_response_match_v2"] = TIMEOUT_JUDGE
    config_path.write_text(json.dumps(config))
    suite = _suite(example_repo)
    head = asyncio.run(evaluate_suite(suite, settings))
    seen: list[logging.LogRecord] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    handler = Seen()
    parent = logging.getLogger(JUDGE_LOGGER.rpartition(".")[0])
    parent.addHandler(handler)
    try:
        rescored = asyncio.run(
            rescore_suite(suite, head, baseline, parallelism=4, repo_root=example_repo)
        )
    finally:
        parent.removeHandler(handler)
    assert [r for r in seen if r.name == JUDGE_LOGGER] == []
    metrics = [
        m
        for s in rescored.eval_sets
        for c in s.eval_cases
        for r in c.runs
        for m in r.metrics
        if m.metric_name == "final_response_match_v2"
    ]
    # google-adk 1.x lets the judge's TimeoutError out of the evaluator: an errored metric.
    status, reason = (("not_evaluated", "judge call failed: TimeoutError")
                      if JUDGE_ERRORS_NOT_EVALUATED else ("error", "TimeoutError"))
    assert metrics and all(m.score is None and m.status.value == status for m in metrics)
    assert all(reason in (m.reason or "") for m in metrics)
    # The metrics the config had before score as in the baseline (same invocations).
    before = _scores(baseline)
    after = {k: v for k, v in _scores(rescored).items() if k in before}
    assert after == before


def test_an_eval_case_adk_refuses_to_evaluate_is_an_inference_error(example_repo: Path) -> None:
    """When google-adk's LocalEvalService raises for a whole eval case (here: fewer
    inferences than the case's conversation has turns), no metric was scored: kind
    ``inference`` (the run is incomplete), never ``metric`` (which the gate's
    ``not_evaluated`` would count as the agent failing)."""
    from google.adk.evaluation.eval_config import EvalConfig

    from adk_eval_action.adk.evaluate.engine import CaseRun, evaluation_outcome, suite_record
    from adk_eval_action.adk.evaluate.harness import SuiteHarness
    from adk_eval_action.adk.files.evalsets import load_eval_set
    from adk_eval_action.adk.files.prepare import load_suite_inputs
    from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS

    loaded = load_eval_set(example_repo / "travel_agent/eval/travel.evalset.json")
    case = loaded.eval_set.eval_cases[0]
    harness = SuiteHarness("travel_agent", EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}),
                           [loaded.eval_set])
    inference = harness.recorded_inference(loaded.eval_set.eval_set_id, case.eval_id, [])
    evaluation = asyncio.run(harness.evaluate(inference))
    assert evaluation.result is None
    # ADK's own words (local_eval_service), whose exact wording differs by google-adk version
    # ("Found0 inferences 2 conversations in eval cases." on 1.39.1).
    refused = evaluation.error or ""
    assert refused.startswith("ValueError: Inferences should match conversations in eval case.")
    assert f"{len(case.conversation or [])} conversations" in refused
    suite = _suite(example_repo)
    record = suite_record(suite, load_suite_inputs(suite, example_repo), example_repo)
    eval_set = next(s for s in record.eval_sets if s.eval_set_id == loaded.eval_set.eval_set_id)
    where: ErrorPlace = {"suite": record.name, "file": eval_set.file,
                         "eval_set_id": eval_set.eval_set_id, "eval_id": case.eval_id}
    outcome = evaluation_outcome(CaseRun(eval_set, eval_set.eval_cases[0], 1), evaluation, {},
                                 where)
    message = f"ADK could not evaluate the eval case's metrics: {refused}"
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.message, outcome.error.eval_id) == (
        "inference", message, case.eval_id)
    assert outcome.error.kind in INCOMPLETE_ERROR_KINDS
    assert (outcome.run.status.value, outcome.run.error_kind, outcome.run.error) == (
        "error", "inference", message)

"""Adaptive repeats (``--adaptive-runs MAX``): after the planned runs, run the eval cases
that carry an undecided call once more on the head, compare again, and repeat until every
call is decided, every picked case has ``MAX`` runs, or the budget of extra case runs is
spent. Which cases: :func:`adk_eval_action.analysis.repeat_plan.plan_repeats`. The baseline's
runs are reused, never re-run here.

The budget is the number of planned head case runs, so adaptive repeats at most double the
model calls of the head; ``benchmarks/bench_calibration.py`` measures what that buys (power
for a 10-point drop on 50 cases x 3 runs: 66% -> 89% at 1.51x the calls) and what it costs:
the picked cases' extra head runs make their per-case differences asymmetric, so false 🔴
on an unchanged agent rise from 2.7% to 4.9% (±0.9) of runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from adk_eval_action.analysis.comparison import AdaptiveRuns, Comparison
from adk_eval_action.analysis.repeat_plan import plan_repeats, undecided_metrics
from adk_eval_action.analysis.verdict import compare_for_gate
from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import GateConfig
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.model import RunResults, SuiteRecord
from adk_eval_action.results.scoretable import CaseKey, ScoreTable
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.settings import OPTIONS, RunSettings

log = logging.getLogger(__name__)
Evaluate = Callable[[Suite, dict[str, list[str]]], Awaitable[SuiteRecord]]
"""Runs the named eval cases (eval set id -> eval ids) of a suite once; the engine's
:func:`adk_eval_action.adk.evaluate.scheduler.evaluate_suite` in the pipeline."""


def planned_runs(results: RunResults) -> int:
    """Head case runs already made (the budget of extra ones)."""
    return sum(len(c.runs) for s in results.suites for e in s.eval_sets for c in e.eval_cases)


async def repeat_undecided(
    writer: ResultsWriter,
    baseline: RunResults | ScoreTable,
    suites: list[Suite],
    gate_config: GateConfig,
    max_runs: int,
    evaluate: Evaluate,
) -> AdaptiveRuns:
    """Hands more head runs to ``writer`` (module docstring) and says what it spent.

    Each round compares the head's results (``writer.results()``) with ``baseline`` as the
    gate does (same ``min_effect``), plans at most the remaining budget of cases, and runs
    each planned case once through ``evaluate``; new runs are numbered after the case's
    last run (:meth:`ResultsWriter.add_runs`).
    """
    results = writer.results()
    summary = AdaptiveRuns(max_runs=max_runs, budget=planned_runs(results))
    by_name = {s.name: s for s in suites}
    touched: set[CaseKey] = set()
    base_table = baseline if isinstance(baseline, ScoreTable) else ScoreTable.from_results(baseline)
    while True:
        comparison = compare_for_gate(ScoreTable.from_results(results), base_table, "",
                                      gate_config)
        left = summary.budget - summary.extra_runs
        keys = plan_repeats(comparison, max_runs=max_runs, budget=left)
        if not keys:
            summary.stopped = _why_stopped(comparison, left)
            break
        added = 0
        for suite_name, wanted in _by_suite(keys).items():
            record = await evaluate(by_name[suite_name], wanted)
            added += writer.add_runs(record)
        summary.rounds += 1
        summary.extra_runs += added
        touched.update(keys)
        log.info("adaptive repeats: round %d, %d more run(s)", summary.rounds, added)
        if added == 0:
            summary.stopped = "the picked eval cases produced no runs"
            break
    summary.cases = len(touched)
    return summary


def _why_stopped(comparison: Comparison, left: int) -> str:
    if not undecided_metrics(comparison):
        return "every call decided"
    if left <= 0:
        return "budget spent"
    return "no undecided eval case below the maximum runs differs from the baseline"


def _by_suite(keys: list[CaseKey]) -> dict[str, dict[str, list[str]]]:
    out: dict[str, dict[str, list[str]]] = {}
    for suite, eval_set_id, eval_id in keys:
        out.setdefault(suite, {}).setdefault(eval_set_id, []).append(eval_id)
    return out


def engine_evaluate(parallelism: int, repo_root: Path, calls: Any = None,
                    judge_answers_counted: bool = False) -> Evaluate:
    """The pipeline's :data:`Evaluate`: google-adk's engine, one run of the named cases; its
    model calls retried and counted in the run's ``calls`` (adk.runtime.model_calls.ModelCalls);
    ``judge_answers_counted``: ``EngineSettings.judge_answers_counted``."""

    async def evaluate(suite: Suite, wanted: dict[str, list[str]]) -> SuiteRecord:
        from adk_eval_action.adk.evaluate.engine import EngineSettings
        from adk_eval_action.adk.evaluate.scheduler import evaluate_suite

        settings = EngineSettings(
            num_runs=1, parallelism=parallelism, repo_root=repo_root, eval_case_ids=wanted,
            judge_answers_counted=judge_answers_counted,
        )
        return await evaluate_suite(suite.model_copy(update={"num_runs": 1}), settings, calls)

    return evaluate


def refuse_useless_repeats(suites: list[Suite], settings: RunSettings) -> None:
    """Refuses ``adaptive_runs`` no higher than every suite's runs of each eval case
    (``num_runs``: the flag or input, else each suite's in adk-eval.yaml, else 1): adaptive
    repeats run a case up to ``adaptive_runs`` times in all, so they could add no run.

    Raises:
        ConfigError: naming both options as they were given (exit 2, before any call).
    """
    most = settings.adaptive_runs
    runs = [s.num_runs or settings.num_runs for s in suites]
    if most is None or not runs or most > min(runs):
        return
    fewest = min(runs)
    given = settings.explicit("num_runs") is not None or all(s.num_runs is None for s in suites)
    each = _named(settings, "num_runs", fewest) if given else \
        f"num_runs {fewest} of every suite in adk-eval.yaml"
    raise ConfigError(_named(settings, "adaptive_runs", most), (
        f"adaptive repeats run an eval case up to {most} time{'s' if most != 1 else ''} in "
        f"all, and {each} already runs each {fewest} time{'s' if fewest != 1 else ''}: they "
        f"could add no run; set it above {fewest}, or leave it out"))


def _named(settings: RunSettings, name: str, value: int) -> str:
    """Option ``name`` with ``value`` as the user gave it: the flag (``--num-runs 3``), the
    action's input (``input num_runs 3``) or adk-eval.yaml's key."""
    spec = OPTIONS[name]
    return {
        "flag": f"{spec.flag} {value}",
        "input": f"input {name} {value}",
        "config": f"adk-eval.yaml {spec.option.config or name} {value}",
    }.get(settings.source(name), f"{name} {value} (the default)")


def no_baseline_note(settings: RunSettings) -> str:
    """What adaptive repeats did in a run without a baseline: nothing, and why."""
    return (f"adaptive repeats ({_named(settings, 'adaptive_runs', settings.adaptive_runs or 0)}"
            ") not run: there is no baseline to compare with, so no call to decide")

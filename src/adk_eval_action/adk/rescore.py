"""Re-scoring a baseline under the head's eval config, without running any agent.

When a pull request changes only the eval config of a suite (a new metric, a new rubric,
another judge or threshold) and none of its eval sets, the baseline's recorded actual
invocations are evaluated again with google-adk's ``LocalEvalService.evaluate`` under the
head's eval config, so baseline and head are scored by the same rules (issue "Baselines",
item 3). The invocations are exactly what ADK's evaluators saw the first time: the
``Invocation`` dumps kept in the results file, with their ``app_details`` (tool
declarations for rubric judges), intermediate data, usage metadata and durations.

What is reused from :mod:`.engine` (not copied): the recording registry and per-case
evaluation (``_evaluate_one``), the rubric rules of the suite (``prepare_eval_set``), the
agent import for sys.path and custom metric modules (``_import_agent``), and the
conversion to our records (``run_record_from_adk``).

Re-scoring costs judge calls for LLM-judged metrics, but no agent calls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.adk.evaluation.base_eval_service import InferenceResult, InferenceStatus
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.metric_evaluator_registry import (
    MetricEvaluatorRegistry,
    register_custom_metrics_from_config,
)
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from pydantic import ValidationError

from adk_eval_action.adk.convert import run_record_from_adk
from adk_eval_action.adk.engine import (
    AgentLoadError,
    _add_eval_set,
    _evaluate_one,
    _import_agent,
    _JudgeFailureHandler,
    infer_directions,
    prepare_eval_set,
)
from adk_eval_action.adk.evalconfig import LoadedEvalConfig, load_eval_config
from adk_eval_action.adk.evalsets import LoadedEvalSet, load_eval_set
from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.model import CaseStatus, EvalCaseRecord, RunResults, SuiteRecord

Console = Callable[[str], None]

_JUDGE_LOGGER = "google_adk.google.adk.evaluation.llm_as_judge"


class RescoreError(AdkEvalActionError):
    """A suite's baseline cannot be re-scored (its eval config or eval sets do not load)."""


def rescore_reason(baseline: SuiteRecord, head: SuiteRecord) -> str | None:
    """Why ``baseline`` should be re-scored under ``head``'s eval config, or None.

    Yes when the eval config differs (content hash, effective config, or judge models) and
    every eval set of the head is in the baseline with the same content hash, and at least
    one baseline run kept its actual invocations.
    """
    config_changed = (
        baseline.eval_config_hash != head.eval_config_hash
        or baseline.eval_config != head.eval_config
        or baseline.judge_models != head.judge_models
    )
    if not config_changed or not head.eval_sets:
        return None
    base_hashes = {s.eval_set_id: s.content_hash for s in baseline.eval_sets}
    for eval_set in head.eval_sets:
        if not eval_set.content_hash or base_hashes.get(eval_set.eval_set_id) != (
            eval_set.content_hash
        ):
            return None
    if not any(
        run.actual_invocations for s in baseline.eval_sets for c in s.eval_cases for run in c.runs
    ):
        return None
    return "the eval config changed and the eval sets did not"


def _invocations(recorded: list[dict[str, Any]]) -> list[Invocation]:
    """Recorded dumps as ADK invocations. Rubrics are dropped: ADK copied the case's and
    expected invocation's rubrics onto them, and copies them again (from the head's eval
    set) when it evaluates, refusing duplicates."""
    return [Invocation.model_validate({**inv, "rubrics": None}) for inv in recorded]


class _SuiteRescore:
    """Re-scores one suite's baseline record; :meth:`run` returns the new record."""

    def __init__(
        self, suite: Suite, head: SuiteRecord, parallelism: int, repo_root: Path, console: Console
    ) -> None:
        self.suite = suite
        self.head = head
        self.parallelism = parallelism
        self.repo_root = repo_root
        self.console = console

    def _load(self) -> tuple[LoadedEvalConfig, dict[str, LoadedEvalSet]]:
        try:
            config = load_eval_config(
                self.suite.eval_config_path,
                self.suite.thresholds,
                self.suite.higher_is_better,
            )
            loaded = {}
            for path in self.suite.eval_set_paths:
                eval_set = load_eval_set(path)
                prepare_eval_set(eval_set, config)
                loaded[eval_set.eval_set.eval_set_id] = eval_set
        except AdkEvalActionError as e:
            raise RescoreError(f"suite {self.suite.name}: {e}") from e
        return config, loaded

    def run(self, baseline: SuiteRecord) -> SuiteRecord:
        config, loaded = self._load()
        record = baseline.model_copy(deep=True)
        record.eval_config_hash = self.head.eval_config_hash
        record.eval_config = self.head.eval_config
        record.eval_config_file = self.head.eval_config_file
        record.judge_models = dict(self.head.judge_models)
        root_agent = app = None
        if self.suite.agent_dir is not None:
            try:
                # Not run: imported so custom metric modules resolve as in the head run.
                app, root_agent = _import_agent(self.suite.agent_dir, self.repo_root)
            except AgentLoadError as e:
                self.console(f"warning: re-score of {self.suite.name}: {e}")
        asyncio.run(self._score_all(record, config, loaded, root_agent, app))
        infer_directions(record, set(self.suite.higher_is_better))
        return record

    async def _score_all(
        self,
        record: SuiteRecord,
        config: LoadedEvalConfig,
        loaded: dict[str, LoadedEvalSet],
        root_agent: Any,
        app: Any,
    ) -> None:
        app_name = self.suite.agent_dir.name if self.suite.agent_dir else self.suite.name
        manager = InMemoryEvalSetsManager()
        for eval_set in loaded.values():
            _add_eval_set(manager, app_name, eval_set.eval_set)
        registry = register_custom_metrics_from_config(
            config.eval_config, MetricEvaluatorRegistry()
        )
        eval_metrics = get_eval_metrics_from_config(config.eval_config)
        args = {
            "root_agent": root_agent,
            "eval_sets_manager": manager,
            "session_service": InMemorySessionService(),
            "app": app,
        }
        semaphore = asyncio.Semaphore(self.parallelism)
        jobs = []
        for eval_set in record.eval_sets:
            if eval_set.eval_set_id not in loaded:
                continue  # removed in the head: kept as recorded
            for case in eval_set.eval_cases:
                for index, run in enumerate(case.runs):
                    if run.actual_invocations:
                        jobs.append(
                            self._score_run(
                                semaphore,
                                args,
                                registry,
                                eval_metrics,
                                config,
                                app_name,
                                eval_set.eval_set_id,
                                case,
                                index,
                            )
                        )
        handler = _JudgeFailureHandler(level=logging.WARNING)
        judge_logger = logging.getLogger(_JUDGE_LOGGER)
        judge_logger.addHandler(handler)
        try:
            await asyncio.gather(*jobs)
        finally:
            judge_logger.removeHandler(handler)

    async def _score_run(
        self,
        semaphore: asyncio.Semaphore,
        args: dict[str, Any],
        registry: MetricEvaluatorRegistry,
        eval_metrics: list[EvalMetric],
        config: LoadedEvalConfig,
        app_name: str,
        eval_set_id: str,
        case: EvalCaseRecord,
        index: int,
    ) -> None:
        runs = case.runs
        run = runs[index]
        try:
            inferences = _invocations(run.actual_invocations or [])
        except ValidationError as e:
            runs[index] = run.model_copy(
                update={
                    "status": CaseStatus.ERROR,
                    "metrics": [],
                    "error": f"recorded invocations could not be re-scored: {e.errors()[0]['msg']}",
                }
            )
            return
        inference = InferenceResult(
            app_name=app_name,
            eval_set_id=eval_set_id,
            eval_case_id=case.eval_id,
            inferences=inferences,
            session_id=None,
            status=InferenceStatus.SUCCESS,
        )
        async with semaphore:
            result, recorder, error = await _evaluate_one(args, registry, inference, eval_metrics)
        if result is None:
            runs[index] = run.model_copy(
                update={
                    "status": CaseStatus.ERROR,
                    "metrics": [],
                    "error": f"re-score failed: {error}",
                }
            )
            return
        rescored = run_record_from_adk(result, run.run, config.metric_meta, recorder.reasons)
        # Keep the invocations as recorded (with ADK's rubric copies), not the re-copied ones.
        rescored.actual_invocations = run.actual_invocations
        rescored.session_id = run.session_id
        runs[index] = rescored


def rescore_baseline(
    baseline: RunResults,
    head: RunResults,
    console: Console,
    *,
    suites: list[Suite],
    parallelism: int,
    repo_root: Path,
) -> list[str]:
    """Re-scores, in place, each suite of ``baseline`` whose eval config alone changed
    (:func:`rescore_reason`) under the head's eval config; returns the suites re-scored.

    A suite is replaced only once its re-score completed, so a failure leaves it as it was
    recorded.

    Raises:
        RescoreError: a head suite's eval config or eval sets do not load.
    """
    base_by_name = {s.name: i for i, s in enumerate(baseline.suites)}
    todo = [
        (head_suite, base_by_name[head_suite.name])
        for head_suite in head.suites
        if head_suite.name in base_by_name
        and not any(e.kind in ("config", "eval_set") for e in head_suite.errors)
        and rescore_reason(baseline.suites[base_by_name[head_suite.name]], head_suite)
    ]
    if not todo:
        return []
    by_name = {s.name: s for s in suites}
    done = []
    for head_suite, index in todo:
        suite = by_name.get(head_suite.name)
        if suite is None:
            continue
        console(f"baseline: re-scoring suite {suite.name} under the head's eval config")
        worker = _SuiteRescore(suite, head_suite, parallelism, repo_root, console)
        baseline.suites[index] = worker.run(baseline.suites[index])
        done.append(suite.name)
    return done


__all__ = ["RescoreError", "rescore_baseline", "rescore_reason"]

"""The one evaluation harness: google-adk's ``LocalEvalService`` set up for a suite.

Both the engine (inference + metrics) and re-scoring (metrics on recorded invocations) drive
ADK through :class:`SuiteHarness`, set up as ``adk eval`` sets it up
(google.adk.cli.cli_tools_click.cli_eval): the eval sets in an ``InMemoryEvalSetsManager``,
the eval config's custom metrics registered in a fresh ``MetricEvaluatorRegistry``
(``register_custom_metrics_from_config``, or what older google-adk's CLI does:
adk.compat), the metrics from ``get_eval_metrics_from_config``, one
``InMemorySessionService``. What is added is per eval case run:

* :meth:`SuiteHarness.infer` runs one eval case (``perform_inference`` with its id), so a
  scheduler can interleave cases, runs and suites.
* :meth:`SuiteHarness.evaluate` evaluates one inference with a
  :class:`~adk_eval_action.adk.evaluate.recording.RecordingRegistry` of its own, so the reason a
  metric was not evaluated stays with its case.

Everything is async and runs on the caller's event loop. Process-wide changes are scoped
by :func:`evaluation_scope`: the agent imports (``sys.path``, ``sys.modules``), ADK's
judge and inference loggers and LiteLLM's banner flag are restored when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.adk.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.eval_result import EvalCaseResult
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.evaluator import Evaluator
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.sessions.in_memory_session_service import InMemorySessionService

from adk_eval_action.adk.compat import (
    custom_metric_registry,
    inference_config,
    local_eval_service,
)
from adk_eval_action.adk.evaluate.recording import (
    MetricRecorder,
    RecordingRegistry,
    capture_judge_failures,
)
from adk_eval_action.adk.evaluate.verdicts import record_verdicts
from adk_eval_action.adk.files.convert import MetricMeta, run_record_from_adk
from adk_eval_action.adk.runtime.agent import ImportScope, LoadedAgent
from adk_eval_action.adk.runtime.case_failures import capture_inference_failures
from adk_eval_action.adk.runtime.model_calls import (
    ModelCalls,
    RetryingUserSimulatorProvider,
    litellm_flag_restored,
)
from adk_eval_action.adk.runtime.model_faults import ModelCallError
from adk_eval_action.results.model import RunRecord

T = TypeVar("T")


@dataclass
class CaseEvaluation:
    """The metrics of one eval case run: ADK's ``EvalCaseResult`` (None when the evaluation
    itself failed, ``error`` then says why) and what the run's
    :class:`~adk_eval_action.adk.evaluate.recording.MetricRecorder` kept (why metrics were not
    evaluated, rubrics without a verdict, judge warnings, thought parts left out) and
    ``model_error`` (a judge whose model could not be reached). :meth:`run_record` converts
    it."""

    result: EvalCaseResult | None
    recorder: MetricRecorder = field(default_factory=MetricRecorder)
    error: str | None = None
    model_error: ModelCallError | None = None

    @property
    def reasons(self) -> dict[str, str]:
        """Metric name -> why it was not evaluated."""
        return self.recorder.reasons

    def run_record(self, run: int, metas: Mapping[str, MetricMeta]) -> RunRecord:
        """The run's record (``run_record_from_adk``) with the recorder's findings: errored
        metrics as ``error``, rubric metrics' verdicts per invocation with each gap's reason
        on its rubric (:func:`~adk_eval_action.adk.evaluate.verdicts.record_verdicts`).

        Raises:
            ValueError: there is no result (:attr:`error` says why).
        """
        if self.result is None:
            raise ValueError(f"no result to record: {self.error}")
        record = run_record_from_adk(
            self.result, run, metas, self.recorder.reasons, errored=self.recorder.errored
        )
        for metric in record.metrics:
            verdicts = self.recorder.verdicts.get(metric.metric_name)
            if verdicts is not None:
                record_verdicts(metric, verdicts)
        return record


@contextmanager
def evaluation_scope(agent_dirs: Iterable[Path], repo_root: Path) -> Iterator[None]:
    """The process-wide settings an evaluation needs, undone on exit: the agent folders and
    ``repo_root`` importable (:class:`~adk_eval_action.adk.runtime.agent.ImportScope`) and judge
    failures recorded instead of logged
    (:func:`~adk_eval_action.adk.evaluate.recording.capture_judge_failures`), and failed inferences
    kept for their case run instead of printed
    (:func:`~adk_eval_action.adk.runtime.case_failures.capture_inference_failures`), and
    LiteLLM's banner flag
    (:func:`~adk_eval_action.adk.runtime.model_calls.litellm_flag_restored`). Load agents and
    run :class:`SuiteHarness` calls inside it."""
    with (
        ImportScope(agent_dirs, repo_root),
        capture_judge_failures(),
        capture_inference_failures(),
        litellm_flag_restored(),
    ):
        yield


async def bounded(limit: int, jobs: Iterable[Awaitable[T]]) -> list[T]:
    """Awaits ``jobs`` with at most ``limit`` in flight, started in the given order;
    returns their results in that order."""
    semaphore = asyncio.Semaphore(max(1, limit))

    async def one(job: Awaitable[T]) -> T:
        async with semaphore:
            return await job

    return list(await asyncio.gather(*(one(job) for job in jobs)))


class SuiteHarness:
    """ADK's evaluation machinery for one suite (module docstring).

    Args:
        app_name: The app name ADK files the eval sets and sessions under (the agent
            package's name, as ``adk eval`` uses it).
        eval_config: ADK's eval config of the suite (criteria, custom metrics).
        eval_sets: The suite's eval sets, prepared (:mod:`adk_eval_action.adk.files.prepare`);
            eval set ids must be unique.
        agent: The agent to run; None when only recorded invocations are evaluated.
        calls: The run's model calls: judge and user-simulator models retried and counted
            there (:mod:`adk_eval_action.adk.runtime.model_calls`); None leaves ADK's own retries.
        on_evaluator: Called with each metric evaluator ADK builds, before its judge is
            retried (to put the judge model behind a concurrency limit,
            :mod:`adk_eval_action.adk.runtime.model_limits`).
        repo_root: The repository root: a custom metric that raised in code under it is
            named with that file and line (:meth:`.recording.MetricRecorder.raised`).

    Raises:
        ValueError: two eval sets share an id, or an eval set repeats an eval id (ADK's
            ``InMemoryEvalSetsManager`` refuses both).
    """

    def __init__(
        self,
        app_name: str,
        eval_config: EvalConfig,
        eval_sets: Iterable[EvalSet],
        agent: LoadedAgent | None = None,
        calls: ModelCalls | None = None,
        on_evaluator: Callable[[Evaluator], None] | None = None,
        repo_root: Path | None = None,
    ) -> None:
        self.app_name = app_name
        self.repo_root = repo_root
        self.agent = agent
        self.calls = calls
        self._on_evaluator = on_evaluator
        # The eval config's user simulator, as `adk eval` passes it (cli_tools_click).
        self._simulators = RetryingUserSimulatorProvider(eval_config.user_simulator_config, calls)
        self._manager = InMemoryEvalSetsManager()
        for eval_set in eval_sets:
            self._manager.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
            for case in eval_set.eval_cases:
                self._manager.add_eval_case(
                    app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case
                )
        self._registry = custom_metric_registry(eval_config)
        # Live inference when the eval config sets live_model_config, as `adk eval` runs it.
        self._inference_config = inference_config(eval_config)
        self.eval_metrics: list[EvalMetric] = get_eval_metrics_from_config(eval_config)
        self._session_service = InMemorySessionService()

    def _service(self, registry: Any) -> LocalEvalService:
        return local_eval_service(
            root_agent=self.agent.root_agent if self.agent else None,
            eval_sets_manager=self._manager,
            session_service=self._session_service,
            metric_evaluator_registry=registry,
            app=self.agent.app if self.agent else None,
            user_simulator_provider=self._simulators,
        )

    async def infer(self, eval_set_id: str, eval_id: str) -> InferenceResult:
        """Runs the agent on one eval case (ADK's ``perform_inference`` for that case id),
        live when the eval config sets ``live_model_config`` (:func:`.compat.inference_config`).

        Returns ADK's ``InferenceResult``; a failed agent run is ``status`` FAILURE with
        ``error_message`` (ADK catches it), never an exception.

        Raises:
            ValueError: the harness has no agent.
            google.adk.errors.not_found_error.NotFoundError: unknown eval set id.
        """
        if self.agent is None:
            raise ValueError(f"{self.app_name}: no agent to run")
        request = InferenceRequest(
            app_name=self.app_name,
            eval_set_id=eval_set_id,
            eval_case_ids=[eval_id],
            inference_config=self._inference_config,
        )
        async for result in self._service(self._registry).perform_inference(request):
            return result
        raise ValueError(f"eval case {eval_id} is not in eval set {eval_set_id}")

    def recorded_inference(
        self, eval_set_id: str, eval_id: str, invocations: list[Invocation],
        session_id: str | None = None,
    ) -> InferenceResult:
        """An inference made of invocations recorded earlier (re-scoring, no agent run),
        named by the recorded run's ``session_id``.

        Never a None session id: google-adk 2.5 and older copy it into
        ``EvalCaseResult.session_id``, a required ``str`` there, and every re-scored case
        failed validation (later versions, 2.7.1 among them, write ``""`` themselves). The
        session is not in this harness's session service, so ADK finds no session details,
        as for None.
        """
        return InferenceResult(
            app_name=self.app_name,
            eval_set_id=eval_set_id,
            eval_case_id=eval_id,
            inferences=invocations,
            session_id=session_id or "",
            status=InferenceStatus.SUCCESS,
        )

    async def evaluate(self, inference: InferenceResult) -> CaseEvaluation:
        """Evaluates the suite's metrics on one inference (ADK's ``evaluate``) with a
        recorder of its own. Never raises: a failure of the whole evaluation is
        :attr:`CaseEvaluation.error`; a metric that could not run is NOT_EVALUATED in the
        result with its reason in :attr:`CaseEvaluation.reasons`."""
        recorder = MetricRecorder(self.repo_root)
        registry = RecordingRegistry(self._registry, recorder, self.calls, self._on_evaluator)
        service = self._service(registry)
        request = EvaluateRequest(
            inference_results=[inference],
            evaluate_config=EvaluateConfig(eval_metrics=self.eval_metrics, parallelism=1),
        )
        try:
            async for case_result in service.evaluate(request):
                return CaseEvaluation(case_result, recorder, None, recorder.model_error)
        except Exception as e:  # noqa: BLE001 - one case's failure must not lose the others
            return CaseEvaluation(None, recorder, f"{type(e).__name__}: {e}")
        return CaseEvaluation(None, recorder, "evaluation produced no result")

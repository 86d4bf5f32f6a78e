"""Why a metric was not evaluated, kept instead of only logged.

google-adk's ``LocalEvalService`` turns a metric that raised into ``NOT_EVALUATED`` and
logs the exception (local_eval_service._evaluate_metric_for_eval_case), and ``LlmAsJudge``
logs a judge sample that failed at WARNING and goes on (llm_as_judge). The harness keeps
both reasons, per eval case run:

* :class:`RecordingRegistry` is the metric registry ADK sees: it wraps each evaluator so
  an exception (or a ``NOT_EVALUATED`` result) is recorded in the case's
  :class:`MetricRecorder` with its reason.
* :func:`capture_judge_failures` routes the judge logger's warnings to the recorder of the
  case being evaluated (a context variable each evaluator sets; tasks ADK spawns inherit
  it), and keeps them off the console; the logger is restored on exit.

Rubric metrics are also scoped here to the turns that have rubrics of their type, so a turn
without rubrics is skipped instead of failing the whole metric.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, Evaluator, PerInvocationResult
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry

from adk_eval_action.adk.convert import judge_model
from adk_eval_action.adk.model_calls import ModelCalls, wrap_judge
from adk_eval_action.adk.model_faults import ModelCallError
from adk_eval_action.adk.rubrics import RUBRIC_METRIC_TYPES

JUDGE_LOGGER = "google_adk.google.adk.evaluation.llm_as_judge"
"""The logger ADK's LlmAsJudge reports failed judge samples on (``google_adk.`` + module)."""

NO_RUBRICS_HINT = (
    "add rubrics to its criterion in the eval config, to the eval case, or to an expected "
    "invocation (untyped case and invocation rubrics get this metric's rubric type)"
)


class MetricRecorder:
    """Why each metric of one eval case run was not evaluated: ``reasons`` maps metric name
    to reason (the first one given); ``model_error`` is the first judge call that could not
    reach its model after the retries (:mod:`adk_eval_action.adk.model_calls`)."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}
        self.model_error: ModelCallError | None = None

    def record(self, metric_name: str, reason: str) -> None:
        """Keeps the first reason given for a metric."""
        self.reasons.setdefault(metric_name, reason)


# The recorder and metric of the evaluation running in this task; tasks ADK spawns inherit
# them, so a judge failure logged deep inside ADK reaches the right case.
_CURRENT_RECORDER: contextvars.ContextVar[MetricRecorder | None] = contextvars.ContextVar(
    "adk_eval_action_recorder", default=None
)
_CURRENT_METRIC: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "adk_eval_action_metric", default=None
)


class _JudgeFailureHandler(logging.Handler):
    """Catches the judge-sample failures that ADK's LlmAsJudge only logs."""

    def emit(self, record: logging.LogRecord) -> None:
        recorder, metric = _CURRENT_RECORDER.get(), _CURRENT_METRIC.get()
        if recorder is None or metric is None:
            return
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, ModelCallError):
            recorder.model_error = recorder.model_error or error
            recorder.record(metric, f"{error.fault.kind}: {error}")
            return
        detail = f"{type(error).__name__}: {error}" if error else record.getMessage()
        recorder.record(metric, f"judge call failed: {detail}")


@contextmanager
def capture_judge_failures() -> Iterator[None]:
    """Within the block, judge-sample failures that ADK logs at WARNING are recorded as the
    reason of the metric being evaluated and not printed; the judge logger's handlers,
    level and propagation are restored on exit."""
    logger = logging.getLogger(JUDGE_LOGGER)
    handler = _JudgeFailureHandler(level=logging.WARNING)
    saved = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def exception_reason(error: BaseException) -> str:
    """A metric's failure as one line saying what to fix (an ImportError names the custom
    metric's ``code_config.name``; an unknown metric says it is not in ADK's registry)."""
    if isinstance(error, ImportError):
        cause = error.__cause__
        return (
            f"{error}{f' ({cause})' if cause else ''}: check the custom metric's code_config.name"
        )
    text = (str(error) or type(error).__name__).rstrip(".")
    if "not found in registry" in text:
        return f"{text}: not a google-adk metric and not in custom_metrics"
    return f"{type(error).__name__}: {text}"


class _RecordingEvaluator(Evaluator):
    """Delegates to ADK's evaluator; records failures; scopes rubric metrics to the turns
    that have rubrics."""

    def __init__(self, inner: Evaluator, eval_metric: EvalMetric, recorder: MetricRecorder):
        self._inner = inner
        self._metric = eval_metric
        self._recorder = recorder

    async def evaluate_invocations(
        self,
        actual_invocations: list[Any],
        expected_invocations: list[Any] | None = None,
        conversation_scenario: Any = None,
    ) -> EvaluationResult:
        name = self._metric.metric_name
        _CURRENT_RECORDER.set(self._recorder)
        _CURRENT_METRIC.set(name)
        try:
            if name in RUBRIC_METRIC_TYPES:
                return await self._evaluate_rubric_metric(
                    actual_invocations, expected_invocations, conversation_scenario
                )
            return await self._call(actual_invocations, expected_invocations, conversation_scenario)
        except Exception as e:
            self._recorder.record(name, exception_reason(e))
            raise

    async def _call(self, actual: list[Any], expected: list[Any] | None, scenario: Any) -> Any:
        result = self._inner.evaluate_invocations(
            actual_invocations=actual,
            expected_invocations=expected,
            conversation_scenario=scenario,
        )
        if inspect.isawaitable(result):
            result = await result
        if result.overall_eval_status == EvalStatus.NOT_EVALUATED and (
            self._metric.metric_name not in self._recorder.reasons
        ):
            self._recorder.record(
                self._metric.metric_name,
                "the judge gave no parsable verdict"
                if judge_model(self._metric)
                else "the metric returned NOT_EVALUATED",
            )
        return result

    async def _evaluate_rubric_metric(
        self, actual: list[Any], expected: list[Any] | None, scenario: Any
    ) -> EvaluationResult:
        rubric_type = RUBRIC_METRIC_TYPES[self._metric.metric_name]
        criterion = self._metric.criterion.model_dump() if self._metric.criterion else {}
        has_config_rubrics = bool(criterion.get("rubrics"))
        judged = [
            i
            for i, inv in enumerate(actual)
            if has_config_rubrics or any(r.type == rubric_type for r in inv.rubrics or [])
        ]
        if not judged:
            raise ValueError(f"no rubrics for `{self._metric.metric_name}`: {NO_RUBRICS_HINT}")
        if len(judged) == len(actual):
            return await self._call(actual, expected, scenario)
        inner = await self._call(
            [actual[i] for i in judged],
            [expected[i] for i in judged] if expected is not None else None,
            scenario,
        )
        by_index = dict(zip(judged, inner.per_invocation_results, strict=False))
        per_invocation = [
            by_index.get(i)
            or PerInvocationResult(actual_invocation=inv, eval_status=EvalStatus.NOT_EVALUATED)
            for i, inv in enumerate(actual)
        ]
        return inner.model_copy(update={"per_invocation_results": per_invocation})


class RecordingRegistry:
    """The metric registry ``LocalEvalService`` sees for one eval case run: ADK's registry
    (``inner``), with each evaluator wrapped so failures land in ``recorder``, and its judge
    model's calls retried and counted in ``calls`` (None: ADK's own retries).
    ``on_evaluator`` is called with each evaluator ADK built first (the engine puts the
    judge model behind its concurrency limit there, so each retry waits for a slot)."""

    def __init__(
        self,
        inner: MetricEvaluatorRegistry,
        recorder: MetricRecorder,
        calls: ModelCalls | None = None,
        on_evaluator: Callable[[Evaluator], None] | None = None,
    ):
        self._inner = inner
        self._recorder = recorder
        self._calls = calls
        self._on_evaluator = on_evaluator

    def get_evaluator(self, eval_metric: EvalMetric) -> Evaluator:
        """ADK's evaluator for ``eval_metric``, wrapped.

        Raises:
            Exception: whatever ADK's registry raises (NotFoundError for an unknown metric,
                ImportError for a custom metric that does not import), recorded first.
        """
        try:
            evaluator = self._inner.get_evaluator(eval_metric)
        except Exception as e:
            self._recorder.record(eval_metric.metric_name, exception_reason(e))
            raise
        if self._on_evaluator is not None:
            self._on_evaluator(evaluator)
        if self._calls is not None:
            wrap_judge(evaluator, self._calls)
        return _RecordingEvaluator(evaluator, eval_metric, self._recorder)

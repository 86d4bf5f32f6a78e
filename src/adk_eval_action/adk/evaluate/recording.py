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

Rubric metrics are judged here one invocation at a time against its own rubrics, only on
the turns that have rubrics of their type, and every rubric sent without a usable verdict is
kept with the reason (:mod:`.verdicts`). Every evaluator is given the invocations without
thought parts (:mod:`.thoughts`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import os
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.evaluator import EvaluationResult, Evaluator, PerInvocationResult
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry

from adk_eval_action.adk.evaluate import answer_bound
from adk_eval_action.adk.evaluate.thoughts import without_thoughts
from adk_eval_action.adk.evaluate.verdicts import (
    CONVERSATION_LEVEL_METRICS,
    JUDGE_LOGGERS,
    Invoke,
    JudgeNotesHandler,
    RubricVerdicts,
    config_rubrics,
    gaps_reason,
    judge_conversation,
    judge_each_invocation,
    settle_user_turns,
)
from adk_eval_action.adk.files.convert import judge_model
from adk_eval_action.adk.files.rubrics import RUBRIC_METRIC_TYPES
from adk_eval_action.adk.runtime.case_failures import innermost_user_frame
from adk_eval_action.adk.runtime.model_calls import JUDGE_FAILURES, ModelCalls, wrap_judge
from adk_eval_action.adk.runtime.model_faults import (
    JudgeCallError,
    ModelCallError,
    described_call_error,
)
from adk_eval_action.adk.runtime.user_exits import exits_as_errors, unwrapped
from adk_eval_action.logscope import diverted
from adk_eval_action.results.records import JUDGE_CALL_FAILED, NO_PARSABLE_VERDICT

JUDGE_LOGGER = "google_adk.google.adk.evaluation.llm_as_judge"
"""The logger ADK's LlmAsJudge reports failed judge samples on (``google_adk.`` + module)."""

NO_RUBRICS_HINT = (
    "add rubrics to its criterion in the eval config, to the eval case, or to an expected "
    "invocation (untyped case and invocation rubrics get this metric's rubric type)"
)


class MetricRecorder:
    """What the evaluation of one eval case run said besides ADK's result: ``reasons``
    (metric name -> why it was not evaluated, the first one given), ``errored`` (metrics
    that raised, so their NOT_EVALUATED is an error), ``verdicts`` (rubric metric name -> its
    verdicts per invocation and the rubrics without one), ``warnings`` (ADK's judge warnings
    no gap explains), ``thoughts`` (thought parts left out of what the evaluators saw) and
    ``model_error`` (the first judge call that could not reach its model after the retries,
    :mod:`.model_calls`)."""

    def __init__(self, repo_root: Path | None = None) -> None:
        self.repo_root = repo_root
        self.reasons: dict[str, str] = {}
        self.errored: set[str] = set()
        self.verdicts: dict[str, RubricVerdicts] = {}
        self.warnings: list[str] = []
        self.thoughts = 0
        self.model_error: ModelCallError | None = None

    def raised(self, error: BaseException) -> str:
        """Why a metric that raised has no score (:func:`exception_reason`), with the file
        and line in the repository's own code where it raised (``ValueError: no (at
        travel_agent/metrics.py:12)``, ``repo_root`` relative) when it raised there."""
        reason = exception_reason(error)
        if self.repo_root is None:
            return reason
        root = self.repo_root.resolve()
        frame = innermost_user_frame(error, root)
        if frame is None:
            return reason
        where = Path(frame.filename).resolve().relative_to(root)
        return f"{reason} (at {where}:{frame.lineno})"

    def record(self, metric_name: str, reason: str, *, errored: bool = False) -> None:
        """Keeps the first reason given for a metric; ``errored``: it raised."""
        self.reasons.setdefault(metric_name, reason)
        if errored:
            self.errored.add(metric_name)

    def add_verdicts(self, metric_name: str, verdicts: RubricVerdicts) -> None:
        """Keeps a rubric metric's verdicts per invocation and gaps (its reason names them),
        and the judge warnings."""
        self.verdicts[metric_name] = verdicts
        if verdicts.gaps:
            self.record(metric_name, gaps_reason(verdicts.gaps))
        self.warnings += [w for w in verdicts.warnings if w not in self.warnings]


# The recorder and metric of the evaluation running in this task; tasks ADK spawns inherit
# them, so a judge failure logged deep inside ADK reaches the right case.
_CURRENT_RECORDER: contextvars.ContextVar[MetricRecorder | None] = contextvars.ContextVar(
    "adk_eval_action_recorder", default=None
)
_CURRENT_METRIC: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "adk_eval_action_metric", default=None
)


def _record_model_error(recorder: MetricRecorder, metric: str, error: ModelCallError) -> None:
    """A judge call that could not reach its model: the case run's model error, and the
    metric's reason."""
    recorder.model_error = recorder.model_error or error
    recorder.record(metric, f"{error.error_kind}: {error}", errored=True)


def _judge_failed(recorder: MetricRecorder, metric: str, error: Exception) -> None:
    """A judge call of ``metric`` that failed for good (``model_calls.JUDGE_FAILURES``): a
    model that could not be reached is the case run's model error; a judge model that
    raised is the metric's reason (:data:`JUDGE_CALL_FAILED`)."""
    if isinstance(error, ModelCallError):
        _record_model_error(recorder, metric, error)
    else:
        recorder.record(metric, f"{JUDGE_CALL_FAILED}{described_call_error(error)}")


class _JudgeFailureHandler(logging.Handler):
    """Catches the judge-sample failures that ADK's LlmAsJudge only logs."""

    def emit(self, record: logging.LogRecord) -> None:
        recorder, metric = _CURRENT_RECORDER.get(), _CURRENT_METRIC.get()
        if recorder is None or metric is None or record.name != JUDGE_LOGGER:
            return
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, ModelCallError):
            _record_model_error(recorder, metric, error)
            return
        detail = described_call_error(error) if error else record.getMessage()
        recorder.record(metric, f"{JUDGE_CALL_FAILED}{detail}")


@contextmanager
def capture_judge_failures() -> Iterator[None]:
    """Within the block, judge-sample failures that ADK logs at WARNING are recorded as the
    reason of the metric being evaluated, and every warning of ADK's judges is kept for the
    call that caused it (:class:`~adk_eval_action.adk.evaluate.verdicts.JudgeNotesHandler`), none
    printed; the judge loggers' handlers, level and propagation are restored on exit."""
    loggers = [logging.getLogger(name) for name in JUDGE_LOGGERS]
    handlers: list[logging.Handler] = [
        _JudgeFailureHandler(level=logging.WARNING), JudgeNotesHandler(level=logging.WARNING)
    ]
    with diverted(loggers, handlers, logging.WARNING):
        yield


def exception_reason(error: BaseException) -> str:
    """A metric's failure as one line saying what to fix (an ImportError names the custom
    metric's ``code_config.name``; an unknown metric says it is not in ADK's registry)."""
    if isinstance(error, ImportError):
        cause = error.__cause__
        return (
            f"{error}{f' ({cause})' if cause else ''}: check the custom metric's code_config.name"
        )
    error = unwrapped(error)
    text = (str(error) or type(error).__name__).rstrip(".")
    if "not found in registry" in text:
        return f"{text}: not a google-adk metric and not in custom_metrics"
    return f"{type(error).__name__}: {text}"


_ADK_EVALUATION = f"{os.sep}google{os.sep}adk{os.sep}evaluation{os.sep}"


def no_sample_parsed(error: BaseException) -> bool:
    """Whether ``error`` is google-adk's own ``ZeroDivisionError`` for a judge none of whose
    answers it could read as a verdict: before 2.7 ``final_response_match_v2`` divides by the
    number of invocations judged (``aggregate_invocation_results``), none when every answer
    was off-format; later versions return NOT_EVALUATED instead. Found by the exception and
    its innermost frame, in google-adk's ``evaluation`` package."""
    frames = traceback.extract_tb(error.__traceback__)
    return (isinstance(error, ZeroDivisionError) and bool(frames)
            and _ADK_EVALUATION in frames[-1].filename)


UNALIGNED_ALLOWED = tuple(
    s for s in (EvalStatus.NOT_EVALUATED, getattr(EvalStatus, "INFORMATIONAL", None))
    if s is not None
)
"""Statuses of a metric's result that may come without one per-invocation result per
invocation: google-adk's LocalEvalService (_evaluate_metric_for_eval_case) exempts
NOT_EVALUATED, and INFORMATIONAL where that status exists (later 2.x: it only warns)."""


def per_invocation_mismatch(given: int, invocations: int) -> str:
    """Why a metric's result is refused: ``given`` per-invocation results for
    ``invocations`` invocations (LocalEvalService matches them by position)."""
    noun = "invocation" if invocations == 1 else "invocations"
    return (
        f"it returned {given} per-invocation results for {invocations} {noun}: an "
        "EvaluationResult needs one in per_invocation_results per invocation"
    )


class _RecordingEvaluator(Evaluator):
    """Delegates to ADK's evaluator on the invocations without thought parts; records
    failures; judges rubric metrics turn by turn (:mod:`.verdicts`)."""

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
        JUDGE_FAILURES.set(functools.partial(_judge_failed, self._recorder, name))
        actual, left_out = without_thoughts(actual_invocations)
        expected, left_out_expected = without_thoughts(expected_invocations)
        self._recorder.thoughts = max(self._recorder.thoughts, left_out + left_out_expected)
        invoke = functools.partial(self._invoke, scenario=conversation_scenario)
        judged = judge_model(self._metric) is not None
        too_long = answer_bound.too_long(actual or []) if answer_bound.reads_answers(
            name, judged) else None
        if too_long is not None:  # bounded work per answer (adk.evaluate.answer_bound)
            self._recorder.record(name, too_long)
            return EvaluationResult(
                overall_eval_status=EvalStatus.NOT_EVALUATED,
                per_invocation_results=[PerInvocationResult(
                    actual_invocation=a, eval_status=EvalStatus.NOT_EVALUATED)
                    for a in actual or []])
        try:
            if name in RUBRIC_METRIC_TYPES:
                return await self._evaluate_rubric_metric(actual or [], expected, invoke)
            return await self._call(invoke(actual or [], expected), len(actual or []))
        except Exception as e:
            # google-adk 1.x lets a judge's failure out of the evaluator (2.x logs it, see
            # _JudgeFailureHandler): a ModelCallError in the chain is the model's outage.
            cause: BaseException | None = e
            while cause is not None and not isinstance(cause, (ModelCallError, JudgeCallError)):
                cause = cause.__cause__ or cause.__context__
            if isinstance(cause, ModelCallError):
                _record_model_error(self._recorder, name, cause)
            elif isinstance(cause, JudgeCallError):  # the judge raised: the judge's fault
                self._recorder.record(name, f"{JUDGE_CALL_FAILED}{cause}")
            elif judged and no_sample_parsed(e):
                self._recorder.record(name, NO_PARSABLE_VERDICT)  # not its code's fault
                raise
            self._recorder.record(name, self._recorder.raised(e), errored=True)
            raise

    async def _invoke(
        self, actual: list[Any], expected: list[Any] | None, scenario: Any = None
    ) -> EvaluationResult:
        call = functools.partial(
            self._inner.evaluate_invocations, actual_invocations=actual,
            expected_invocations=expected, conversation_scenario=scenario)
        with exits_as_errors():  # a custom metric's sys.exit() is that metric raising
            if (self._metric.metric_name in answer_bound.THREADED_METRICS
                    and not inspect.iscoroutinefunction(self._inner.evaluate_invocations)):
                result = await asyncio.to_thread(call)  # CPU-bound: off the event loop
            else:
                result = call()
            return await result if inspect.isawaitable(result) else result

    async def _call(self, call: Awaitable[EvaluationResult], invocations: int
                    ) -> EvaluationResult:
        result = settle_user_turns(await call, self._metric)
        # LocalEvalService raises for the whole eval case on such a result
        # (_evaluate_metric_for_eval_case, "should return results for each invocation"); as
        # the metric's own raise it is that metric's error alone, its code's fault.
        given = len(result.per_invocation_results or [])
        if result.overall_eval_status not in UNALIGNED_ALLOWED and given != invocations:
            reason = per_invocation_mismatch(given, invocations)
            self._recorder.record(self._metric.metric_name, reason, errored=True)
            raise ValueError(reason)
        if result.overall_eval_status == EvalStatus.NOT_EVALUATED:
            self._recorder.record(
                self._metric.metric_name,
                NO_PARSABLE_VERDICT
                if judge_model(self._metric)
                else "the metric returned NOT_EVALUATED",
            )
        return result

    async def _evaluate_rubric_metric(
        self, actual: list[Any], expected: list[Any] | None, invoke: Invoke
    ) -> EvaluationResult:
        name = self._metric.metric_name
        rubric_type = RUBRIC_METRIC_TYPES[name]
        has_config_rubrics = bool(config_rubrics(self._metric))
        judged = [
            i
            for i, inv in enumerate(actual)
            if has_config_rubrics or any(r.type == rubric_type for r in inv.rubrics or [])
        ]
        if not judged:
            raise ValueError(f"no rubrics for `{name}`: {NO_RUBRICS_HINT}")
        if name in CONVERSATION_LEVEL_METRICS:
            verdicts = await judge_conversation(self._inner, invoke, self._metric, actual, expected)
        else:
            verdicts = await judge_each_invocation(
                self._inner, invoke, self._metric, actual, expected, judged
            )
        self._recorder.add_verdicts(name, verdicts)
        if verdicts.result.overall_eval_status == EvalStatus.NOT_EVALUATED:
            self._recorder.record(name, NO_PARSABLE_VERDICT)
        return verdicts.result


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
            self._recorder.record(eval_metric.metric_name, exception_reason(e), errored=True)
            raise
        if self._on_evaluator is not None:
            self._on_evaluator(evaluator)
        if self._calls is not None:
            wrap_judge(evaluator, self._calls)
        return _RecordingEvaluator(evaluator, eval_metric, self._recorder)

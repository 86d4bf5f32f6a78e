"""Model calls during an evaluation: retried on transient faults, and told apart from scores.

Every model call of a case run (the agent's models, the judge models, the user simulator)
goes through :class:`RetryingLlm`, which wraps the ``BaseLlm`` ADK would call:

* A call that fails with a transient fault (HTTP 408, 429/RESOURCE_EXHAUSTED, 500, 502, 503,
  504, a timeout, a dropped connection, a malformed answer, an answer without a candidate)
  is tried again after an
  exponential backoff with "equal jitter" (half the step fixed, half random; AWS Architecture
  Blog, "Exponential Backoff And Jitter"), and never sooner than the server asked
  (``google.rpc.RetryInfo.retryDelay`` in the error body, or a ``Retry-After`` header,
  RFC 9110 §10.2.3).
* Retries are bounded per call (:attr:`ModelRetrySettings.attempts`, and a wait longer than
  :attr:`ModelRetrySettings.max_delay_s` is not made) and per run (all waits of a run, and
  the attempts that timed out, share :attr:`ModelRetrySettings.run_budget_s`), so a
  persistent outage ends the run within its budget instead of minutes per case.
* An attempt's answer is read within :attr:`ModelRetrySettings.call_timeout_s`, its whole
  body counted, and up to ``model_reads.MAX_ANSWER_BYTES`` (:mod:`.model_reads`).
* When the retries run out, or the fault cannot be cured by waiting (a refused key),
  :class:`ModelCallError` is raised: a fault of the model service (kind ``model``) or of the
  credentials (kind ``credentials``), never a score.

Each answered call's token usage is counted, and every request is first admitted by the
run's budget (:mod:`.spend`, with the call's slot held), reserving what it is expected to
use until it answers (then settled at what it reported) or fails (then given back): a
request the budget refuses is never sent and ends the call with :class:`ModelCallError` of
kind ``budget``.

google-genai's own retries (``HttpRetryOptions``; google-adk's evaluation adds 7 attempts
from 5 s, ``google.adk.evaluation._retry_options_utils``) are switched off on the requests
this wrapper sends, so faults are retried once, here, and counted in :class:`ModelCalls`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import aclosing, contextmanager
from typing import Any, NoReturn

from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types
from pydantic import PrivateAttr

from adk_eval_action.project.config import ModelRetrySettings
from adk_eval_action.results.model import ModelCallCounts

from .model_faults import (
    EmptyAnswer,
    JudgeCallError,
    ModelCallError,
    ModelFault,
    Role,
    classify_fault,
    is_empty_answer,
)
from .model_limits import slot_and_model
from .model_reads import bound_reads, limit_request
from .spend import Reservation, Spend


class ModelCalls:
    """The model calls of one run: their settings, shared wait budget and counts (safe
    across threads).

    Args:
        settings: The retry settings of the run.
        rng: Source of jitter (a seeded ``random.Random`` makes waits reproducible).
        sleep: Awaited with the seconds of each wait (``asyncio.sleep``).
        spend: The run's token counts and budget (default: counts, no budget).
    """

    def __init__(
        self,
        settings: ModelRetrySettings,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        spend: Spend | None = None,
    ):
        self.settings = settings
        self.sleep = sleep
        self.spend = spend or Spend()
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._summary = ModelCallCounts()
        self._retry_causes: Counter[str] = Counter()
        self._failure_causes: Counter[str] = Counter()
        self._lost_s = 0.0  # seconds of attempts that timed out (:meth:`lost`)

    def backoff(self, attempt: int, fault: ModelFault) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None when no retry may be made
        (attempts used up, not retryable, a longer wait than ``max_delay_s`` asked for, or
        the run's budget would be overdrawn). A returned wait is taken from the budget."""
        settings = self.settings
        if not fault.retryable or attempt >= settings.attempts:
            return None
        step = min(settings.max_delay_s, settings.initial_delay_s * 2.0 ** (attempt - 1))
        with self._lock:
            wait = step / 2 + self._rng.uniform(0, step / 2)
            if fault.server_delay_s is not None:
                if fault.server_delay_s > settings.max_delay_s:
                    return None
                wait = max(wait, fault.server_delay_s)
            if self._summary.waited_s + self._lost_s + wait > settings.run_budget_s:
                return None
            self._summary.waited_s += wait
            self._summary.retries += 1
            self._retry_causes[fault.summary] += 1
        return wait

    def lost(self, seconds: float) -> None:
        """Counts ``seconds`` of an attempt that timed out (or whose answer was still
        arriving at its deadline) against the run's budget: waiting for an answer that
        never came is waiting too, so a model API that never finishes its answers stops
        being retried once the budget is spent."""
        with self._lock:
            self._lost_s += max(0.0, seconds)

    def finished(self, attempts: int, fault: ModelFault | None) -> None:
        """Records one call: ``attempts`` tries, and its final fault if it failed."""
        with self._lock:
            self._summary.calls += 1
            self._summary.retried_calls += attempts > 1
            if fault is not None:
                self._summary.failed_calls += 1
                self._failure_causes[fault.summary] += 1

    def summary(self) -> ModelCallCounts:
        """A snapshot of the counts, with the tokens used (priced) and the requests the
        budget refused."""
        usage = self.spend.usage()
        with self._lock:
            return self._summary.model_copy(
                update={
                    "retry_causes": dict(self._retry_causes),
                    "failure_causes": dict(self._failure_causes),
                    "waited_s": round(self._summary.waited_s, 3),
                    "refused_calls": self.spend.refused,
                    "usage": usage,
                }
            )


def _without_sdk_retries(request: LlmRequest, timeout_s: float) -> None:
    """One HTTP attempt per try: google-genai's retries off (ADK's eval default replaced),
    and its HTTP timeout set to the attempt's when the request sets none (milliseconds)."""
    config = request.config = request.config or genai_types.GenerateContentConfig()
    options = config.http_options = config.http_options or genai_types.HttpOptions()
    options.retry_options = genai_types.HttpRetryOptions(attempts=1)
    if timeout_s and options.timeout is None:
        options.timeout = int(timeout_s * 1000)


JUDGE_FAILURES: contextvars.ContextVar[Callable[[Exception], None] | None] = (
    contextvars.ContextVar("adk_eval_action_judge_failures", default=None))
"""Where a judge model's call that failed for good (:class:`ModelCallError`,
:class:`JudgeCallError`) is told before it is raised: the engine's recorder of the metric
being evaluated (``adk.evaluate.recording``). Some of google-adk's judges catch the
exception and keep only its text (``hallucinations_v1``), others log it (``LlmAsJudge``) or
let it out (google-adk 1.x); told here, each is the judge's fault alike."""


def _judge_failed(role: Role, error: Exception) -> Exception:
    """``error``, told to :data:`JUDGE_FAILURES` first when ``role`` is the judge's."""
    sink = JUDGE_FAILURES.get() if role == "judge" else None
    if sink is not None:
        sink(error)
    return error


class RetryingLlm(BaseLlm):
    """A ``BaseLlm`` that calls ``inner`` and retries its transient faults (module docstring).

    Not registered in ADK's LLMRegistry: it is put in place of a model ADK would call (an
    agent's ``model``, a judge). ``model`` is the inner model's name, so ADK records and
    traces the model the user named.

    Raises (from :meth:`generate_content_async`):
        ModelCallError: the call failed for good; ``__cause__`` is the last error.
    """

    inner: BaseLlm
    role: Role = "agent"
    _calls: ModelCalls | None = PrivateAttr(default=None)

    @classmethod
    def wrap(cls, inner: BaseLlm, calls: ModelCalls, role: Role = "agent") -> RetryingLlm:
        """``inner`` wrapped, its calls counted in ``calls`` (an already wrapped model is
        re-pointed at ``calls``)."""
        if isinstance(inner, RetryingLlm):
            inner = inner.inner
        wrapped = cls(model=inner.model, inner=inner, role=role)
        wrapped._calls = calls
        return wrapped

    @property
    def capabilities(self) -> Any:
        """The inner model's (google-adk 2.x; 1.x does not ask)."""
        return self.inner.capabilities

    def connect(self, llm_request: LlmRequest) -> Any:
        """The inner model's live connection (live calls are not retried)."""
        return self.inner.connect(llm_request)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields the inner model's responses; retries a try that failed before its first
        response (once a response went out, the turn is the caller's and a fault propagates
        as :class:`ModelCallError`). Each try is admitted by the run's budget first."""
        quiet_litellm()
        stats = self._calls or ModelCalls(ModelRetrySettings())
        timeout = stats.settings.call_timeout_s or None
        contents = [c.model_copy(deep=True) for c in llm_request.contents]
        attempt = 0
        while True:
            attempt += 1
            _without_sdk_retries(llm_request, timeout or 0)
            answer = _Answer()
            try:
                # Closed with the call (a caller that stops early), so the slot is freed.
                async with aclosing(
                    self._attempt(llm_request, stream, stats, timeout, answer)
                ) as responses:
                    async for response in responses:
                        yield response
            except GeneratorExit:
                # The caller stopped reading (ADK's judge returns at its first response):
                # the call succeeded and counts.
                stats.finished(attempt, None)
                raise
            except _Refused as refused:
                self._refused(stats, attempt, refused.fault)
            except Exception as error:  # noqa: BLE001 - classified; anything else re-raised
                fault = classify_fault(error)
                if fault is None:
                    stats.finished(attempt, None)
                    if self.role == "judge":  # the judge's fault, never the agent's
                        raise _judge_failed(self.role, JudgeCallError(self.model, error)
                                            ) from error
                    raise
                if fault.timed_out and answer.started is not None:  # the run's budget
                    stats.lost(time.monotonic() - answer.started)
                wait = None if answer.yielded else stats.backoff(attempt, fault)
                if wait is None:
                    stats.finished(attempt, fault)
                    raise _judge_failed(
                        self.role, ModelCallError(fault, self.model, self.role, attempt)
                    ) from error
                await stats.sleep(wait)
                # Models edit the request in place (ADK's Gemini appends a user turn); the
                # next try sends what the caller built.
                llm_request.contents = [c.model_copy(deep=True) for c in contents]
                continue
            finally:
                if answer.yielded:
                    stats.spend.answered(self.model, self.role, answer.usage,
                                         answer.reservation)
                else:
                    stats.spend.release(answer.reservation)
            stats.finished(attempt, None)
            return

    async def _attempt(
        self,
        llm_request: LlmRequest,
        stream: bool,
        stats: ModelCalls,
        timeout: float | None,
        answer: _Answer,
    ) -> AsyncGenerator[LlmResponse, None]:
        """One try: a slot held (adk.runtime.model_limits), the budget's admission, then the inner
        model's responses; ``answer`` notes when it started, that a response went out and
        the last usage reported.

        Raises:
            _Refused: the budget refused the request (it was not sent).
            EmptyAnswer: the first response has no candidate, or there is none.
        """
        # The attempt's timeout starts once a slot is held (adk.runtime.model_limits): a call
        # queued behind others is not a model that fails to answer.
        slot, model = slot_and_model(self.inner)
        async with slot:
            admitted = await stats.spend.admit(self.model, self.role)
            if isinstance(admitted, ModelFault):
                raise _Refused(admitted)
            answer.reservation = admitted
            answer.started = time.monotonic()
            if bound_reads(model):  # google-genai's answers read within limits
                limit_request(llm_request, timeout)
            calls = model.generate_content_async(llm_request, stream)
            async for response in _with_timeout(calls, timeout):
                if not answer.yielded and is_empty_answer(response):
                    raise EmptyAnswer(f"{self.model} answered without a candidate")
                answer.yielded = True
                answer.usage = response.usage_metadata or answer.usage
                yield response
            if not answer.yielded:
                raise EmptyAnswer(f"{self.model} gave no response")

    def _refused(self, stats: ModelCalls, attempt: int, fault: ModelFault) -> NoReturn:
        """Ends a call whose try the budget refused: a retry counts the call as failed, a
        first try counts no call (none was made)."""
        if attempt > 1:
            stats.finished(attempt - 1, fault)
        raise _judge_failed(self.role, ModelCallError(fault, self.model, self.role, attempt - 1))


class _Refused(Exception):
    """The budget refused a try (:meth:`adk_eval_action.adk.runtime.spend.Spend.admit`)."""

    def __init__(self, fault: ModelFault) -> None:
        super().__init__(fault.summary)
        self.fault = fault


class _Answer:
    """What one try gave: when it started (``time.monotonic()``, once a slot was held and
    the budget admitted it), whether a response went out, the last usage it reported, and
    what it reserved of the budget (given back or settled when the try ends)."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.yielded = False
        self.usage: Any = None
        self.reservation: Reservation | None = None


async def _with_timeout(
    responses: AsyncGenerator[LlmResponse, None], timeout: float | None
) -> AsyncGenerator[LlmResponse, None]:
    """``responses``, each awaited at most ``timeout`` seconds (None: no limit); a timeout
    raises ``TimeoutError`` with the seconds in its message."""
    try:
        while True:
            try:
                response = await asyncio.wait_for(responses.__anext__(), timeout)
            except StopAsyncIteration:
                return
            except asyncio.TimeoutError as error:
                raise asyncio.TimeoutError(f"no answer within {timeout:g}s") from error
            yield response
    finally:
        await responses.aclose()


def wrap_agent_models(root_agent: Any, calls: ModelCalls) -> int:
    """Puts :class:`RetryingLlm` in place of the model of every ``LlmAgent`` of the tree
    (sub-agents and agents used as tools) that names one; agents without a model inherit
    their parent's, as ADK resolves it (``LlmAgent.canonical_model``). Idempotent.

    Returns:
        How many agents' models were wrapped.

    Raises:
        ValueError: a model name ADK's LLMRegistry does not resolve (the preflight reports
            these first).
    """
    from google.adk.agents import LlmAgent

    from .agent import agent_tree

    wrapped = 0
    for agent in agent_tree(root_agent):
        if isinstance(agent, LlmAgent) and agent.model:
            agent.model = RetryingLlm.wrap(agent.canonical_model, calls, role="agent")
            wrapped += 1
    return wrapped


def wrap_judge(evaluator: Any, calls: ModelCalls) -> None:
    """Puts :class:`RetryingLlm` in place of an ADK evaluator's judge model, if it has one.

    ADK keeps the judge on the evaluator it built, private
    (:func:`adk_eval_action.adk.compat.judge_model`); there is no public hook for the model
    an evaluator calls.
    """
    from adk_eval_action.adk.compat import replace_judge_model

    replace_judge_model(evaluator, lambda llm: RetryingLlm.wrap(llm, calls, role="judge"))


class RetryingUserSimulatorProvider(UserSimulatorProvider):
    """ADK's ``UserSimulatorProvider`` for the eval config's ``user_simulator_config`` (as
    ``adk eval`` builds it, google.adk.cli.cli_tools_click), with the simulator's model calls
    retried and counted.

    Args:
        config: The eval config's ``user_simulator_config`` (None: ADK's default).
        calls: The run's model calls (None: the simulator's model is left as ADK made it).
    """

    def __init__(self, config: Any, calls: ModelCalls | None):
        super().__init__(user_simulator_config=config)
        self._calls = calls

    def provide(self, eval_case: Any) -> Any:
        """ADK's simulator for the case, its model wrapped (when there are ``calls`` to
        count them in; :func:`adk_eval_action.adk.compat.replace_user_simulator_model`)."""
        from adk_eval_action.adk.compat import replace_user_simulator_model

        simulator = super().provide(eval_case)
        calls = self._calls
        if calls is not None:
            replace_user_simulator_model(
                simulator, lambda llm: RetryingLlm.wrap(llm, calls, role="user_simulator"))
        return simulator


_GENAI_SOURCE = f"{os.sep}google{os.sep}genai{os.sep}"


def quiet_client_cleanup(loop: asyncio.AbstractEventLoop) -> None:
    """Keeps google-genai's failed client clean-ups off the console.

    A google-genai client whose construction failed (no key: "No API key was provided")
    still schedules ``BaseApiClient.aclose()`` when collected (``AsyncClient.__del__``), which
    fails on the half-built client; asyncio then prints "Task exception was never retrieved"
    with a traceback, once per client. The failure that matters is reported where it
    happened, so such tasks are logged at DEBUG; every other loop error goes to the loop's
    previous handler.
    """
    previous = loop.get_exception_handler()

    def handler(current: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        task = context.get("future") or context.get("task")
        coroutine = task.get_coro() if isinstance(task, asyncio.Task) else None
        source = getattr(getattr(coroutine, "cr_code", None), "co_filename", "")
        if _GENAI_SOURCE in source and "never retrieved" in str(context.get("message")):
            logging.getLogger(__name__).debug("google-genai client clean-up failed: %s", context)
            return
        if previous is not None:
            previous(current, context)
        else:
            current.default_exception_handler(context)

    loop.set_exception_handler(handler)


def quiet_litellm() -> None:
    """Turns off LiteLLM's "Give Feedback / Get Help" banners (printed to stdout with every
    error it maps, litellm.litellm_core_utils.exception_mapping_utils) once LiteLLM is loaded;
    the error itself is reported by the run. LiteLLM is never imported here. The flag is
    LiteLLM's module-wide setting: :func:`litellm_flag_restored` puts it back."""
    litellm: Any = sys.modules.get("litellm")  # LiteLLM, if an agent loaded it; untyped here
    if litellm is not None:
        litellm.suppress_debug_info = True


@contextmanager
def litellm_flag_restored() -> Iterator[None]:
    """On exit, LiteLLM's ``suppress_debug_info`` is what it was on entry (LiteLLM's default,
    False, when LiteLLM was first loaded inside the block, by an agent's import)."""
    loaded = sys.modules.get("litellm")
    saved = bool(getattr(loaded, "suppress_debug_info", False))
    try:
        yield
    finally:
        litellm: Any = sys.modules.get("litellm")
        if litellm is not None:
            litellm.suppress_debug_info = saved

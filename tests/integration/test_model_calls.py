"""Retries of model calls (adk.runtime.model_calls) on ADK's real Gemini class against the fake API.

Waits are recorded instead of slept, and checked against the backoff rule applied by hand:
try n waits between half and all of ``min(max_delay_s, initial_delay_s * 2**(n-1))``, and at
least what the server asked for.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation._retry_options_utils import add_default_retry_options_if_not_present
from google.adk.models import Gemini
from google.adk.models.llm_request import LlmRequest
from google.genai import errors as genai_errors
from google.genai import types

from adk_eval_action.adk.evaluate.harness import evaluation_scope
from adk_eval_action.adk.runtime.model_calls import ModelCalls, RetryingLlm
from adk_eval_action.adk.runtime.model_faults import (
    ModelCallError,
    ModelFault,
    classify_fault,
    server_delay,
)
from adk_eval_action.project.config import ModelRetrySettings
from adk_eval_action.testing.gemini_fake import Fault, GeminiFake
from adk_eval_action.testing.gemini_script import AgentScript

KEY = "test-key"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiFake]:
    """A fake whose only agent answers "Hello."; google-genai pointed at it."""
    with GeminiFake([AgentScript(default_reply="Hello.")], api_key=KEY) as running:
        for name, value in running.env(api_key=KEY).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        yield running


class Waits:
    """A sleep that records the seconds asked for instead of sleeping."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        await asyncio.sleep(0)


def _request() -> LlmRequest:
    request = LlmRequest(
        model="gemini-2.5-flash",
        contents=[types.Content(role="user", parts=[types.Part(text="Hi")])],
    )
    # What google-adk's evaluation does to every model request (7 attempts from 5 s).
    add_default_retry_options_if_not_present(request)
    return request


def _call(llm: RetryingLlm) -> list[Any]:
    async def run() -> list[Any]:
        return [r async for r in llm.generate_content_async(_request())]

    return asyncio.run(run())


def _wrapped(settings: ModelRetrySettings, waits: Waits, seed: int = 7) -> RetryingLlm:
    calls = ModelCalls(settings, random.Random(seed), sleep=waits)
    return RetryingLlm.wrap(Gemini(model="gemini-2.5-flash"), calls)


def _in_step(wait: float, try_number: int, settings: ModelRetrySettings) -> bool:
    step = min(settings.max_delay_s, settings.initial_delay_s * 2 ** (try_number - 1))
    return step / 2 <= wait <= step


def test_first_calls_429_are_retried_after_the_server_delay_and_counted(fake: GeminiFake):
    fake.faults = [Fault(status=429, retry_delay_s=2.5, times=2)]
    settings = ModelRetrySettings(initial_delay_s=0.1)
    waits = Waits()
    llm = _wrapped(settings, waits)

    responses = _call(llm)

    assert responses[-1].content.parts[0].text == "Hello."
    assert [c.outcome for c in fake.calls] == ["429", "429", "ok"]
    assert waits.seconds == [2.5, 2.5]  # the server's 2.5 s beat backoff steps of 0.1, 0.2
    summary = llm._calls.summary()
    assert (summary.calls, summary.retried_calls, summary.retries, summary.failed_calls) == (
        1,
        1,
        2,
        0,
    )
    assert summary.retry_causes == {"429 RESOURCE_EXHAUSTED": 2}
    assert summary.waited_s == pytest.approx(5.0)


def test_persistent_503_fails_after_the_configured_attempts_only(fake: GeminiFake):
    fake.faults = [Fault(status=503)]
    settings = ModelRetrySettings(attempts=4, initial_delay_s=1.0)
    waits = Waits()
    llm = _wrapped(settings, waits)

    with pytest.raises(ModelCallError) as raised:
        _call(llm)

    error = raised.value
    assert (error.fault.kind, error.fault.summary, error.attempts) == (
        "model",
        "503 UNAVAILABLE",
        4,
    )
    assert isinstance(error.__cause__, genai_errors.ServerError)
    # ADK's own 7 attempts were switched off: the fake saw exactly our 4.
    assert len(fake.calls) == 4
    assert len(waits.seconds) == 3
    assert all(_in_step(w, n, settings) for n, w in enumerate(waits.seconds, start=1))
    summary = llm._calls.summary()
    assert summary.failure_causes == {"503 UNAVAILABLE": 1}
    assert summary.retries == 3


@pytest.mark.parametrize("kind", ["empty", "no_candidate"])
@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_without_a_candidate_is_a_model_fault(fake: GeminiFake, kind: str,
                                                        stream: bool):
    """A 200 whose body is empty or JSON without a candidate, on every try: a model
    fault after the attempts, never an empty answer passed on to be scored."""
    fake.faults = [Fault(kind=kind)]
    llm = _wrapped(ModelRetrySettings(attempts=3), Waits())

    async def run() -> list[Any]:
        return [r async for r in llm.generate_content_async(_request(), stream=stream)]

    with pytest.raises(ModelCallError) as raised:
        asyncio.run(run())
    assert (raised.value.fault.kind, raised.value.fault.summary, raised.value.attempts) == (
        "model", "answer without a candidate", 3)
    assert [c.outcome for c in fake.calls] == [kind] * 3


@pytest.mark.parametrize("stream", [False, True])
def test_a_huge_answer_is_cut_off_as_a_model_fault(fake: GeminiFake, stream: bool,
                                                  monkeypatch: pytest.MonkeyPatch):
    """An answer past the bound stops being read there (the fake sees the client go), on
    every try: a model fault, not an answer."""
    from adk_eval_action.adk.runtime import model_reads

    monkeypatch.setattr(model_reads, "MAX_ANSWER_BYTES", 2 * 1024 * 1024)
    fake.faults = [Fault(kind="huge", size_bytes=50 * 1024 * 1024)]
    llm = _wrapped(ModelRetrySettings(attempts=2), Waits())

    async def run() -> list[Any]:
        return [r async for r in llm.generate_content_async(_request(), stream=stream)]

    with pytest.raises(ModelCallError) as raised:
        asyncio.run(run())
    assert raised.value.fault.summary == "answer over 2,097,152 bytes"
    assert raised.value.attempts == 2 and [c.outcome for c in fake.calls] == ["huge"] * 2


def test_an_answer_that_never_ends_is_cut_at_the_attempts_deadline(fake: GeminiFake):
    """A byte every 0.2 s, never ending: each attempt ends at call_timeout_s, its time
    counts against the run's budget, and the retries stop when it is spent."""
    fake.faults = [Fault(kind="trickle", delay_s=0.2)]
    settings = ModelRetrySettings(attempts=5, call_timeout_s=1.0, run_budget_s=2.5,
                                  initial_delay_s=0.01)
    llm = _wrapped(settings, Waits())
    started = time.monotonic()
    with pytest.raises(ModelCallError) as raised:
        _call(llm)
    took = time.monotonic() - started
    assert raised.value.fault.timed_out and raised.value.attempts == 3, raised.value
    assert 3.0 <= took < 10, took  # three attempts of 1 s, then the budget (2.5 s) is spent


def test_the_run_budget_stops_retries_across_calls(fake: GeminiFake):
    fake.faults = [Fault(status=500)]
    settings = ModelRetrySettings(attempts=10, initial_delay_s=1.0, run_budget_s=5.0)
    waits = Waits()
    llm = _wrapped(settings, waits)

    async def twelve_calls() -> None:
        # One event loop for all twelve, as in a run: google-adk 1.x's Gemini keeps one
        # google-genai client, whose pooled connections belong to the loop that opened them.
        for _ in range(12):
            with pytest.raises(ModelCallError):
                [r async for r in llm.generate_content_async(_request())]

    asyncio.run(twelve_calls())

    # By hand: every wait is at least 0.5 s (half the first step), so a 5 s budget allows at
    # most 10 retries; 12 calls then include calls whose first retry (a wait of at most 1 s)
    # was refused, which only happens with less than 1 s of budget left.
    assert 4.0 < sum(waits.seconds) <= 5.0
    assert len(waits.seconds) <= 10
    assert len(fake.calls) == len(waits.seconds) + 12


def test_a_wait_longer_than_max_delay_is_not_made(fake: GeminiFake):
    fake.faults = [Fault(status=429, retry_delay_s=90)]
    waits = Waits()

    with pytest.raises(ModelCallError) as raised:
        _call(_wrapped(ModelRetrySettings(max_delay_s=60), waits))

    assert waits.seconds == [] and len(fake.calls) == 1
    assert raised.value.fault.server_delay_s == 90


#: A slow answer takes far longer than the attempt may wait (the server thread just sleeps;
#: the client has gone by then), and the attempt waits far longer than a local answer takes
#: on a loaded machine: the retry's answer is never cut off, the slow one always is.
SLOW_ANSWER_S = 120.0
ATTEMPT_TIMEOUT_S = 5.0


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        (Fault(kind="drop", times=1), "drop"),
        (Fault(kind="malformed", times=1), "malformed"),
        (Fault(kind="empty", times=1), "empty"),
        (Fault(kind="no_candidate", times=1), "no_candidate"),
        pytest.param(Fault(kind="slow", delay_s=SLOW_ANSWER_S, times=1), "slow",
                     marks=pytest.mark.slow),  # waits out the 5 s attempt timeout
        (Fault(status=500, times=1), "500"),
    ],
)
def test_transient_faults_are_retried_once_then_answered(
    fake: GeminiFake, fault: Fault, outcome: str
):
    fake.faults = [fault]
    waits = Waits()
    llm = _wrapped(ModelRetrySettings(call_timeout_s=ATTEMPT_TIMEOUT_S), waits)

    responses = _call(llm)

    assert responses[-1].content.parts[0].text == "Hello."
    assert [c.outcome for c in fake.calls] == [outcome, "ok"]
    assert len(waits.seconds) == 1
    if outcome == "slow":  # given up by the attempt's timeout
        assert llm._calls.summary().retry_causes == {"timeout": 1}


def test_a_refused_key_is_a_credentials_fault_without_retries(
    fake: GeminiFake, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GOOGLE_API_KEY", "wrong")
    waits = Waits()

    with pytest.raises(ModelCallError) as raised:
        _call(_wrapped(ModelRetrySettings(), waits))

    assert (raised.value.fault.kind, raised.value.fault.summary) == (
        "credentials",
        "400 INVALID_ARGUMENT",
    )
    assert len(fake.calls) == 1 and waits.seconds == []


def test_no_key_at_all_is_a_credentials_fault_before_any_call(
    fake: GeminiFake, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("GOOGLE_API_KEY")

    with pytest.raises(ModelCallError) as raised:
        _call(_wrapped(ModelRetrySettings(), Waits()))

    assert raised.value.fault.kind == "credentials"
    assert "No API key was provided" in raised.value.fault.summary
    assert fake.calls == []


def test_server_delay_reads_retry_info_then_retry_after(fake: GeminiFake):
    llm = Gemini(model="gemini-2.5-flash")

    async def fail() -> BaseException:
        try:
            await llm.api_client.aio.models.generate_content(
                model="gemini-2.5-flash", contents="Hi"
            )
        except genai_errors.APIError as error:
            return error
        raise AssertionError("the fake answered")

    fake.faults = [Fault(status=429, retry_delay_s=1.5, retry_after_s=9)]
    assert server_delay(asyncio.run(fail())) == 1.5
    fake.faults = [Fault(status=503, retry_after_s=9)]
    assert server_delay(asyncio.run(fail())) == 9.0


def test_an_error_that_is_no_model_fault_propagates_unchanged():
    assert classify_fault(KeyError("x")) is None
    assert classify_fault(TimeoutError()) == ModelFault(
        kind="model", summary="timeout", retryable=True, timed_out=True
    )


def _weather(city: str) -> dict[str, str]:
    """Weather of a city."""
    return {"city": city, "condition": "sunny"}


def test_an_agent_tree_runs_through_the_retrying_models(fake: GeminiFake):
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    from adk_eval_action.adk.runtime.model_calls import wrap_agent_models

    fake.faults = [Fault(status=503, times=2)]
    child = LlmAgent(name="child", instruction="Say hello.")  # inherits the parent's model
    root = LlmAgent(name="root", model="gemini-2.5-flash", instruction="Hi.", sub_agents=[child])
    waits = Waits()
    calls = ModelCalls(ModelRetrySettings(), random.Random(1), sleep=waits)

    assert wrap_agent_models(root, calls) == 1
    assert wrap_agent_models(root, calls) == 1  # idempotent: still one wrapper
    assert isinstance(root.model, RetryingLlm) and not isinstance(root.model.inner, RetryingLlm)
    assert child.canonical_model is root.model

    async def run() -> list[Any]:
        runner = InMemoryRunner(agent=root, app_name="t")
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="Hi")])
        return [
            e
            async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
        ]

    events = asyncio.run(run())

    assert events[-1].content.parts[0].text == "Hello."
    assert [c.outcome for c in fake.calls] == ["503", "503", "ok"]
    assert calls.summary().retry_causes == {"503 UNAVAILABLE": 2}


def test_the_judge_of_an_adk_evaluator_is_retried(fake: GeminiFake):
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_metrics import (
        EvalMetric,
        JudgeModelOptions,
        RubricsBasedCriterion,
    )
    from google.adk.evaluation.eval_rubrics import Rubric, RubricContent
    from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
        RubricBasedFinalResponseQualityV1Evaluator,
    )

    from adk_eval_action.adk.runtime.model_calls import wrap_judge

    criterion = RubricsBasedCriterion(
        threshold=0.5,
        rubrics=[Rubric(rubric_id="r", rubric_content=RubricContent(text_property='Says "hi".'))],
        judge_model_options=JudgeModelOptions(num_samples=1),
    )
    evaluator = RubricBasedFinalResponseQualityV1Evaluator(
        # google-adk 1.x sets the status from the EvalMetric's threshold, 2.x the criterion's.
        EvalMetric(metric_name="rubric_based_final_response_quality_v1", threshold=0.5,
                   criterion=criterion)
    )
    calls = ModelCalls(ModelRetrySettings(), random.Random(1), sleep=Waits())
    wrap_judge(evaluator, calls)
    fake.faults = [Fault(status=429, retry_delay_s=0.5, times=1, role="judge")]
    invocation = Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="Greet me")]),
        final_response=types.Content(role="model", parts=[types.Part(text="hi there")]),
    )

    result = asyncio.run(evaluator.evaluate_invocations([invocation], None))

    assert result.overall_score == 1.0  # by hand: "hi" is in "hi there"
    assert [(c.role, c.outcome) for c in fake.calls] == [("judge", "429"), ("judge", "ok")]
    # Counted although ADK's judge stops reading after the first response.
    summary = calls.summary()
    assert (summary.calls, summary.retried_calls, summary.retries) == (1, 1, 1)


def test_the_user_simulator_follows_the_eval_config_and_is_retried(fake: GeminiFake):
    from google.adk.evaluation.conversation_scenarios import ConversationScenario
    from google.adk.evaluation.eval_case import EvalCase
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.events.event import Event

    from adk_eval_action.adk.runtime.model_calls import RetryingUserSimulatorProvider

    config = EvalConfig.model_validate(
        {
            "criteria": {"tool_trajectory_avg_score": 1.0},
            "user_simulator_config": {"model": "gemini-2.5-pro", "max_allowed_invocations": 3},
        }
    )
    calls = ModelCalls(ModelRetrySettings(), random.Random(1), sleep=Waits())
    provider = RetryingUserSimulatorProvider(config.user_simulator_config, calls)
    case = EvalCase(
        eval_id="scenario",
        conversation_scenario=ConversationScenario(
            starting_prompt="Hello", conversation_plan="- Ask for the weather in Paris."
        ),
    )
    fake.faults = [Fault(status=500, times=1, role="user_simulator")]

    simulator = provider.provide(case)

    # google-adk 2.x keeps the config as `_llm_config`, 1.x as `_config`.
    llm_config = getattr(simulator, "_llm_config", None) or simulator._config
    assert llm_config.max_allowed_invocations == 3
    assert (simulator._llm.model, simulator._llm.role) == ("gemini-2.5-pro", "user_simulator")

    async def two_turns() -> list[Any]:
        first = await simulator.get_next_user_message([])
        agent_said = Event(
            author="agent", content=types.Content(role="model", parts=[types.Part(text="Hi!")])
        )
        user_said = Event(author="user", content=first.user_message)
        return [first, await simulator.get_next_user_message([user_said, agent_said])]

    first, second = asyncio.run(two_turns())

    assert first.user_message.parts[0].text == "Hello"  # the starting prompt: no model call
    assert second.user_message.parts[0].text == "Ask for the weather in Paris."
    assert [(c.model, c.role, c.outcome) for c in fake.calls] == [
        ("gemini-2.5-pro", "user_simulator", "500"),
        ("gemini-2.5-pro", "user_simulator", "ok"),
    ]


@pytest.mark.parametrize("quiet", [True, False])
def test_google_genai_clean_up_failures_stay_off_the_console(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, quiet: bool
):
    import gc

    from adk_eval_action.adk.runtime.model_calls import quiet_client_cleanup

    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)

    async def build_without_a_key() -> None:
        if quiet:
            quiet_client_cleanup(asyncio.get_running_loop())
        llm = Gemini(model="gemini-2.5-flash")
        with pytest.raises(ValueError, match="No API key"):
            _ = llm.api_client
        gc.collect()
        await asyncio.sleep(0.05)
        gc.collect()

    # Frozen, the test process's heap (google-adk and all) is left out of the collections
    # below, which then see only what this test made: ~0.1 s instead of ~1 s each.
    gc.freeze()
    try:
        with caplog.at_level("ERROR", logger="asyncio"):
            asyncio.run(build_without_a_key())
            gc.collect()
    finally:
        gc.unfreeze()

    printed = [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert (printed == []) is quiet


@pytest.mark.parametrize("wrapped", [True, False])
def test_litellm_banners_stay_off_the_console(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, wrapped: bool
):
    """Wrapped (as in an evaluation), LiteLLM prints no banner; its flag is LiteLLM's
    module-wide setting, so the evaluation's scope puts it back when it ends."""
    import litellm
    from google.adk.models.lite_llm import LiteLlm

    litellm.suppress_debug_info = False
    # Nothing listens on port 9: the call fails at once with a connection error (the
    # OpenAI client's own retries, a second of backoff, are not what this is about).
    llm: Any = LiteLlm(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9", api_key="k",
                       max_retries=0)
    if wrapped:
        calls = ModelCalls(ModelRetrySettings(attempts=1), sleep=Waits())
        llm = RetryingLlm.wrap(llm, calls)
    request = LlmRequest(
        model="openai/gpt-4o-mini",
        contents=[types.Content(role="user", parts=[types.Part(text="Hi")])],
    )

    async def call() -> None:
        async for _ in llm.generate_content_async(request):
            pass

    with evaluation_scope([], tmp_path), pytest.raises(Exception) as raised:
        asyncio.run(call())

    assert litellm.suppress_debug_info is False
    printed = capfd.readouterr().out
    assert ("Give Feedback" in printed) is not wrapped
    if wrapped:
        assert isinstance(raised.value, ModelCallError)
        # litellm reports the refused connection as its InternalServerError (500).
        assert (raised.value.fault.kind, raised.value.fault.retryable) == ("model", True)

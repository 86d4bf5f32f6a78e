"""The local fake of the Gemini API, driven by real ADK agents on ``gemini-2.5-flash``.

Each test runs ADK's ``Gemini`` model class and google-genai's HTTP client unchanged against
:class:`GeminiFake` (reached through ``GOOGLE_GEMINI_BASE_URL``), and checks what came back
against the rule applied by hand, or what google-genai raised against the API's documented
error shapes.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
from google import genai
from google.adk.agents import LlmAgent

# google-adk 2.x keeps StreamingMode in a private module that run_config re-exports.
from google.adk.agents.run_config import RunConfig, StreamingMode  # type: ignore[attr-defined]
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
from google.adk.runners import InMemoryRunner
from google.genai import errors as genai_errors
from google.genai import types

from adk_eval_action.testing.gemini_fake import Fault, GeminiFake
from adk_eval_action.testing.gemini_script import (
    UNSCRIPTED_REPLY,
    AgentScript,
    user_simulator_reply,
)
from adk_eval_action.testing.standins import ScriptedToolCall, ScriptRule, property_verdict
from support.adk_features import ADK

WEATHER = {"Paris": ("sunny", 22), "Oslo": ("snowy", -3)}

try:
    from google.adk.evaluation.simulation.llm_backed_user_simulator_prompts import (
        get_llm_backed_user_simulator_prompt,
    )
except ImportError:  # google-adk 1.23 builds the prompt inside LlmBackedUserSimulator
    get_llm_backed_user_simulator_prompt = None


def get_weather(city: str) -> dict[str, Any]:
    """Returns the weather of a city (Paris or Oslo)."""
    condition, temperature = WEATHER[city]
    return {"city": city, "condition": condition, "temperature_c": temperature}


TRAVEL = AgentScript(
    instruction=r"travel assistant",
    rules=[
        ScriptRule(
            pattern=r"weather in (?P<city>[A-Za-z]+)",
            tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "{city}"})],
            reply="It is {result[condition]} in {result[city]} at {result[temperature_c]} C.",
        )
    ],
    default_reply="Ask me about the weather.",
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiFake]:
    """A running fake with the travel script; google-genai pointed at it with a dummy key."""
    with GeminiFake([TRAVEL], api_key="test-key") as running:
        for name, value in running.env(api_key="test-key").items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        yield running


def _agent(instruction: str = "You are a travel assistant.") -> LlmAgent:
    return LlmAgent(
        name="travel", model="gemini-2.5-flash", instruction=instruction, tools=[get_weather]
    )


def _ask(agent: LlmAgent, text: str, mode: StreamingMode = StreamingMode.NONE) -> list[Any]:
    """Runs one user turn through ADK's Runner; returns every event."""

    async def run() -> list[Any]:
        runner = InMemoryRunner(agent=agent, app_name="fake_test")
        session = await runner.session_service.create_session(app_name="fake_test", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = []
        async for event in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=message,
            run_config=RunConfig(streaming_mode=mode),
        ):
            events.append(event)
        return events

    return asyncio.run(run())


def _final_text(events: list[Any]) -> str:
    last = [e for e in events if not e.partial and e.content and e.content.parts][-1]
    return "".join(p.text or "" for p in last.content.parts)


@pytest.mark.parametrize("city", ["Paris", "Oslo"])
def test_agent_turn_calls_the_tool_and_replies_from_its_result(fake: GeminiFake, city: str):
    events = _ask(_agent(), f"What's the weather in {city}?")

    condition, temperature = WEATHER[city]
    assert _final_text(events) == f"It is {condition} in {city} at {temperature} C."
    calls = fake.calls
    assert [(c.method, c.model, c.role, c.outcome, c.api_key) for c in calls] == [
        ("generateContent", "gemini-2.5-flash", "agent", "ok", True)
    ] * 2
    # The second call carries the tool's real output, as ADK ran it.
    response_parts = [
        p["functionResponse"]
        for c in calls[1].request["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]
    assert response_parts[0]["name"] == "get_weather"
    assert response_parts[0]["response"] == get_weather(city)


def test_streaming_mode_uses_server_sent_events_and_adk_joins_the_chunks(fake: GeminiFake):
    events = _ask(_agent(), "What's the weather in Paris?", StreamingMode.SSE)

    assert _final_text(events) == "It is sunny in Paris at 22 C."
    assert any(e.partial for e in events)
    assert {c.method for c in fake.calls} == {"streamGenerateContent"}


def test_an_agent_no_script_matches_gets_the_unscripted_reply(fake: GeminiFake):
    events = _ask(_agent("You are a chess coach."), "What's the weather in Paris?")

    assert _final_text(events) == UNSCRIPTED_REPLY
    assert [c.role for c in fake.calls] == ["unscripted"]


def test_adk_default_judge_scores_rubrics_through_the_fake(fake: GeminiFake):
    rubrics = [
        Rubric(rubric_id="unit", rubric_content=RubricContent(text_property='Says "degrees C".')),
        Rubric(rubric_id="city", rubric_content=RubricContent(text_property='Names "Oslo".')),
    ]
    criterion = RubricsBasedCriterion(
        threshold=0.5, rubrics=rubrics, judge_model_options=JudgeModelOptions(num_samples=1)
    )
    assert criterion.judge_model_options.judge_model == "gemini-2.5-flash"  # ADK's default
    evaluator = RubricBasedFinalResponseQualityV1Evaluator(
        # google-adk 1.x sets the status from the EvalMetric's threshold, 2.x the criterion's.
        EvalMetric(metric_name="rubric_based_final_response_quality_v1", threshold=0.5,
                   criterion=criterion)
    )
    answer = "It is sunny in Paris at 22 degrees C."
    invocation = Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
        final_response=types.Content(role="model", parts=[types.Part(text=answer)]),
    )

    result = asyncio.run(evaluator.evaluate_invocations([invocation], None))

    # The stand-in rule by hand: each quoted phrase present in the final answer or not.
    expected = [property_verdict(r.rubric_content.text_property, answer)[0] for r in rubrics]
    assert expected == [True, False]
    assert result.overall_score == pytest.approx(sum(expected) / len(expected))
    scores = {s.rubric_id: s.score for s in result.per_invocation_results[0].rubric_scores}
    assert scores == {"unit": 1.0, "city": 0.0}
    assert [c.role for c in fake.calls] == ["judge"]


@pytest.mark.skipif(get_llm_backed_user_simulator_prompt is None, reason=f"{ADK} has no "
                    "llm_backed_user_simulator_prompts (the user simulator's prompt builder)")
def test_user_simulator_prompt_is_answered_plan_item_by_item():
    plan = "- Ask for the weather in Paris.\n- Ask for the weather in Oslo."

    def prompt(history: str) -> str:
        return get_llm_backed_user_simulator_prompt(
            conversation_plan=plan,
            conversation_history=history,
            stop_signal="</finished>",
            custom_instructions=None,
            user_persona=None,
        )

    assert user_simulator_reply(prompt("")) == "Ask for the weather in Paris."
    said_one = "user: Ask for the weather in Paris.\n\ntravel: It is sunny."
    assert user_simulator_reply(prompt(said_one)) == "Ask for the weather in Oslo."
    said_both = said_one + "\n\nuser: ask for the weather in  oslo.\n\ntravel: Snowy."
    assert user_simulator_reply(prompt(said_both)) == "</finished>"


async def _generate(text: str = "What's the weather in Paris?", **http: Any) -> Any:
    client = genai.Client()
    try:
        return await client.aio.models.generate_content(
            model="gemini-2.5-flash",
            contents=text,
            config=types.GenerateContentConfig(
                system_instruction="You are a travel assistant.",
                http_options=types.HttpOptions(**http) if http else None,
            ),
        )
    finally:
        await client.aio.aclose()


def test_429_carries_retry_info_and_retry_after_as_the_api_sends_them(fake: GeminiFake):
    fake.faults = [Fault(status=429, retry_delay_s=2, retry_after_s=3)]

    with pytest.raises(genai_errors.ClientError) as raised:
        asyncio.run(_generate())

    error = raised.value
    assert (error.code, error.status) == (429, "RESOURCE_EXHAUSTED")
    assert error.details["error"]["details"] == [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
    ]
    assert error.response.headers["Retry-After"] == "3"


@pytest.mark.parametrize(("status", "name"), [(500, "INTERNAL"), (503, "UNAVAILABLE")])
def test_server_errors_surface_as_google_genai_server_errors(
    fake: GeminiFake, status: int, name: str
):
    fake.faults = [Fault(status=status)]

    with pytest.raises(genai_errors.ServerError) as raised:
        asyncio.run(_generate())

    assert (raised.value.code, raised.value.status) == (status, name)


def test_google_genai_retries_the_first_n_faults_then_gets_the_answer(fake: GeminiFake):
    fake.faults = [Fault(status=503, times=2)]
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.02, jitter=0)

    response = asyncio.run(_generate(retry_options=retry))

    assert response.candidates[0].content.parts[0].function_call.name == "get_weather"
    assert [c.outcome for c in fake.calls] == ["503", "503", "ok"]


def test_fault_window_after_and_times_and_role(fake: GeminiFake):
    fake.faults = [
        Fault(status=500, role="judge"),
        Fault(status=429, after=1, times=2, role="agent"),
    ]
    url = f"{fake.base_url}/v1beta/models/gemini-2.5-flash:generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "You are a travel assistant."}]},
    }
    statuses = [
        requests.post(url, json=body, headers={"x-goog-api-key": "test-key"}, timeout=5).status_code
        for _ in range(5)
    ]

    # By hand: the judge fault never matches an agent call; the agent fault lets one call
    # through, answers the next two with 429, then stops.
    assert statuses == [200, 429, 429, 200, 200]
    listed = requests.get(f"{fake.base_url}/_fake/calls", timeout=5).json()
    assert [c["outcome"] for c in listed] == ["ok", "429", "429", "ok", "ok"]


def test_malformed_json_fails_in_google_genai(fake: GeminiFake):
    fake.faults = [Fault(kind="malformed")]

    with pytest.raises(ValueError, match="(?i)unterminated|expecting|parse"):
        asyncio.run(_generate())


def test_a_dropped_connection_is_retried_by_google_genai(fake: GeminiFake):
    fake.faults = [Fault(kind="drop", times=1)]
    retry = types.HttpRetryOptions(attempts=2, initial_delay=0.01, max_delay=0.02, jitter=0)

    response = asyncio.run(_generate(retry_options=retry))

    assert response.candidates[0].content.parts[0].function_call.args == {"city": "Paris"}
    assert [c.outcome for c in fake.calls] == ["drop", "ok"]


def test_a_dropped_connection_without_retries_is_a_disconnect(fake: GeminiFake):
    fake.faults = [Fault(kind="drop")]
    retry = types.HttpRetryOptions(attempts=1)

    with pytest.raises(aiohttp.ServerDisconnectedError):
        asyncio.run(_generate(retry_options=retry))


def test_a_slow_answer_past_the_client_timeout_times_out(fake: GeminiFake):
    fake.faults = [Fault(kind="slow", delay_s=10.0)]
    retry = types.HttpRetryOptions(attempts=1)

    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(_generate(timeout=200, retry_options=retry))
    # The client gave up (after 0.2 s plus start-up), long before the 10 s answer.
    assert time.monotonic() - started < 8.0


def test_a_wrong_key_gets_api_key_invalid_and_no_key_is_refused(
    fake: GeminiFake, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GOOGLE_API_KEY", "wrong-key")
    with pytest.raises(genai_errors.ClientError) as raised:
        asyncio.run(_generate())
    assert (raised.value.code, raised.value.details["error"]["details"][0]["reason"]) == (
        400,
        "API_KEY_INVALID",
    )
    url = f"{fake.base_url}/v1beta/models/gemini-2.5-flash:generateContent"
    assert requests.post(url, json={"contents": []}, timeout=5).status_code == 403


@pytest.mark.slow  # starts another interpreter
@pytest.mark.parametrize("host", [None, "0.0.0.0"])  # 0.0.0.0: what self-test.yml starts
def test_command_line_serves_a_script_file_until_sigterm(tmp_path: Path, host: str | None):
    script = tmp_path / "script.yaml"
    script.write_text(
        "agents:\n  - instruction: travel\n    default_reply: Hello from the script.\n"
        "faults:\n  - {status: 503, times: 1}\n",
        encoding="utf-8",
    )
    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_eval_action.testing.gemini_fake", "--script", str(script)]
        + ["--port-file", str(port_file)]
        + (["--host", host] if host else []),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The fake imports google-adk before it listens: seconds, or minutes on a loaded
        # machine (30 s was too few under a load of 15 on 2 cores). A fake that dies ends
        # the wait at once.
        deadline = time.monotonic() + 600
        while process.poll() is None and time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/v1beta/models/gemini-2.5-flash:generateContent"
        body = {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "systemInstruction": {"parts": [{"text": "a travel agent"}]},
        }
        first = requests.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=60)
        second = requests.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=60)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    assert first.status_code == 503
    answer = second.json()["candidates"][0]["content"]["parts"][0]["text"]
    assert answer == "Hello from the script."
    assert process.returncode == 0
    listening = host or "127.0.0.1"
    assert f"GOOGLE_GEMINI_BASE_URL=http://{listening}:{port_file.read_text()}" in stderr


def test_faults_and_script_are_replaced_over_http(fake: GeminiFake):
    requests.put(f"{fake.base_url}/_fake/faults", json=[{"status": 503}], timeout=5)
    with pytest.raises(genai_errors.ServerError):
        asyncio.run(_generate())
    requests.put(f"{fake.base_url}/_fake/faults", json=[], timeout=5)
    script = [{"instruction": "travel", "default_reply": "Replaced."}]
    requests.put(f"{fake.base_url}/_fake/script", json=script, timeout=5)

    response = asyncio.run(_generate("Hello"))

    assert response.text == "Replaced."
    assert (
        json.loads(requests.get(f"{fake.base_url}/_fake/calls", timeout=5).text)[-1]["outcome"]
        == "ok"
    )

"""Stand-in models that count the calls they receive, and agent folders that use them.

``counting-agent*`` is a :class:`ScriptedLlm` with weather/currency/thanks rules (a weather
or currency turn calls one tool, then replies: 2 calls; a thanks turn replies: 1 call);
``counting-judge*`` is the :class:`StandInJudge`. Both write every call to :data:`CALLS`
(which model, when it started and ended, how many calls of that model were in flight), and
both can wait before answering (``DELAY``: seconds, or a callable giving them), so tests
can see how calls overlap. The test module owns the log: it clears it first.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from google.adk.models import LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import Field

from adk_eval_action.testing.judge import StandInJudge
from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule


@dataclass
class Call:
    """One model call: ``model`` name, ``role`` (agent | judge), start and end (monotonic
    seconds), the calls of that model in flight when it started (itself included), the
    calls of every counting model in flight then (``in_flight_all``) and the last user
    text of the request."""

    model: str
    role: str
    start: float
    end: float = 0.0
    in_flight: int = 0
    in_flight_all: int = 0
    text: str = ""


@dataclass
class CallLog:
    """Every call the counting models received, and a delay before each answer."""

    calls: list[Call] = field(default_factory=list)
    delay: float | Callable[[str], float] = 0.0
    _open: dict[str, int] = field(default_factory=dict)

    def clear(self, delay: float | Callable[[str], float] = 0.0) -> None:
        self.calls.clear()
        self._open.clear()
        self.delay = delay

    def count(self, role: str) -> int:
        return sum(1 for c in self.calls if c.role == role)

    def max_in_flight(self, model: str | None = None) -> int:
        """The most calls of ``model`` (None: of any model) in flight at once."""
        if model is None:
            return max((c.in_flight_all for c in self.calls), default=0)
        return max((c.in_flight for c in self.calls if c.model == model), default=0)

    async def around(self, model: str, role: str, request: LlmRequest) -> Call:
        self._open[model] = self._open.get(model, 0) + 1
        texts = [p.text for c in request.contents or [] if c.role == "user"
                 for p in c.parts or [] if p.text]
        call = Call(model, role, time.monotonic(), in_flight=self._open[model],
                    in_flight_all=sum(self._open.values()), text=texts[-1] if texts else "")
        self.calls.append(call)
        wait = self.delay(model) if callable(self.delay) else self.delay
        if wait:
            await asyncio.sleep(wait)
        return call

    def done(self, call: Call) -> None:
        self._open[call.model] -= 1
        call.end = time.monotonic()


CALLS = CallLog()

RULES = [
    ScriptRule(
        pattern=r"weather in (?P<city>[a-z]+)",
        tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "{city}"})],
        reply="Happy to help! It is {result[condition]} in {result[city]}.",
    ),
    ScriptRule(
        pattern=r"convert (?P<amount>\d+) (?P<src>[a-z]{3}) to (?P<dst>[a-z]{3})",
        tool_calls=[
            ScriptedToolCall(
                name="convert", args={"amount": "{amount}", "src": "{src}", "dst": "{dst}"}
            )
        ],
        reply="Happy to help! That is {result[value]} {dst}.",
    ),
    ScriptRule(pattern=r"thanks", reply="You're welcome, happy to help!"),
]


class CountedCalls:
    """Mixin before a model class: each call of ``generate_content_async`` is written to
    :data:`CALLS` under :attr:`role` (waiting ``DELAY`` first), and ended there when the
    model's own answer is done or given up."""

    role: ClassVar[str]
    model: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        call = await CALLS.around(self.model, self.role, llm_request)
        try:
            async for response in super().generate_content_async(  # type: ignore[misc]
                llm_request, stream
            ):
                yield response
        finally:
            CALLS.done(call)


class CountingAgentLlm(CountedCalls, ScriptedLlm):
    """The agent model (module docstring)."""

    role: ClassVar[str] = "agent"
    rules: list[ScriptRule] = Field(default_factory=lambda: list(RULES))

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"counting-agent.*"]


class CountingJudge(CountedCalls, StandInJudge):
    """The judge model (module docstring)."""

    role: ClassVar[str] = "judge"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"counting-judge.*"]


def register() -> None:
    """Registers both classes with ADK's LLMRegistry (idempotent)."""
    for cls, probe in ((CountingAgentLlm, "counting-agent"), (CountingJudge, "counting-judge")):
        try:
            if LLMRegistry.resolve(probe) is cls:
                continue
        except ValueError:
            pass
        LLMRegistry.register(cls)


AGENT_PY = '''\
from google.adk.agents import LlmAgent

_WEATHER = {{"paris": ("sunny", 22), "london": ("rainy", 14), "tokyo": ("cloudy", 18)}}


def get_weather(city: str) -> dict:
    """Weather of a city."""
    condition, degrees = _WEATHER.get(city.lower(), ("foggy", 10))
    return {{"status": "success", "city": city.title(), "condition": condition,
             "temperature_c": degrees}}


def convert(amount: float, src: str, dst: str) -> dict:
    """Converts an amount between currencies at a fixed rate of 2."""
    return {{"status": "success", "value": round(float(amount) * 2, 2)}}


root_agent = LlmAgent(name="{name}", model="{model}", instruction="Help with travel.",
                      tools=[get_weather, convert])
'''


def turn(text: str, reply: str, tools: list[dict[str, Any]] | None = None,
         rubrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One expected invocation of an eval set file."""
    data: dict[str, Any] = {
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": {"role": "model", "parts": [{"text": reply}]},
        "intermediate_data": {"tool_uses": tools or [], "tool_responses": [],
                              "intermediate_responses": []},
    }
    if rubrics:
        data["rubrics"] = rubrics
    return data


def weather(city: str) -> dict[str, Any]:
    """A weather turn (one tool use: 2 agent calls)."""
    return turn(f"What's the weather in {city}?", f"It is sunny in {city}.",
                [{"name": "get_weather", "args": {"city": city}}])


def thanks() -> dict[str, Any]:
    """A thanks turn (no tool: 1 agent call)."""
    return turn("thanks!", "You're welcome, happy to help!")


def write_agent(
    root: Path, name: str, eval_sets: dict[str, dict[str, Any]],
    criteria: dict[str, Any], model: str = "counting-agent",
) -> Path:
    """An agent package ``root/name`` whose model is ``model``, with one eval set file per
    entry of ``eval_sets`` (eval set id -> {eval id: turns, or the case's fields beside its
    id}) and a test_config.json with ``criteria``; returns the folder."""
    folder = root / name
    (folder / "eval").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(AGENT_PY.format(name=name, model=model))
    for set_id, cases in eval_sets.items():
        data = {
            "eval_set_id": set_id,
            "eval_cases": [
                {"eval_id": eval_id, "session_input": {"app_name": name, "user_id": "u"},
                 **(turns if isinstance(turns, dict) else {"conversation": turns})}
                for eval_id, turns in cases.items()
            ],
        }
        (folder / "eval" / f"{set_id}.evalset.json").write_text(json.dumps(data, indent=1))
    (folder / "eval" / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return folder

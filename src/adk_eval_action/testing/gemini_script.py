"""What the local fake of the Gemini API answers: scripted agents, ADK's judges and ADK's
user simulator, read from the request body of ``generateContent``.

The fake (:mod:`adk_eval_action.testing.gemini_fake`) receives the JSON google-genai sends
(``contents``, ``systemInstruction``, ``tools``, ``generationConfig``; Gemini API reference,
``models.generateContent``) and answers with the same deterministic rules as the in-process
stand-ins, so a run through the real HTTP path scores exactly as a run on the stand-ins:

* a request whose text is one of ADK's judge prompts (``judge.judge_prompt_kind``) is
  answered by ``StandInJudge``;
* a request whose text is ADK's user-simulator prompt
  (``google.adk.evaluation.simulation.llm_backed_user_simulator_prompts``) is answered by
  :func:`user_simulator_reply`;
* any other request is an agent turn, answered by the ``ScriptedLlm`` rules of the first
  :class:`AgentScript` whose ``instruction`` regex is found in the request's system instruction.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types as genai_types
from pydantic import BaseModel, Field

from .judge import StandInJudge, judge_prompt_kind
from .scripted import ScriptedLlm, ScriptRule, usage_metadata
from .user_turns import DEFAULT_STOP_SIGNAL, next_user_turn

Role = Literal["agent", "judge", "user_simulator", "unscripted"]

UNSCRIPTED_REPLY = "[gemini fake] no scripted agent matches this request's system instruction."
"""The reply to an agent turn no :class:`AgentScript` matches: visible text, never a crash."""

_USER_SIMULATOR_HEAD = "You are a Simulated User designed to test an AI Agent."
_STOP_SIGNAL = re.compile(r"Output `([^`]+)` to indicate that the conversation")


class AgentScript(BaseModel):
    """How the fake answers the turns of one agent.

    Attributes:
        instruction: Regex searched (case-insensitively) in the request's system instruction,
            which ADK builds from the agent's ``instruction`` and its name ("Your internal name
            is ..."); ``""`` matches every agent.
        rules: ``ScriptedLlm`` rules (tool calls, then a reply template).
        default_reply: The reply when no rule matches the latest user text.
    """

    instruction: str = ""
    rules: list[ScriptRule] = Field(default_factory=list)
    default_reply: str = "Sorry, I can only help with the requests I was scripted for."

    def matches(self, system_instruction: str) -> bool:
        """Whether this script answers an agent with this system instruction."""
        return re.search(self.instruction, system_instruction, flags=re.IGNORECASE) is not None


def _texts(content: dict[str, Any] | None) -> list[str]:
    parts = (content or {}).get("parts") or []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def request_text(body: dict[str, Any]) -> str:
    """The text parts of every content of a ``generateContent`` body, joined by newlines."""
    return "\n".join(t for c in body.get("contents") or [] for t in _texts(c))


def system_instruction(body: dict[str, Any]) -> str:
    """The text of the body's ``systemInstruction`` ("" when absent)."""
    return "\n".join(_texts(body.get("systemInstruction")))


def classify(body: dict[str, Any], agents: list[AgentScript]) -> tuple[Role, AgentScript | None]:
    """Who is calling: ADK's judge, ADK's user simulator, a scripted agent, or nobody known.

    Returns:
        ``(role, script)``; ``script`` is the matching :class:`AgentScript` for an agent turn.
    """
    text = request_text(body)
    if judge_prompt_kind(text) is not None:
        return "judge", None
    if text.lstrip().startswith(_USER_SIMULATOR_HEAD):
        return "user_simulator", None
    instruction = system_instruction(body)
    for script in agents:
        if script.matches(instruction):
            return "agent", script
    return "unscripted", None


def user_simulator_reply(prompt: str) -> str:
    """The fake user simulator's next message for ADK's user-simulator prompt: the next
    item of the conversation plan, or the stop signal the prompt asks for
    (:func:`adk_eval_action.testing.user_turns.next_user_turn`)."""
    stop = _STOP_SIGNAL.search(prompt)
    return next_user_turn(prompt, stop.group(1) if stop else DEFAULT_STOP_SIGNAL)


def _llm_request(body: dict[str, Any], model: str) -> LlmRequest:
    contents = [genai_types.Content.model_validate(c) for c in body.get("contents") or []]
    return LlmRequest(model=model, contents=contents)


def _run(llm: BaseLlm, request: LlmRequest) -> tuple[genai_types.Content, Any]:
    async def first() -> tuple[genai_types.Content, Any]:
        async for response in llm.generate_content_async(request):
            return response.content or genai_types.Content(role="model", parts=[]), (
                response.usage_metadata
            )
        return genai_types.Content(role="model", parts=[]), None

    return asyncio.run(first())


def answer(
    body: dict[str, Any], model: str, agents: list[AgentScript]
) -> tuple[Role, dict[str, Any]]:
    """The fake's answer to one ``generateContent`` body.

    Args:
        body: The request JSON as google-genai sent it (camelCase keys).
        model: The model named in the URL (``gemini-2.5-flash``).
        agents: The scripted agents, tried in order.

    Returns:
        ``(role, response)``: who called (see :func:`classify`) and a
        ``GenerateContentResponse`` JSON (one candidate, ``finishReason`` STOP, usage as the
        stand-ins count it: whitespace words, for every role).
    """
    role, script = classify(body, agents)
    usage = None
    if role == "judge":
        content, usage = _run(StandInJudge(model=model), _llm_request(body, model))
    elif role == "agent" and script is not None:
        llm = ScriptedLlm(model=model, rules=script.rules, default_reply=script.default_reply)
        content, usage = _run(llm, _llm_request(body, model))
    else:
        text = (
            user_simulator_reply(request_text(body))
            if role == "user_simulator"
            else UNSCRIPTED_REPLY
        )
        content = genai_types.Content(role="model", parts=[genai_types.Part(text=text)])
        usage = usage_metadata(_llm_request(body, model), content.parts or [])
    response: dict[str, Any] = {
        "candidates": [
            {
                "content": content.model_dump(mode="json", by_alias=True, exclude_none=True),
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "modelVersion": model,
    }
    if usage is not None:
        response["usageMetadata"] = usage.model_dump(mode="json", by_alias=True, exclude_none=True)
    return role, response

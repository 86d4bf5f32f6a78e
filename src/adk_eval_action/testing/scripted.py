"""A deterministic agent model for tests and the offline example: :class:`ScriptedLlm`
(model names ``scripted-*``), driven by regex rules (:class:`ScriptRule`) that emit tool
calls and a templated reply. A test/demo tool only: no LLM is reachable offline, and
ADK's real evaluation pipeline still has to run end to end.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types
from pydantic import BaseModel, Field, field_validator

from adk_eval_action.adk.compat import llm_capabilities
from adk_eval_action.testing.live import scripted_connection

_WORD_RE = re.compile(r"\S+")


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def _count_words(text: str) -> int:
    """Returns the number of whitespace-separated words in ``text``."""
    return len(_WORD_RE.findall(text))


def _part_text(part: genai_types.Part) -> str:
    """Returns a textual rendering of one part, used only for word counting."""
    if part.text:
        return part.text
    if part.function_call:
        return f"{part.function_call.name} {json.dumps(part.function_call.args or {})}"
    if part.function_response:
        return (
            f"{part.function_response.name} "
            f"{json.dumps(part.function_response.response or {}, default=str)}"
        )
    return ""


def usage_metadata(
    request: LlmRequest, reply_parts: list[genai_types.Part]
) -> genai_types.GenerateContentResponseUsageMetadata:
    """Builds a deterministic usage record so ADK's ``token_usage_v1`` is stable.

    Token counts are whitespace word counts: prompt = words in every part of
    every request content (tool calls/responses rendered as ``name json``),
    candidates = words in the reply parts, total = their sum.
    """
    prompt_words = sum(
        _count_words(_part_text(part))
        for content in request.contents
        for part in content.parts or []
    )
    reply_words = sum(_count_words(_part_text(part)) for part in reply_parts)
    return genai_types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt_words,
        candidates_token_count=reply_words,
        total_token_count=prompt_words + reply_words,
    )


class _KeepMissing(dict[str, Any]):
    """Format mapping that renders an unknown ``{name}`` field as itself.

    A scripted reply that references a group or tool field which is absent
    keeps the placeholder visible instead of raising mid-eval.
    """

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _ToolResults(dict[str, Any]):
    """The ``{result}`` value in a scripted reply.

    ``{result}`` renders as the text/JSON of all tool responses of the turn;
    ``{result[key]}`` indexes the first tool response dict (a missing key
    renders as the literal placeholder).
    """

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        super().__init__(responses[0] if responses else {})
        self._responses = responses

    def __missing__(self, key: str) -> str:
        return "{result[" + key + "]}"

    def __str__(self) -> str:
        if not self._responses:
            return ""
        if len(self._responses) == 1:
            only = self._responses[0]
            # ADK wraps a non-dict tool return value as {"result": value}.
            if set(only) == {"result"} and isinstance(only["result"], str):
                return only["result"]
            return json.dumps(only, default=str)
        return json.dumps(self._responses, default=str)

    def __format__(self, format_spec: str) -> str:
        return format(str(self), format_spec)


def _safe_format(template: str, fields: Mapping[str, Any]) -> str:
    """``str.format_map`` that never raises on unknown fields or bad specs."""
    try:
        return template.format_map(_KeepMissing(fields))
    except (ValueError, IndexError, AttributeError, TypeError):
        # A malformed template (e.g. a lone brace) is shown verbatim.
        return template



# --------------------------------------------------------------------------
# ScriptedLlm
# --------------------------------------------------------------------------


class ScriptedToolCall(BaseModel):
    """One tool call a :class:`ScriptRule` makes.

    ``args`` string values are formatted with the rule's regex named groups
    (``"{city}"``). A value that is exactly ``"{group}"`` whose group text
    parses as an int or float becomes that number, so numeric tool parameters
    receive numbers.
    """

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptRule(BaseModel):
    """A regex-triggered behaviour of :class:`ScriptedLlm`.

    Attributes:
        pattern: Regex searched case-insensitively in the latest user text.
        tool_calls: Tool calls to emit (all in one model turn) before replying.
        reply: Final reply template, formatted with the regex's named groups
            and ``result`` (see :class:`ScriptedLlm`).
        thought: Text of a thought part (``thought: true``) put before the reply, as a
            thinking model asked to include its thoughts returns it; None for none.
    """

    pattern: str
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    reply: str
    thought: str | None = None

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        """Rejects invalid regexes at construction rather than mid-eval.

        Raises:
            ValueError: if ``value`` is not a valid Python regex.
        """
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex {value!r}: {exc}") from exc
        return value

    def match(self, text: str) -> re.Match[str] | None:
        """Returns the case-insensitive search match of ``pattern`` in ``text``."""
        return re.search(self.pattern, text, flags=re.IGNORECASE)


_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def _as_number(text: str) -> int | float | None:
    """Returns ``text`` as an int or float when it is exactly a number."""
    stripped = text.strip()
    if not _NUMBER_RE.fullmatch(stripped):
        return None
    try:
        return int(stripped)
    except ValueError:
        return float(stripped)


def _format_arg(value: Any, groups: Mapping[str, str]) -> Any:
    """Formats one scripted tool argument with the regex's named groups."""
    if isinstance(value, str):
        whole = re.fullmatch(r"\{(\w+)\}", value)
        if whole and whole.group(1) in groups:
            number = _as_number(groups[whole.group(1)])
            if number is not None:
                return number
        return _safe_format(value, groups)
    if isinstance(value, dict):
        return {key: _format_arg(item, groups) for key, item in value.items()}
    if isinstance(value, list):
        return [_format_arg(item, groups) for item in value]
    return value


class ScriptedLlm(BaseLlm):
    """A deterministic agent model driven by regex rules (offline test/demo tool).

    Exists because no LLM is reachable offline; it lets example agents run
    through ADK's real runner and eval pipeline. Not meant for real users'
    evals. Model names matching ``scripted-.*`` resolve to this class.

    Behaviour of :meth:`generate_content_async` for one request:

    1. The *latest user text* is the text of the last ``user`` content that has
       text parts. The first rule whose ``pattern`` matches it (search,
       case-insensitive) is selected; with no match the reply is
       ``default_reply``.
    2. If the last request content holds function responses, the tools of this
       turn have run: the model replies with the rule's ``reply``.
    3. Otherwise, if the rule has tool calls, they are returned as
       ``function_call`` parts in one model turn (ids left for ADK to fill).
    4. Otherwise the model replies with the rule's ``reply``.

    Reply templates are formatted with the regex named groups and ``result``:
    ``{result}`` is the text/JSON of this turn's tool responses and
    ``{result[key]}`` reads the first tool response dict. Unknown fields stay
    as literal placeholders. Every response carries a deterministic
    ``usage_metadata`` (whitespace word counts; see ``usage_metadata``).

    Live: :meth:`connect` opens a live (bidirectional streaming) session that answers
    each user content by the same rules (:mod:`adk_eval_action.testing.live`), as
    google-adk's live evaluation (an eval config's ``live_model_config``) calls a model.
    With ``live_only`` the model answers only there and refuses a text-mode call, as a
    Live API model (``gemini-*-live-*``) does.
    """

    rules: list[ScriptRule] = Field(default_factory=list)
    default_reply: str = "Sorry, I can only help with the requests I was scripted for."
    live_only: bool = False

    @classmethod
    def supported_models(cls) -> list[str]:
        """Returns the model-name regexes this class is registered for."""
        return [r"scripted-.*"]

    @property
    def capabilities(self) -> Any:
        """Declares capabilities outright, avoiding ADK's name-based fallback (2.x)."""
        return llm_capabilities(output_schema_and_tools=False)

    def _select_rule(self, user_text: str) -> tuple[ScriptRule | None, dict[str, str]]:
        """Returns the first matching rule and its named groups (``""`` if unset)."""
        for rule in self.rules:
            found = rule.match(user_text)
            if found:
                return rule, found.groupdict(default="")
        return None, {}

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields exactly one complete response (also when ``stream`` is True).

        Raises:
            ValueError: the model is ``live_only``.
        """
        del stream  # One final chunk is a valid stream for ADK.
        if self.live_only:
            raise ValueError(
                f"model {self.model} answers only over a live connection (bidirectional "
                "streaming), as a Live API model; a text-mode call is refused"
            )
        async for response in self._answer(llm_request):
            yield response

    def connect(self, llm_request: LlmRequest) -> AbstractAsyncContextManager[Any]:
        """A live session answering by the same rules (:mod:`adk_eval_action.testing.live`)."""
        return scripted_connection(self._answer, llm_request)

    async def _answer(self, llm_request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        """The one response to ``llm_request`` (the class docstring's rules)."""
        contents = list(llm_request.contents or [])
        user_index, user_text = _latest_user_text(contents)
        rule, groups = self._select_rule(user_text)

        last_parts = (contents[-1].parts or []) if contents else []
        tools_done = any(part.function_response for part in last_parts)

        parts: list[genai_types.Part]
        if rule is not None and rule.tool_calls and not tools_done:
            parts = [
                genai_types.Part(
                    function_call=genai_types.FunctionCall(
                        name=call.name, args=_format_arg(call.args, groups)
                    )
                )
                for call in rule.tool_calls
            ]
        else:
            responses = [
                dict(part.function_response.response or {})
                for content in contents[user_index + 1 :]
                for part in content.parts or []
                if part.function_response
            ]
            template = rule.reply if rule is not None else self.default_reply
            text = _safe_format(template, {**groups, "result": _ToolResults(responses)})
            parts = [genai_types.Part(text=text)]
            if rule is not None and rule.thought:
                parts.insert(0, genai_types.Part(text=rule.thought, thought=True))

        yield LlmResponse(
            content=genai_types.Content(role="model", parts=parts),
            usage_metadata=usage_metadata(llm_request, parts),
            model_version=self.model,
        )


def _latest_user_text(contents: list[genai_types.Content]) -> tuple[int, str]:
    """Returns (index, text) of the last user content with text, or (-1, "")."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content.role != "user":
            continue
        texts = [part.text for part in content.parts or [] if part.text]
        if texts:
            return index, "\n".join(texts)
    return -1, ""



"""Deterministic stand-ins for the agent model and the LLM judge.

These classes exist because no LLM is reachable offline: this project's tests,
demos and CI must run ADK's real evaluation pipeline (``LocalEvalService``, the
real metric evaluators and their real prompt/parse code) without network
access. They are test/demo tools only; real users' evals use real models, and
nothing in the action selects these classes unless an agent or an eval config
names them explicitly.

Two ``BaseLlm`` subclasses are provided and registered with ADK's
``LLMRegistry`` (see :func:`register_standins`, run at import):

* :class:`ScriptedLlm` (model names ``scripted-*``): an agent model driven by
  regex rules (:class:`ScriptRule`) that emits tool calls and a templated reply.
* :class:`StandInJudge` (model names ``stand-in-judge*``): a judge that reads
  the prompt text ADK's LLM-as-judge evaluators build and answers in the exact
  format their parsers expect, using simple documented string rules.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from google.adk.models import BaseLlm, LlmCapabilities, LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types
from pydantic import BaseModel, Field, field_validator

__all__ = [
    "GARBAGE_JUDGE_MODEL",
    "TIMEOUT_JUDGE_MODEL",
    "ScriptRule",
    "ScriptedLlm",
    "ScriptedToolCall",
    "StandInJudge",
    "answer_judge_prompt",
    "judge_prompt_kind",
    "property_verdict",
    "quoted_phrases",
    "register_standins",
    "response_matches_reference",
    "sentence_label",
]

TIMEOUT_JUDGE_MODEL = "stand-in-judge-timeout"
"""Judge model name whose every call raises ``asyncio.TimeoutError``."""

GARBAGE_JUDGE_MODEL = "stand-in-judge-garbage"
"""Judge model name whose every answer is text no ADK judge parser accepts."""

_GARBAGE_ANSWER = "Honestly the agent did a fine job overall, I would give it a thumbs up."

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


def _usage_metadata(
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
    """

    pattern: str
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    reply: str

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
    ``usage_metadata`` (whitespace word counts; see ``_usage_metadata``).
    """

    rules: list[ScriptRule] = Field(default_factory=list)
    default_reply: str = "Sorry, I can only help with the requests I was scripted for."

    @classmethod
    def supported_models(cls) -> list[str]:
        """Returns the model-name regexes this class is registered for."""
        return [r"scripted-.*"]

    @property
    def capabilities(self) -> LlmCapabilities:
        """Declares capabilities outright, avoiding ADK's name-based fallback."""
        return LlmCapabilities(output_schema_and_tools=False)

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
        """Yields exactly one complete response (also when ``stream`` is True)."""
        del stream  # One final chunk is a valid stream for ADK.
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

        yield LlmResponse(
            content=genai_types.Content(role="model", parts=parts),
            usage_metadata=_usage_metadata(llm_request, parts),
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


# --------------------------------------------------------------------------
# StandInJudge: rubric verdicts
# --------------------------------------------------------------------------

_SMART_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_DOUBLE_QUOTED = re.compile(r'"([^"\n]+)"')
# A single quote only opens/closes a phrase at a word boundary, so apostrophes
# ("agent's", "doesn't") are not mistaken for quotes.
_SINGLE_QUOTED = re.compile(r"(?<![\w'])'([^'\n]+?)'(?![\w])")
_NEGATIONS = ("does not mention", "doesn't mention", "never mentions", "must not")


def _normalize(text: str) -> str:
    """Lower-cases, unifies typographic quotes and collapses whitespace."""
    return " ".join(text.translate(_SMART_QUOTES).casefold().split())


def quoted_phrases(property_text: str) -> list[str]:
    """Returns the phrases in single or double quotes in a rubric property."""
    text = property_text.translate(_SMART_QUOTES)
    return [*_DOUBLE_QUOTED.findall(text), *_SINGLE_QUOTED.findall(text)]


def property_verdict(property_text: str, judged_text: str) -> tuple[bool, str]:
    """Decides one rubric property deterministically.

    Rule: collect the phrases in single or double quotes in ``property_text``;
    the verdict is yes iff every phrase occurs (case-insensitively, whitespace
    collapsed) in ``judged_text``. If the property contains "does not mention",
    "doesn't mention", "never mentions" or "must not" (case-insensitive) that
    verdict is negated. A property with no quoted phrase is always yes.

    Args:
        property_text: The rubric's ``text_property`` as shown in the prompt.
        judged_text: The text the property is judged against.

    Returns:
        ``(verdict, rationale)``, the rationale being one line of plain text.
    """
    phrases = quoted_phrases(property_text)
    if not phrases:
        return True, "The property quotes no phrase, so it is treated as fulfilled."
    haystack = _normalize(judged_text)
    found = [p for p in phrases if _normalize(p) in haystack]
    missing = [p for p in phrases if _normalize(p) not in haystack]
    all_present = not missing
    negated = any(neg in property_text.casefold() for neg in _NEGATIONS)
    verdict = (not all_present) if negated else all_present
    listing = "; ".join([*(f"found {p!r}" for p in found), *(f"missing {p!r}" for p in missing)])
    logic = "negated property, " if negated else ""
    return verdict, f"{logic}{listing}."


def _one_line(text: str) -> str:
    """Makes ``text`` safe for one ``Key: value`` line of a rubric answer.

    ADK's Rationale/Verdict regexes are not anchored to line starts, so a
    stray "Rationale: " or "Verdict: " inside echoed text would add a phantom
    match and make the whole answer unparsable; the colon is swapped out.
    """
    flat = " ".join(text.split())
    return flat.replace("Rationale: ", "Rationale - ").replace("Verdict: ", "Verdict - ")


def _rubric_answer(rubrics: list[tuple[str, str]], judged_text: str, judged_what: str) -> str:
    """Formats the ADK rubric answer (ID/Property/Evidence/Rationale/Verdict).

    Args:
        rubrics: ``(rubric_id, property_text)`` pairs in prompt order.
        judged_text: Text the properties are judged against.
        judged_what: Human-readable name of ``judged_text`` for the evidence.
    """
    blocks = []
    for rubric_id, prop in rubrics:
        verdict, rationale = property_verdict(prop, judged_text)
        blocks.append(
            "\n".join(
                [
                    f"ID: {_one_line(rubric_id)}",
                    f"Property: {_one_line(prop)}",
                    f"Evidence: Searched the {judged_what} for the quoted phrases.",
                    f"Rationale: {_one_line(rationale)}",
                    f"Verdict: {'yes' if verdict else 'no'}",
                ]
            )
        )
    return "\n\n".join(blocks)


_RUBRIC_LINE = re.compile(r"^\*  \[id: (?P<id>.*?)\] ?(?P<text>.*)$")


def _between_last(text: str, start: str, end: str, limit: int | None = None) -> str | None:
    """Returns the text inside the last ``start ... end`` pair before ``limit``.

    The templates place their example sections first and the real values
    last, so the last pair is the one ADK filled in.
    """
    stop = text.rfind(end, 0, len(text) if limit is None else limit)
    if stop < 0:
        return None
    begin = text.rfind(start, 0, stop)
    if begin < 0:
        return None
    return text[begin + len(start) : stop]


def _parse_rubric_lines(block: str) -> list[tuple[str, str]]:
    """Parses ``*  [id: X] text`` lines; continuation lines extend the text."""
    rubrics: list[list[str]] = []
    for line in block.strip("\n").split("\n"):
        found = _RUBRIC_LINE.match(line)
        if found:
            rubrics.append([found.group("id"), found.group("text")])
        elif rubrics:
            rubrics[-1][1] += "\n" + line
    return [(rubric_id, text) for rubric_id, text in rubrics]


def _answer_line_rubrics(prompt: str, judged_start: str, judged_end: str, what: str) -> str:
    """Answers a prompt whose properties are ``*  [id: X] text`` lines."""
    props_end = prompt.rfind("</properties>")
    block = _between_last(prompt, "<properties>", "</properties>")
    judged = _between_last(prompt, judged_start, judged_end, limit=props_end)
    if block is None or judged is None:
        return ""
    return _rubric_answer(_parse_rubric_lines(block), judged, what)


def _answer_json_rubrics(prompt: str) -> str:
    """Answers the multi-turn trajectory prompt (properties as a JSON list)."""
    props_end = prompt.rfind("</properties>")
    block = _between_last(prompt, "<properties>", "</properties>")
    history = _between_last(
        prompt, "<conversation_history>", "</conversation_history>", limit=props_end
    )
    if block is None or history is None:
        return ""
    try:
        entries = json.loads(block)
    except json.JSONDecodeError:
        return ""
    rubrics = [
        (str(entry.get("id", "")), str(entry.get("property", "")))
        for entry in entries
        if isinstance(entry, dict)
    ]
    return _rubric_answer(rubrics, history, "conversation history")


# --------------------------------------------------------------------------
# StandInJudge: final_response_match_v2 and hallucinations_v1
# --------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"[a-z0-9]+")


def response_matches_reference(response: str, reference: str) -> tuple[bool, float]:
    """The stand-in rule for ``final_response_match_v2``.

    Rule: split both texts into lower-cased alphanumeric words; the response is
    valid iff at least 50% of the reference's distinct words occur in the
    response. An empty reference is always matched.

    Returns:
        ``(valid, fraction_of_reference_words_present)``.
    """
    ref_words = set(_TOKEN_RE.findall(reference.casefold()))
    if not ref_words:
        return True, 1.0
    resp_words = set(_TOKEN_RE.findall(response.casefold()))
    fraction = len(ref_words & resp_words) / len(ref_words)
    return fraction >= 0.5, fraction


def _answer_response_match(prompt: str) -> str:
    """Answers the ``final_response_match_v2`` prompt as the JSON it asks for."""
    inputs_end = prompt.rfind("\n}\n\nThe answer should be a json alone")
    ref_marker = ',\n  "Reference response": '
    resp_marker = ',\n  "Agent response": '
    ref_at = prompt.rfind(ref_marker, 0, inputs_end)
    resp_at = prompt.rfind(resp_marker, 0, ref_at)
    if min(inputs_end, ref_at, resp_at) < 0:
        return ""
    response = prompt[resp_at + len(resp_marker) : ref_at]
    # The template leaves a trailing comma after the reference value.
    reference = prompt[ref_at + len(ref_marker) : inputs_end].removesuffix(",")
    valid, fraction = response_matches_reference(response, reference)
    answer = {
        "reasoning": (
            f"{fraction:.0%} of the reference words occur in the agent response"
            " (stand-in rule: valid iff at least 50%)."
        ),
        "is_the_agent_response_valid": "valid" if valid else "invalid",
    }
    return json.dumps(answer, indent=2)


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_FACT_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _numbers(text: str) -> set[float]:
    """Returns the numeric values written in ``text`` ("1,000" counts as 1000)."""
    values = set()
    for token in _FACT_NUMBER.findall(text):
        try:
            values.add(float(token.replace(",", "")))
        except ValueError:
            continue
    return values


def _answer_segmenter(prompt: str) -> str:
    """Answers the hallucinations_v1 segmenter: one ``<sentence>`` per sentence."""
    response = _between_last(prompt, "**Response Begin**\n", "\n**Response End**")
    if response is None:
        return ""
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(response) if re.search(r"\w", s or "")]
    return "\n".join(f"<sentence>{s}</sentence>" for s in sentences)


def sentence_label(sentence: str, context: str) -> str:
    """The stand-in rule for hallucinations_v1 sentence validation.

    Rule: a sentence with no number is ``not_applicable``; a sentence whose
    numbers all appear (numerically) in the context is ``supported``;
    otherwise it is ``unsupported``.
    """
    claimed = _numbers(sentence)
    if not claimed:
        return "not_applicable"
    return "supported" if claimed <= _numbers(context) else "unsupported"


def _answer_validator(prompt: str) -> str:
    """Answers the hallucinations_v1 validator in its ``sentence:``/``label:`` blocks."""
    sentences_at = prompt.rfind("**Sentences Begin**")
    block = _between_last(prompt, "**Sentences Begin**\n", "\n**Sentences End**")
    context = _between_last(prompt, "**Context Begin**\n", "\n**Context End**", sentences_at)
    if block is None or context is None:
        return ""
    answers = []
    for sentence in re.findall(r"<sentence>(.*?)</sentence>", block, re.DOTALL):
        label = sentence_label(sentence, context)
        excerpt = "numbers found in context" if label == "supported" else "null"
        answers.append(
            "\n".join(
                [
                    f"sentence: {' '.join(sentence.split())}",
                    f"label: {label}",
                    "rationale: stand-in rule: numbers in the sentence vs. the context.",
                    f"supporting_excerpt: {excerpt}",
                    "contradicting_excerpt: null",
                ]
            )
        )
    return "\n\n".join(answers)


# Each template's opening lines name its task; they precede every
# user-controlled value, so matching only the head cannot be spoofed by them.
_HEAD_CHARS = 800
_PROMPT_KINDS: tuple[tuple[str, str], ...] = (
    ("final_response_quality", "evaluate the final answer quality of responses"),
    ("multi_turn_trajectory", "generated by an AI agent in a multi-turn conversation"),
    ("tool_use_quality", "- Your mission is to evaluate the quality of responses"),
    ("final_response_match", "You are an expert rater for an AI agent."),
    ("hallucination_segmenter", "segment the provided response sentence by sentence"),
    ("hallucination_validator", "analyze sentence by sentence and classify each sentence"),
)


def judge_prompt_kind(prompt: str) -> str | None:
    """Returns which ADK judge template ``prompt`` was built from, or None."""
    head = prompt[:_HEAD_CHARS]
    for kind, marker in _PROMPT_KINDS:
        if marker in head:
            return kind
    return None


def answer_judge_prompt(prompt: str) -> str:
    """Returns the stand-in judge's answer to one ADK judge prompt.

    Supported templates (ADK 2.13 source, ``google/adk/evaluation``):

    * ``rubric_based_final_response_quality_v1``: properties judged against the
      ``<final_answer>`` block.
    * ``rubric_based_tool_use_quality_v1``: properties judged against the
      ``<response>`` block, which is the JSON of the tool calls and tool
      responses (ADK's tool-use prompt carries no final answer).
    * ``rubric_based_multi_turn_trajectory_quality_v1``: properties (a JSON
      list) judged against ``<conversation_history>``.
    * ``final_response_match_v2``: see :func:`response_matches_reference`.
    * ``hallucinations_v1`` segmenter and validator: see :func:`sentence_label`.

    Rubric verdicts follow :func:`property_verdict`. An unrecognised prompt
    gets an empty answer, which every ADK parser treats as "no verdict".
    """
    kind = judge_prompt_kind(prompt)
    if kind == "final_response_quality":
        return _answer_line_rubrics(prompt, "<final_answer>", "</final_answer>", "final answer")
    if kind == "tool_use_quality":
        return _answer_line_rubrics(prompt, "<response>", "</response>", "tool calls")
    if kind == "multi_turn_trajectory":
        return _answer_json_rubrics(prompt)
    if kind == "final_response_match":
        return _answer_response_match(prompt)
    if kind == "hallucination_segmenter":
        return _answer_segmenter(prompt)
    if kind == "hallucination_validator":
        return _answer_validator(prompt)
    return ""


class StandInJudge(BaseLlm):
    """A deterministic LLM judge for ADK's LLM-as-judge metrics (offline test/demo tool).

    Exists because no LLM is reachable offline; it answers the *real* prompt
    ADK's evaluators build, in the format their parsers expect, so the real
    evaluator classes compute scores end to end. Not meant for real users'
    evals. Model names matching ``stand-in-judge.*`` resolve to this class.

    The answer rules are documented on :func:`answer_judge_prompt`. Variants
    selected by model name:

    * ``stand-in-judge-timeout``: every call raises
      ``asyncio.TimeoutError("stand-in judge timed out")``, which ADK turns
      into a NOT_EVALUATED result.
    * ``stand-in-judge-garbage``: every answer is prose no ADK parser accepts,
      which ADK turns into a score of None.
    """

    @classmethod
    def supported_models(cls) -> list[str]:
        """Returns the model-name regexes this class is registered for."""
        return [r"stand-in-judge.*"]

    @property
    def capabilities(self) -> LlmCapabilities:
        """Declares capabilities outright, avoiding ADK's name-based fallback."""
        return LlmCapabilities(output_schema_and_tools=False)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields one judge answer for the prompt in ``llm_request``.

        Raises:
            asyncio.TimeoutError: for the ``stand-in-judge-timeout`` variant.
        """
        del stream
        if self.model.startswith(TIMEOUT_JUDGE_MODEL):
            raise asyncio.TimeoutError("stand-in judge timed out")
        if self.model.startswith(GARBAGE_JUDGE_MODEL):
            text = _GARBAGE_ANSWER
        else:
            prompt = "\n".join(
                part.text
                for content in llm_request.contents or []
                for part in content.parts or []
                if part.text
            )
            text = answer_judge_prompt(prompt)
        parts = [genai_types.Part(text=text)]
        yield LlmResponse(
            content=genai_types.Content(role="model", parts=parts),
            usage_metadata=_usage_metadata(llm_request, parts),
            model_version=self.model,
        )


def register_standins() -> None:
    """Registers :class:`ScriptedLlm` and :class:`StandInJudge` with ADK's LLMRegistry.

    Idempotent: a class already resolved for its model names is not
    re-registered (re-registering would only log ADK's "Updating LLM class").
    """
    for llm_cls, probe in ((ScriptedLlm, "scripted-probe"), (StandInJudge, "stand-in-judge")):
        try:
            if LLMRegistry.resolve(probe) is llm_cls:
                continue
        except ValueError:
            pass  # Not registered yet.
        LLMRegistry.register(llm_cls)


register_standins()

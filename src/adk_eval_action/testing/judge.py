"""A deterministic LLM judge for tests and the offline example: :class:`StandInJudge`
(model names ``stand-in-judge*``) reads the prompt text ADK's LLM-as-judge evaluators build
and answers in the exact format their parsers expect, by simple documented string rules.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types

from adk_eval_action.adk.compat import llm_capabilities
from adk_eval_action.testing.flaky import JUDGE_SEED_VARIABLE, flip_verdicts
from adk_eval_action.testing.scripted import usage_metadata
from adk_eval_action.testing.user_turns import (
    DEFAULT_STOP_SIGNAL,
    next_user_turn,
    normalized,
    section,
)

TIMEOUT_JUDGE_MODEL = "stand-in-judge-timeout"
"""Judge model name whose every call raises ``asyncio.TimeoutError``."""

RAISING_JUDGE_MODEL = "stand-in-judge-raise"
"""Judge model name whose every call raises ``RuntimeError`` (no model service fault: a
judge model class that is broken, as a judge set-up error is)."""

RAISING_JUDGE_MESSAGE = "stand-in judge is broken"
"""The message of the ``RuntimeError`` :data:`RAISING_JUDGE_MODEL` raises."""

GARBAGE_JUDGE_MODEL = "stand-in-judge-garbage"
"""Judge model name whose every answer is text no ADK judge parser accepts."""

OMIT_JUDGE_PREFIX = "stand-in-judge-omit-"
"""``stand-in-judge-omit-<rubric id>``: the rubric answer leaves that rubric's block out.
Where the judge prompt carries no rubric ids (google-adk 1.x), the rubric is the one whose
property mentions ``<rubric id>`` (:func:`alter_rubric_answer`); so for the unsure and
extra variants."""

UNSURE_JUDGE_PREFIX = "stand-in-judge-unsure-"
"""``stand-in-judge-unsure-<rubric id>``: that rubric's verdict is "unsure" (neither yes nor
no), which ADK parses as a score of None."""

EXTRA_JUDGE_PREFIX = "stand-in-judge-extra-"
"""``stand-in-judge-extra-<rubric id>``: the rubric answer adds a "yes" block for a rubric of
that id which was never sent (ADK's parser matches it to no rubric it sent and logs "Rubric …
not found in the rubrics provided to the metric")."""

TOOLS_JUDGE_MODEL = "stand-in-judge-tools"
"""Judge model name whose ``rubric_based_tool_use_quality_v1`` answers judge each property
against the prompt's ``<available_tools>`` block (the tool declarations ADK takes from the
invocation's ``app_details``; "Agent has no tools." without them) instead of the tool calls:
a verdict that depends on what the judge was told the agent has."""

_GARBAGE_ANSWER = "Honestly the agent did a fine job overall, I would give it a thumbs up."


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
    """Formats the ADK rubric answer (ID/Property/Evidence/Rationale/Verdict; without the
    ID line where the prompt gave no rubric ids, as google-adk 1.x parses it).

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
                    *([f"ID: {_one_line(rubric_id)}"] if rubric_id else []),
                    f"Property: {_one_line(prop)}",
                    f"Evidence: Searched the {judged_what} for the quoted phrases.",
                    f"Rationale: {_one_line(rationale)}",
                    f"Verdict: {'yes' if verdict else 'no'}",
                ]
            )
        )
    return "\n\n".join(blocks)


# google-adk 2.x tags each property with its rubric id; 1.x lists the bare text and matches
# the judge's answers to rubrics by that text.
_RUBRIC_LINE = re.compile(r"^\*  (?:\[id: (?P<id>.*?)\] ?)?(?P<text>.*)$")


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
            rubrics.append([found.group("id") or "", found.group("text")])
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
    ("user_simulator_quality", "evaluating the quality of a User Simulator that is interacting"),
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
    * ``per_turn_user_simulator_quality_v1``: the generated user response is valid when
      it is what :func:`adk_eval_action.testing.user_turns.next_user_turn` says the user
      says next (the plan's next item, or the stop signal once every item was said).

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
    if kind == "user_simulator_quality":
        return _answer_user_turn(prompt)
    return ""


_JUDGED_STOP_SIGNAL = re.compile(r"User Simulator outputs `([^`]+)`")


def _answer_user_turn(prompt: str) -> str:
    """The verdict on one simulated user turn, in the JSON layout of ADK's prompt (the
    ``"is_valid"`` label is what ADK's ``_parse_llm_response`` reads)."""
    stop = _JUDGED_STOP_SIGNAL.search(prompt)
    expected = next_user_turn(prompt, stop.group(1) if stop else DEFAULT_STOP_SIGNAL)
    generated = section(prompt, "Generated User Response")
    valid = normalized(generated) == normalized(expected)
    reasoning = ("the next step of the conversation plan" if valid
                 else f"the plan's next step is {expected!r}")
    return json.dumps({
        "criteria": [{"name": "CONVERSATION_PLAN_FOLLOWED", "reasoning": reasoning,
                      "passes": valid}],
        "is_valid": valid,
    }, indent=4)


def _is_target(block: str, target: str, by_id: bool) -> bool:
    """Whether an answer block is about the rubric a variant names: its ``ID:`` line is
    ``target`` where the prompt gave rubric ids (google-adk 2.x), else (1.x lists bare
    properties and matches answers by their text) its ``Property:`` line mentions ``target``,
    case-insensitively."""
    first, _, rest = block.partition("\n")
    if by_id:
        return first == f"ID: {target}"
    return first.startswith("Property: ") and target.casefold() in first.casefold()


def alter_rubric_answer(answer: str, model: str) -> str:
    """The answer of the ``omit``/``unsure``/``extra`` variants (see :class:`StandInJudge`):
    the block about the rubric the model name names (:func:`_is_target`) is dropped, or its
    verdict made "unsure"; or a block about that (unsent) rubric is added after the others,
    with an ``ID:`` line where the other blocks have one. Other answers and other blocks
    are unchanged."""
    by_id = answer.startswith("ID: ")
    if model.startswith(EXTRA_JUDGE_PREFIX) and "Verdict: " in answer:
        rubric_id = model[len(EXTRA_JUDGE_PREFIX):]
        extra = "\n".join([
            *([f"ID: {_one_line(rubric_id)}"] if by_id else []),
            f"Property: The answer satisfies {_one_line(rubric_id)}.",
            "Evidence: None.",
            "Rationale: An answer about a rubric the prompt did not list.",
            "Verdict: yes",
        ])
        return f"{answer}\n\n{extra}"
    for prefix in (OMIT_JUDGE_PREFIX, UNSURE_JUDGE_PREFIX):
        if model.startswith(prefix):
            target, omit = model[len(prefix):], prefix == OMIT_JUDGE_PREFIX
            blocks = answer.split("\n\n")
            kept = [b for b in blocks if not (omit and _is_target(b, target, by_id))]
            return "\n\n".join(
                re.sub(r"Verdict: \w+", "Verdict: unsure", b)
                if _is_target(b, target, by_id) else b
                for b in kept
            )
    return answer


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
    * ``stand-in-judge-raise``: every call raises
      ``RuntimeError("stand-in judge is broken")`` (:data:`RAISING_JUDGE_MODEL`).
    * ``stand-in-judge-garbage``: every answer is prose no ADK parser accepts,
      which ADK turns into a score of None.
    * ``stand-in-judge-omit-<rubric id>`` / ``stand-in-judge-unsure-<rubric id>``: the
      rubric answer leaves that rubric out, or says "unsure" for it
      (:func:`alter_rubric_answer`); ADK's parser accepts both answers.
    * ``stand-in-judge-extra-<rubric id>``: the rubric answer also gives a verdict on a
      rubric of that id that was never sent, which ADK drops with a warning.
    * ``stand-in-judge-tools``: tool-use properties are judged against the tool
      declarations (:data:`TOOLS_JUDGE_MODEL`).
    * ``stand-in-judge-flaky-<p>``: each verdict is turned over with probability ``p``,
      seeded by :data:`JUDGE_SEED_VARIABLE` and the prompt (:func:`flip_verdicts`).
    """

    @classmethod
    def supported_models(cls) -> list[str]:
        """Returns the model-name regexes this class is registered for."""
        return [r"stand-in-judge.*"]

    @property
    def capabilities(self) -> Any:
        """Declares capabilities outright, avoiding ADK's name-based fallback (2.x)."""
        return llm_capabilities(output_schema_and_tools=False)

    def _answer(self, prompt: str) -> str:
        """:func:`answer_judge_prompt`, or for :data:`TOOLS_JUDGE_MODEL`'s tool-use prompts
        the properties judged against the declared tools."""
        if self.model == TOOLS_JUDGE_MODEL and judge_prompt_kind(prompt) == "tool_use_quality":
            return _answer_line_rubrics(prompt, "<available_tools>", "</available_tools>",
                                        "tool declarations")
        return answer_judge_prompt(prompt)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields one judge answer for the prompt in ``llm_request``.

        Raises:
            asyncio.TimeoutError: for the ``stand-in-judge-timeout`` variant.
            RuntimeError: for the ``stand-in-judge-raise`` variant.
        """
        del stream
        if self.model.startswith(TIMEOUT_JUDGE_MODEL):
            raise asyncio.TimeoutError("stand-in judge timed out")
        if self.model.startswith(RAISING_JUDGE_MODEL):
            raise RuntimeError(RAISING_JUDGE_MESSAGE)
        if self.model.startswith(GARBAGE_JUDGE_MODEL):
            text = _GARBAGE_ANSWER
        else:
            prompt = "\n".join(
                part.text
                for content in llm_request.contents or []
                for part in content.parts or []
                if part.text
            )
            text = alter_rubric_answer(self._answer(prompt), self.model)
            text = flip_verdicts(text, self.model, prompt,
                                 os.environ.get(JUDGE_SEED_VARIABLE) or "0")
        parts = [genai_types.Part(text=text)]
        yield LlmResponse(
            content=genai_types.Content(role="model", parts=parts),
            usage_metadata=usage_metadata(llm_request, parts),
            model_version=self.model,
        )


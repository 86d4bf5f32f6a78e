"""Thought parts (``Part.thought``: a thinking model's reasoning summary) are not the answer.

google-adk 2.13 scores them: ``final_response_match_v1`` (``response_match_score``) joins
every text part of the final response (``_get_text_from_content``) and the judges'
``llm_as_judge_utils.get_text_from_content`` does the same, so a thinking model gets a lower
``response_match_score`` for the same visible answer and the judge reads its reasoning as
if it were the answer. google-adk's own fix (PR 7091, generalised by PR 7117) leaves thought
parts out of the text of both the actual and the expected response. Until the installed
google-adk does so itself, the harness hands evaluators copies of the invocations without
thought parts (:func:`without_thoughts`); :func:`adk_scores_thoughts` asks the installed
google-adk whether it would have scored them, for the note in the results file.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

from google.adk.evaluation.eval_case import IntermediateData, Invocation, InvocationEvents
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from google.genai import types as genai_types


def _is_thought(part: genai_types.Part) -> bool:
    """A thought part with text (a thought that carries a function call is left alone, so
    tool trajectories never change)."""
    return bool(part.thought) and part.text is not None and part.function_call is None


def _count(parts: Sequence[genai_types.Part] | None) -> int:
    return sum(1 for p in parts or [] if _is_thought(p))


def _strip(content: genai_types.Content | None) -> genai_types.Content | None:
    if content is None or not content.parts:
        return content
    return content.model_copy(update={"parts": [p for p in content.parts if not _is_thought(p)]})


def thought_parts(invocation: Invocation) -> int:
    """How many thought parts an invocation holds (final response and intermediate data)."""
    count = _count(invocation.final_response.parts if invocation.final_response else None)
    data = invocation.intermediate_data
    if isinstance(data, InvocationEvents):
        count += sum(_count(e.content.parts if e.content else None) for e in data.invocation_events)
    elif isinstance(data, IntermediateData):
        count += sum(_count(parts) for _, parts in data.intermediate_responses)
    return count


def _stripped(invocation: Invocation) -> Invocation:
    data = invocation.intermediate_data
    if isinstance(data, InvocationEvents):
        data = data.model_copy(update={"invocation_events": [
            e.model_copy(update={"content": _strip(e.content)}) for e in data.invocation_events
        ]})
    elif isinstance(data, IntermediateData):
        data = data.model_copy(update={"intermediate_responses": [
            (author, [p for p in parts if not _is_thought(p)])
            for author, parts in data.intermediate_responses
        ]})
    return invocation.model_copy(
        update={"final_response": _strip(invocation.final_response), "intermediate_data": data}
    )


def without_thoughts(invocations: list[Any] | None) -> tuple[list[Any] | None, int]:
    """``(invocations, thought parts removed)``: copies without thought parts of the
    invocations that have any (the others as they are; the list itself is new only when
    something was removed). Rubrics, tool calls and usage are untouched."""
    if not invocations:
        return invocations, 0
    counts = [thought_parts(i) if isinstance(i, Invocation) else 0 for i in invocations]
    if not any(counts):
        return invocations, 0
    return [_stripped(i) if n else i for i, n in zip(invocations, counts, strict=True)], sum(counts)


def _invocation(parts: list[genai_types.Part]) -> Invocation:
    return Invocation(
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text="q")]),
        final_response=genai_types.Content(role="model", parts=parts),
    )


@functools.cache
def adk_scores_thoughts() -> bool:
    """Whether the installed google-adk's ``response_match_score`` counts thought parts:
    its own evaluator scores an answer with an extra thought part against the same answer
    without it (1.0 when thoughts are left out)."""
    answer = genai_types.Part(text="sunny in paris")
    thought = genai_types.Part(text="the user wants weather so call the tool", thought=True)
    metric = EvalMetric(metric_name="response_match_score", threshold=0.5)
    try:
        evaluator = MetricEvaluatorRegistry().get_evaluator(metric)
        result = evaluator.evaluate_invocations(
            actual_invocations=[_invocation([thought, answer])],
            expected_invocations=[_invocation([answer])],
        )
    except Exception:  # noqa: BLE001 - a probe that cannot run says "unknown": assume yes
        return True
    if inspect.isawaitable(result):
        result.close()  # type: ignore[attr-defined]  # never awaited: a sync probe only
        return True
    return result.overall_score is None or result.overall_score < 1.0


def thoughts_note(count: int, cases: int) -> str:
    """The results file's note when thought parts were left out of scoring."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        adk = f"google-adk {version('google-adk')}"
    except PackageNotFoundError:
        adk = "the installed google-adk"
    return (
        f"{count} thought part(s) (`thought: true`) in {cases} eval case run(s) were left out "
        "of the responses given to metrics and judges, as google-adk's own fix does "
        f"(PR 7091); {adk} would have scored them"
    )

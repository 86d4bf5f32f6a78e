"""Rubrics as users of ADK's rubric metrics need them.

ADK's rubric metrics (``rubric_based_final_response_quality_v1``,
``rubric_based_tool_use_quality_v1``, ``rubric_based_multi_turn_trajectory_quality_v1``) take
rubrics from the criterion in the eval config, from the eval case and from each expected
invocation (google.adk.evaluation.local_eval_service copies the last two onto the actual
invocations). Three things are added here:

* Short forms in our files: a rubric may be a plain string (id ``rubric_0``, ``rubric_1``, …
  by position) or a mapping ``{id, text, type?, applies_to?}`` besides ADK's
  ``{rubric_id, rubric_content: {text_property}, type?}``.
* ``applies_to: final`` on a case rubric moves it onto the last expected invocation, so a
  rubric about the end state is judged on the last turn only (ADK applies case rubrics to
  every turn, which is ``applies_to: every``, the default).
* Untyped case- and invocation-level rubrics get the type of the metric that judges them:
  ``RubricBasedEvaluator.create_effective_rubrics_list`` keeps only rubrics whose ``type``
  equals the metric's rubric type, so an untyped rubric would never reach the judge.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from google.adk.evaluation.eval_rubrics import Rubric

# The rubric type each ADK rubric metric filters on (RUBRIC_TYPE of its evaluator class).
RUBRIC_METRIC_TYPES: dict[str, str] = {
    "rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
    "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY",
    "rubric_based_multi_turn_trajectory_quality_v1": "TRAJECTORY_QUALITY",
}

AppliesTo = Literal["every", "final"]


class RubricFormatError(ValueError):
    """A rubric entry is in no accepted form; the message says which entry and why."""


def normalize_rubric(
    entry: Any, position: int, where: str, id_prefix: str = ""
) -> tuple[dict[str, Any], AppliesTo]:
    """Returns ``(ADK rubric dict, applies_to)`` for one rubric entry in any accepted form.

    Args:
        entry: a string, ``{id, text, type?, applies_to?}``, or ADK's rubric JSON (snake or
            camelCase), optionally with ``applies_to``.
        position: 0-based position in its list; a string rubric gets id
            ``<id_prefix>rubric_<position>``.
        where: human description of the list (for error messages).
        id_prefix: prefix of generated ids; eval cases use ``<eval_id>.`` so that short-form
            rubrics of a case never collide with the config's ``rubric_0``.

    Raises:
        RubricFormatError: the entry has no text, or ``applies_to`` is not every/final.
    """
    if isinstance(entry, str):
        return _adk_rubric(f"{id_prefix}rubric_{position}", entry, None), "every"
    if not isinstance(entry, dict):
        raise RubricFormatError(f"{where}[{position}]: a rubric must be a string or a mapping")
    entry = dict(entry)
    applies_to = entry.pop("applies_to", entry.pop("appliesTo", "every"))
    if applies_to not in ("every", "final"):
        raise RubricFormatError(
            f"{where}[{position}]: applies_to must be `every` or `final`, not {applies_to!r}"
        )
    if "rubric_id" in entry or "rubricId" in entry:
        return entry, applies_to
    text = entry.get("text")
    if not isinstance(text, str) or not text.strip():
        raise RubricFormatError(f"{where}[{position}]: a rubric mapping needs `text`")
    rubric_id = str(entry.get("id", f"{id_prefix}rubric_{position}"))
    return _adk_rubric(rubric_id, text, entry.get("type")), applies_to


def _adk_rubric(rubric_id: str, text: str, rubric_type: str | None) -> dict[str, Any]:
    rubric: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}
    if rubric_type:
        rubric["type"] = rubric_type
    return rubric


def normalize_rubric_list(
    entries: Any, where: str, id_prefix: str = ""
) -> list[tuple[dict[str, Any], AppliesTo]]:
    """Normalizes a list of rubric entries (see :func:`normalize_rubric`).

    Raises:
        RubricFormatError: ``entries`` is not a list or one entry is invalid.
    """
    if not isinstance(entries, list):
        raise RubricFormatError(f"{where}: rubrics must be a list")
    return [normalize_rubric(e, i, where, id_prefix) for i, e in enumerate(entries)]


def normalize_case_rubrics(case: dict[str, Any], where: str) -> None:
    """Rewrites a raw eval case dict in place: short-form rubrics become ADK rubrics, and
    ``applies_to: final`` case rubrics move to the last expected invocation.

    A final-only rubric on a ``conversation_scenario`` case (no expected invocations) stays
    at case level, i.e. applies to every turn.

    Raises:
        RubricFormatError: an invalid rubric entry.
    """
    conversation = case.get("conversation")
    prefix = f"{case.get('eval_id', case.get('evalId', 'case'))}."
    for index, invocation in enumerate(conversation or []):
        if isinstance(invocation, dict) and invocation.get("rubrics") is not None:
            invocation["rubrics"] = [
                r
                for r, _ in normalize_rubric_list(
                    invocation["rubrics"],
                    f"{where}.conversation[{index}].rubrics",
                    f"{prefix}turn{index + 1}.",
                )
            ]
    key = "rubrics" if "rubrics" in case else None
    if key is None or case[key] is None:
        return
    every: list[dict[str, Any]] = []
    final: list[dict[str, Any]] = []
    for rubric, applies_to in normalize_rubric_list(case[key], f"{where}.rubrics", prefix):
        (final if applies_to == "final" else every).append(rubric)
    case[key] = every
    if final and isinstance(conversation, list) and conversation:
        last = conversation[-1]
        last["rubrics"] = [*(last.get("rubrics") or []), *final]
    else:
        case[key] = every + final


def assign_default_type(rubrics: Iterable[Rubric] | None, rubric_type: str) -> int:
    """Gives every untyped rubric in ``rubrics`` the type ``rubric_type``, in place.

    Returns the number of rubrics typed.
    """
    count = 0
    for rubric in rubrics or []:
        if not rubric.type:
            rubric.type = rubric_type
            count += 1
    return count


def duplicate_ids(*sources: Iterable[Rubric] | None) -> list[str]:
    """Rubric ids that occur more than once across ``sources`` (config, case, invocation)."""
    seen: set[str] = set()
    duplicates: list[str] = []
    for source in sources:
        for rubric in source or []:
            if rubric.rubric_id in seen and rubric.rubric_id not in duplicates:
                duplicates.append(rubric.rubric_id)
            seen.add(rubric.rubric_id)
    return duplicates

"""What the agent answered in one run of an eval case, read from the invocations the results
file keeps (JSON of ``google.adk.evaluation.eval_case.Invocation``): each turn's final
response text and tool calls, and one key for all of it (:func:`answer_key`).

Two runs with the same key gave the same answer, turn by turn: the same final texts (thought
parts left out) and the same tool calls (names and arguments; the call ids, which ADK makes
anew for every run, left out). A judge that scores two such runs differently disagrees with
itself: :func:`within_run_noise` counts it across the runs of each eval case
(:mod:`adk_eval_action.results.judgenoise`), :mod:`adk_eval_action.analysis.judgeflips`
between the baseline and the head.

Tool calls are read as ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads them
(``tool_uses`` of ``IntermediateData``, or the ``function_call`` parts of
``InvocationEvents``); texts as ADK's evaluators read them (text parts that are not
thoughts).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from adk_eval_action.results.judgenoise import UNKNOWN_JUDGE, JudgeNoise, judge_noise
from adk_eval_action.results.model import AVERAGED_STATUSES, EvalCaseRecord, RunRecord

__all__ = ["ToolCall", "Verdicts", "answer_key", "content_text", "raw_tool_calls",
           "response_text", "run_verdicts", "within_run_noise"]

ToolCall = tuple[str, dict[str, Any]]
"""A tool call: its name and its arguments."""
Verdicts = dict[tuple[str, str | None], tuple[str, float]]
"""One run's judge verdicts: (metric, rubric id or None) -> (judge model, score)."""


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def raw_tool_calls(invocation: Mapping[str, Any] | None) -> list[ToolCall]:
    """``(name, args)`` of every tool call of an invocation (module docstring), as
    recorded: names not cut, arguments as given ({} when not an object)."""
    data = (invocation or {}).get("intermediate_data")
    if not isinstance(data, dict):
        return []
    if "invocation_events" in data:
        calls = [
            part["function_call"]
            for event in _dicts(data["invocation_events"])
            for part in _dicts((event.get("content") or {}).get("parts"))
            if isinstance(part.get("function_call"), dict)
        ]
    else:
        calls = _dicts(data.get("tool_uses"))
    return [(str(c.get("name")), c["args"] if isinstance(c.get("args"), dict) else {})
            for c in calls]


def content_text(content: Any) -> str | None:
    """The text of a genai ``Content`` (as JSON): its text parts that are not thoughts,
    joined by newlines; None when it has none."""
    if not isinstance(content, dict):
        return None
    texts = [
        p["text"]
        for p in _dicts(content.get("parts"))
        if isinstance(p.get("text"), str) and not p.get("thought")
    ]
    return "\n".join(texts) if texts else None


def response_text(invocation: Mapping[str, Any] | None) -> str | None:
    """The final response text of an invocation (as JSON), or None."""
    return content_text((invocation or {}).get("final_response"))


def answer_key(invocations: Iterable[Mapping[str, Any]] | None) -> str | None:
    """One key for what a run answered (module docstring): the first 16 hex digits of the
    SHA-256 of each turn's final response text and tool calls; None when the run recorded
    no invocations (it could not be compared)."""
    if invocations is None:
        return None
    turns = [[response_text(i), [[name, args] for name, args in raw_tool_calls(i)]]
             for i in invocations]
    if not turns:
        return None
    text = json.dumps(turns, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def run_verdicts(run: RunRecord) -> Verdicts:
    """The verdicts of one run's judge metrics (module docstring): each rubric's score, or
    the score of a judge metric without rubrics; verdicts without a score left out."""
    found: Verdicts = {}
    for metric in run.metrics:
        if not (metric.judge_model or metric.rubrics):
            continue
        judge = metric.judge_model or UNKNOWN_JUDGE
        if metric.rubrics:
            found.update({(metric.metric_name, r.rubric_id): (judge, r.score)
                          for r in metric.rubrics if r.score is not None})
        elif metric.score is not None and metric.status in AVERAGED_STATUSES:
            found[(metric.metric_name, None)] = (judge, metric.score)
    return found


def within_run_noise(cases: Iterable[EvalCaseRecord]) -> list[JudgeNoise]:
    """Per judge model, its verdicts compared across the runs of each eval case whose runs
    all gave the same answer (module docstring)."""
    counts: dict[str, tuple[int, int]] = {}
    for case in cases:
        if len(case.runs) < 2:
            continue
        keys = {answer_key(run.actual_invocations) for run in case.runs}
        if len(keys) != 1 or None in keys:
            continue
        by_unit: dict[tuple[str, str | None], tuple[str, set[float], int]] = {}
        for run in case.runs:
            for unit, (judge, score) in run_verdicts(run).items():
                _, scores, seen = by_unit.get(unit, (judge, set(), 0))
                by_unit[unit] = (judge, scores | {score}, seen + 1)
        for judge, scores, seen in by_unit.values():
            if seen >= 2:
                compared, disagreed = counts.get(judge, (0, 0))
                counts[judge] = (compared + 1, disagreed + (len(scores) > 1))
    return judge_noise(counts)

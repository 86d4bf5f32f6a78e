"""Reading ADK invocations as the results file keeps them (JSON of
``google.adk.evaluation.eval_case.Invocation``): tool calls, texts, and the differences of
two tool-call sequences and of two texts, for the evidence of an eval case
(:mod:`adk_eval_action.report.evidence`). Strings are cut here (with ``…``) but not
escaped: the templates escape them (:mod:`.format`).

* **Tool calls** are read as ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads
  them (``tool_uses``, or the ``function_call`` parts of ``invocation_events``); two
  sequences are aligned by tool name (``difflib``), and a pair with the same name shows
  only the arguments that differ.
* **Texts**: the text parts that are not thoughts; when two share a long beginning, the
  excerpt starts shortly before the first difference.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from adk_eval_action.report.format import cut, one_line
from adk_eval_action.results.answers import ToolCall, content_text, raw_tool_calls, response_text

TEXT_CHARS = 300
"""User messages and final responses are cut to this many characters."""
VALUE_CHARS = 60
"""Each tool argument value, as JSON, is cut to this many characters."""
CONTEXT_CHARS = 40
"""Characters kept before the first difference of two long responses."""



class ToolCallChange(BaseModel):
    """One difference between expected and actual tool calls of a turn.

    ``changed``: same tool name, some arguments differ (only those are in the two maps;
    ``same_args`` counts the equal ones left out); ``missing``: expected, not called;
    ``unexpected``: called, not expected. Argument values are JSON text, cut at
    :data:`VALUE_CHARS`; None means the argument was not given on that side. ``inside``
    (a ``missing`` call only): the agents used as tools (``AgentTool``) called on the turn
    that have this tool; google-adk does not record the calls made inside them
    (:func:`adk_eval_action.results.agenttree.tools_inside_agent_tools`), so the call is not
    in the recorded trajectory, made or not.
    """

    change: Literal["changed", "missing", "unexpected"]
    name: str
    expected_args: dict[str, str | None] = Field(default_factory=dict)
    actual_args: dict[str, str | None] = Field(default_factory=dict)
    same_args: int = 0
    inside: list[str] = Field(default_factory=list)


def tool_calls(invocation: Mapping[str, Any] | None) -> list[ToolCall]:
    """``(name, args)`` of every tool call of an ADK ``Invocation`` (as JSON), read as
    ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads them
    (:func:`adk_eval_action.results.answers.raw_tool_calls`), each name on one line and cut
    to 80 characters."""
    return [(cut(one_line(name), 80), args) for name, args in raw_tool_calls(invocation)]


def _json(value: Any) -> str:
    return cut(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), VALUE_CHARS)


def tool_call_changes(expected: list[ToolCall], actual: list[ToolCall]) -> list[ToolCallChange]:
    """The differences between two tool-call sequences (the module's rules)."""
    matcher = difflib.SequenceMatcher(
        a=[n for n, _ in expected], b=[n for n, _ in actual], autojunk=False
    )
    changes: list[ToolCallChange] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            for (name, e_args), (_, a_args) in zip(expected[a0:a1], actual[b0:b1], strict=True):
                if e_args != a_args:
                    changes.append(_changed(name, e_args, a_args))
            continue
        changes.extend(
            ToolCallChange(change="missing", name=n, expected_args=args_text(a))
            for n, a in expected[a0:a1]
        )
        changes.extend(
            ToolCallChange(change="unexpected", name=n, actual_args=args_text(a))
            for n, a in actual[b0:b1]
        )
    return changes


def call_text(name: str, args: Mapping[str, str | None], same: int = 0) -> str:
    """A tool call as one line, ``name(key=JSON, …)``: ``args`` as :func:`tool_call_changes`
    gives them (None: not given on that side, left out); ``same`` equal arguments left out
    are shown as ``…``."""
    shown = [f"{key}={value}" for key, value in args.items() if value is not None]
    if same:
        shown.append("…")
    return f"{name}({', '.join(shown)})"


def _key(name: Any) -> str:
    return cut(one_line(name), 40)


def args_text(args: dict[str, Any]) -> dict[str, str | None]:
    return {_key(k): _json(v) for k, v in args.items()}


def _changed(name: str, expected: dict[str, Any], actual: dict[str, Any]) -> ToolCallChange:
    keys = list(dict.fromkeys([*expected, *actual]))
    differ = [k for k in keys if k not in expected or k not in actual or expected[k] != actual[k]]
    return ToolCallChange(
        change="changed",
        name=name,
        expected_args={_key(k): _json(expected[k]) if k in expected else None for k in differ},
        actual_args={_key(k): _json(actual[k]) if k in actual else None for k in differ},
        same_args=len(keys) - len(differ),
    )


def excerpt_pair(
    expected: str | None, actual: str | None, limit: int
) -> tuple[str | None, str | None]:
    """Both texts on one line and cut to ``limit``; when they share a beginning longer than
    half of ``limit``, both start :data:`CONTEXT_CHARS` before their first difference
    (with a leading ``…``), so the excerpt shows where they differ."""
    e = one_line(expected) if expected is not None else None
    a = one_line(actual) if actual is not None else None
    start = 0
    if e is not None and a is not None:
        common = len(_common_prefix(e, a))
        if common > limit // 2:
            start = common - CONTEXT_CHARS

    def excerpt(text: str | None) -> str | None:
        if text is None:
            return None
        return cut("…" + text[start:] if start else text, limit)

    return excerpt(e), excerpt(a)


def _common_prefix(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return a[:i]
    return a[: min(len(a), len(b))]


__all__ = [
    "CONTEXT_CHARS",
    "TEXT_CHARS",
    "VALUE_CHARS",
    "ToolCall",
    "ToolCallChange",
    "args_text",
    "call_text",
    "content_text",
    "excerpt_pair",
    "response_text",
    "tool_call_changes",
    "tool_calls",
]

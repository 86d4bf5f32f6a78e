"""A case's evidence (:mod:`.evidence`) as markdown pieces: the ``<summary>`` line of its
``<details>`` block and the diff of its first differing turn.

The diff is a fenced ``diff`` block (GitHub colours ``-`` lines red and ``+`` lines green):
expected lines start with ``-``, actual ones with ``+``, labels with two spaces. Every line
is one line of text (newlines in data become spaces) inside a fence longer than any run of
backticks in it (:func:`adk_eval_action.report.format.fence`), so agent text can neither
close the block nor inject markdown, HTML or mentions (none is processed in a code block).
"""

from __future__ import annotations

from adk_eval_action.report.evidence import (
    CaseEvidence,
    ToolCallChange,
    TurnEvidence,
    call_text,
)
from adk_eval_action.report.format import fence, html_text, one_line
from adk_eval_action.text import shorten

CHANGE_LABELS = {
    "newly_failing": "newly failing",
    "still_failing": "still failing",
    "failing": "failing",
    "errored": "errored",
    "new": "new",
}


def evidence_summary(evidence: CaseEvidence, show_suite: bool = True) -> str:
    """The ``<summary>`` of a case's evidence (raw HTML, escaped by
    :func:`adk_eval_action.report.format.html_text`): eval case, eval set (and suite), the
    change, the run shown when there are repeats, and the metrics that did not pass. Names
    are cut where they say least (:func:`adk_eval_action.text.shorten`)."""

    def name(value: str, limit: int) -> str:
        return html_text(shorten(one_line(value), limit), limit)

    where = name(evidence.eval_set_id, 60)
    if show_suite:
        where = f"{name(evidence.suite, 40)} / {where}"
    parts = [
        f"<code>{name(evidence.eval_id, 80)}</code> ({where})",
        html_text(CHANGE_LABELS.get(evidence.change, evidence.change.replace("_", " "))),
    ]
    if evidence.runs > 1:
        parts.append(f"run {evidence.run} of {evidence.runs}")
    failed = [m.metric_name for m in evidence.metrics]
    if failed:
        names = ", ".join(failed[:4]) + (f" and {len(failed) - 4} more" if len(failed) > 4 else "")
        parts.append(html_text(names, 200))
    return " · ".join(parts)


def _tool_lines(turn: TurnEvidence) -> list[str]:
    if turn.expected_calls is None:
        more = turn.actual_calls - len(turn.calls_made)
        made = ", ".join(turn.calls_made) + (f" and {more} more" if more > 0 else "")
        if not made:
            return ["  tool calls: none"]
        return [f"  tool calls made: {made} (no expected calls to compare with)"]
    if not turn.tool_changes:
        return [f"  tool calls: as expected ({turn.actual_calls or 'none'})"]
    lines = [f"  tool calls: {turn.expected_calls} expected, {turn.actual_calls} made"]
    for change in turn.tool_changes:
        lines.extend(_change_lines(change))
    if turn.more_tool_changes:
        lines.append(f"  … and {turn.more_tool_changes} more tool call differences")
    return lines


def _change_lines(change: ToolCallChange) -> list[str]:
    if change.change == "missing":
        return [f"- {call_text(change.name, change.expected_args)}    (not called)"]
    if change.change == "unexpected":
        return [f"+ {call_text(change.name, change.actual_args)}    (not expected)"]
    return [
        f"- {call_text(change.name, change.expected_args, change.same_args)}",
        f"+ {call_text(change.name, change.actual_args, change.same_args)}",
    ]


def _response_lines(turn: TurnEvidence) -> list[str]:
    expected, actual = turn.expected_response, turn.actual_response
    if turn.nothing_expected:
        return [f"  final response: {actual if actual is not None else '(none)'}"]
    if expected is not None and expected == actual:
        return ["  final response: as expected", f"  {actual}"]
    lines = ["  final response:"]
    if expected is not None:
        lines.append(f"- {expected}")
    lines.append(f"+ {actual}" if actual is not None else "+ (no final response)")
    return lines


def evidence_diff(evidence: CaseEvidence) -> str:
    """The fenced ``diff`` block of the case's turn (module docstring), or "" when the run
    recorded no invocations."""
    turn = evidence.turn
    if turn is None:
        return ""
    if turn.nothing_expected:
        header = f"@@ turn {turn.turn} of {turn.turns} @@"  # as it happened: nothing to diff
    else:
        header = f"@@ turn {turn.turn} of {turn.turns}: expected (-) vs actual (+) @@"
    lines = [header]
    if turn.user:
        lines.append(f"  user: {turn.user}")
    lines.extend(_tool_lines(turn))
    lines.extend(_response_lines(turn))
    # Evidence strings are one line already; this keeps a stray line ending (a tool name
    # from a hand-edited file) from ending a line of the block.
    return fence([line.replace("\r", " ").replace("\n", " ") for line in lines], "diff")

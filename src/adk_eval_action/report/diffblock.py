"""A case's evidence (:mod:`.evidence`) as markdown pieces: the ``<summary>`` line of its
``<details>`` block and the diff of its first differing turn.

The diff is a fenced ``diff`` block (GitHub colours ``-`` lines red and ``+`` lines green):
expected lines (or, for a case that got worse than the baseline, the baseline run's) start
with ``-``, actual (the head run's) ones with ``+``, labels with two spaces. Every line
is one line of text (newlines in data become spaces) inside a fence longer than any run of
backticks in it (:func:`adk_eval_action.report.format.fence`), so agent text can neither
close the block nor inject markdown, HTML or mentions (none is processed in a code block).
"""

from __future__ import annotations

from adk_eval_action.report.evidence import CaseEvidence, TurnEvidence
from adk_eval_action.report.format import fence, html_text, one_line
from adk_eval_action.report.invocations import ToolCallChange, call_text
from adk_eval_action.text import shorten

CHANGE_LABELS = {
    "newly_failing": "newly failing",
    "still_failing": "still failing",
    "failing": "failing",
    "errored": "errored",
    "new": "new",
}
DROPPED_LABEL = "worse than the baseline"


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
    change = CHANGE_LABELS.get(evidence.change, evidence.change.replace("_", " "))
    parts = [
        f"<code>{name(evidence.eval_id, 80)}</code> ({where})",
        DROPPED_LABEL if evidence.kind == "dropped" else html_text(change),
    ]
    if evidence.runs > 1 or (evidence.baseline_runs or 1) > 1:
        runs = f"run {evidence.run} of {evidence.runs}"
        if evidence.kind == "dropped" and evidence.baseline_run is not None:
            runs = f"head {runs} vs baseline run {evidence.baseline_run} of " \
                   f"{evidence.baseline_runs}"
        parts.append(runs)
    failed = [m.metric_name for m in evidence.metrics] + [d.metric_name for d in evidence.drops]
    if failed:
        names = ", ".join(failed[:4]) + (f" and {len(failed) - 4} more" if len(failed) > 4 else "")
        parts.append(html_text(names, 200))
    return " · ".join(parts)


def _tool_lines(turn: TurnEvidence) -> list[str]:
    if turn.reference == "baseline":
        return _baseline_tool_lines(turn)
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


def _baseline_tool_lines(turn: TurnEvidence) -> list[str]:
    if not turn.tool_changes:
        return [f"  tool calls: as in the baseline ({turn.actual_calls or 'none'})"]
    counts = f"{turn.expected_calls} in the baseline, {turn.actual_calls} in the head"
    lines = [f"  tool calls: {counts}"]
    for change in turn.tool_changes:
        lines.extend(_change_lines(change, ("not called now", "new")))
    if turn.more_tool_changes:
        lines.append(f"  … and {turn.more_tool_changes} more tool call differences")
    return lines


def _change_lines(
    change: ToolCallChange, words: tuple[str, str] = ("not called", "not expected")
) -> list[str]:
    if change.change == "missing" and change.inside:
        inside = ", ".join(change.inside)
        return [f"- {call_text(change.name, change.expected_args)}    (not in the recorded "
                f"trajectory: the AgentTool {inside} called on this turn has this tool, and "
                "google-adk does not record the calls made inside an AgentTool)"]
    if change.change == "missing":
        return [f"- {call_text(change.name, change.expected_args)}    ({words[0]})"]
    if change.change == "unexpected":
        return [f"+ {call_text(change.name, change.actual_args)}    ({words[1]})"]
    return [
        f"- {call_text(change.name, change.expected_args, change.same_args)}",
        f"+ {call_text(change.name, change.actual_args, change.same_args)}",
    ]


def _response_lines(turn: TurnEvidence) -> list[str]:
    expected, actual = turn.expected_response, turn.actual_response
    baseline = turn.reference == "baseline"
    if turn.nothing_expected and not baseline:
        return [f"  final response: {actual if actual is not None else '(none)'}"]
    if expected == actual and (expected is not None or baseline):
        same = "as in the baseline" if baseline else "as expected"
        return [f"  final response: {same}", f"  {actual if actual is not None else '(none)'}"]
    lines = ["  final response:"]
    if expected is not None:
        lines.append(f"- {expected}")
    elif baseline:
        lines.append("- (no final response)")
    lines.append(f"+ {actual}" if actual is not None else "+ (no final response)")
    return lines


def evidence_diff(evidence: CaseEvidence) -> str:
    """The fenced ``diff`` block of the case's turn (module docstring), or "" when the run
    recorded no invocations."""
    turn = evidence.turn
    if turn is None:
        return ""
    if turn.reference == "baseline":
        header = f"@@ turn {turn.turn} of {turn.turns}: baseline (-) vs head (+) @@"
    elif turn.nothing_expected:
        header = f"@@ turn {turn.turn} of {turn.turns} @@"  # as it happened: nothing to diff
    else:
        header = f"@@ turn {turn.turn} of {turn.turns}: expected (-) vs actual (+) @@"
    lines = [header]
    if turn.user:
        lines.append(f"  user: {turn.user}")
    lines.extend(_tool_lines(turn))
    lines.extend(_response_lines(turn))
    if turn.other_turns:
        shown = ", ".join(str(t) for t in turn.other_turns[:10])
        more = f" and {len(turn.other_turns) - 10} more" if len(turn.other_turns) > 10 else ""
        lines.append(f"  also worse than the baseline on turns {shown}{more}")
    # Evidence strings are one line already; this keeps a stray line ending (a tool name
    # from a hand-edited file) from ending a line of the block.
    return fence([line.replace("\r", " ").replace("\n", " ") for line in lines], "diff")

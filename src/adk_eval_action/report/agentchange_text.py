"""What changed in each suite's agent since the baseline
(:mod:`adk_eval_action.analysis.agentchanges`) in words: the comment's collapsed section
(the first lines of each hunk of an instruction's diff), the job summary's (every line the
comparison kept) and the console's one line; the HTML report shows the same values
(``report.html.j2``).

A section reads::

    <details><summary>🔧 The agent changed since the baseline: the instruction of
    travel_agent (+1 −1 lines)</summary>

    - Instruction of `travel_agent` (+1 −1 lines):
    ```diff
    @@ -1 +1 @@
    -You are a travel assistant. … politely.
    +You are a travel assistant. … politely. Be blunt: …
    ```

Every name goes through :func:`~adk_eval_action.report.format.code`, every value through
``code`` too, and each diff is a fenced block longer than any backtick run in it
(:func:`~adk_eval_action.report.format.fence`): agent text cannot leave it.
"""

from __future__ import annotations

from adk_eval_action.analysis.agentchanges import (
    MAX_DIFF_LINES,
    AgentChanges,
    InstructionChange,
    ToolChange,
    ValueChange,
)
from adk_eval_action.report.format import code, fence, md

__all__ = [
    "COMMENT_DIFFS",
    "COMMENT_HUNKS",
    "COMMENT_HUNK_LINES",
    "agent_changes_markdown",
    "agent_changes_title",
    "instruction_counts",
    "tool_text",
    "value_text",
]

COMMENT_HUNK_LINES = 6
"""Lines of each hunk of an instruction's diff the comment shows (its ``@@`` line too)."""
COMMENT_HUNKS = 3
"""Hunks of an instruction's diff the comment shows."""
COMMENT_DIFFS = 4
"""Instruction diffs the comment shows (the others are named, with their counts)."""


def instruction_counts(change: InstructionChange) -> str:
    """``+3 −1 lines``, with what else a reviewer must know: ``built at run time`` (not in
    the pull request's diff), how many distinct instructions each side sent."""
    text = f"+{change.added} −{change.removed} lines"
    if change.built_at_run_time:
        text += "; built at run time by a function, so not in this pull request's diff"
    if change.head_variants > 1 or change.baseline_variants > 1:
        text += (f"; it varies per invocation ({change.baseline_variants} distinct on the "
                 f"baseline, {change.head_variants} on the head: one of each shown)")
    return text


def _what(changes: AgentChanges) -> list[str]:
    """The kinds of change of one suite, for a title: ``the instruction of a (+1 −1
    lines)``, ``the model of a``, ``2 tools``, ``generate config``, ``agents``."""
    parts = [f"the instruction of {i.agent} (+{i.added} −{i.removed} lines)"
             for i in changes.instructions[:2]]
    if len(changes.instructions) > 2:
        parts.append(f"{len(changes.instructions) - 2} more instructions")
    if changes.models:
        parts.append("the model" + (f" of {changes.models[0].agent}"
                                    if len(changes.models) == 1 else "s"))
    if changes.tools:
        parts.append(f"{len(changes.tools)} tool{'s' if len(changes.tools) > 1 else ''}")
    if changes.agents_added or changes.agents_removed:
        parts.append("its agents")
    if changes.generate_config:
        parts.append("generate config")
    return parts


def agent_changes_title(changes: list[AgentChanges], limit: int = 300) -> str:
    """One line naming what changed (plain text, for a ``<summary>`` through
    ``html_text``, and the console): ``The agent changed since the baseline: the
    instruction of travel_agent (+1 −1 lines)``; with several suites, each suite's name
    before its changes."""
    if len(changes) == 1:
        text = "The agent changed since the baseline: " + ", ".join(_what(changes[0]))
    else:
        text = f"The agents of {len(changes)} suites changed since the baseline: " + "; ".join(
            f"{c.suite}: {', '.join(_what(c))}" for c in changes)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def value_text(change: ValueChange) -> str:
    """``baseline → head`` of a value (code spans; ``unset`` for a side without it)."""
    def side(value: str | None) -> str:
        return "unset" if value is None else code(value, 120)

    return f"{side(change.baseline)} → {side(change.head)}"


def tool_text(change: ToolChange) -> str:
    """``added `lookup_order```, ``changed `refund_order` (description, parameter `reason`
    added)``."""
    text = f"{change.change} {code(change.tool, 60)}"
    if change.parts:
        more = f" and {len(change.parts) - 6} more" if len(change.parts) > 6 else ""
        text += f" ({md(', '.join(change.parts[:6]) + more, 300)})"
    return text


def _diff_lines(change: InstructionChange, hunk_lines: int | None,
                hunks: int | None) -> tuple[list[str], int]:
    """The diff lines shown (each hunk's first ``hunk_lines``, the first ``hunks`` hunks;
    None: all kept) and how many kept lines that leaves out."""
    shown: list[str] = []
    for hunk in change.hunks[:hunks]:
        shown.extend(hunk[:hunk_lines])
    return shown, sum(map(len, change.hunks)) - len(shown)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _instruction_lines(change: InstructionChange, full: bool, where: str) -> list[str]:
    lines, hidden = _diff_lines(change, None if full else COMMENT_HUNK_LINES,
                                None if full else COMMENT_HUNKS)
    out = [f"- Instruction of {code(change.agent, 60)} ({instruction_counts(change)}):", ""]
    out += ["  " + line for line in fence(lines, "diff").split("\n")]
    if hidden:
        out += ["", f"  … {_plural(hidden, 'more diff line')} {where}."]
    if change.left_out:
        out += ["", f"  … {_plural(change.left_out, 'diff line')} past the diff's bound "
                    f"({MAX_DIFF_LINES} lines), not shown."]
    return [*out, ""]


def agent_changes_markdown(changes: AgentChanges, full: bool = False, heading: bool = False,
                           diffs: int | None = COMMENT_DIFFS,
                           where: str = "in the HTML report") -> str:
    """One suite's changes as a markdown list: models, instructions (the comment's first
    lines of each hunk; ``full``: every line kept), tools, agents, generate config.
    ``heading`` names the suite first (several suites); ``diffs`` bounds the instruction
    diffs shown (None: all), the others named with their counts; ``where`` says where
    the rest of a diff is."""
    out = [f"Suite {code(changes.suite, 60)}:", ""] if heading else []
    out += [f"- Model of {code(v.agent, 60)}: {value_text(v)}" for v in changes.models]
    for index, change in enumerate(changes.instructions):
        if diffs is None or index < diffs:
            out += _instruction_lines(change, full, where)
        else:
            out.append(f"- Instruction of {code(change.agent, 60)} "
                       f"({instruction_counts(change)}): the diff {where}.")
    by_agent: dict[str, list[ToolChange]] = {}
    for tool in changes.tools:
        by_agent.setdefault(tool.agent, []).append(tool)
    out += [f"- Tools of {code(agent, 60)}: " + "; ".join(map(tool_text, tools))
            for agent, tools in by_agent.items()]
    if changes.agents_added:
        out.append("- Agents added: " + ", ".join(code(a, 60) for a in changes.agents_added))
    if changes.agents_removed:
        out.append("- Agents removed: " + ", ".join(code(a, 60)
                                                     for a in changes.agents_removed))
    out += [f"- Generate config of {code(v.agent, 60)}: {code(v.key, 80)} {value_text(v)}"
            for v in changes.generate_config]
    if changes.left_out:
        out.append(f"- … and {changes.left_out} more changes of tools, agents or generate "
                   "config keys, not listed.")
    return "\n".join(out).rstrip("\n") + "\n"

"""What changed in each suite's agent between the baseline and the head: the reason a score
moved that the scores cannot say.

Per suite both sides have, from what each side's results recorded:

* **Instructions**, as ADK sent them (``AgentDetails.instructions``, resolved at run time:
  an instruction a function builds, invisible in the pull request's diff, shows too), per
  agent both sides ran: a unified diff, bounded (:data:`MAX_DIFF_LINES` lines of at most
  :data:`MAX_LINE_CHARS` characters; a long line is cut around its first difference from
  the line it replaces). An agent whose instruction differs per invocation (state put in
  it) has several; the two sides' first (sorted) ones that the other side lacks are
  compared, and the count is given.
* **Tools**, from the declarations ADK sent (``AgentDetails.tool_declarations``): added,
  removed, or with a changed declaration (which parts: description, each parameter).
* **Models, generate config and the agent tree**, from what the engine recorded when it
  imported the agent (:mod:`adk_eval_action.results.agenttree`): a model name changed, a
  generate-config key changed (nested keys by dotted path), agents added or removed.
  A side that did not record them (results written before they were recorded, an agent
  that did not import) leaves them uncompared: nothing is claimed of what is not known.

Suites without a baseline and suites the baseline did not evaluate are left out; a suite
with no change has no entry.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.model import RunResults, SuiteRecord

__all__ = [
    "MAX_DIFF_LINES",
    "MAX_LINE_CHARS",
    "AgentChanges",
    "InstructionChange",
    "ToolChange",
    "ValueChange",
    "agent_changes",
]

MAX_DIFF_LINES = 150
"""Lines of an instruction's diff kept (hunk headers included); the rest are counted."""
MAX_LINE_CHARS = 240
"""Characters of one diff line kept."""
MAX_VALUE_CHARS = 120
"""Characters of a model name or generate-config value kept."""
MAX_INSTRUCTION_LINES = 5_000
"""Lines of an instruction diffed (difflib is quadratic at worst); later ones are not."""
MAX_ITEMS = 50
"""Tools, generate-config keys and agents listed per suite; the rest are counted."""
CONTEXT_LINES = 1
"""Unchanged lines around each change in a hunk."""


class InstructionChange(BaseModel):
    """One agent's instruction, baseline → head, as a unified diff.

    Attributes:
        agent: The agent's name.
        hunks: Each hunk's lines: ``@@ -a,b +c,d @@`` first, then each line with its
            prefix (`` `` unchanged, ``-`` baseline only, ``+`` head only), at most
            :data:`MAX_LINE_CHARS` characters each (``…`` where cut).
        added / removed: Lines the head adds / the baseline had (all of them, kept or not).
        left_out: Diff lines past :data:`MAX_DIFF_LINES`, not kept.
        built_at_run_time: A function builds the head's instruction (an ADK
            ``InstructionProvider``): not in the pull request's diff.
        head_variants / baseline_variants: Distinct instructions the agent was sent on each
            side (more than one: the instruction varies per invocation).
    """

    agent: str
    hunks: list[list[str]] = Field(default_factory=list)
    added: int = 0
    removed: int = 0
    left_out: int = 0
    built_at_run_time: bool = False
    head_variants: int = 1
    baseline_variants: int = 1


class ToolChange(BaseModel):
    """One tool of an agent: ``added``, ``removed`` or ``changed`` (its declaration), with
    what changed in the declaration (``description``, ``parameter `city` added``, ...)."""

    agent: str
    tool: str
    change: Literal["added", "removed", "changed"]
    parts: list[str] = Field(default_factory=list)


class ValueChange(BaseModel):
    """A value of an agent, baseline → head: its ``model``, or a generate-config key
    (``temperature``, ``thinking_config.thinking_budget``); None: unset on that side.
    Values are JSON, at most :data:`MAX_VALUE_CHARS` characters."""

    agent: str
    key: str
    baseline: str | None = None
    head: str | None = None


class AgentChanges(BaseModel):
    """What changed in one suite's agent since the baseline (module docstring).

    ``agents_added`` / ``agents_removed``: agents of the head's tree the baseline's lacks,
    and the reverse; ``left_out``: tools, keys and agents past :data:`MAX_ITEMS`.
    """

    suite: str
    models: list[ValueChange] = Field(default_factory=list)
    instructions: list[InstructionChange] = Field(default_factory=list)
    tools: list[ToolChange] = Field(default_factory=list)
    agents_added: list[str] = Field(default_factory=list)
    agents_removed: list[str] = Field(default_factory=list)
    generate_config: list[ValueChange] = Field(default_factory=list)
    left_out: int = 0

    @property
    def empty(self) -> bool:
        """Nothing changed."""
        return not (self.models or self.instructions or self.tools or self.agents_added
                    or self.agents_removed or self.generate_config)


def agent_changes(head: RunResults, baseline: RunResults | None,
                  without_baseline: Iterable[str] = ()) -> list[AgentChanges]:
    """The agent changes of every suite ``head`` and ``baseline`` both have (matched by
    name: renames already applied), in the head's order, leaving out suites named in
    ``without_baseline`` and those with no change. ``head`` and ``baseline`` may be
    skeletons (results without eval cases: the suites' records are what is read)."""
    if baseline is None:
        return []
    skipped = set(without_baseline)
    base_suites = {s.name: s for s in baseline.suites}
    found = []
    for suite in head.suites:
        other = base_suites.get(suite.name)
        if other is None or suite.name in skipped or not other.eval_sets:
            continue
        changes = suite_changes(suite, other)
        if not changes.empty:
            found.append(changes)
    return found


def suite_changes(head: SuiteRecord, baseline: SuiteRecord) -> AgentChanges:
    """What changed in ``head``'s agent since ``baseline``'s (module docstring)."""
    head_sent, base_sent = _sent(head), _sent(baseline)
    head_tree = {a.name: a for a in head.agents or []}
    base_tree = {a.name: a for a in baseline.agents or []}
    both_ran = [name for name in head_sent if name in base_sent]
    instructions = [
        change for name in both_ran
        if (change := instruction_change(name, head_sent[name][0], base_sent[name][0],
                                         head_tree.get(name))) is not None
    ]
    tools = [c for name in both_ran for c in tool_changes(name, head_sent[name][1],
                                                           base_sent[name][1])]
    changes = AgentChanges(suite=head.name, instructions=instructions)
    if head.agents is not None and baseline.agents is not None:
        changes = _tree_changes(changes, head_tree, base_tree)
    return _bounded(changes, tools)


def _tree_changes(changes: AgentChanges, head: Mapping[str, AgentRecord],
                  baseline: Mapping[str, AgentRecord]) -> AgentChanges:
    """``changes`` with what the recorded trees say: models, generate configs, agents."""
    both = [name for name in head if name in baseline]
    models = [
        ValueChange(agent=name, key="model", baseline=_short(baseline[name].model),
                    head=_short(head[name].model))
        for name in both if head[name].model != baseline[name].model
    ]
    config = [c for name in both for c in config_changes(
        name, head[name].generate_config, baseline[name].generate_config)]
    return changes.model_copy(update={
        "models": models,
        "generate_config": config,
        "agents_added": [name for name in head if name not in baseline],
        "agents_removed": [name for name in baseline if name not in head],
    })


def _bounded(changes: AgentChanges, tools: list[ToolChange]) -> AgentChanges:
    """``changes`` with ``tools``, each list cut to :data:`MAX_ITEMS` and the rest
    counted in ``left_out``."""
    lists: dict[str, list[Any]] = {
        "tools": tools, "generate_config": changes.generate_config,
        "agents_added": changes.agents_added, "agents_removed": changes.agents_removed}
    over = sum(max(0, len(v) - MAX_ITEMS) for v in lists.values())
    return changes.model_copy(update={
        **{k: v[:MAX_ITEMS] for k, v in lists.items()}, "left_out": over})


Sent = tuple[list[str], dict[str, Any]]
"""What an agent was sent on one side: its distinct instructions (in the order first
recorded), its tools' declarations by name."""


def _sent(suite: SuiteRecord) -> dict[str, Sent]:
    """Per agent name, what ADK recorded it was sent (its ``AgentDetails``, all of them:
    one agent has several when its instruction varies per invocation)."""
    sent: dict[str, Sent] = {}
    for details in suite.agent_details.values():
        name = details.get("name")
        if not isinstance(name, str):
            continue
        texts, tools = sent.setdefault(name, ([], {}))
        text = instruction_text(details.get("instructions"))
        if text not in texts:
            texts.append(text)
        for tool, declaration in declared_tools(details.get("tool_declarations")).items():
            tools.setdefault(tool, declaration)
    return sent


def instruction_text(value: Any) -> str:
    """An instruction as recorded: a str, or a google-genai ``Content`` (its parts'
    texts, one after another), or anything else as sorted JSON."""
    if isinstance(value, str) or value is None:
        return value or ""
    if isinstance(value, dict) and isinstance(value.get("parts"), list):
        return "\n".join(str(p.get("text") or "") for p in value["parts"] if isinstance(p, dict))
    return json.dumps(value, sort_keys=True, default=str)


def declared_tools(declarations: Any) -> dict[str, Any]:
    """Each tool's declaration by name, from an ``AgentDetails.tool_declarations`` list of
    google-genai ``Tool`` objects as JSON: each function declaration by its ``name``, and
    each built-in tool (``google_search``, ``code_execution``, ...) by its field name."""
    found: dict[str, Any] = {}
    for tool in declarations if isinstance(declarations, list) else []:
        if not isinstance(tool, dict):
            continue
        for field, value in tool.items():
            if value is None:
                continue
            if field == "function_declarations" and isinstance(value, list):
                for function in value:
                    if isinstance(function, dict):
                        found[str(function.get("name"))] = function
            else:
                found[field] = value
    return found


def instruction_change(agent: str, head: list[str], baseline: list[str],
                       record: AgentRecord | None = None) -> InstructionChange | None:
    """The diff of ``agent``'s instruction (each side's distinct texts, module docstring),
    or None when both sides sent the same ones. ``record`` is the head's record of the
    agent (whether a function builds its instruction)."""
    if set(head) == set(baseline):
        return None
    new = sorted(t for t in head if t not in baseline)
    old = sorted(t for t in baseline if t not in head)
    after, before = (new or head)[0], (old or baseline)[0]
    hunks, added, removed = _diff(before, after)
    kept, left_out = _kept(hunks)
    return InstructionChange(
        agent=agent, hunks=kept, added=added, removed=removed, left_out=left_out,
        built_at_run_time=bool(record and record.instruction_provider),
        head_variants=len(head), baseline_variants=len(baseline),
    )


def _diff(before: str, after: str) -> tuple[list[list[str]], int, int]:
    """The unified diff of two texts as hunks (lines with their prefix, long ones cut),
    and the lines added and removed."""
    a = before.splitlines()[:MAX_INSTRUCTION_LINES]
    b = after.splitlines()[:MAX_INSTRUCTION_LINES]
    hunks: list[list[str]] = []
    added = removed = 0
    for line in difflib.unified_diff(a, b, lineterm="", n=CONTEXT_LINES):
        if line.startswith(("---", "+++")) and not hunks:
            continue
        if line.startswith("@@"):
            hunks.append([line])
            continue
        hunks[-1].append(line)
        added += line.startswith("+")
        removed += line.startswith("-")
    return [_cut_hunk(h) for h in hunks], added, removed


def _cut_hunk(hunk: list[str]) -> list[str]:
    """``hunk`` with each line past :data:`MAX_LINE_CHARS` cut: a removed line paired
    with the added line that replaces it (the k-th of a run of ``-`` with the k-th of the
    ``+`` run after it) is cut around where the two first differ, so the change shows."""
    out = list(hunk)
    index = 1
    while index < len(out):
        minus = _run(out, index, "-")
        plus = _run(out, index + len(minus), "+")
        for k, line in enumerate(minus):
            other = plus[k] if k < len(plus) else None
            out[index + k] = _window(line, other)
        for k, line in enumerate(plus):
            other = minus[k] if k < len(minus) else None
            out[index + len(minus) + k] = _window(line, other)
        step = len(minus) + len(plus)
        if not step:
            out[index] = _window(out[index], None)
        index += step or 1
    return out


def _run(lines: list[str], start: int, prefix: str) -> list[str]:
    run: list[str] = []
    while start + len(run) < len(lines) and lines[start + len(run)].startswith(prefix):
        run.append(lines[start + len(run)])
    return run


def _window(line: str, other: str | None) -> str:
    """``line`` (a diff line, its prefix first) in at most :data:`MAX_LINE_CHARS`
    characters: from where it first differs from ``other`` (less a third of the room),
    else from its start; ``…`` marks each cut."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    prefix, text = line[0], line[1:]
    room = MAX_LINE_CHARS - 3
    start = 0
    if other is not None:
        common = next((i for i, (x, y) in enumerate(zip(text, other[1:], strict=False))
                       if x != y), min(len(text), len(other) - 1))
        start = max(0, min(common - room // 3, len(text) - room))
    body = text[start:start + room]
    return (prefix + ("…" if start else "") + body
            + ("…" if start + room < len(text) else ""))


def _kept(hunks: list[list[str]]) -> tuple[list[list[str]], int]:
    """The hunks' first :data:`MAX_DIFF_LINES` lines (whole hunks, then the start of the
    next), and how many lines are left out."""
    kept: list[list[str]] = []
    room = MAX_DIFF_LINES
    for hunk in hunks:
        if room <= 1:
            break
        kept.append(hunk[:room])
        room -= len(kept[-1])
    return kept, sum(map(len, hunks)) - sum(map(len, kept))


def tool_changes(agent: str, head: Mapping[str, Any],
                 baseline: Mapping[str, Any]) -> list[ToolChange]:
    """``agent``'s tools added, removed and with a changed declaration, head's order then
    the baseline's."""
    changes = [ToolChange(agent=agent, tool=name, change="added")
               for name in head if name not in baseline]
    changes += [ToolChange(agent=agent, tool=name, change="removed")
                for name in baseline if name not in head]
    changes += [
        ToolChange(agent=agent, tool=name, change="changed",
                   parts=declaration_parts(head[name], baseline[name]))
        for name in head if name in baseline and _json(head[name]) != _json(baseline[name])
    ]
    return changes


def declaration_parts(head: Any, baseline: Any) -> list[str]:
    """What differs between two declarations of one tool: each top-level field
    (``description``, ``response``, ...) and, within ``parameters`` (or
    ``parameters_json_schema``), each parameter added, removed or changed."""
    if not isinstance(head, dict) or not isinstance(baseline, dict):
        return ["declaration"]
    parts = []
    for field in [*head, *(k for k in baseline if k not in head)]:
        if _json(head.get(field)) == _json(baseline.get(field)):
            continue
        if field in ("parameters", "parameters_json_schema"):
            parts += _parameter_parts(head.get(field), baseline.get(field))
        else:
            parts.append(field)
    return parts or ["declaration"]


def _parameter_parts(head: Any, baseline: Any) -> list[str]:
    new, old = _properties(head), _properties(baseline)
    parts = [f"parameter `{p}` added" for p in new if p not in old]
    parts += [f"parameter `{p}` removed" for p in old if p not in new]
    parts += [f"parameter `{p}` changed" for p in new if p in old
              and _json(new[p]) != _json(old[p])]
    if _json(_required(head)) != _json(_required(baseline)):
        parts.append("required parameters")
    return parts or ["parameters"]


def _properties(schema: Any) -> dict[str, Any]:
    found = schema.get("properties") if isinstance(schema, dict) else None
    return found if isinstance(found, dict) else {}


def _required(schema: Any) -> list[str]:
    found = schema.get("required") if isinstance(schema, dict) else None
    return sorted(map(str, found)) if isinstance(found, list) else []


def config_changes(agent: str, head: Mapping[str, Any] | None,
                   baseline: Mapping[str, Any] | None) -> list[ValueChange]:
    """The generate-config keys of ``agent`` whose values differ (nested objects by
    dotted path, lists as one value), head's keys first."""
    new, old = _flat(head or {}), _flat(baseline or {})
    return [
        ValueChange(agent=agent, key=key, baseline=_short(old.get(key)),
                    head=_short(new.get(key)))
        for key in [*new, *(k for k in old if k not in new)]
        if _json(new.get(key)) != _json(old.get(key))
    ]


def _flat(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _short(value: Any) -> str | None:
    """A value as shown: a str as it is, anything else as JSON, at most
    :data:`MAX_VALUE_CHARS` characters; None stays None."""
    if value is None:
        return None
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS - 1] + "…"

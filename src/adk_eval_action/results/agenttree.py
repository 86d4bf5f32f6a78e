"""A suite's agent tree as the engine loaded it: what google-adk's ``AgentDetails`` does not
record.

ADK records, per invocation, each agent's name, its instruction as sent (resolved at run
time) and its tool declarations (``google.adk.evaluation.app_details.AgentDetails``; kept
once per suite by :mod:`adk_eval_action.results.agentdetails`). It records neither the
model an agent runs on nor its generate config, nor the agents that made no model call.
The engine records those when it imports the agent, one :class:`AgentRecord` per agent of
the tree (the root, its sub-agents, agents used as tools), in
:attr:`adk_eval_action.results.model.SuiteRecord.agents`;
:mod:`adk_eval_action.analysis.agentchanges`
compares the two sides' trees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["AgentRecord", "tools_inside_agent_tools"]


class AgentRecord(BaseModel):
    """One agent of a suite's agent tree, as the engine imported it.

    Attributes:
        name: The agent's name (unique in its tree: ADK refuses a tree that repeats one).
        kind: Its class (``LlmAgent``, ``SequentialAgent``, a user's ``BaseAgent``).
        model: The model name it calls (an ``LlmAgent``'s own, or its nearest ancestor's
            when it names none, as ADK resolves it); None for an agent that calls none.
        instruction_provider: Its instruction is a function ADK calls per model request
            (an ``InstructionProvider``): its text is built at run time, not in the
            repository's diff.
        generate_config: Its ``generate_content_config`` as JSON (unset fields left out,
            ``http_options`` too: transport, and where headers with keys go); None when it
            sets none.
        sub_agents: Its sub-agents' names, in order.
        tools: Its tools' names as declared (a function's name, a tool's ``name``, a
            toolset's class: a toolset's tools are known only when it is asked for them).
    """

    name: str
    kind: str
    model: str | None = None
    instruction_provider: bool = False
    generate_config: dict[str, Any] | None = None
    sub_agents: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)


def tools_inside_agent_tools(agents: Sequence[AgentRecord] | None) -> dict[str, list[str]]:
    """Tool name -> the agents used as tools (``AgentTool``, named after their agent) that
    have it, for the tools no agent whose calls google-adk records has itself.

    google-adk records the tool calls of the events of the evaluated session: the root
    agent's and its sub-agents' (``agents[0]`` is the root, :func:`~adk_eval_action.adk.
    models.agent.agent_tree` order). An ``AgentTool`` runs its agent in a session of its own,
    so the calls made there are not in the trajectory (google/adk-python#3493, #3652): an
    expected call of such a tool reads "not called" while it may have run. The agent of an
    AgentTool is one whose name is a tool of another agent; its tools are taken through its
    sub-agents and nested AgentTools. {} when the tree is unknown."""
    if not agents:
        return {}
    by_name = {a.name: a for a in agents}
    recorded = _reached(agents[0].name, by_name, through_tools=False)
    direct = {t for name in recorded for t in by_name[name].tools}
    inside: dict[str, list[str]] = {}
    for agent_tool in sorted(t for t in direct if t in by_name and t not in recorded):
        for name in _reached(agent_tool, by_name, through_tools=True):
            for tool in by_name[name].tools:
                if tool not in direct and tool not in by_name and agent_tool not in inside.get(
                        tool, []):
                    inside.setdefault(tool, []).append(agent_tool)
    return inside


def _reached(start: str, by_name: dict[str, AgentRecord], through_tools: bool) -> list[str]:
    """The agents reached from ``start``: itself, its sub-agents and theirs, and (with
    ``through_tools``) the agents of its AgentTools too."""
    seen: list[str] = []
    stack = [start]
    while stack:
        name = stack.pop()
        if name in seen or name not in by_name:
            continue
        seen.append(name)
        agent = by_name[name]
        stack += agent.sub_agents + ([t for t in agent.tools if t in by_name]
                                     if through_tools else [])
    return seen

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

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["AgentRecord"]


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

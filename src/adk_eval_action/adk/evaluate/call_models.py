"""Which model makes each agent model call a plan counts, as the agent tree says.

A multi-model agent (a pipeline of sub-agents, an agent that transfers, an agent used as a
tool) spreads its calls over its models; ``plan`` counts them per model so each is priced
and limited on its own calls. The tree is the one the engine imports
(:class:`~adk_eval_action.results.agenttree.AgentRecord`: each agent's name, class, model
and sub-agents, the root first); per expected invocation
(:func:`adk_eval_action.adk.evaluate.plan.agent_calls` counts its calls):

* **Authored calls**: each ``invocation_events`` event that calls a function, and each
  legacy ``intermediate_responses`` entry, is a call of its ``author``'s model.
* **Agents that run every turn** (the *responders*): the root ``LlmAgent``; under a
  ``SequentialAgent``, ``ParallelAgent`` or ``LoopAgent`` root, each ``LlmAgent`` reached
  through workflow agents (a loop's at least once), as google-adk's workflow agents run
  their sub-agents. Each responder that authored no call makes one (its reply), so a
  workflow's calls can outnumber what the expected turns list; when every responder
  authored one, the reply is the agent's last seen in the invocation's events.
* **Tool rounds without an author** (legacy ``tool_uses``): the first responder's.
* **Agents used as tools** (``AgentTool``, named after their agent): each expected call of
  such a tool is at least one call of that agent's model (its own tool rounds run in a
  session of its own and are not listed).

An author the tree does not name, or an agent without a model, counts under the first
responder's model. Without a tree (the agent was not imported, or could not be read) the
calls are not split: :meth:`adk_eval_action.adk.evaluate.plan.Plan.calls_by_model` puts
them under ``"agent"``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from google.adk.evaluation.eval_case import IntermediateData, Invocation, InvocationEvents

from adk_eval_action.results.agenttree import AgentRecord

__all__ = ["AgentTree", "WORKFLOW_KINDS"]

WORKFLOW_KINDS = frozenset({"SequentialAgent", "ParallelAgent", "LoopAgent"})
"""google-adk's workflow agents: they call no model and run each of their sub-agents."""


class AgentTree:
    """An agent tree (the root first), read for :meth:`invocation_models` (module
    docstring)."""

    def __init__(self, agents: Sequence[AgentRecord]) -> None:
        self.by_name = {a.name: a for a in agents}
        root = agents[0] if agents else None
        self.responders = self._responders(root) if root is not None else []
        self.as_tools = {t for a in agents for t in a.tools if t in self.by_name}
        models = [a.model for a in agents if a.model]
        self.fallback = next(
            (m for name in self.responders if (m := self.by_name[name].model)),
            models[0] if models else "agent",
        )

    def _responders(self, agent: AgentRecord) -> list[str]:
        if agent.kind not in WORKFLOW_KINDS:
            return [agent.name]
        found: list[str] = []
        for name in agent.sub_agents:
            sub = self.by_name.get(name)
            if sub is not None:
                found += self._responders(sub)
        return found

    @property
    def models(self) -> list[str]:
        """The tree's model names, each once, in the order the agents are declared (an
        agent, then its sub-agents and the agents it uses as tools, depth first)."""
        order: list[str] = []
        stack = list(self.by_name)[:1]
        while stack:
            name = stack.pop()
            if name in order or name not in self.by_name:
                continue
            order.append(name)
            agent = self.by_name[name]
            stack += reversed([*agent.sub_agents, *agent.tools])
        order += [n for n in self.by_name if n not in order]
        return list(dict.fromkeys(m for n in order if (m := self.by_name[n].model)))

    def model_of(self, author: str | None) -> str:
        """The model ``author`` calls (the fallback when unknown or model-free)."""
        agent = self.by_name.get(author or "")
        return agent.model if agent is not None and agent.model else self.fallback

    def invocation_models(self, invocation: Invocation, calls: int) -> Counter[str]:
        """The calls of one expected invocation by model (module docstring); ``calls``:
        its count as the plan makes it. The total is at least ``calls``."""
        authored, last, tools = _authors(invocation)
        by_model: Counter[str] = Counter(self.model_of(a) for a in authored)
        first = self.responders[0] if self.responders else None
        rounds = max(0, calls - 1 - len(authored))
        if rounds:
            by_model[self.model_of(first)] += rounds
        replies: list[str | None] = [n for n in self.responders if n not in authored]
        for name in replies or [last or first]:
            by_model[self.model_of(name)] += 1
        for tool in tools:
            if tool in self.as_tools:
                by_model[self.model_of(tool)] += 1
        return by_model


def _authors(invocation: Invocation) -> tuple[list[str], str | None, list[str]]:
    """``(authors of the authored calls, the last author seen, the tools called)`` of one
    expected invocation."""
    data = invocation.intermediate_data
    authored: list[str] = []
    last: str | None = None
    tools: list[str] = []
    if isinstance(data, InvocationEvents):
        for event in data.invocation_events:
            last = event.author or last
            parts = event.content.parts or [] if event.content else []
            called = [p.function_call.name or "" for p in parts if p.function_call]
            if called:
                authored.append(event.author)
                tools += called
    elif isinstance(data, IntermediateData):
        for author, _ in data.intermediate_responses:
            authored.append(author)
            last = author
        tools = [use.name or "" for use in data.tool_uses]
    return authored, last, tools

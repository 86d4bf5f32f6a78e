"""Which tools of a recorded agent tree run only inside an agent used as a tool
(``AgentTool``), whose calls google-adk does not record in the trajectory; checked against
the tree google-adk's own classes make (``AgentTool`` named after its agent, the agent's
tools) as the engine records it (``adk.runtime.agent.agent_records``)."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval_action.adk.runtime.agent import agent_records
from adk_eval_action.report.evidence import marked_inside_agent_tools, turn_at
from adk_eval_action.report.invocations import tool_calls
from adk_eval_action.results.agenttree import tools_inside_agent_tools


def check_stock(sku: str) -> dict[str, str]:
    """A tool."""
    return {"sku": sku}


def reorder(sku: str) -> dict[str, str]:
    """A tool."""
    return {"sku": sku}


def greet() -> str:
    """A tool."""
    return "hi"


def _agent(name: str, tools: list[object], subs: list[LlmAgent] | None = None) -> LlmAgent:
    return LlmAgent(name=name, model="gemini-2.5-flash", instruction="x", tools=tools,
                    sub_agents=subs or [])


def test_tools_only_inside_an_agent_tool_are_named_with_it() -> None:
    """``check_stock`` runs only inside the ``stock_agent`` AgentTool (and, nested, inside
    ``warehouse``'s ``ledger`` AgentTool); ``reorder`` also belongs to the root's sub-agent
    ``buyer``, whose calls are recorded, so it is not named; ``greet`` is the root's."""
    ledger = _agent("ledger", [check_stock])
    stock = _agent("stock_agent", [check_stock, AgentTool(agent=ledger), reorder])
    buyer = _agent("buyer", [reorder])
    root = _agent("shop", [greet, AgentTool(agent=stock)], [buyer])
    agents = agent_records(root)
    assert agents is not None and agents[0].name == "shop"
    assert tools_inside_agent_tools(agents) == {"check_stock": ["stock_agent"]}


def test_no_tree_no_tools_named() -> None:
    assert tools_inside_agent_tools(None) == {}
    assert tools_inside_agent_tools([]) == {}


def _invocation(*calls: str) -> dict[str, object]:
    return {"intermediate_data": {"tool_uses": [{"name": c, "args": {}} for c in calls]}}


def test_an_agent_tool_not_called_on_the_turn_leaves_not_called() -> None:
    """Only an AgentTool called on the turn can have made the call: the mark names it when
    it was called, and nothing when it was not (the call then was not made)."""
    inside = {"check_stock": ["stock_agent"]}
    expected = _invocation("check_stock")
    for made, marked in ((("stock_agent",), ["stock_agent"]), (("greet",), [])):
        actual = [_invocation(*made)]
        turn = turn_at(0, expected, actual, True, [])
        turn = marked_inside_agent_tools(turn, tool_calls(actual[0]), inside)
        (missing,) = [c for c in turn.tool_changes if c.change == "missing"]
        assert missing.inside == marked

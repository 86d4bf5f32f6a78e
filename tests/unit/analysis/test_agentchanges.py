"""What changed in a suite's agent (analysis.agentchanges) on hand-built suite records: the
rules of the module docstring, each with the value it must give, and its bounds."""

from __future__ import annotations

from typing import Any

from adk_eval_action.analysis.agentchanges import (
    MAX_DIFF_LINES,
    MAX_ITEMS,
    MAX_LINE_CHARS,
    agent_changes,
    instruction_text,
    suite_changes,
)
from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.model import RunResults, SuiteRecord
from support.results_builder import metric, results
from support.tables import compare


def details(name: str, instruction: Any, *functions: dict[str, Any],
            builtin: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ADK AgentDetails as the results file keeps it."""
    tools: list[dict[str, Any]] = []
    if functions:
        tools.append({"function_declarations": list(functions)})
    if builtin:
        tools.append(builtin)
    return {"name": name, "instructions": instruction, "tool_declarations": tools}


def suite(*agent_details: dict[str, Any], agents: list[AgentRecord] | None = None,
          name: str = "s") -> SuiteRecord:
    table = {str(i): d for i, d in enumerate(agent_details)}
    return results({"c": [[metric("m", 1.0)]]}, suite=name).suites[0].model_copy(
        update={"agent_details": table, "agents": agents})


def weather(**parameters: Any) -> dict[str, Any]:
    return {"name": "get_weather", "description": "The weather.",
            "parameters": {"type": "OBJECT", "properties": parameters,
                           "required": sorted(parameters)}}


CITY = {"type": "STRING"}


def test_the_same_agent_has_no_change() -> None:
    one = suite(details("a", "Be brief.", weather(city=CITY)))
    assert suite_changes(one, one.model_copy(deep=True)).empty


def test_an_instruction_diff_has_its_hunks_and_counts() -> None:
    before = "\n".join(f"line {i}" for i in range(1, 11))
    after = before.replace("line 2", "line two").replace("line 9", "line 9\nline 9b")
    [change] = suite_changes(suite(details("a", after)), suite(details("a", before))).instructions
    # difflib's unified diff with one line of context, as `diff -U1` prints it.
    assert change.hunks == [
        ["@@ -1,3 +1,3 @@", " line 1", "-line 2", "+line two", " line 3"],
        ["@@ -9,2 +9,3 @@", " line 9", "+line 9b", " line 10"],
    ]
    assert (change.added, change.removed, change.left_out) == (2, 1, 0)
    assert (change.head_variants, change.baseline_variants) == (1, 1)
    assert not change.built_at_run_time


def test_a_long_line_is_cut_around_its_change() -> None:
    before = "word " * 200 + "polite. " + "tail " * 200
    after = before.replace("polite.", "blunt.")
    [change] = suite_changes(suite(details("a", after)), suite(details("a", before))).instructions
    minus, plus = change.hunks[0][1:]
    assert len(minus) <= MAX_LINE_CHARS + 2 and len(plus) <= MAX_LINE_CHARS + 2
    assert minus.startswith("-…") and minus.endswith("…") and "polite." in minus
    assert plus.startswith("+…") and "blunt." in plus


def test_a_diff_is_bounded_and_says_how_much_it_left_out() -> None:
    before = "\n".join(f"a{i}" for i in range(400))
    after = "\n".join(f"b{i}" for i in range(400))
    [change] = suite_changes(suite(details("a", after)), suite(details("a", before))).instructions
    kept = sum(map(len, change.hunks))
    assert kept == MAX_DIFF_LINES
    assert kept + change.left_out == 1 + 800  # one hunk: its header, 400 lines out, 400 in
    assert (change.added, change.removed) == (400, 400)


def test_an_instruction_that_varies_per_invocation() -> None:
    """State put in the instruction: several per side; the same ones on both sides are no
    change, and otherwise the first (sorted) of each side's own are compared."""
    head = suite(details("a", "Hello Ann. Be brief."), details("a", "Hello Bob. Be brief."))
    base = suite(details("a", "Hello Bob. Be brief."), details("a", "Hello Ann. Be brief."))
    assert suite_changes(head, base).empty
    head = suite(details("a", "Hello Bob. Be blunt."), details("a", "Hello Ann. Be blunt."))
    [change] = suite_changes(head, base).instructions
    assert change.hunks[0][1:] == ["-Hello Ann. Be brief.", "+Hello Ann. Be blunt."]
    assert (change.head_variants, change.baseline_variants) == (2, 2)


def test_instructions_recorded_as_content() -> None:
    assert instruction_text({"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}) == "a\nb"
    assert instruction_text(None) == ""
    assert instruction_text(["x"]) == '["x"]'


def test_tools_added_removed_and_changed_with_the_parts_that_changed() -> None:
    head = suite(details("a", "x", weather(city=CITY, units=CITY),
                         {"name": "get_time", "description": "Time."},
                         builtin={"google_search": {}}))
    base = suite(details("a", "x", {**weather(city={"type": "INTEGER"}), "description": "Old."},
                         {"name": "book", "description": "Books."}))
    tools = {(t.tool, t.change): t.parts for t in suite_changes(head, base).tools}
    assert tools == {
        ("get_time", "added"): [], ("google_search", "added"): [], ("book", "removed"): [],
        ("get_weather", "changed"): ["description", "parameter `units` added",
                                     "parameter `city` changed", "required parameters"],
    }


def test_models_config_and_agents_from_the_recorded_trees() -> None:
    head_tree = [AgentRecord(name="a", kind="LlmAgent", model="gemini-2.5-pro",
                             generate_config={"temperature": 0.9,
                                              "thinking_config": {"thinking_budget": 0}}),
                 AgentRecord(name="critic", kind="LlmAgent", model="gemini-2.5-pro")]
    base_tree = [AgentRecord(name="a", kind="LlmAgent", model="gemini-2.5-flash",
                             generate_config={"temperature": 0.2, "top_k": 3,
                                              "thinking_config": {"thinking_budget": 0}}),
                 AgentRecord(name="helper", kind="LlmAgent", model="gemini-2.5-flash")]
    changes = suite_changes(suite(agents=head_tree), suite(agents=base_tree))
    assert [(m.agent, m.baseline, m.head) for m in changes.models] == [
        ("a", "gemini-2.5-flash", "gemini-2.5-pro")]
    assert [(c.key, c.baseline, c.head) for c in changes.generate_config] == [
        ("temperature", "0.2", "0.9"), ("top_k", "3", None)]
    assert (changes.agents_added, changes.agents_removed) == (["critic"], ["helper"])
    assert not changes.instructions and not changes.tools


def test_what_one_side_did_not_record_is_not_compared() -> None:
    """A baseline written before the tree was recorded (``agents`` None): no model, config
    or agent change is claimed; the instructions ADK recorded on both sides still are."""
    tree = [AgentRecord(name="a", kind="LlmAgent", model="gemini-2.5-pro")]
    changes = suite_changes(suite(details("a", "new"), agents=tree), suite(details("a", "old")))
    assert not (changes.models or changes.agents_added or changes.generate_config)
    assert [c.agent for c in changes.instructions] == ["a"]
    # An agent that made no model call on one side has no instruction there to compare.
    assert suite_changes(suite(details("b", "new")), suite(details("a", "old"))).empty


def test_a_provider_instruction_is_said_built_at_run_time() -> None:
    tree = [AgentRecord(name="a", kind="LlmAgent", instruction_provider=True)]
    [change] = suite_changes(suite(details("a", "new"), agents=tree),
                             suite(details("a", "old"), agents=tree)).instructions
    assert change.built_at_run_time


def test_lists_are_bounded() -> None:
    many = [{"name": f"t{i}"} for i in range(MAX_ITEMS + 7)]
    changes = suite_changes(suite(details("a", "x", *many)), suite(details("a", "x")))
    assert len(changes.tools) == MAX_ITEMS and changes.left_out == 7


def test_only_suites_with_a_baseline_and_a_change() -> None:
    head = RunResults(suites=[suite(details("a", "new"), name="s1"),
                              suite(details("a", "same"), name="s2"),
                              suite(details("a", "new"), name="s3")])
    base = RunResults(suites=[suite(details("a", "old"), name="s1"),
                              suite(details("a", "same"), name="s2"),
                              suite(details("a", "old"), name="s3")])
    assert [c.suite for c in agent_changes(head, base)] == ["s1", "s3"]
    assert [c.suite for c in agent_changes(head, base, ["s3"])] == ["s1"]
    assert agent_changes(head, None) == []
    # Through compare: the same values, set when the comparison is made.
    assert [c.suite for c in compare(head, base, "b").agent_changes] == ["s1", "s3"]
    assert compare(head, None, "none").agent_changes == []

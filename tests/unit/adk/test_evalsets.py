"""Every eval set shape found in real repositories loads, or fails naming the file.

``tests/fixtures/evalsets/`` holds one small file of each shape (its README); the eval sets
of public ADK repositories in ``../shared/fixtures/real-evalsets``, where that reference
folder exists, are an extra source (marked ``reference``, skipped elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.adk.evaluation.eval_case import IntermediateData

from adk_eval_action.adk.files.evalsets import ACCEPTED_SHAPES, NO_CASES, load_eval_set
from adk_eval_action.errors import EvalSetError
from conftest import SHARED

SHAPES = Path(__file__).resolve().parents[2] / "fixtures" / "evalsets"
REAL = SHARED / "fixtures" / "real-evalsets"
NO_REAL = ("../shared/fixtures/real-evalsets (public ADK repositories' eval sets, kept beside "
           "this repository on the project's own machines) is not present; "
           "tests/fixtures/evalsets has each shape")


def _real_eval_sets() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(
        p
        for p in REAL.rglob("*.json")
        if (p.name.endswith((".evalset.json", ".test.json")) or p.parent.name == "eval")
        and "config" not in p.name
    )


@pytest.mark.reference
@pytest.mark.skipif(not REAL.is_dir(), reason=NO_REAL)
@pytest.mark.parametrize("path", _real_eval_sets(), ids=lambda p: str(p.relative_to(REAL)))
def test_real_eval_set_loads_or_fails_naming_file(path: Path) -> None:
    try:
        loaded = load_eval_set(path)
    except EvalSetError as e:
        assert str(path) in str(e)
        data = json.loads(path.read_text(encoding="utf-8-sig"))
        # An eval set saved empty (as adk web creates one) is refused for that reason.
        empty = data == [] or (isinstance(data, dict) and
                               (data.get("eval_cases", data.get("evalCases")) == []))
        assert (NO_CASES if empty else ACCEPTED_SHAPES) in str(e)
        return
    assert loaded.shape in {"evalset", "evalset-camel", "legacy-turns", "legacy-cases"}
    assert loaded.content_hash.startswith("sha256:")


@pytest.mark.reference
@pytest.mark.skipif(not REAL.is_dir(), reason=NO_REAL)
def test_real_shapes_as_the_readme_lists_them() -> None:
    flat = load_eval_set(
        REAL / "google__adk-python/tests/integration/fixture/home_automation_agent/"
        "simple_test2.test.json"
    )
    assert flat.shape == "legacy-turns" and len(flat.eval_set.eval_cases) == 1
    assert len(flat.eval_set.eval_cases[0].conversation) == len(json.loads(flat.path.read_text()))
    wrapped = load_eval_set(
        REAL / "google__adk-samples/python/agents/brand-search-optimization/eval/data/"
        "eval_data1.evalset.json"
    )
    assert wrapped.shape == "legacy-cases"
    camel = load_eval_set(
        REAL / "minkhant1996__vertexai-agent-evaluation/src/agent/"
        "founder_validation_agent_eval.evalset.json"
    )
    assert camel.shape == "evalset-camel" and len(camel.eval_set.eval_cases) == 10
    scenario = load_eval_set(
        REAL / "google__adk-python/tests/integration/fixture/conversation_scenario/"
        "conversation_scenario.test.json"
    )
    assert scenario.eval_set.eval_cases[0].conversation_scenario is not None


@pytest.mark.parametrize(("name", "shape", "cases", "invocations"), [
    ("snake.evalset.json", "evalset", ["water_roses"], [1]),
    ("camel.evalset.json", "evalset-camel", ["water_roses", "prune_hedge"], [1, 1]),
    # AgentEvaluator's rule: the whole flat list is one eval case, named after the file.
    ("turns.test.json", "legacy-turns", ["turns"], [2]),
    ("cases.evalset.json", "legacy-cases", ["morning_round", "evening_round"], [2, 1]),
    ("scenario.test.json", "evalset", ["plan_the_week"], [0]),
])
def test_each_shape_loads_into_adks_eval_set(
        name: str, shape: str, cases: list[str], invocations: list[int]) -> None:
    loaded = load_eval_set(SHAPES / name)
    assert loaded.shape == shape
    assert [c.eval_id for c in loaded.eval_set.eval_cases] == cases
    assert [len(c.conversation or []) for c in loaded.eval_set.eval_cases] == invocations
    assert loaded.content_hash.startswith("sha256:")


def test_shapes_keep_what_the_file_says() -> None:
    """The converted legacy turns keep their query, expected tool call and reference; the
    camelCase case its tool use; the scenario its starting prompt."""
    (case,) = load_eval_set(SHAPES / "turns.test.json").eval_set.eval_cases
    second = case.conversation[1]
    assert second.user_content.parts[0].text == "and the tulips"
    assert second.final_response.parts[0].text == "The tulips are watered too."
    assert isinstance(second.intermediate_data, IntermediateData)
    (tool,) = second.intermediate_data.tool_uses
    assert (tool.name, tool.args) == ("water", {"bed": "tulips"})
    camel = load_eval_set(SHAPES / "camel.evalset.json").eval_set
    assert camel.eval_set_id == "garden_camel"
    camel_turn = camel.eval_cases[0].conversation[0].intermediate_data
    assert isinstance(camel_turn, IntermediateData)
    assert camel_turn.tool_uses[0].name == "water"
    (scenario,) = load_eval_set(SHAPES / "scenario.test.json").eval_set.eval_cases
    assert scenario.conversation_scenario.starting_prompt == "Hi, my garden needs a plan."


def test_eval_id_lines_point_at_the_case(tmp_path: Path) -> None:
    path = tmp_path / "x.evalset.json"
    cases = [
        {"eval_id": name, "conversation": [{"user_content": {"parts": [{"text": "hi"}]}}]}
        for name in ("a", "b")
    ]
    path.write_text(json.dumps({"eval_set_id": "x", "eval_cases": cases}, indent=2))
    loaded = load_eval_set(path)
    lines = path.read_text().splitlines()
    assert '"eval_id": "b"' in lines[loaded.eval_id_lines["b"] - 1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "a JSON list, but not a legacy eval set"),
        ('"text"', "JSON str"),
        (
            '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a"}]}',
            "Exactly one of conversation and conversation_scenario",
        ),
        (
            '{"eval_set_id": "x", "eval_cases": [{"eval_id": "a", "conversation": [], '
            '"rubrics": [{"text": ""}]}]}',
            "a rubric mapping needs `text`",
        ),
        # A misspelt key names the key it is perhaps meant to be, not only what is missing.
        ('{"eval_set_id": "x", "evalcases": []}',
         "a JSON object without `eval_cases` (`evalcases` is perhaps `eval_cases` misspelt); "
         "accepted: ADK EvalSet JSON"),
        ('{"cases": []}', "a JSON object without `eval_set_id` and `eval_cases`; accepted: "),
        # A misspelt key deep in a case: the path as written (no union member's class
        # name), the key meant in the file's own spelling.
        ('{"eval_set_id": "x", "eval_cases": [{"eval_id": "a", "conversation": [{'
         '"invocation_id": "i", "user_content": {"parts": [{"text": "hi"}]}, '
         '"intermediate_data": {"tool_use": []}}]}]}',
         "invalid eval set at `eval_cases[0].conversation[0].intermediate_data.tool_use`: "
         "unknown key `tool_use`; did you mean `tool_uses`?"),
        ('{"evalSetId": "x", "evalCases": [{"evalId": "a", "conversation": [{'
         '"invocationId": "i", "userContent": {"parts": [{"text": "hi"}]}, '
         '"intermediateData": {"toolUse": []}}]}]}',
         "invalid eval set at `eval_cases[0].conversation[0].intermediateData.toolUse`: "
         "unknown key `toolUse`; did you mean `toolUses`?"),
    ],
)
def test_bad_shapes_name_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.evalset.json"
    path.write_text(content)
    with pytest.raises(EvalSetError) as error:
        load_eval_set(path)
    assert str(path) in str(error.value) and message in str(error.value)

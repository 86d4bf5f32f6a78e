"""Keys of a legacy eval set (a list of turns, or a list of cases ``{name, data,
initial_session}``) are checked as ADK's AgentEvaluator checks them: an unknown key is named
with the key perhaps meant, and a turn without a key a metric of the eval config needs is
refused naming the file, case, turn, key and what to do.

The independent source is google-adk: its converter reads a misspelt ``expected_tool_use``
as no tool call and a misspelt ``reference`` as an empty one (checked first below), and its
``AgentEvaluator._validate_input`` refuses such a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator
from google.adk.evaluation.eval_case import IntermediateData
from google.adk.evaluation.local_eval_sets_manager import convert_eval_set_to_pydantic_schema

from adk_eval_action.adk.files.evalsets import load_eval_set
from adk_eval_action.adk.files.prepare import load_suite_inputs
from adk_eval_action.errors import EvalSetError
from adk_eval_action.project.discovery import Suite

TOOL = "tool_trajectory_avg_score"
MATCH = "response_match_score"
WATER = [{"tool_name": "water", "tool_input": {"bed": "roses"}}]


def _write(tmp_path: Path, data: list[Any], name: str = "garden.test.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _refusal(path: Path, metrics: list[str]) -> str:
    with pytest.raises(EvalSetError) as caught:
        load_eval_set(path, metrics)
    return str(caught.value)


def test_adk_reads_a_misspelt_key_as_empty_and_its_evaluator_refuses_it() -> None:
    turn = {"query": "water the roses", "expected_tool_uses": WATER, "refrence": "Watered."}
    invocation = convert_eval_set_to_pydantic_schema(
        "garden", [{"name": "garden", "data": [turn], "initial_session": {}}]
    ).eval_cases[0].conversation[0]
    assert isinstance(invocation.intermediate_data, IntermediateData)
    assert invocation.intermediate_data.tool_uses == []
    assert invocation.final_response.parts[0].text == ""
    with pytest.raises(ValueError, match="must include 'query' and 'expected_tool_use' keys"):
        AgentEvaluator._validate_input([[turn]], {TOOL: 1.0})


def test_a_misspelt_expected_tool_use_is_refused_when_the_trajectory_is_scored(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, [
        {"query": "hello", "expected_tool_use": [], "reference": "Hi."},
        {"query": "water the roses", "expected_tool_uses": WATER, "reference": "Watered."},
    ])
    assert _refusal(path, [TOOL, MATCH]) == (
        f"{path}: turn 2 has no `expected_tool_use`, which `tool_trajectory_avg_score` needs: "
        "without it the turn expects no tool call (ADK's AgentEvaluator requires it of legacy "
        "turns); `expected_tool_uses` is perhaps `expected_tool_use` misspelt: rename it"
    )


def test_a_missing_reference_says_what_to_add(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"query": "water the roses", "expected_tool_use": WATER}])
    assert _refusal(path, [MATCH]) == (
        f"{path}: turn 1 has no `reference`, which `response_match_score` needs: without it "
        "the reply is compared with an empty reference (ADK's AgentEvaluator requires it of "
        'legacy turns); add `"reference": "<the reply expected>"`, or remove '
        "`response_match_score` from the eval config"
    )


def test_a_misspelt_key_no_metric_needs_is_a_warning_with_the_key_meant(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"query": "water the roses", "expected_tool_use": WATER, "refrence": "Watered."},
    ])
    loaded = load_eval_set(path, [TOOL])
    assert loaded.shape == "legacy-turns"
    assert loaded.warnings == [
        f"{path}: turn 1: `refrence` is not a key of ADK's legacy eval set format and is "
        "ignored; did you mean `reference`?"
    ]


def test_a_generated_file_misspelling_every_turn_names_ten_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    turns = [{"query": f"q{i}", "expected_tool_use": [], "refrence": "r", "<b>::x": 1}
             for i in range(1000)]
    path = _write(tmp_path, turns)
    warnings = load_eval_set(path, [TOOL]).warnings
    assert len(warnings) == 11
    assert warnings[1] == (f"{path}: turn 1: `<b>::x` is not a key of ADK's legacy eval set "
                           "format and is ignored (it reads query, expected_tool_use, "
                           "expected_intermediate_agent_responses, reference)")
    assert warnings[-1] == f"{path}: 1990 more keys ADK's legacy format does not read"


def test_legacy_cases_name_the_case_and_turn(tmp_path: Path) -> None:
    data = [
        {"name": "morning_round", "initial_sesion": {},
         "data": [{"query": "hello", "expected_tool_use": [], "reference": "Hi."},
                  {"query": "the roses", "expected_tool_uses": WATER, "reference": "Done."}]},
    ]
    path = _write(tmp_path, data, "rounds.evalset.json")
    assert _refusal(path, [TOOL]) == (
        f"{path}: legacy case `morning_round`, turn 2 has no `expected_tool_use`, which "
        "`tool_trajectory_avg_score` needs: without it the turn expects no tool call "
        "(`adk eval` reads a missing one as empty); `expected_tool_uses` is perhaps "
        "`expected_tool_use` misspelt: rename it"
    )
    assert load_eval_set(path, [MATCH]).warnings == [
        f"{path}: legacy case `morning_round`: `initial_sesion` is not a key of ADK's legacy "
        "eval set format and is ignored; did you mean `initial_session`?",
        f"{path}: legacy case `morning_round`, turn 2: `expected_tool_uses` is not a key of "
        "ADK's legacy eval set format and is ignored; did you mean `expected_tool_use`?",
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"query": "hi", "expected_tool_use": [], "reference": "Hi."},
          {"querry": "bye", "expected_tool_use": [], "reference": "Bye."}],
         "a legacy list of turns whose turn 2 has no `query`: `querry` is perhaps `query` "
         "misspelt: rename it"),
        ([{"name": "c", "data": [{"reference": "Hi."}]}],
         'legacy case `c`: turn 1 has no `query`; every turn needs `"query": '
         '"<what the user says>"`'),
    ],
    ids=["turns", "cases"],
)
def test_a_turn_without_query_is_named(tmp_path: Path, data: list[Any], message: str) -> None:
    path = _write(tmp_path, data)
    assert _refusal(path, []) == f"{path}: {message}"


def test_the_suite_checks_its_legacy_eval_sets_against_its_eval_config(tmp_path: Path) -> None:
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": {MATCH: 0.8}}))
    bad = _write(tmp_path, [{"query": "hi", "expected_tool_use": [], "refrence": "Hi."}])
    fine = _write(tmp_path, [{"query": "hi", "reference": "Hi."}], "fine.test.json")
    suite = Suite(name="garden", agent_dir=tmp_path, eval_set_paths=[bad, fine],
                  eval_config_path=tmp_path / "test_config.json")
    inputs = load_suite_inputs(suite, tmp_path)
    # Only response_match_score is scored: `fine` needs no expected_tool_use.
    assert [e.eval_set.eval_set_id for e in inputs.eval_sets] == ["fine"]
    assert [(e.file, e.message) for e in inputs.errors] == [(
        "garden.test.json",
        "garden.test.json: turn 1 has no `reference`, which `response_match_score` needs: "
        "without it the reply is compared with an empty reference (ADK's AgentEvaluator "
        "requires it of legacy turns); `refrence` is perhaps `reference` misspelt: rename it",
    )]

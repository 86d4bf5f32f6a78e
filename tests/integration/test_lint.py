"""Keys google-adk accepts and never reads are named (issue 11, item 5): criterion keys are
checked against each metric's own ADK criterion model, eval set and eval case fields that no
ADK metric evaluates are named, and the judge model ADK falls back to is recorded.

The independent source is google-adk itself: its criterion models parse the same config and
drop the key (or keep the default) that the warning names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_case import EvalCase
from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import (
    JudgeModelOptions,
    RubricsBasedCriterion,
    ToolTrajectoryCriterion,
)
from pydantic import ValidationError

from adk_eval_action.adk.files.convert import judge_model
from adk_eval_action.adk.files.evalsets import load_eval_set
from adk_eval_action.adk.files.lint import criterion_warnings, eval_set_warnings
from conftest import CliRun, load_json
from support.adk_features import needs_ignore_args

RUBRIC = "rubric_based_final_response_quality_v1"


@needs_ignore_args
def test_a_misspelt_criterion_key_is_named_with_the_right_one() -> None:
    criterion = {"threshold": 1.0, "ignore_arguments": True}
    # ADK parses it and ignores the key: arguments are still compared.
    assert ToolTrajectoryCriterion.model_validate(criterion).ignore_args is False
    assert criterion_warnings("cfg.json", "tool_trajectory_avg_score", criterion, []) == [
        "cfg.json: `criteria.tool_trajectory_avg_score.ignore_arguments` is ignored by ADK "
        "(ToolTrajectoryCriterion has no such field); did you mean `ignore_args`?"
    ]


def test_num_samples_beside_threshold_points_into_judge_model_options() -> None:
    criterion = {"threshold": 0.8, "num_samples": 1, "judgeModelOptions": {"numSample": 3}}
    parsed = RubricsBasedCriterion.model_validate({"threshold": 0.8, "num_samples": 1})
    assert parsed.judge_model_options.num_samples == JudgeModelOptions().num_samples  # ignored
    warnings = criterion_warnings("cfg.json", RUBRIC, criterion, [])
    assert warnings == [
        f"cfg.json: `criteria.{RUBRIC}.num_samples` is ignored by ADK (RubricsBasedCriterion "
        "has no such field); did you mean `judge_model_options.num_samples`?",
        # Each key named as written and its fix spelt alike: camelCase under judgeModelOptions.
        f"cfg.json: `criteria.{RUBRIC}.judgeModelOptions.numSample` is not an option of "
        "ADK's JudgeModelOptions; did you mean `numSamples`?",
    ]


def test_every_key_adk_reads_passes_and_custom_metrics_are_left_alone() -> None:
    # Every field of the installed google-adk's models, the criterion's in camelCase.
    full: dict[str, Any] = {
        "".join(w.title() if i else w for i, w in enumerate(name.split("_"))): None
        for name in RubricsBasedCriterion.model_fields
    }
    full["judge_model_options"] = dict.fromkeys(JudgeModelOptions.model_fields)
    assert criterion_warnings("c", RUBRIC, full, []) == []
    assert criterion_warnings("c", "my_metric", {"threshold": 1, "anything": 2}, []) == []
    assert criterion_warnings("c", RUBRIC, {"threshold": 1, "mine": 2}, [RUBRIC]) == []


def test_eval_set_fields_adk_never_evaluates_are_named() -> None:
    case = {
        "eval_id": "c1", "conversation": [], "final_session_state": {"booked": True},
        "expected_state": {"booked": True},
        "session_input": {"app_name": "a", "user_id": "u", "stat": {}},
    }
    data = {"eval_set_id": "s", "eval_cases": [case], "descripton": "typo"}
    if EvalCase.model_config.get("extra") == "forbid":  # google-adk 1.x refuses unknown keys
        with pytest.raises(ValidationError, match="expected_state"):
            EvalCase.model_validate(case)
    else:  # ADK accepts all of it: the eval case keeps the unknown key, reads none of them.
        assert EvalCase.model_validate(case).model_extra == {"expected_state": {"booked": True}}
    assert eval_set_warnings(data, "s.evalset.json") == [
        "s.evalset.json: `descripton` is not a field of ADK's EvalSet and is ignored; did you "
        "mean `description`?",
        "s.evalset.json: eval case `c1`: `expected_state` is not a field of ADK's EvalCase and "
        "is never evaluated",
        "s.evalset.json: eval case `c1`: `final_session_state` is accepted by ADK but never "
        "evaluated (no metric of google-adk evaluates the final session state)",
        "s.evalset.json: eval case `c1`: `session_input.stat` is not a field of ADK's "
        "SessionInput and is never used; did you mean `state`?",
    ]


NAN_EVAL_SET = """{"eval_set_id": "s", "creation_timestamp": NaN, "eval_cases": [
 {"eval_id": "budget", "creation_timestamp": -Infinity,
  "conversation": [{"invocation_id": "i",
                    "user_content": {"role": "user", "parts": [{"text": "hi"}]}}],
  "session_input": {"app_name": "a", "user_id": "u", "state": {"budget": NaN, "ok": 1.5}}}]}"""


def test_nan_and_infinity_in_an_eval_set_are_named_with_their_eval_case(tmp_path: Path) -> None:
    """Python's json reads them and ADK's EvalSet keeps them as they are (the agent
    would get float('nan') in its state); each is a warning naming case and field."""
    from google.adk.evaluation.eval_set import EvalSet

    path = tmp_path / "s.evalset.json"
    path.write_text(NAN_EVAL_SET)
    kept = EvalSet.model_validate(json.loads(NAN_EVAL_SET))
    assert kept.eval_cases[0].session_input.state["budget"] != \
        kept.eval_cases[0].session_input.state["budget"]  # NaN, accepted by ADK
    warnings = load_eval_set(path).warnings
    assert [w.split(", which")[0] for w in warnings] == [
        f"{path}: creation_timestamp is nan",
        f"{path}: eval case `budget`: creation_timestamp is -inf",
        f"{path}: eval case `budget`: session_input.state.budget is nan",
    ]
    assert warnings[2].endswith("write a number or null")


@pytest.mark.parametrize(("named", "camel"), [(True, False), (False, False), (True, True)])
def test_the_judge_model_is_recorded_also_when_the_config_names_none(
    named: bool, camel: bool
) -> None:
    # camelCase as agent-starter-pack writes it: ADK's EvalConfig keeps the criterion's keys
    # as spelt, and ADK's evaluator reads them through its criterion model's aliases.
    key, model_key = ("judgeModelOptions", "judgeModel") if camel else (
        "judge_model_options", "judge_model")
    options = {model_key: "stand-in-judge"} if named else {"num_samples": 1}
    config = EvalConfig.model_validate({"criteria": {
        RUBRIC: {"threshold": 0.5, key: options},
        "tool_trajectory_avg_score": 1.0,
    }})
    metrics = {m.metric_name: m for m in get_eval_metrics_from_config(config)}
    read_by_adk = RubricsBasedCriterion.model_validate(metrics[RUBRIC].criterion.model_dump())
    expected = "stand-in-judge" if named else JudgeModelOptions().judge_model  # ADK's default
    assert read_by_adk.judge_model_options.judge_model == expected
    assert judge_model(metrics[RUBRIC]) == expected
    assert judge_model(metrics["tool_trajectory_avg_score"]) is None


@pytest.mark.parametrize("key", ["match_type", "matchType"])
def test_an_invalid_match_type_is_refused_naming_it_before_any_model_call(
    key: str, example_repo: Path, cli: CliRun, gemini_api: Any
) -> None:
    criterion = {"threshold": 1.0, key: "FUZZY"}
    with pytest.raises(ValidationError):  # ADK's own model refuses it too
        ToolTrajectoryCriterion.model_validate(criterion)
    _edit(example_repo / "travel_agent/eval/test_config.json",
          lambda data: data["criteria"].update(tool_trajectory_avg_score=criterion))
    gemini_api.clear_calls()

    result = cli("run", "travel_agent", "--results-out", "r.json")

    assert result.exit_code == 2, result.output
    assert (
        f"travel_agent/eval/test_config.json (field `criteria.tool_trajectory_avg_score.{key}`)"
        f": `{key}` must be one of EXACT, IN_ORDER, ANY_ORDER, not 'FUZZY'"
    ) in result.output
    assert "cannot be set up" not in result.output
    assert gemini_api.calls == []
    [suite] = load_json(example_repo / "r.json")["suites"]
    assert [e["kind"] for e in suite["errors"]] == ["config"]


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_a_run_warns_and_records_the_judge_of_a_config_that_names_none(
    example_repo: Path, cli: CliRun
) -> None:
    config = example_repo / "travel_agent/eval/test_config.json"

    def misplace(data: dict[str, Any]) -> None:
        criterion = data["criteria"][RUBRIC]
        criterion["num_samples"] = criterion["judge_model_options"].pop("num_samples")
        data["criteria"]["tool_trajectory_avg_score"] = {"threshold": 1.0,
                                                         "ignore_arguments": True}

    _edit(config, misplace)
    _edit(example_repo / "travel_agent/eval/travel.evalset.json",
          lambda data: data["eval_cases"][0].update(final_session_state={"city": "Paris"}))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    for text in ("`criteria.tool_trajectory_avg_score.ignore_arguments` is ignored by ADK",
                 f"`criteria.{RUBRIC}.num_samples` is ignored by ADK",
                 "eval case `weather_paris`: `final_session_state` is accepted by ADK but never "
                 "evaluated"):
        assert "warning: travel_agent/eval/" in result.output and text in result.output
        assert any(text in w for w in load_json(example_repo / "r.json")["warnings"])

    # The example's eval config names no judge model: the one ADK falls back to (and the
    # fake Gemini API answered as) is recorded in results.json.
    assert "judge_model" not in load_json(config)["criteria"][RUBRIC]["judge_model_options"]
    [suite] = load_json(example_repo / "r.json")["suites"]
    assert suite["judge_models"] == {RUBRIC: JudgeModelOptions().judge_model}

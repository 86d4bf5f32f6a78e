"""A misspelt key inside an eval config's criteria is named with the key meant, spelt in the
file's own style (camelCase file -> camelCase suggestion), whether ADK's models refuse it
(``JudgeModelOptions``, ``Rubric`` and ``RubricContent`` forbid extra keys; a
``BaseCriterion`` without ``threshold``) or keep it without reading it (a criterion's extra
keys: :func:`adk_eval_action.adk.files.lint.criterion_warnings`).

The independent source is google-adk: each file below is one its models refuse (or accept
while ignoring the key), checked first, before the message is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_metrics import (
    LlmAsAJudgeCriterion,
    RubricsBasedCriterion,
    ToolTrajectoryCriterion,
)
from pydantic import ValidationError

from adk_eval_action.adk.files.evalconfig import load_eval_config
from adk_eval_action.errors import ConfigError, closest_key

RUBRIC = "rubric_based_final_response_quality_v1"


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(data))
    return path


def _refusal(tmp_path: Path, data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_eval_config(_write(tmp_path, data), display_path="eval/test_config.json")
    return str(caught.value)


def test_a_misspelt_threshold_is_named_not_input_should_be_a_valid_number(
    tmp_path: Path,
) -> None:
    criteria = {"tool_trajectory_avg_score": {"treshold": 1.0}}
    with pytest.raises(ValidationError, match="Input should be a valid number"):
        EvalConfig.model_validate({"criteria": criteria})  # ADK's own first error
    assert _refusal(tmp_path, {"criteria": criteria}) == (
        f"{tmp_path / 'test_config.json'} (field `criteria.tool_trajectory_avg_score.treshold`)"
        ": unknown key `treshold`; did you mean `threshold`?"
    )


def test_a_threshold_that_is_no_number_names_the_threshold(tmp_path: Path) -> None:
    criteria = {"tool_trajectory_avg_score": {"threshold": "high"}}
    assert _refusal(tmp_path, {"criteria": criteria}) == (
        f"{tmp_path / 'test_config.json'} (field `criteria.tool_trajectory_avg_score.threshold`)"
        ": Input should be a valid number, unable to parse string as a number"
    )


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"judgeModelOptions": {"judgeModel": "gemini-2.5-flash", "numSample": 3}},
         "judgeModelOptions.numSample", "unknown key `numSample`; did you mean `numSamples`?"),
        ({"judge_model_options": {"judge_model": "gemini-2.5-flash", "num_sample": 3}},
         "judge_model_options.num_sample",
         "unknown key `num_sample`; did you mean `num_samples`?"),
    ],
    ids=["camelCase", "snake_case"],
)
def test_a_misspelt_judge_model_option_is_named_in_the_files_style(
    tmp_path: Path, options: dict[str, Any], field: str, message: str
) -> None:
    criterion = {"threshold": 0.5, **options}
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        LlmAsAJudgeCriterion.model_validate(criterion)
    assert _refusal(tmp_path, {"criteria": {"final_response_match_v2": criterion}}) == (
        f"{tmp_path / 'test_config.json'} (field `criteria.final_response_match_v2.{field}`): "
        f"{message}"
    )


@pytest.mark.parametrize(
    ("rubric", "field", "message"),
    [
        ({"rubricId": "polite", "rubricContent": {"textPropery": "is polite"}},
         "rubrics[0].rubricContent.textPropery",
         "unknown key `textPropery`; did you mean `textProperty`?"),
        ({"rubricId": "polite", "rubricContent": {"textProperty": "is polite"},
          "typ": "FINAL_RESPONSE_QUALITY"},
         "rubrics[0].typ", "unknown key `typ`; did you mean `type`?"),
        ({"rubric_id": "polite", "rubric_content": {"text_propery": "is polite"}},
         "rubrics[0].rubric_content.text_propery",
         "unknown key `text_propery`; did you mean `text_property`?"),
    ],
    ids=["textPropery", "typ", "text_propery"],
)
def test_a_misspelt_rubric_key_is_named_in_the_files_style(
    tmp_path: Path, rubric: dict[str, Any], field: str, message: str
) -> None:
    criterion = {"threshold": 0.5, "rubrics": [rubric]}
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RubricsBasedCriterion.model_validate(criterion)
    assert _refusal(tmp_path, {"criteria": {RUBRIC: criterion}}) == (
        f"{tmp_path / 'test_config.json'} (field `criteria.{RUBRIC}.{field}`): {message}"
    )


@pytest.mark.parametrize(
    ("key", "meant"), [("matchTyp", "matchType"), ("match_typ", "match_type")]
)
def test_a_misspelt_criterion_key_adk_ignores_is_suggested_in_the_files_style(
    tmp_path: Path, key: str, meant: str
) -> None:
    criterion = {"threshold": 1.0, key: "ANY_ORDER"}
    # ADK keeps the key and never reads it: the match stays EXACT.
    assert ToolTrajectoryCriterion.model_validate(criterion).match_type.name == "EXACT"
    loaded = load_eval_config(_write(tmp_path, {"criteria": {"tool_trajectory_avg_score":
                                                             criterion}}),
                              display_path="eval/test_config.json")
    assert loaded.warnings == [
        f"eval/test_config.json: `criteria.tool_trajectory_avg_score.{key}` is ignored by ADK "
        f"(ToolTrajectoryCriterion has no such field); did you mean `{meant}`?"
    ]


def test_a_judge_option_one_level_too_high_is_pointed_down_in_the_files_style(
    tmp_path: Path,
) -> None:
    criterion = {"threshold": 0.5, "judgeModelOptions": {"judgeModel": "gemini-2.5-flash"},
                 "numSamples": 3}
    loaded = load_eval_config(_write(tmp_path, {"criteria": {"final_response_match_v2":
                                                             criterion}}),
                              display_path="eval/test_config.json")
    assert loaded.warnings == [
        "eval/test_config.json: `criteria.final_response_match_v2.numSamples` is ignored by "
        "ADK (LlmAsAJudgeCriterion has no such field); did you mean "
        "`judgeModelOptions.numSamples`?"
    ]


def test_closest_key_follows_the_style_of_the_key_or_its_siblings() -> None:
    accepted = ["match_type", "matchType", "threshold", "judge_model", "judgeModel"]
    assert closest_key("matchTyp", accepted) == "matchType"
    assert closest_key("match_typ", accepted) == "match_type"
    assert closest_key("judgemodel", accepted, ["matchType"]) == "judgeModel"
    assert closest_key("judgemodel", accepted, ["match_type"]) == "judge_model"
    assert closest_key("zzz", accepted) is None

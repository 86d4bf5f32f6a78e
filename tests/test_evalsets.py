"""Every eval set shape found in real repositories loads, or fails naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_action.adk.evalsets import ACCEPTED_SHAPES, NO_CASES, load_eval_set
from adk_eval_action.errors import EvalSetError
from conftest import SHARED

REAL = SHARED / "fixtures" / "real-evalsets"


def _real_eval_sets() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(
        p
        for p in REAL.rglob("*.json")
        if (p.name.endswith((".evalset.json", ".test.json")) or p.parent.name == "eval")
        and "config" not in p.name
    )


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures/real-evalsets is not present")
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


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures/real-evalsets is not present")
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
    ],
)
def test_bad_shapes_name_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.evalset.json"
    path.write_text(content)
    with pytest.raises(EvalSetError) as error:
        load_eval_set(path)
    assert str(path) in str(error.value) and message in str(error.value)

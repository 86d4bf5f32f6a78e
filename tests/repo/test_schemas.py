"""The comparison's JSON Schema in schemas/ is the model's own (pydantic's
``model_json_schema``), so the documented format cannot drift from what is written.
Regenerate with ``adk-eval-action schema comparison > schemas/comparison.schema.json``
(tests/repo/test_packaging.py checks the file is that command's output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_action.analysis.compare import Comparison
from support.results_builder import scores_side
from support.tables import compare

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
HEADER = ("$schema", "$id", "title", "description")


def test_schema_file_is_the_models_schema() -> None:
    """The file is the model's serialization schema with the header `schema` gives it."""
    written = json.loads((SCHEMAS / "comparison.schema.json").read_text(encoding="utf-8"))
    model = Comparison.model_json_schema(mode="serialization")
    assert {k: v for k, v in written.items() if k not in HEADER} == {
        k: v for k, v in model.items() if k not in HEADER}
    assert written["$id"].endswith("/schemas/comparison.schema.json")


def test_a_written_comparison_validates_against_its_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    base = scores_side({f"c{i}": [0.5, 0.6] for i in range(12)} | {"gone": [1.0, 1.0]})
    head = scores_side({f"c{i}": [0.3, 0.4] for i in range(12)} | {"new": [0.0, 0.0]})
    written = json.loads(compare(head, base, "b").model_dump_json())
    schema = json.loads((SCHEMAS / "comparison.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(written, schema)
    row = written["metrics"][0]
    assert row["classification"] == "regressed" and row["interval"]["high"] < 0
    assert {c["change"] for c in written["cases"]} >= {"new", "removed"}
    assert written["tests"]["seed"] == 0 and written["tests"]["n_resamples"] == 2000


def test_compare_json_out_writes_the_comparison_the_comment_shows(tmp_path: Path) -> None:
    """``compare --json-out`` writes what the comment and gate read: a drop on 12 matched
    cases is called regressed in the file, the gate fails on it, and the file validates."""
    from click.testing import CliRunner

    from adk_eval_action.cli import main
    from adk_eval_action.results.io import save_results

    head, base, out = tmp_path / "head.json", tmp_path / "base.json", tmp_path / "c.json"
    save_results(scores_side({f"c{i}": [0.3, 0.4] for i in range(12)}), head)
    save_results(scores_side({f"c{i}": [0.5, 0.6] for i in range(12)}), base)
    args = ["compare", str(head), "--baseline", str(base), "--json-out", str(out)]
    result = CliRunner().invoke(main, [*args, "--fail-on", "regression"])
    assert result.exit_code == 1, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    (row,) = written["metrics"]
    assert row["delta"] == pytest.approx(-0.2) and row["classification"] == "regressed"
    assert row["interval"]["n_cases"] == 12 and row["interval"]["high"] < 0
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "comparison.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(written, schema)

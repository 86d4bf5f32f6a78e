"""A results file is input (results.input_checks): a non-finite score is made a ``metric_code``
error as the run makes one (incomplete, exit 2), and a score outside its metric's recorded
value range or a status that contradicts score versus threshold is refused as a malformed
file (exit 2 naming the file and the place), for every command that reads results files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import CaseStatus, MetricStatus, usable_score
from conftest import CliRun
from support.results_builder import metric, results

PLACE = "suite travel, eval set evals/smoke.evalset.json, eval case b, run 1, metric `m`"


def _files(tmp_path: Path, edit: dict[str, Any], **kwargs: Any) -> tuple[Path, Path]:
    """A good baseline and a head whose eval case ``b`` (one run, metric ``m``, threshold
    0.5, range [0, 1]) had its fields replaced by ``edit``, as a hand edit would."""
    base = results({"a": [[metric("m", 1.0, **kwargs)]], "b": [[metric("m", 0.8, **kwargs)]]})
    data = json.loads(base.model_dump_json())
    data["suites"][0]["eval_sets"][0]["eval_cases"][1]["runs"][0]["metrics"][0].update(edit)
    base_path, head_path = tmp_path / "base.json", tmp_path / "head.json"
    base_path.write_text(base.model_dump_json(), encoding="utf-8")
    # json.dumps writes NaN/Infinity, which Python's json (and so a hand edit) reads back.
    head_path.write_text(json.dumps(data), encoding="utf-8")
    return base_path, head_path


@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("not_evaluated", ["fail", "warn"])
def test_a_non_finite_score_in_a_results_file_is_incomplete_either_way(
    tmp_path: Path, cli: CliRun, bad: float, not_evaluated: str
) -> None:
    base, head = _files(tmp_path, {"score": bad})
    result = cli("compare", str(head), "--baseline", str(base),
                 "--not-evaluated", not_evaluated)
    assert result.exit_code == 2, result.output  # before results.input_checks: 1 (fail) or 0 (warn)
    says = f"non-finite score {bad!r} in the results file {head.name} (suite travel)"
    assert says in result.output
    assert "metric_code: evals/smoke.evalset.json, b" in result.output
    assert "the code of `m` failed in 1 run of 1 eval case in smoke.evalset.json (b)" in (
        result.output)


def test_a_non_finite_score_is_recorded_as_the_run_records_one(tmp_path: Path) -> None:
    _, head = _files(tmp_path, {"score": math.nan})
    loaded = load_results(head)
    suite = loaded.suites[0]
    case_b = suite.eval_sets[0].eval_cases[1]
    m = case_b.runs[0].metrics[0]
    assert (m.score, m.status) == (None, MetricStatus.ERROR)
    assert case_b.runs[0].status == CaseStatus.ERROR
    [error] = suite.errors
    assert (error.kind, error.eval_id, error.metric) == ("metric_code", "b", "m")
    assert loaded.is_complete() is False
    # The other case is untouched.
    assert suite.eval_sets[0].eval_cases[0].runs[0].metrics[0].score == 1.0


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ({"score": 5.0}, "score 5.0 is outside its value range [0.0, 1.0]"),
        ({"score": -0.25, "status": "failed"},
         "score -0.25 is outside its value range [0.0, 1.0]"),
        ({"score": 0.0, "status": "passed"},
         "status 'passed' contradicts score 0.0 against threshold 0.5 "
         "(passes when score >= threshold)"),
        ({"score": 0.5, "status": "failed"},
         "status 'failed' contradicts score 0.5 against threshold 0.5"),
    ],
)
@pytest.mark.parametrize("command", ["compare", "render"])
def test_a_malformed_head_is_refused_naming_the_file_and_place(
    tmp_path: Path, cli: CliRun, edit: dict[str, Any], says: str, command: str
) -> None:
    base, head = _files(tmp_path, edit)
    result = cli(command, str(head), "--baseline", str(base))
    assert result.exit_code == 2, result.output  # before results.input_checks: 0, the row shown ✅
    assert f"{head}: malformed results file: {PLACE}: {says}" in result.output


def test_a_malformed_baseline_is_refused_too(tmp_path: Path, cli: CliRun) -> None:
    base, head = _files(tmp_path, {"score": 5.0})
    result = cli("compare", str(base), "--baseline", str(head))
    assert result.exit_code == 2, result.output
    assert (f"{head}: the baseline file could not be read: malformed results file: {PLACE}: "
            "score 5.0 is outside") in result.output


@pytest.mark.parametrize(("score", "status"), [(0.2, "passed"), (0.7, "passed"),
                                             (0.2, "failed"), (0.7, "failed")])
def test_a_lower_is_better_metric_keeps_the_status_it_recorded(
    tmp_path: Path, score: float, status: str
) -> None:
    # Either a custom metric (its direction inferred from its own statuses) or a built-in one
    # turned round by adk-eval.yaml's higher_is_better, which google-adk still passes at
    # score >= threshold (0.7 passed, 0.2 failed here): no rule tells which, so none is
    # applied; the range still is.
    _, head = _files(tmp_path, {"score": score, "status": status}, higher_is_better=False)
    m = load_results(head).suites[0].eval_sets[0].eval_cases[1].runs[0].metrics[0]
    assert (m.score, m.status) == (score, MetricStatus(status))
    _, head = _files(tmp_path, {"score": 1.5, "status": status}, higher_is_better=False)
    with pytest.raises(ResultsFileError, match=r"score 1\.5 is outside its value range"):
        load_results(head)


def test_a_custom_metric_decides_its_own_status(tmp_path: Path) -> None:
    # A custom metric's status is its code's decision (results.input_checks), so a pass below the
    # threshold stands when the suite's recorded eval config names it a custom metric.
    _, head = _files(tmp_path, {"score": 0.0, "status": "passed"})
    data = json.loads(head.read_text())
    data["suites"][0]["eval_config"] = {"criteria": {"m": 0.5}, "custom_metrics": {"m": {}}}
    head.write_text(json.dumps(data), encoding="utf-8")
    m = load_results(head).suites[0].eval_sets[0].eval_cases[1].runs[0].metrics[0]
    assert (m.score, m.status) == (0.0, MetricStatus.PASSED)
    # Its range still holds.
    data["suites"][0]["eval_sets"][0]["eval_cases"][1]["runs"][0]["metrics"][0]["score"] = 2.0
    head.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsFileError, match=r"score 2\.0 is outside its value range"):
        load_results(head)


@pytest.mark.parametrize(
    ("score", "status", "expected"),
    [
        (1.0, MetricStatus.PASSED, (1.0, MetricStatus.PASSED)),
        (-1.0, MetricStatus.FAILED, (-1.0, MetricStatus.FAILED)),
        (1.5, MetricStatus.PASSED, (None, MetricStatus.ERROR)),
        (-1.5, MetricStatus.FAILED, (None, MetricStatus.ERROR)),
        # Not averaged either way: it stays what it was, without a score only when non-finite.
        (1.5, MetricStatus.NOT_EVALUATED, (1.5, MetricStatus.NOT_EVALUATED)),
        (math.nan, MetricStatus.PASSED, (None, MetricStatus.ERROR)),
    ],
)
def test_the_run_never_records_a_scored_result_outside_its_range(
    score: float, status: MetricStatus, expected: tuple[float | None, MetricStatus]
) -> None:
    got, got_status, reason = usable_score(score, status, None, -1.0, 1.0)
    assert (got, got_status) == expected
    if got_status == MetricStatus.ERROR and math.isfinite(score):
        assert reason == f"score {score!r} is outside its value range [-1.0, 1.0]: " \
            "fix the metric's code"

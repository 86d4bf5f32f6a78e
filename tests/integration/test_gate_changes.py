"""A change that loosens its own gate (a threshold lowered, a metric removed from the
criteria, min_pass_rate relaxed) is named beside the verdict in the comment, the job
summary and the console (analysis.gatechanges, report.gatechange_text)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from adk_eval_action.analysis.gatechanges import GateChange, gate_changes
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import RunMetadata, RunResults, SuiteRecord
from adk_eval_action.run.pipeline import run_pipeline
from conftest import SharedRun, request_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.usefixtures("keep_cwd")


def _criteria(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["criteria"]


def test_a_change_that_loosens_its_own_gate_is_named(
    good_run: SharedRun, tmp_path: Path, console
) -> None:
    """The example agent unchanged, its eval config loosened in the head: the baseline is
    re-scored under the head's config (its thresholds then the head's), yet every change
    is named with the values of the two configs, read from the files themselves."""
    assert good_run.exit_code == 0, good_run.output
    shutil.copytree(EXAMPLES / "travel_agent", tmp_path / "travel_agent",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config_path = tmp_path / "travel_agent" / "eval" / "test_config.json"
    before = _criteria(config_path)
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["criteria"]["response_match_score"] = 0.0
    del config["criteria"]["tool_trajectory_avg_score"]
    config["criteria"]["brevity"] = before["brevity"] + 20  # lower is better: looser
    config["criteria"]["politeness"] = before["politeness"] - 0.5  # looser too
    config_path.write_text(json.dumps(config), encoding="utf-8")
    os.chdir(tmp_path)
    outcome = run_pipeline(request_for(
        baseline=str(good_run.results), results_path=tmp_path / "head.json",
        min_pass_rate=0.5, summary_out=tmp_path / "sum.md", html_out=tmp_path / "r.html"))
    comparison = outcome.comparison
    assert comparison is not None and "re-scored under the head" in comparison.baseline_note
    recorded = json.loads(good_run.results.read_text(encoding="utf-8"))
    assert recorded["metadata"]["gate"]["min_pass_rate"] == 1.0  # recorded by the baseline
    changes = {(c.kind, c.name): c for c in comparison.gate_changes}
    assert set(changes) == {("rule", "min_pass_rate"), ("threshold", "response_match_score"),
                            ("removed", "tool_trajectory_avg_score"),
                            ("threshold", "brevity"), ("threshold", "politeness")}
    assert all(c.loosens for c in comparison.gate_changes)
    rms = changes[("threshold", "response_match_score")]
    assert (rms.baseline, rms.head) == (before["response_match_score"], 0.0) == (0.7, 0.0)
    assert (changes[("threshold", "brevity")].baseline,
            changes[("threshold", "brevity")].head) == (before["brevity"], before["brevity"] + 20)
    assert changes[("rule", "min_pass_rate")].head == 0.5
    line = ("⚠️ **This change loosens the gate** (vs the baseline): it lowers `min_pass_rate` "
            "1 → 0.5, lowers the threshold of `response_match_score` 0.7 → 0, lowers the "
            "threshold of `politeness` 0 → -0.5, raises the threshold of `brevity` 40 → 60, "
            "removes `tool_trajectory_avg_score` from the criteria (threshold 1).")
    comment = outcome.comment_markdown
    assert line in comment
    # Beside the verdict: right after the headline, before the baseline's line.
    assert comment.index("✅ **ADK eval passed**: 5/5 eval cases passed.\n\n" + line) < (
        comment.index("Baseline:"))
    assert line in (tmp_path / "sum.md").read_text(encoding="utf-8")
    # The HTML report says it in the verdict's section, in plain text.
    report = (tmp_path / "r.html").read_text(encoding="utf-8")
    verdict = report[report.index('<section id="verdict"'):report.index('<section id="metrics"')]
    assert ('<p class="warn">This change loosens the gate (vs the baseline): it lowers '
            "min_pass_rate 1 → 0.5, lowers the threshold of response_match_score 0.7 → 0, "
            "lowers the threshold of politeness 0 → -0.5, raises the threshold of brevity "
            "40 → 60, removes tool_trajectory_avg_score from the criteria (threshold 1).</p>"
            ) in verdict
    warning = [entry for entry in console.lines if "loosens the gate" in entry]
    assert warning == ["warning: this change loosens the gate (vs the baseline): it lowers "
                       "min_pass_rate 1 → 0.5, lowers the threshold of response_match_score "
                       "0.7 → 0, lowers the threshold of politeness 0 → -0.5, raises the "
                       "threshold of brevity 40 → 60, removes tool_trajectory_avg_score "
                       "from the criteria (threshold 1)"]


def _side(criteria: dict, gate: GateConfig | None) -> RunResults:
    return RunResults(
        metadata=RunMetadata(gate=gate.model_dump(mode="json") if gate else None),
        suites=[SuiteRecord(name="s", eval_config={"criteria": criteria})])


@pytest.mark.parametrize(
    ("before", "after", "loosens"),
    [
        ({"fail_on": "any"}, {"fail_on": "threshold"}, True),  # the regression rule dropped
        ({"fail_on": "threshold"}, {"fail_on": "regression"}, True),  # thresholds dropped
        ({"fail_on": "threshold"}, {"fail_on": "any"}, False),
        ({"fail_on": "regression"}, {"fail_on": "none"}, True),
        ({"not_evaluated": "fail"}, {"not_evaluated": "warn"}, True),
        ({"require_significance": False}, {"require_significance": True}, True),
        # max_regression set on both sides: unset, it moves with min_effect.
        ({"min_effect": 0.0, "max_regression": 0.2}, {"min_effect": 0.1, "max_regression": 0.2},
         True),
        ({"max_regression": 0.1}, {"max_regression": 0.05}, False),
        ({"min_pass_rate": 0.8}, {"min_pass_rate": 1.0}, False),
    ],
)
def test_each_gate_rule_moves_one_way(before: dict, after: dict, loosens: bool) -> None:
    (change,) = gate_changes(_side({}, GateConfig(**after)), _side({}, GateConfig(**before)),
                             None, {})
    name = next(iter(before))
    assert (change.name, change.baseline, change.head) == (name, before[name], after[name])
    assert change.loosens is loosens


def test_a_baseline_without_a_recorded_gate_names_only_its_criteria() -> None:
    """A baseline recorded before the gate was (or ADK's eval_history, without an eval
    config) sets no rule beside the head's; a tightened threshold is not a loosening."""
    head = _side({"m": {"threshold": 0.9}, "new": 0.5}, GateConfig(min_pass_rate=0.1))
    changes = gate_changes(head, _side({"m": 0.5}, None), None, {("s", "m"): True})
    assert changes == [
        GateChange(suite="s", name="m", kind="threshold", baseline=0.5, head=0.9, loosens=False),
        GateChange(suite="s", name="new", kind="added", head=0.5, loosens=False),
    ]
    no_config = RunResults(suites=[SuiteRecord(name="s")])
    assert gate_changes(head, no_config, None, {}) == []

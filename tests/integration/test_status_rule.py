"""One status rule (issue 11, item 4) for results.json, the comparison, the gate, the console
and the comment; and the comment points at a chart only in a job summary that is written
(item 8).

Every evaluation the test session runs through the ``cli`` fixture or a shared run is also
checked by ``conftest.check_statuses`` (results.json statuses equal the gate's).
"""

from __future__ import annotations

import itertools

import pytest
from click.testing import CliRunner

from adk_eval_action.cli import main
from adk_eval_action.results.model import CaseStatus, MetricResult, MetricStatus
from adk_eval_action.results.status import case_status, run_status
from conftest import SharedRun, working_directory

P, F, NE, E, INFO = (MetricStatus.PASSED, MetricStatus.FAILED, MetricStatus.NOT_EVALUATED,
                     MetricStatus.ERROR, MetricStatus.INFORMATIONAL)


def _metric(status: MetricStatus, informational: bool = False) -> MetricResult:
    return MetricResult(metric_name=f"m_{status.value}", status=status,
                        informational=informational)


@pytest.mark.parametrize("statuses, expected", [
    ((P, NE), CaseStatus.NOT_EVALUATED),  # ADK calls this case PASSED
    ((P, E), CaseStatus.ERROR),
    ((F, E, NE), CaseStatus.FAILED),  # a computed failure is never hidden behind an error
    ((E, NE), CaseStatus.ERROR),
    ((P, P), CaseStatus.PASSED),
    ((), CaseStatus.NOT_EVALUATED),  # nothing evaluated is not a pass
    ((INFO,), CaseStatus.NOT_EVALUATED),
])
def test_run_status(statuses: tuple[MetricStatus, ...], expected: CaseStatus) -> None:
    metrics = [_metric(s, informational=s is INFO) for s in statuses]
    assert run_status(metrics) == expected
    # Informational metrics never decide; a run that raised is an error whatever it holds.
    assert run_status([*metrics, _metric(F, informational=True)]) == expected
    assert run_status(metrics, "inference failed") == CaseStatus.ERROR
    assert run_status(metrics, "the agent raised KeyError", agent_raised=True) == (
        CaseStatus.FAILED)


def test_case_status_over_runs_by_hand() -> None:
    order = [CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.NOT_EVALUATED, CaseStatus.PASSED]
    for runs in itertools.product(order, repeat=3):
        assert case_status(runs) == min(runs, key=order.index)
    assert case_status([]) == CaseStatus.ERROR


def _compare(run: SharedRun, *extra: str) -> str:
    with working_directory(run.root):
        result = CliRunner().invoke(main, [
            "compare", str(run.results), "--baseline", "adk-eval-results.json",
            "--print-comment", *extra,
        ], catch_exceptions=False)
    return result.output


def test_the_chart_is_mentioned_only_when_a_job_summary_is_written(
    regressed_run: SharedRun, tmp_path
) -> None:
    assert regressed_run.comment is not None and regressed_run.summary is not None
    assert "📈 A chart of baseline vs head per metric is in the job summary." in (
        regressed_run.comment.read_text()
    )
    assert "```mermaid" in regressed_run.summary.read_text()
    without = _compare(regressed_run)
    assert "### ADK evaluation" in without and "📈" not in without
    with_summary = _compare(regressed_run, "--summary-out", str(tmp_path / "s.md"))
    assert "📈 A chart of baseline vs head per metric is in the job summary." in with_summary
    # Without a baseline the chart is of the head's scores alone, and says so.
    with working_directory(regressed_run.root):
        alone = CliRunner().invoke(main, [
            "compare", str(regressed_run.results), "--summary-out", str(tmp_path / "a.md"),
            "--print-comment"], catch_exceptions=False).output
    assert "📈 A chart of the head's scores per metric is in the job summary." in alone

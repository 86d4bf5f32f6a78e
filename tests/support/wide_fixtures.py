"""A comparison as wide as the comment gets on a real repository: three suites whose names
are 60 characters (agent folder and eval set folder, as discovery names a suite of a
monorepo), each with a gated metric that dropped, one that rose and a judge metric, three
runs a side, so every optional column (Suite, Interval, Threshold) is shown; the trend
history of two suites whose names start alike. For the layout tests (comment width, chart
titles, HTML report columns)."""

from __future__ import annotations

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.model import RunResults
from support.results_builder import metric, results
from support.tables import compare

#: Three suite names of 60 characters (a monorepo's agent and eval set folders).
SUITES = [
    "home_automation_agent:tests/integration/fixture/memorizing_1",
    "home_automation_agent:tests/integration/fixture/memorizing_2",
    "customer_service_agent_with_long_name:eval/data/simple_cases",
]
RUN_URL = "https://github.com/acme/agents/actions/runs/42"


def _side(head: bool, cases_per_suite: int) -> RunResults:
    merged: RunResults | None = None
    for s, suite in enumerate(SUITES):
        cases = {}
        for i in range(cases_per_suite):
            runs = []
            for r in range(3):
                jitter = (r - 1) * 0.01
                trajectory = 0.45 + jitter if head and i < 4 else 1.0
                match = 0.82 + jitter if head else 0.74 + jitter
                judge = 0.6 + 0.1 * ((i + r + s) % 3)
                runs.append([
                    metric("tool_trajectory_avg_score", round(trajectory, 4), threshold=0.8),
                    metric("response_match_score", round(match, 4), threshold=0.7),
                    metric("rubric_based_final_response_quality_v1", round(judge, 4),
                           threshold=0.5),
                ])
            cases[f"turn_off_the_lights_in_room_{i}"] = runs
        side = results(cases, suite=suite, eval_set=f"set_{s}",
                       sha="feedc0ffee" if head else "0ldbase000")
        if merged is None:
            merged = side
        else:
            merged.suites += side.suites
    assert merged is not None
    return merged


def wide_sides(cases_per_suite: int = 6) -> tuple[RunResults, RunResults]:
    """(head, baseline); one case per suite leaves every metric without an interval, its
    reason said instead."""
    return _side(True, cases_per_suite), _side(False, cases_per_suite)


def wide_context(cases_per_suite: int = 6) -> CommentContext:
    """The comparison of :func:`wide_sides`, gated on regressions and thresholds."""
    head, base = wide_sides(cases_per_suite)
    config = GateConfig(fail_on="any")
    comparison = compare(head, base, "`base.json`, commit 0ldbase000",
                         min_effect=config.min_effect_for)
    return CommentContext(comparison=comparison, gate=decide(comparison, config),
                          run_url=RUN_URL, results_path="adk-eval-results.json",
                          chart=metric_chart_markdown(comparison))

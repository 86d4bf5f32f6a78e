"""A comparison as wide as the comment gets on a real repository: three suites whose names
are 60 characters (agent folder and eval set folder, as discovery names a suite of a
monorepo), each with a gated metric that dropped, one that rose and a judge metric, three
runs a side, so every optional column (Interval, Threshold) is shown; the trend history
of two suites whose names start alike. ``worst=True`` adds what widens the other tables:
eval case ids and eval set ids of 60 characters, rubrics with long texts, an
informational token metric, model usage (the cost tables), a flaky eval case and a trend
history of every gated metric. For the layout tests (comment and job summary width, chart
titles, HTML report columns)."""

from __future__ import annotations

from adk_eval_action.analysis.gate import decide
from adk_eval_action.analysis.trend_models import HistoryFacts, MetricTrend, TrendPoint
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.model import (
    MetricResult,
    ModelCallCounts,
    RubricScoreRecord,
    RunResults,
)
from adk_eval_action.results.usage import ModelUsage, merge_usage
from support.results_builder import metric, results
from support.tables import compare

#: Three suite names of 60 characters (a monorepo's agent and eval set folders).
SUITES = [
    "home_automation_agent:tests/integration/fixture/memorizing_1",
    "home_automation_agent:tests/integration/fixture/memorizing_2",
    "customer_service_agent_with_long_name:eval/data/simple_cases",
]
#: An eval case id of 61 characters with the case's number appended.
LONG_CASE = "turn_off_the_lights_in_the_living_room_then_lock_front_door"
#: An eval set id of 60 characters with the suite's number appended.
LONG_SET = "home_automation_regression_cases_recorded_from_production_v"
#: Rubrics of the judge metric: (id, text), texts as long as teams write them.
RUBRICS = [
    ("answers_in_the_users_language",
     "The final answer is written in the language the user wrote in, names the room and "
     "device it changed, and does not claim an action that no tool call performed."),
    ("confirms_before_unlocking",
     "Before unlocking any door the agent asks the user to confirm, and it never unlocks "
     "a door when the user's request was ambiguous about which door was meant."),
]
RUN_URL = "https://github.com/acme/agents/actions/runs/42"


def _judge(score: float, worst: bool) -> MetricResult:
    judged = metric("rubric_based_final_response_quality_v1", round(score, 4), threshold=0.5)
    if not worst:
        return judged
    verdicts = [RubricScoreRecord(rubric_id=rid, text=text, score=1.0 if score >= 0.7 else 0.0)
                for rid, text in RUBRICS]
    return judged.model_copy(update={"rubrics": verdicts})


def _usage(head: bool) -> list[ModelUsage]:
    grow = 2 if head else 1
    return [
        ModelUsage(model="gemini-2.5-flash-preview-05-20", role="agent", calls=3,
                   input_tokens=1200 * grow, cached_tokens=300, output_tokens=180 * grow,
                   thoughts_tokens=90, usd=0.0012 * grow),
        ModelUsage(model="gemini-2.5-pro-preview-06-05", role="judge", calls=2,
                   input_tokens=2500, output_tokens=400, usd=0.0071),
    ]


def _side(head: bool, cases_per_suite: int, worst: bool) -> RunResults:
    merged: RunResults | None = None
    for s, suite in enumerate(SUITES):
        cases = {}
        for i in range(cases_per_suite):
            runs = []
            for r in range(3):
                jitter = (r - 1) * 0.01
                trajectory = 0.45 + jitter if head and i < 4 else 1.0
                match = 0.82 + jitter if head else 0.74 + jitter
                if worst and head and i == cases_per_suite - 1 and r == 0:
                    match = 0.6  # flaky: one head run of the last case fails
                judge = 0.6 + 0.1 * ((i + r + s) % 3)
                run = [
                    metric("tool_trajectory_avg_score", round(trajectory, 4), threshold=0.8),
                    metric("response_match_score", round(match, 4), threshold=0.7),
                    _judge(judge, worst),
                ]
                if worst:
                    run.append(metric("token_usage_v1", (1500 + 40 * r) * (2 if head else 1),
                                      informational=True))
                runs.append(run)
            case_id = f"{LONG_CASE}_{i}" if worst else f"turn_off_the_lights_in_room_{i}"
            cases[case_id] = runs
        side = results(cases, suite=suite, eval_set=f"{LONG_SET}{s}" if worst else f"set_{s}",
                       sha="feedc0ffee" if head else "0ldbase000")
        if worst:
            for case in side.suites[0].eval_sets[0].eval_cases:
                for record in case.runs:
                    record.usage = _usage(head)
            side.suites[0].usage = merge_usage(*(record.usage or [] for case in
                                                 side.suites[0].eval_sets[0].eval_cases
                                                 for record in case.runs))
        if merged is None:
            merged = side
        else:
            merged.suites += side.suites
    assert merged is not None
    if worst:
        merged.metadata.model_calls = ModelCallCounts(
            calls=sum(u.calls for s in merged.suites for u in s.usage or []),
            usage=merge_usage(*(s.usage or [] for s in merged.suites)))
    return merged


def wide_sides(cases_per_suite: int = 6, worst: bool = False) -> tuple[RunResults, RunResults]:
    """(head, baseline); one case per suite leaves every metric without an interval, its
    reason said instead; ``worst``: the module docstring's widest inputs."""
    return _side(True, cases_per_suite, worst), _side(False, cases_per_suite, worst)


def _history(context: CommentContext) -> HistoryFacts:
    """Eight recorded runs of the default branch for every gated metric of the comparison."""
    trends = []
    for row in context.comparison.metrics:
        if row.informational or row.head is None or row.head.mean is None:
            continue
        points = [TrendPoint(label=f"c0ffee{n}", value=0.5 + 0.05 * n, commit=f"c0ffee{n}")
                  for n in range(8)]
        points.append(TrendPoint(label="head", value=row.head.mean, head=True))
        trends.append(MetricTrend(suite=row.suite, metric_name=row.metric_name,
                                  min_value=0.0, max_value=1.0, points=points))
    return HistoryFacts(recorded_runs=8, branch="main", trends=trends)


def wide_context(cases_per_suite: int = 6, worst: bool = False) -> CommentContext:
    """The comparison of :func:`wide_sides`, gated on regressions and thresholds; with
    ``worst``, the default branch's trend history too."""
    head, base = wide_sides(cases_per_suite, worst)
    config = GateConfig(fail_on="any")
    comparison = compare(head, base, "`base.json`, commit 0ldbase000",
                         min_effect=config.min_effect_for)
    context = CommentContext(comparison=comparison, gate=decide(comparison, config),
                             run_url=RUN_URL, results_path="adk-eval-results.json",
                             chart=metric_chart_markdown(comparison))
    if not worst:
        return context
    history = _history(context)
    comparison = comparison.model_copy(update={"history": history})
    return context.model_copy(update={"comparison": comparison,
                                      "gate": decide(comparison, config)})

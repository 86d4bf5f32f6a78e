"""Hand-built results with invocations, for the evidence, golden and GFM-structure tests.

Invocations are ADK ``Invocation`` JSON as the results file keeps them: expected ones in
``IntermediateData`` form (``tool_uses``, as eval sets write them), actual ones in
``InvocationEvents`` form (``function_call`` parts, as google-adk 2.x records a run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.render import SUMMARY_EVIDENCE, CommentContext, with_evidence
from adk_eval_action.results.model import (
    InvocationScore,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunResults,
)
from support.results_builder import metric, results
from support.tables import compare

Call = tuple[str, dict[str, Any]]

HOSTILE = (
    "a | b `tick` ``` <details><summary>x</summary> <script>alert(1)</script> "
    '<img src=x onerror="alert(2)"> <!-- adk-eval-action:default --> @octocat '
    "@acme/team\n\n# heading\n|---|\n- item **bold** [link](https://evil.test)"
)
"""Agent, judge and user text that tries to break the comment: table pipes, backticks and a
fence, HTML (details, script, img), a comment marker, mentions, newlines, markdown."""


def _content(text: str, role: str) -> dict[str, Any]:
    return {"parts": [{"text": text}], "role": role}


def expected_turn(user: str, response: str, calls: Sequence[Call] = ()) -> dict[str, Any]:
    """An expected invocation as an eval set holds it."""
    return {
        "invocation_id": "",
        "user_content": _content(user, "user"),
        "final_response": _content(response, "model"),
        "intermediate_data": {
            "tool_uses": [{"name": n, "args": a} for n, a in calls],
            "tool_responses": [],
            "intermediate_responses": [],
        },
    }


def actual_turn(user: str, response: str, calls: Sequence[Call] = ()) -> dict[str, Any]:
    """An actual invocation as google-adk records a run (thought parts are not the reply)."""
    events = [
        {
            "author": "agent",
            "content": {
                "parts": [{"function_call": {"id": f"call-{i}", "name": n, "args": a}}],
                "role": "model",
            },
        }
        for i, (n, a) in enumerate(calls)
    ]
    reply = _content(response, "model")
    reply["parts"].insert(0, {"text": "(thinking)", "thought": True})
    return {
        "invocation_id": "e-1",
        "user_content": _content(user, "user"),
        "final_response": reply,
        "intermediate_data": {"invocation_events": events},
    }


def per_turn(
    result: MetricResult, statuses: Sequence[str], rubrics: Sequence[dict] = ()
) -> MetricResult:
    """``result`` with per-invocation statuses (``rubrics[i]``: rubric id -> (score,
    rationale) of turn i)."""
    result.invocations = [
        InvocationScore(
            index=i,
            status=MetricStatus(status),
            score=1.0 if status == "passed" else 0.0,
            rubrics=[
                RubricScoreRecord(rubric_id=rid, text=text, score=s, rationale=why)
                for rid, (text, s, why) in (rubrics[i] if i < len(rubrics) else {}).items()
            ],
        )
        for i, status in enumerate(statuses)
    ]
    return result


TRIP_EXPECTED = [
    expected_turn(
        "Weather in London?", "Rainy, 14 degrees Celsius.", [("get_weather", {"city": "London"})]
    ),
    expected_turn(
        "Convert 50 GBP to USD.",
        "50 GBP is 62.50 USD.",
        [("convert_currency", {"amount": 50, "from_currency": "GBP", "to_currency": "USD"})],
    ),
    expected_turn("Thanks!", "Have a great trip."),
]
TRIP_ACTUAL = [
    actual_turn(
        "Weather in London?", "Rainy, 14 degrees Celsius.", [("get_weather", {"city": "London"})]
    ),
    actual_turn(
        "Convert 50 GBP to USD.",
        "50 GBP is 58.00 EUR.",
        [
            ("convert_currency", {"amount": 50, "from_currency": "GBP", "to_currency": "EUR"}),
            ("get_weather", {"city": "London"}),
        ],
    ),
    actual_turn("Thanks!", "Have a great trip."),
]
TOTAL_RUBRIC = "The answer gives the converted total in USD."


def _head_cases(hostile: bool) -> dict[str, Any]:
    text = HOSTILE if hostile else None
    paris_arg = {"city": text or "paris"}
    return {
        "paris": (
            [
                expected_turn(
                    "Weather in Paris?",
                    "Sunny, 22 degrees Celsius.",
                    [("get_weather", {"city": "Paris"})],
                )
            ],
            [
                actual_turn(
                    text or "Weather in Paris?",
                    "Sunny, 22 degrees Celsius.",
                    [("get_weather", paris_arg)],
                )
            ],
            [
                per_turn(metric("tool_trajectory_avg_score", 0.0, threshold=1.0), ["failed"]),
                per_turn(metric("response_match_score", 1.0, threshold=0.7), ["passed"]),
            ],
        ),
        "trip": (
            TRIP_EXPECTED,
            TRIP_ACTUAL,
            [
                per_turn(
                    metric("tool_trajectory_avg_score", 0.667, threshold=1.0),
                    ["passed", "failed", "passed"],
                ),
                per_turn(
                    metric("rubric_based_final_response_quality_v1", 0.5, threshold=0.8),
                    ["passed", "failed", "passed"],
                    [
                        {},
                        {
                            "states_total": (
                                text or TOTAL_RUBRIC,
                                0.0,
                                text or "it says EUR, not USD.",
                            )
                        },
                    ],
                ),
            ],
        ),
        "rude": (
            [expected_turn("Convert 100 USD to EUR.", "Happy to help! 100 USD is 90.00 EUR.")],
            [
                actual_turn(
                    "Convert 100 USD to EUR.", text or "Obviously 100 USD is 90.00 EUR. " * 20
                )
            ],
            [
                metric("politeness", -1.0, threshold=0.0, min_value=-1.0),
            ],
        ),
        "fine": (
            [expected_turn("Hi", "Hello!")],
            [actual_turn("Hi", "Hello!")],
            [metric("response_match_score", 1.0, threshold=0.7)],
        ),
        # Passes its (low) thresholds but got worse than the baseline (TOKYO_BASELINE).
        "tokyo": (
            [TOKYO_EXPECTED],
            [
                actual_turn(
                    "Weather in Tokyo?",
                    text or "Cloudy, 18 degrees Celsius.",
                    [("get_weather", {"city": text or "tokyo"})],
                )
            ],
            [
                per_turn(metric("tool_trajectory_avg_score", 0.0, threshold=0.0), ["passed"]),
                metric("response_match_score", 1.0, threshold=0.5),
            ],
        ),
    }


TOKYO_EXPECTED = expected_turn(
    "Weather in Tokyo?", "Cloudy, 18 degrees Celsius.", [("get_weather", {"city": "Tokyo"})]
)
TOKYO_BASELINE = actual_turn(
    "Weather in Tokyo?", "Cloudy, 18 degrees Celsius.", [("get_weather", {"city": "Tokyo"})]
)


def evidence_sides(hostile: bool = False) -> tuple[RunResults, RunResults]:
    """(head, baseline): ``paris`` and ``trip`` newly failing (a wrong tool argument; a
    wrong currency, an unexpected call and a "no" rubric on turn 2 of 3), ``rude`` still
    failing and worse (a custom metric with a reason), ``fine`` passing, ``tokyo`` passing
    its low threshold but worse than the baseline (a lower-cased tool argument, next to the
    baseline run's own invocation). ``hostile`` puts
    :data:`HOSTILE` into every text that comes from the agent, the judge or the metric."""
    cases = _head_cases(hostile)
    head = results({k: [v[2]] for k, v in cases.items()}, eval_set="trips")
    reason = HOSTILE if hostile else "turn 1 rude: says 'obviously'"
    for case in head.suites[0].eval_sets[0].eval_cases:
        expected, actual, _ = cases[case.eval_id]
        case.expected_invocations = expected
        case.runs[0].actual_invocations = actual
        for m in case.runs[0].metrics:
            if m.metric_name == "politeness":
                m.reason = reason
    if hostile:
        case = head.suites[0].eval_sets[0].eval_cases[0]
        case.eval_id = "paris|`x`<details>@octocat"
    base_metrics = {
        "paris": [metric("tool_trajectory_avg_score", 1.0, threshold=1.0)],
        "trip": [metric("tool_trajectory_avg_score", 1.0, threshold=1.0)],
        "rude": [metric("politeness", 0.0, threshold=0.5, min_value=-1.0)],
        "fine": [metric("response_match_score", 1.0, threshold=0.7)],
        "tokyo": [
            per_turn(metric("tool_trajectory_avg_score", 1.0, threshold=0.0), ["passed"]),
            metric("response_match_score", 1.0, threshold=0.5),
        ],
    }
    if hostile:
        base_metrics["paris|`x`<details>@octocat"] = base_metrics.pop("paris")
    base = results({k: [v] for k, v in base_metrics.items()}, eval_set="trips")
    tokyo = base.suites[0].eval_sets[0].eval_cases[-1]
    tokyo.expected_invocations = [TOKYO_EXPECTED]
    tokyo.runs[0].actual_invocations = [TOKYO_BASELINE]
    return head, base


def evidence_context(hostile: bool = False, gate: GateConfig | None = None) -> CommentContext:
    """The evidence fixture compared, gated and given its evidence as the pipeline does."""
    head, base = evidence_sides(hostile)
    comparison = compare(head, base, "`base.json`, commit 0ldbase000")
    decided = decide(comparison, gate or GateConfig())
    context = CommentContext(
        comparison=comparison, gate=decided, results_path="adk-eval-results.json"
    )
    return with_evidence(context, head, base, SUMMARY_EVIDENCE)

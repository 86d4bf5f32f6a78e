"""Judge flips on hand-built sides (analysis.judgeflips, results.answers): which verdicts are
flips, what is set aside, the judge's self-disagreement, and what the gate then decides."""

from __future__ import annotations

from typing import Any

import pytest

from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.answers import answer_key, within_run_noise
from adk_eval_action.results.model import EvalCaseRecord, RunResults
from support.evidence_fixtures import actual_turn
from support.results_builder import metric, results
from support.tables import compare

RUBRIC = "rubric_based_final_response_quality_v1"
JUDGE = "gemini-2.5-flash"


def side(verdicts: dict[str, list[float]], answers: dict[str, list[str | None]]) -> RunResults:
    """One suite judged by ``JUDGE``: per eval case, each run's verdict of rubric ``r`` (the
    metric's score is that verdict) and what the run answered (None: not recorded)."""
    run = results({case: [[metric(RUBRIC, v, rubrics={"r": v})] for v in runs]
                   for case, runs in verdicts.items()}, suite="s")
    run.suites[0].judge_models = {RUBRIC: JUDGE}
    for case in run.suites[0].eval_sets[0].eval_cases:
        for record, answer in zip(case.runs, answers[case.eval_id], strict=True):
            record.metrics[0].judge_model = JUDGE
            record.actual_invocations = None if answer is None else [
                actual_turn("Weather?", answer, [("get_weather", {"city": "Oslo"})])]
    return run


ALIKE = {c: ["It is sunny."] for c in "abcd"}


def test_a_verdict_changed_on_the_same_answer_is_a_flip_and_set_aside() -> None:
    base = side({"a": [1.0], "b": [1.0], "c": [1.0], "d": [1.0]}, ALIKE)
    head = side({"a": [0.0], "b": [0.0], "c": [1.0], "d": [0.0]},
                {**ALIKE, "d": ["It is grey."]})  # d: the agent changed its answer
    comparison = compare(head, base, "baseline")
    assert {(f.eval_id, f.rubric_id, f.baseline, f.head) for f in comparison.judge_flips} == {
        ("a", "r", 1.0, 0.0), ("b", "r", 1.0, 0.0)}
    [noise] = comparison.judge_noise
    assert (noise.judge_model, noise.compared, noise.disagreed) == (JUDGE, 3, 2)
    assert noise.rate == pytest.approx(2 / 3)
    [metric_row] = comparison.metrics
    [rubric_row] = comparison.rubrics
    for row in (metric_row, rubric_row):
        assert row.judge_flips == 2
        assert row.interval is not None and row.interval.n_cases == 2  # c and d
        assert row.delta == pytest.approx(-0.5)  # c: 0, d: −1 (the agent's own change)


def test_flips_alone_never_make_a_regression() -> None:
    """Every verdict 1 → 0 on answers alike: set aside, nothing is left to call regressed,
    and ``fail_on: regression`` passes; the same scores with answers not recorded (no way to
    tell the judge from the agent) regress and fail."""
    base = side({c: [1.0, 1.0] for c in "abcd"}, {c: ["Sun."] * 2 for c in "abcd"})
    head = side({c: [0.0, 0.0] for c in "abcd"}, {c: ["Sun."] * 2 for c in "abcd"})
    gate = GateConfig(fail_on="regression", max_regression=0.1)
    comparison = compare(head, base, "baseline")
    assert len(comparison.judge_flips) == 4
    assert comparison.metrics[0].delta is None and comparison.metrics[0].judge_flips == 4
    assert decide(comparison, gate).passed
    unknown = side({c: [0.0, 0.0] for c in "abcd"}, {c: [None, None] for c in "abcd"})
    control = compare(unknown, base, "baseline")
    assert control.judge_flips == [] and control.metrics[0].delta == pytest.approx(-1.0)
    assert not decide(control, gate).passed


def test_cases_whose_runs_answered_differently_are_not_alike() -> None:
    base = side({"a": [1.0, 1.0]}, {"a": ["Sun.", "Sun."]})
    head = side({"a": [0.0, 0.0]}, {"a": ["Sun.", "Rain."]})
    assert compare(head, base, "baseline").judge_flips == []


def test_answer_keys_ignore_call_ids_and_thoughts_only() -> None:
    one = actual_turn("Weather?", "Sunny.", [("get_weather", {"city": "Oslo"})])
    other: dict[str, Any] = {**one, "invocation_id": "e-2"}
    other["intermediate_data"] = {"invocation_events": [{**e, "content": {**e["content"], "parts": [
        {"function_call": {**e["content"]["parts"][0]["function_call"], "id": "other"}}]}}
        for e in one["intermediate_data"]["invocation_events"]]}
    other["final_response"] = {"role": "model", "parts": [{"text": "thinking", "thought": True},
                                                          {"text": "Sunny."}]}
    assert answer_key([one]) == answer_key([other]) is not None
    changed = actual_turn("Weather?", "Sunny.", [("get_weather", {"city": "Rome"})])
    assert answer_key([changed]) != answer_key([one])
    assert answer_key(None) is None and answer_key([]) is None


def test_within_a_run_each_verdict_is_compared_across_the_runs_of_a_case() -> None:
    run = side({"a": [1.0, 0.0, 1.0], "b": [1.0, 1.0], "c": [1.0, 0.0], "d": [0.0]},
               {"a": ["Sun."] * 3, "b": ["Sun."] * 2, "c": ["Sun.", "Rain."], "d": ["Sun."]})
    cases: list[EvalCaseRecord] = run.suites[0].eval_sets[0].eval_cases
    [noise] = within_run_noise(cases)
    # a: disagrees, b: agrees; c answered differently, d has one run: not compared.
    assert (noise.judge_model, noise.compared, noise.disagreed, noise.rate) == (
        JUDGE, 2, 1, 0.5)


HOSTILE = "@octocat <img src=x> ``` </details> <!-- adk-eval-action:x --> | #9"


def test_flips_are_shown_escaped() -> None:
    from adk_eval_action.report.html import render_html
    from adk_eval_action.report.render import CommentContext, render_comment, render_summary
    from support.gfm import gfm_html, structure_problems

    def hostile(run: RunResults) -> RunResults:
        run.suites[0].judge_models = {RUBRIC: HOSTILE}
        for case in run.suites[0].eval_sets[0].eval_cases:
            case.eval_id = f"{case.eval_id} {HOSTILE}"
            for record in case.runs:
                record.metrics[0].judge_model = HOSTILE
                record.metrics[0].rubrics[0].rubric_id = HOSTILE
        return run

    base = hostile(side({"a": [1.0], "b": [1.0]}, {"a": ["Sun."], "b": ["Sun."]}))
    head = hostile(side({"a": [0.0], "b": [1.0]}, {"a": ["Sun."], "b": ["Sun."]}))
    comparison = compare(head, base, "baseline")
    assert len(comparison.judge_flips) == 1
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    for markdown in (render_comment(context), render_summary(context)):
        assert "judge flip (same answer)" in markdown
        assert structure_problems(markdown) == [] and "<!--" not in markdown
        assert "<img" not in gfm_html(markdown)
    page = render_html(context, {})
    assert "<img src=x>" not in page and "judge flip (same answer)" in page

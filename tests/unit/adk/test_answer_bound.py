"""The work google-adk's metrics do on one answer, bounded (adk.evaluate.answer_bound):
an answer over the bound leaves the metrics that read it not evaluated, saying why, and
google-adk's ROUGE metric runs off the event loop (issue 34, "Slow")."""

from __future__ import annotations

import asyncio

from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.genai import types

from adk_eval_action.adk.evaluate import answer_bound
from adk_eval_action.adk.evaluate.recording import MetricRecorder, _RecordingEvaluator


def _invocation(text: str) -> Invocation:
    return Invocation(user_content=types.Content(role="user", parts=[types.Part(text="Hi")]),
                      final_response=types.Content(role="model", parts=[types.Part(text=text)]))


def _evaluator(recorder: MetricRecorder) -> _RecordingEvaluator:
    metric = EvalMetric(metric_name="response_match_score", threshold=0.5)
    return _RecordingEvaluator(RougeEvaluator(metric), metric, recorder)


def test_an_answer_over_the_bound_is_not_scored_saying_why(monkeypatch):
    monkeypatch.setattr(answer_bound, "MAX_SCORED_ANSWER_CHARS", 1000)
    recorder = MetricRecorder()
    long, short = _invocation("word " * 201), _invocation("Something polite.")
    result = asyncio.run(_evaluator(recorder).evaluate_invocations(
        [short, long], [short, short]))
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED
    assert [r.eval_status for r in result.per_invocation_results] == [
        EvalStatus.NOT_EVALUATED] * 2
    assert recorder.reasons["response_match_score"] == (
        "the agent's answer on turn 2 is 1,005 characters, over the 1,000 a metric is "
        "given (adk.evaluate.answer_bound): not scored")
    scored = asyncio.run(_evaluator(MetricRecorder()).evaluate_invocations([short], [short]))
    assert scored.overall_score == 1.0  # within the bound: google-adk's own score


def test_only_the_metrics_that_read_answers_are_bounded():
    assert answer_bound.reads_answers("response_match_score", judged=False)
    assert answer_bound.reads_answers("rubric_based_final_response_quality_v1", judged=True)
    assert not answer_bound.reads_answers("tool_trajectory_avg_score", judged=False)


def test_the_rouge_metric_leaves_the_event_loop_free():
    """While google-adk's ROUGE scores a long answer (~0.5 s of CPU), the event loop the
    other case runs share keeps ticking."""
    answer = _invocation("wording " * 40_000)

    async def both() -> int:
        ticks = 0
        scoring = asyncio.ensure_future(_evaluator(MetricRecorder()).evaluate_invocations(
            [answer], [_invocation("Something polite.")]))
        while not scoring.done():
            ticks += 1
            await asyncio.sleep(0.01)
        assert scoring.result().overall_eval_status == EvalStatus.FAILED
        return ticks

    assert asyncio.run(both()) >= 5

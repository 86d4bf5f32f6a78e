"""Conversion of google-adk's result models into our results records.

One path for both entry points: the engine converts each ``EvalCaseResult`` that
``LocalEvalService.evaluate`` yields, and ADK's own ``.adk/eval_history/*.evalset_result.json``
files (an ``EvalSetResult``, written by ``LocalEvalSetResultsManager``) load through the same
functions (:mod:`.eval_history`), so an ``adk eval`` history can be a baseline.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from google.adk.evaluation.eval_case import EvalCase
from google.adk.evaluation.eval_metrics import EvalMetric, EvalMetricResult, EvalStatus
from google.adk.evaluation.eval_result import EvalCaseResult
from pydantic import BaseModel

from adk_eval_action.adk.compat import INFORMATIONAL_STATUS
from adk_eval_action.adk.files.criteria import criterion_rubrics
from adk_eval_action.adk.files.lint import judge_model_for
from adk_eval_action.adk.files.rubrics import RUBRIC_METRIC_TYPES
from adk_eval_action.project.layout import EFFICIENCY_METRICS
from adk_eval_action.results.model import (
    CaseStatus,
    EvalCaseRecord,
    InvocationScore,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunRecord,
    usable_score,
)
from adk_eval_action.results.status import run_status

_STATUS = {
    EvalStatus.PASSED: MetricStatus.PASSED,
    EvalStatus.FAILED: MetricStatus.FAILED,
    EvalStatus.NOT_EVALUATED: MetricStatus.NOT_EVALUATED,
}
if INFORMATIONAL_STATUS is not None:
    _STATUS[INFORMATIONAL_STATUS] = MetricStatus.INFORMATIONAL


class MetricMeta(BaseModel):
    """What the results keep about a metric besides its score: range and direction."""

    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True


class RubricInfo(BaseModel):
    """Text and type of a rubric, looked up by rubric id when recording scores."""

    text: str | None = None
    type: str | None = None


def case_status_from_adk(status: EvalStatus) -> CaseStatus:
    """Maps ADK's final eval status of a case to ours."""
    return {
        EvalStatus.PASSED: CaseStatus.PASSED,
        EvalStatus.FAILED: CaseStatus.FAILED,
    }.get(status, CaseStatus.NOT_EVALUATED)


def _rubric_catalogue(result: EvalCaseResult) -> dict[str, RubricInfo]:
    """Rubric id -> text/type, from config rubrics (criterion, snake_case or camelCase as an
    ``adk eval`` history keeps them) and the rubrics ADK copied onto each actual invocation
    (case- and invocation-level)."""
    catalogue: dict[str, RubricInfo] = {}
    for metric in result.overall_eval_metric_results:
        for rubric in criterion_rubrics(metric.metric_name, metric.criterion):
            catalogue[rubric.rubric_id] = RubricInfo(
                text=rubric.rubric_content.text_property, type=rubric.type
            )
    for per_invocation in result.eval_metric_result_per_invocation:
        for rubric in per_invocation.actual_invocation.rubrics or []:
            catalogue.setdefault(
                rubric.rubric_id,
                RubricInfo(text=rubric.rubric_content.text_property, type=rubric.type),
            )
    return catalogue


def case_record(case: EvalCase, line: int | None) -> EvalCaseRecord:
    """The record of one eval case before any run: its id, the line of its ``eval_id`` and
    its expected invocations (the conversation ADK's evaluators compare with; None for a
    ``conversation_scenario`` case), kept as JSON so the comment can show expected vs
    actual from the results file alone."""
    expected = None
    if case.conversation:
        expected = [
            invocation.model_dump(mode="json", exclude_none=True, by_alias=False)
            for invocation in case.conversation
        ]
    return EvalCaseRecord(eval_id=case.eval_id, line=line, expected_invocations=expected)


def expected_from_result(result: EvalCaseResult) -> list[dict[str, Any]] | None:
    """The expected invocations an ADK ``EvalCaseResult`` (an eval_history file) kept per
    invocation, as JSON; None when any is missing (a ``conversation_scenario`` case)."""
    expected = [p.expected_invocation for p in result.eval_metric_result_per_invocation]
    kept = [e for e in expected if e is not None]
    if not expected or len(kept) < len(expected):
        return None
    return [e.model_dump(mode="json", exclude_none=True, by_alias=False) for e in kept]


def _explains(metric_name: str, rubric_id: str, catalogue: Mapping[str, RubricInfo]) -> bool:
    """Whether a rubric score of ``metric_name`` is the metric's explanation rather than a
    rubric verdict: a metric that is not one of ADK's rubric metrics (a custom metric)
    returned a ``RubricScore`` for a rubric id that no eval config, eval case or invocation
    declares. ``RubricScore.rationale`` is the only "why" an ADK ``EvaluationResult`` can
    carry (google.adk.evaluation.eval_rubrics.RubricScore), so that is how a custom metric
    gives a reason."""
    return metric_name not in RUBRIC_METRIC_TYPES and rubric_id not in catalogue


def _explanation(
    metric: EvalMetricResult, result: EvalCaseResult, catalogue: Mapping[str, RubricInfo]
) -> str | None:
    """A custom metric's reason (:func:`_explains`): the rationales of its overall
    explanation scores, else of its per-invocation ones prefixed ``turn N:``; None when it
    gave none."""
    name = metric.metric_name
    overall = [
        s.rationale
        for s in metric.details.rubric_scores or []
        if s.rationale and _explains(name, s.rubric_id, catalogue)
    ]
    if overall:
        return "; ".join(overall)
    per_turn = [
        f"turn {index + 1}: {s.rationale}"
        for index, per_invocation in enumerate(result.eval_metric_result_per_invocation)
        for m in per_invocation.eval_metric_results
        if m.metric_name == name
        for s in m.details.rubric_scores or []
        if s.rationale and _explains(name, s.rubric_id, catalogue)
    ]
    return "; ".join(per_turn) or None


def _rubrics(
    scores: Iterable[Any] | None, catalogue: Mapping[str, RubricInfo], metric_name: str
) -> list[RubricScoreRecord]:
    records = []
    for score in scores or []:
        if _explains(metric_name, score.rubric_id, catalogue):
            continue  # the metric's reason, not a rubric verdict
        info = catalogue.get(score.rubric_id, RubricInfo())
        records.append(
            RubricScoreRecord(
                rubric_id=score.rubric_id,
                text=info.text,
                type=info.type,
                score=score.score,
                rationale=score.rationale,
            )
        )
    return records


def judge_model(metric: EvalMetric) -> str | None:
    """The judge model a metric calls: the one its criterion names, else ADK's default for a
    judge metric (:func:`adk_eval_action.adk.files.lint.judge_model_for`); None without a judge."""
    return judge_model_for(metric)


def _threshold(metric: EvalMetricResult) -> float | None:
    if metric.criterion is not None and metric.criterion.threshold is not None:
        return float(metric.criterion.threshold)
    return metric.threshold


def _details(metric: EvalMetricResult) -> dict[str, Any]:
    # The efficiency metrics' details exist from google-adk 2.x on (getattr: absent before).
    details: dict[str, Any] = {}
    for key, field in (("token_usage", "token_usage_details"), ("duration", "duration_details")):
        value = getattr(metric.details, field, None)
        if value is not None:
            details[key] = value.model_dump(exclude_none=True)
    return details


def metric_result_from_adk(
    metric: EvalMetricResult,
    result: EvalCaseResult,
    meta: MetricMeta,
    catalogue: Mapping[str, RubricInfo],
    reason: str | None = None,
    errored: bool = False,
) -> MetricResult:
    """Converts one overall ``EvalMetricResult`` of a case, with its per-invocation scores.

    ``reason`` is why the metric was not evaluated, captured while it ran; ``errored`` says
    it raised, which makes ADK's NOT_EVALUATED an ``error`` (ADK's own NOT_EVALUATED, such as
    a judge without a usable verdict, stays ``not_evaluated`` with its reason).
    Without a reason, a custom metric's own explanation (:func:`_explanation`) is the reason.
    """
    status = _STATUS.get(metric.eval_status, MetricStatus.NOT_EVALUATED)
    if errored and status == MetricStatus.NOT_EVALUATED:
        status = MetricStatus.ERROR
    reason = reason or _explanation(metric, result, catalogue)
    invocations = []
    for index, per_invocation in enumerate(result.eval_metric_result_per_invocation):
        for inv_metric in per_invocation.eval_metric_results:
            if inv_metric.metric_name != metric.metric_name:
                continue
            invocations.append(
                InvocationScore(
                    index=index,
                    invocation_id=per_invocation.actual_invocation.invocation_id,
                    score=inv_metric.score,
                    status=_STATUS.get(inv_metric.eval_status, MetricStatus.NOT_EVALUATED),
                    rubrics=_rubrics(
                        inv_metric.details.rubric_scores, catalogue, metric.metric_name
                    ),
                )
            )
    informational = status == MetricStatus.INFORMATIONAL or metric.metric_name in EFFICIENCY_METRICS
    score, status, reason = usable_score(
        metric.score, status, reason, meta.min_value, meta.max_value
    )
    return MetricResult(
        metric_name=metric.metric_name,
        score=score,
        status=status,
        threshold=None if informational else _threshold(metric),
        min_value=meta.min_value,
        max_value=meta.max_value,
        higher_is_better=False
        if metric.metric_name in EFFICIENCY_METRICS
        else meta.higher_is_better,
        informational=informational,
        reason=reason,
        judge_model=judge_model(metric),
        rubrics=_rubrics(metric.details.rubric_scores, catalogue, metric.metric_name),
        invocations=invocations,
        details=_details(metric),
    )


def run_record_from_adk(
    result: EvalCaseResult,
    run: int,
    metas: Mapping[str, MetricMeta],
    reasons: Mapping[str, str] | None = None,
    keep_invocations: bool = True,
    errored: Collection[str] = (),
) -> RunRecord:
    """Converts one ADK ``EvalCaseResult`` (one run of one eval case) into a :class:`RunRecord`.

    ``metas`` gives each metric's value range and direction; ``reasons`` maps metric name to
    why it was not evaluated, ``errored`` names the metrics that raised. The run's status is
    :func:`adk_eval_action.results.status.run_status` of its metrics, not ADK's
    ``final_eval_status`` (which passes a case over a metric that was not evaluated). The
    actual invocations are kept (without session details) so a later version can re-score
    them.
    """
    reasons = reasons or {}
    catalogue = _rubric_catalogue(result)
    metrics = [
        metric_result_from_adk(
            m, result, metas.get(m.metric_name, MetricMeta()), catalogue,
            reasons.get(m.metric_name), m.metric_name in errored,
        )
        for m in result.overall_eval_metric_results
    ]
    # ADK records a case whose inference failed as FAILED without any metric.
    run_error = (
        "google-adk recorded no metric results for this run (its inference failed)"
        if not metrics and result.final_eval_status == EvalStatus.FAILED else None
    )
    invocations = None
    if keep_invocations:
        invocations = [
            p.actual_invocation.model_dump(mode="json", exclude_none=True, by_alias=False)
            for p in result.eval_metric_result_per_invocation
        ]
    return RunRecord(
        run=run,
        status=run_status(metrics, run_error),
        error=run_error,
        metrics=metrics,
        session_id=result.session_id or None,
        actual_invocations=invocations,
    )

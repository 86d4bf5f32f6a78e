"""Conversion of google-adk's result models into our results records.

One path for both entry points: the engine converts each ``EvalCaseResult`` that
``LocalEvalService.evaluate`` yields, and ADK's own ``.adk/eval_history/*.evalset_result.json``
files (an ``EvalSetResult``, written by ``LocalEvalSetResultsManager``) load through the same
functions, so an ``adk eval`` history can be a baseline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_metrics import EvalMetric, EvalMetricResult, EvalStatus
from google.adk.evaluation.eval_result import EvalCaseResult, EvalSetResult
from pydantic import BaseModel, ValidationError

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.results.model import (
    CaseStatus,
    EvalCaseRecord,
    EvalSetRecord,
    InvocationScore,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunMetadata,
    RunRecord,
    RunResults,
    SuiteRecord,
    finite_score,
)

# Reference-free metrics that ADK reports as INFORMATIONAL; lower is better for all of them
# (google.adk.evaluation.eval_metrics.PrebuiltMetrics, "Efficiency metrics").
EFFICIENCY_METRICS = frozenset(
    {"tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"}
)

_STATUS = {
    EvalStatus.PASSED: MetricStatus.PASSED,
    EvalStatus.FAILED: MetricStatus.FAILED,
    EvalStatus.NOT_EVALUATED: MetricStatus.NOT_EVALUATED,
    EvalStatus.INFORMATIONAL: MetricStatus.INFORMATIONAL,
}


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
    """Rubric id -> text/type, from config rubrics (criterion) and the rubrics ADK copied
    onto each actual invocation (case- and invocation-level)."""
    catalogue: dict[str, RubricInfo] = {}
    for metric in result.overall_eval_metric_results:
        criterion = metric.criterion.model_dump() if metric.criterion else {}
        for rubric in criterion.get("rubrics") or []:
            content = rubric.get("rubric_content") or {}
            catalogue[rubric["rubric_id"]] = RubricInfo(
                text=content.get("text_property"), type=rubric.get("type")
            )
    for per_invocation in result.eval_metric_result_per_invocation:
        for rubric in per_invocation.actual_invocation.rubrics or []:
            catalogue.setdefault(
                rubric.rubric_id,
                RubricInfo(text=rubric.rubric_content.text_property, type=rubric.type),
            )
    return catalogue


def _rubrics(
    scores: Iterable[Any] | None, catalogue: Mapping[str, RubricInfo]
) -> list[RubricScoreRecord]:
    records = []
    for score in scores or []:
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
    """The judge model named in a metric's criterion (``judge_model_options.judge_model``),
    or None for a metric without a judge."""
    criterion = metric.criterion.model_dump() if metric.criterion else {}
    options = criterion.get("judge_model_options") or {}
    return options.get("judge_model")


def _threshold(metric: EvalMetricResult) -> float | None:
    if metric.criterion is not None and metric.criterion.threshold is not None:
        return float(metric.criterion.threshold)
    return metric.threshold


def _details(metric: EvalMetricResult) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if metric.details.token_usage_details is not None:
        details["token_usage"] = metric.details.token_usage_details.model_dump(exclude_none=True)
    if metric.details.duration_details is not None:
        details["duration"] = metric.details.duration_details.model_dump(exclude_none=True)
    return details


def metric_result_from_adk(
    metric: EvalMetricResult,
    result: EvalCaseResult,
    meta: MetricMeta,
    catalogue: Mapping[str, RubricInfo],
    reason: str | None = None,
) -> MetricResult:
    """Converts one overall ``EvalMetricResult`` of a case, with its per-invocation scores.

    ``reason`` is the error captured while the metric ran; it turns NOT_EVALUATED into
    ``error`` so the comment can say why.
    """
    status = _STATUS.get(metric.eval_status, MetricStatus.NOT_EVALUATED)
    if reason and status == MetricStatus.NOT_EVALUATED:
        status = MetricStatus.ERROR
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
                    rubrics=_rubrics(inv_metric.details.rubric_scores, catalogue),
                )
            )
    informational = status == MetricStatus.INFORMATIONAL or metric.metric_name in EFFICIENCY_METRICS
    score, status, reason = finite_score(metric.score, status, reason)
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
        rubrics=_rubrics(metric.details.rubric_scores, catalogue),
        invocations=invocations,
        details=_details(metric),
    )


def run_record_from_adk(
    result: EvalCaseResult,
    run: int,
    metas: Mapping[str, MetricMeta],
    reasons: Mapping[str, str] | None = None,
    keep_invocations: bool = True,
) -> RunRecord:
    """Converts one ADK ``EvalCaseResult`` (one run of one eval case) into a :class:`RunRecord`.

    ``metas`` gives each metric's value range and direction; ``reasons`` maps metric name to
    the error captured while it ran. The actual invocations are kept (without session
    details) so a later version can re-score them.
    """
    reasons = reasons or {}
    catalogue = _rubric_catalogue(result)
    metrics = [
        metric_result_from_adk(
            m, result, metas.get(m.metric_name, MetricMeta()), catalogue, reasons.get(m.metric_name)
        )
        for m in result.overall_eval_metric_results
    ]
    invocations = None
    if keep_invocations:
        invocations = [
            p.actual_invocation.model_dump(mode="json", exclude_none=True, by_alias=False)
            for p in result.eval_metric_result_per_invocation
        ]
    return RunRecord(
        run=run,
        status=case_status_from_adk(result.final_eval_status),
        metrics=metrics,
        session_id=result.session_id or None,
        actual_invocations=invocations,
    )


def _read_eval_set_result(path: Path) -> EvalSetResult:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, str):  # older ADK wrote the JSON as a JSON string
            data = json.loads(data)
        return EvalSetResult.model_validate(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultsFileError(path, f"not valid JSON: {e}") from e
    except ValidationError as e:
        raise ResultsFileError(path, f"not an ADK EvalSetResult: {e}") from e


def _app_name(path: Path, eval_set_result: EvalSetResult) -> str:
    """The suite name of an eval_history file: the agent folder that holds ``.adk``."""
    parts = path.resolve().parts
    if ".adk" in parts:
        index = len(parts) - 1 - parts[::-1].index(".adk")
        if index >= 1:
            return parts[index - 1]
    suffix = f"_{eval_set_result.eval_set_id}_"
    name = eval_set_result.eval_set_result_id
    return name.split(suffix)[0] if suffix in name else "default"


def load_eval_history_files(paths: Iterable[Path]) -> RunResults:
    """Loads ADK ``*.evalset_result.json`` files as one :class:`RunResults`.

    Each file is one run of an eval set; files of the same app and eval set become runs
    1..N of its cases, oldest first. Value ranges are not in these files, so they are
    left empty.

    Raises:
        ResultsFileError: a file is not an ADK EvalSetResult.
    """
    loaded = sorted(
        ((p, _read_eval_set_result(p)) for p in paths), key=lambda x: x[1].creation_timestamp
    )
    suites: dict[str, SuiteRecord] = {}
    for path, eval_set_result in loaded:
        suite = suites.setdefault(
            _app_name(path, eval_set_result), SuiteRecord(name=_app_name(path, eval_set_result))
        )
        eval_set = next(
            (s for s in suite.eval_sets if s.eval_set_id == eval_set_result.eval_set_id), None
        )
        if eval_set is None:
            eval_set = EvalSetRecord(eval_set_id=eval_set_result.eval_set_id, shape="adk-history")
            suite.eval_sets.append(eval_set)
        for case_result in eval_set_result.eval_case_results:
            case = next((c for c in eval_set.eval_cases if c.eval_id == case_result.eval_id), None)
            if case is None:
                case = EvalCaseRecord(eval_id=case_result.eval_id)
                eval_set.eval_cases.append(case)
            case.runs.append(run_record_from_adk(case_result, len(case.runs) + 1, {}))
    for suite in suites.values():
        suite.num_runs = max(
            (len(c.runs) for s in suite.eval_sets for c in s.eval_cases), default=1
        )
    return RunResults(metadata=RunMetadata(source="adk-eval-history"), suites=list(suites.values()))


def load_eval_history_dir(folder: Path) -> RunResults:
    """Loads the newest ``*.evalset_result.json`` per app and eval set found under ``folder``.

    Raises:
        ResultsFileError: no such file under the folder, or one is unreadable.
    """
    newest: dict[tuple[str, str], tuple[float, Path]] = {}
    for path in sorted(folder.rglob("*.evalset_result.json")):
        result = _read_eval_set_result(path)
        key = (_app_name(path, result), result.eval_set_id)
        if key not in newest or result.creation_timestamp > newest[key][0]:
            newest[key] = (result.creation_timestamp, path)
    if not newest:
        raise ResultsFileError(folder, "no ADK *.evalset_result.json files in this folder")
    return load_eval_history_files(p for _, p in newest.values())

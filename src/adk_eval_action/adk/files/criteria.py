"""Each criterion of an eval config read with its metric's own ADK criterion model.

ADK's ``EvalConfig`` keeps a criterion object as a ``BaseCriterion`` with ``extra="allow"``:
``rubrics`` and ``judge_model_options`` stay raw dicts, spelt as the file spelt them
(snake_case, or camelCase as agent-starter-pack writes ``judgeModelOptions.judgeModel``).
Each evaluator re-reads the criterion as its own model (``criterion_type`` of the evaluator
class its ``MetricEvaluatorRegistry`` holds: ``RubricsBasedCriterion``,
``ToolTrajectoryCriterion``, …; google.adk.evaluation.llm_as_judge,
trajectory_evaluator), which accepts both spellings through the models' camelCase aliases.
:func:`normalized_criterion` does that read when the eval config is loaded (a value the
model refuses is a config error there) and keeps the result in ADK's own shape, a
``BaseCriterion`` whose keys are the model's snake_case field names: google-adk 1.x
serializes ``EvalMetric.criterion`` as a plain ``BaseCriterion`` (``LocalEvalService`` builds
each ``EvalMetricResult`` from ``eval_metric.model_dump()``), so a typed subclass would lose
its fields there, while extra keys are kept on every version. Every reader (rubrics, judge
model and options, ``match_type``, the plan, the preflight) then reads it through
:func:`typed_criterion`, as ADK's evaluator will.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric, JudgeModelOptions
from google.adk.evaluation.eval_rubrics import Rubric
from pydantic import BaseModel, ValidationError

NEEDS_EXPECTED_INVOCATIONS = frozenset(
    {
        "tool_trajectory_avg_score",
        "response_match_score",
        "final_response_match_v2",
        "response_evaluation_score",
    }
)
"""Metrics that do not support user simulation (``conversation_scenario`` cases): ADK's
"Evaluation Criteria" docs list them so, and their evaluators raise "expected_invocations is
needed by this metric" without an expected conversation (trajectory_evaluator,
final_response_match_v1's ``RougeEvaluator``, final_response_match_v2 and
response_evaluator with ``expected_invocations_required=True``)."""


def scenario_unsupported(eval_config: EvalConfig) -> list[str]:
    """The metrics of ``criteria`` that cannot score a ``conversation_scenario`` case
    (:data:`NEEDS_EXPECTED_INVOCATIONS`; a custom metric of that name is its own), in
    config order."""
    custom = set(eval_config.custom_metrics or {})
    return [n for n in eval_config.criteria if n in NEEDS_EXPECTED_INVOCATIONS and n not in custom]


@functools.cache
def criterion_models() -> dict[str, type[BaseModel]]:
    """Metric name -> the criterion model its evaluator reads (``criterion_type``).

    Read from the registry's table, which google-adk keeps private
    (:func:`adk_eval_action.adk.compat.registered_evaluators`); if a later google-adk renames
    it, every criterion is read as a ``BaseCriterion`` (and
    criterion keys go unchecked by :mod:`adk_eval_action.adk.files.lint`).
    """
    from adk_eval_action.adk.compat import registered_evaluators

    table = registered_evaluators()
    return {
        name: entry[0].criterion_type
        for name, entry in table.items()
        if isinstance(entry, tuple) and isinstance(getattr(entry[0], "criterion_type", None), type)
    }


def typed_criterion(metric_name: str, criterion: Any) -> Any:
    """``criterion`` read with the criterion model of ``metric_name``'s evaluator.

    Args:
        metric_name: A metric of ``criteria`` (a custom metric or one no registry knows is
            read as ADK's ``BaseCriterion``, extra keys kept as written).
        criterion: A threshold (a number, returned unchanged), a ``BaseCriterion`` (as
            ``EvalConfig`` or an ``EvalMetricResult`` holds it) or its JSON mapping, in
            either spelling.

    Raises:
        pydantic.ValidationError: the criterion is invalid for the metric's model (its
            ``loc`` names the field as the model names it, camelCase).
    """
    if criterion is None or isinstance(criterion, (int, float)):
        return criterion
    model = criterion_models().get(metric_name, BaseCriterion)
    if type(criterion) is model:
        return criterion
    if isinstance(criterion, BaseModel):
        criterion = criterion.model_dump(exclude_unset=True)
    return model.model_validate(criterion)


def normalized_criterion(metric_name: str, criterion: Any) -> Any:
    """``criterion`` read by :func:`typed_criterion`, kept as ADK's ``BaseCriterion`` with
    the fields the file set as snake_case keys (module docstring); a threshold unchanged.

    Raises:
        pydantic.ValidationError: as :func:`typed_criterion`.
    """
    typed = typed_criterion(metric_name, criterion)
    if not isinstance(typed, BaseModel):
        return typed
    return BaseCriterion.model_validate(typed.model_dump(mode="json", exclude_unset=True))


def metric_criterion(metric: EvalMetric) -> BaseModel | None:
    """The typed criterion of an ``EvalMetric`` (or ``EvalMetricResult``), None without one.

    Raises:
        pydantic.ValidationError: as :func:`typed_criterion`.
    """
    if metric.criterion is None:
        return None
    typed = typed_criterion(metric.metric_name, metric.criterion)
    return typed if isinstance(typed, BaseModel) else None


def judge_options(metric: EvalMetric) -> JudgeModelOptions | None:
    """The judge options a metric's evaluator reads (ADK's defaults filled in), or None
    for a metric whose criterion model has no ``judge_model_options`` (no judge, a custom
    metric, a criterion an evaluator would refuse)."""
    try:
        typed = metric_criterion(metric)
    except ValidationError:
        return None
    if typed is None:
        model = criterion_models().get(metric.metric_name)
        if model is None or "judge_model_options" not in model.model_fields:
            return None
        return JudgeModelOptions()
    options = getattr(typed, "judge_model_options", None)
    return options if isinstance(options, JudgeModelOptions) else None


def criterion_rubrics(metric_name: str, criterion: Any) -> list[Rubric]:
    """The rubrics of a criterion as ADK's ``Rubric`` models (either spelling); [] when it
    has none or cannot be read."""
    try:
        typed = typed_criterion(metric_name, criterion)
    except ValidationError:
        return []
    raw = getattr(typed, "rubrics", None) or []
    return [r if isinstance(r, Rubric) else Rubric.model_validate(r) for r in raw]


def criterion_field(metric: EvalMetric, field: str, default: Any = None) -> Any:
    """One field of a metric's typed criterion (``evaluate_intermediate_nl_responses``),
    ``default`` when the criterion has no such field or cannot be read."""
    try:
        typed = metric_criterion(metric)
    except ValidationError:
        return default
    return getattr(typed, field, default) if typed is not None else default


def enum_choices(model: type[BaseModel], field: str) -> list[str] | None:
    """The member names of an enum field of ``model`` (``match_type``: ``EXACT``,
    ``IN_ORDER``, ``ANY_ORDER``), looked up by field name or camelCase alias; None when
    the field is no enum."""
    for name, info in model.model_fields.items():
        if field in (name, info.alias):
            kind = info.annotation
            if isinstance(kind, type) and issubclass(kind, enum.Enum):
                return list(kind.__members__)
    return None

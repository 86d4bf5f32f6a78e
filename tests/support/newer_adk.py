"""The installed google-adk as a later one that ships a metric more: ``tool_parameter_match``
as google/adk-python#6726 describes it ("an exact tool_parameter_match metric that averages
matches across expected argument keys", expected and actual calls aligned by name, range
[0, 1]), registered with every ``MetricEvaluatorRegistry`` google-adk builds
(``_register_standard_metrics``, where google-adk seeds its own metrics), so this package
meets it only as google-adk reports it: a name and a ``MetricInfo``."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from google.adk.evaluation import metric_evaluator_registry
from google.adk.evaluation.eval_case import Invocation, get_all_tool_calls
from google.adk.evaluation.eval_metrics import (
    EvalMetric,
    EvalStatus,
    Interval,
    MetricInfo,
    MetricValueInfo,
)
from google.adk.evaluation.evaluator import EvaluationResult, Evaluator, PerInvocationResult

from adk_eval_action.adk.files import criteria, evalconfig

METRIC = "tool_parameter_match"
INFO = MetricInfo(
    metric_name=METRIC,
    description="The share of the expected tool arguments the agent passed as expected.",
    metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)),
)


def _invocation_score(actual: Invocation, expected: Invocation) -> float:
    """The share of the expected calls' argument keys whose value the aligned actual call
    (the next unused one of the same name) passed; 1.0 when none is expected."""
    calls = list(get_all_tool_calls(actual.intermediate_data))
    keys = matched = 0
    for want in get_all_tool_calls(expected.intermediate_data):
        got = next((c for c in calls if c.name == want.name), None)
        if got is not None:
            calls.remove(got)
        for key, value in (want.args or {}).items():
            keys += 1
            matched += got is not None and (got.args or {}).get(key) == value
    return matched / keys if keys else 1.0


class ToolParameterMatchEvaluator(Evaluator):
    """``tool_parameter_match``: per invocation :func:`_invocation_score`, overall their
    mean; passed when it reaches the threshold."""

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._threshold = eval_metric.threshold or 0.0

    def _status(self, score: float) -> EvalStatus:
        return EvalStatus.PASSED if score >= self._threshold else EvalStatus.FAILED

    async def evaluate_invocations(
        self, actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: Any = None,
    ) -> EvaluationResult:
        """The metric's result (class docstring)."""
        per_invocation = []
        for actual, expected in zip(actual_invocations, expected_invocations or [], strict=True):
            score = _invocation_score(actual, expected)
            per_invocation.append(PerInvocationResult(
                actual_invocation=actual, expected_invocation=expected, score=score,
                eval_status=self._status(score)))
        overall = sum(r.score or 0.0 for r in per_invocation) / max(1, len(per_invocation))
        return EvaluationResult(overall_score=overall, overall_eval_status=self._status(overall),
                                per_invocation_results=per_invocation)


def _clear_caches() -> None:
    """The package's per-process reads of google-adk's registry, read again."""
    evalconfig.adk_metrics.cache_clear()
    criteria.criterion_models.cache_clear()


@contextmanager
def with_tool_parameter_match(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within the block, every registry google-adk builds has ``tool_parameter_match``
    (module docstring); afterwards the package reads the registry as it was."""
    standard = metric_evaluator_registry._register_standard_metrics

    @functools.wraps(standard)
    def with_it(registry: Any) -> None:
        standard(registry)
        registry.register_evaluator(metric_info=INFO, evaluator=ToolParameterMatchEvaluator)

    monkeypatch.setattr(metric_evaluator_registry, "_register_standard_metrics", with_it)
    _clear_caches()
    try:
        yield
    finally:
        monkeypatch.setattr(metric_evaluator_registry, "_register_standard_metrics", standard)
        _clear_caches()

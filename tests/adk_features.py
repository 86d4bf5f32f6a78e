"""Skip marks for tests that need a google-adk feature some supported versions lack, each
detected on the installed google-adk (never from its version string); the skip reason names
the version and the missing feature. What each version lacks: docs/compatibility.md."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion

from adk_eval_action.adk.compat import CASE_RUBRICS_ALONE, has_metric

ADK = f"google-adk {version('google-adk')}"

needs_case_rubrics_alone = pytest.mark.skipif(
    not CASE_RUBRICS_ALONE,
    reason=f"{ADK} cannot run a rubric metric on eval case or invocation rubrics alone "
    "(its RubricBasedEvaluator asserts 'Rubrics are required.' on the criterion)",
)

needs_ignore_args = pytest.mark.skipif(
    "ignore_args" not in ToolTrajectoryCriterion.model_fields,
    reason=f"{ADK}'s ToolTrajectoryCriterion has no ignore_args",
)


def needs_metric(metric_name: str) -> pytest.MarkDecorator:
    """Skips where the installed google-adk's metric registry has no ``metric_name``."""
    return pytest.mark.skipif(not has_metric(metric_name), reason=f"{ADK} has no {metric_name}")

"""Custom ADK eval metrics for the travel example.

Both follow ADK's custom metric function signature of google-adk 1.24 and later, the
``EvalMetric`` first (see ``google/adk/evaluation/custom_metric_evaluator.py``; on 1.23,
which calls without it, adk-eval-action runs them the same way: docs/compatibility.md),
and are wired up in
``eval/test_config.json`` under ``custom_metrics`` as
``travel_agent.metrics.politeness`` and ``travel_agent.metrics.brevity``;
``examples/`` must be on ``sys.path`` for ADK to import them.

ADK clears ``eval_metric.threshold`` before calling a custom metric, so the
threshold is read from ``eval_metric.criterion.threshold``.

``politeness`` also says *why*: ADK's ``EvaluationResult`` has no reason field, but a
``RubricScore`` carries a ``rationale``; a custom metric that returns one under an id no
rubric declares gives adk-eval-action the metric's reason, which the PR comment shows.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable

from google.adk.evaluation.eval_case import ConversationScenario, Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.eval_rubrics import RubricScore
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult

POLITE_MARKERS = ("please", "happy to help", "thanks", "thank you")
RUDE_WORDS = ("stupid", "obviously", "whatever", "duh", "idiot")
DEFAULT_POLITENESS_THRESHOLD = 0.0
DEFAULT_BREVITY_THRESHOLD = 40.0


def _threshold(eval_metric: EvalMetric, default: float) -> float:
    """Returns the configured threshold, from the criterion ADK leaves intact."""
    if eval_metric.criterion is not None:
        return eval_metric.criterion.threshold
    return eval_metric.threshold if eval_metric.threshold is not None else default


def _reply_text(invocation: Invocation) -> str:
    """Returns the non-thought text of an invocation's final response."""
    content = invocation.final_response
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text and not part.thought)


def _score_invocations(
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    score_one: Callable[[str], float],
    passed: Callable[[float], bool],
) -> EvaluationResult:
    """Scores every invocation, then the case as the mean of those scores."""
    if not actual_invocations:
        return EvaluationResult()
    per_invocation = []
    for index, actual in enumerate(actual_invocations):
        score = score_one(_reply_text(actual))
        per_invocation.append(
            PerInvocationResult(
                actual_invocation=actual,
                expected_invocation=(
                    expected_invocations[index]
                    if expected_invocations and index < len(expected_invocations)
                    else None
                ),
                score=score,
                eval_status=EvalStatus.PASSED if passed(score) else EvalStatus.FAILED,
            )
        )
    overall = statistics.mean(result.score or 0.0 for result in per_invocation)
    return EvaluationResult(
        overall_score=overall,
        overall_eval_status=EvalStatus.PASSED if passed(overall) else EvalStatus.FAILED,
        per_invocation_results=per_invocation,
    )


def politeness_of(reply: str) -> float:
    """Scores one reply: -1 if it has a rude word, +1 if a polite marker, else 0.

    Words are matched case-insensitively on word boundaries; rudeness wins
    over politeness (a rude reply that says "please" is still rude).
    """
    lowered = reply.casefold()
    if any(re.search(rf"\b{re.escape(word)}\b", lowered) for word in RUDE_WORDS):
        return -1.0
    if any(re.search(rf"\b{re.escape(marker)}\b", lowered) for marker in POLITE_MARKERS):
        return 1.0
    return 0.0


def politeness_reason(reply: str) -> str:
    """Why :func:`politeness_of` scored ``reply`` as it did, naming the words it found."""
    lowered = reply.casefold()
    rude = [w for w in RUDE_WORDS if re.search(rf"\b{re.escape(w)}\b", lowered)]
    if rude:
        return "rude: says " + ", ".join(f"'{w}'" for w in rude)
    polite = [m for m in POLITE_MARKERS if re.search(rf"\b{re.escape(m)}\b", lowered)]
    if polite:
        return "polite: says " + ", ".join(f"'{m}'" for m in polite)
    return "neutral: no polite marker and no rude word"


def politeness(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None,
) -> EvaluationResult:
    """Politeness of the agent's replies, in [-1, 1] (higher is better).

    Each invocation scores :func:`politeness_of` its final reply; the case
    score is the mean. Status is PASSED when a score is >= the criterion
    threshold (default 0.0 when no criterion is configured).
    """
    del conversation_scenario  # Replies alone decide politeness.
    threshold = _threshold(eval_metric, DEFAULT_POLITENESS_THRESHOLD)
    result = _score_invocations(
        actual_invocations,
        expected_invocations,
        politeness_of,
        lambda score: score >= threshold,
    )
    reasons = [
        f"turn {index + 1} {politeness_reason(_reply_text(actual))}"
        for index, actual in enumerate(actual_invocations)
    ]
    # The reason travels as a rubric score's rationale (see the module docstring).
    result.overall_rubric_scores = [
        RubricScore(
            rubric_id="politeness", score=result.overall_score, rationale="; ".join(reasons)
        )
    ]
    return result


async def brevity(
    eval_metric: EvalMetric,
    actual_invocations: list[Invocation],
    expected_invocations: list[Invocation] | None,
    conversation_scenario: ConversationScenario | None,
) -> EvaluationResult:
    """Mean word count of the agent's replies (lower is better), in [0, inf).

    Each invocation scores the whitespace word count of its final reply; the
    case score is the mean. Status is PASSED when a score is <= the criterion
    threshold (default 40 words). Async on purpose: ADK awaits custom metrics
    that return an awaitable, and this example exercises that path.
    """
    del conversation_scenario  # Replies alone decide brevity.
    threshold = _threshold(eval_metric, DEFAULT_BREVITY_THRESHOLD)
    return _score_invocations(
        actual_invocations,
        expected_invocations,
        lambda reply: float(len(reply.split())),
        lambda score: score <= threshold,
    )

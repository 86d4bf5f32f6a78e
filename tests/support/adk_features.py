"""Skip marks for tests that need a google-adk feature some supported versions lack, each
detected on the installed google-adk (never from its version string); the skip reason names
the version and the missing feature. What each version lacks: docs/compatibility.md."""

from __future__ import annotations

import asyncio
import functools
import inspect
from importlib.metadata import version

import pytest
from google.adk.evaluation import llm_as_judge, rubric_based_evaluator
from google.adk.evaluation.eval_metrics import ToolTrajectoryCriterion

from adk_eval_action.adk.compat import CASE_RUBRICS_ALONE, LIVE_EVALUATION, has_metric

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

needs_live_evaluation = pytest.mark.skipif(
    not LIVE_EVALUATION,
    reason=f"{ADK} has no live evaluation (EvalConfig.live_model_config, "
    "InferenceConfig.use_live)",
)


def _has_audio_user_simulator() -> bool:
    try:
        from google.adk.evaluation.simulation import _llm_audio_user_simulator  # noqa: F401
    except ImportError:
        return False
    return True


needs_audio_user_simulator = pytest.mark.skipif(
    not _has_audio_user_simulator(),
    reason=f"{ADK} has no audio user simulator (google.adk.evaluation.simulation."
    "_llm_audio_user_simulator) and no cloud_tts model",
)


def needs_metric(metric_name: str) -> pytest.MarkDecorator:
    """Skips where the installed google-adk's metric registry has no ``metric_name``."""
    return pytest.mark.skipif(not has_metric(metric_name), reason=f"{ADK} has no {metric_name}")


JUDGE_ERRORS_NOT_EVALUATED: bool = "return_exceptions=True" in inspect.getsource(llm_as_judge)
"""Whether google-adk's LlmAsJudge logs a failed judge call and scores the sample
NOT_EVALUATED (later 2.x); before, the judge's exception leaves the evaluator, and the
engine records the metric as errored with that exception."""

JUDGE_LOGS_UNPARSABLE_ANSWER: bool = (
    "Auto-rater response did not match" in inspect.getsource(rubric_based_evaluator))
"""Whether google-adk's rubric evaluator logs a judge answer it cannot parse (later 2.x),
which the engine turns into "not in ADK's ID/Property/Rationale/Verdict format"; before,
such an answer is only a rubric without a verdict."""



@functools.cache
def adk_inference_fails_on_deep_tool_output() -> bool:
    """Whether google-adk's own Runner fails an agent whose tool returns an answer nested
    300 levels deep (google-adk 1.x: its tracing dumps the next LlmRequest, "Maximum
    serialization depth exceeded"), found by running one on the stand-in model; later
    versions run it, and the deep answer reaches the results file."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from adk_eval_action.testing.standins import ScriptedLlm, ScriptedToolCall, ScriptRule

    def deep() -> dict:
        """Returns an answer nested 300 levels deep."""
        out: dict = {}
        cur = out
        for _ in range(300):
            cur["a"] = {}
            cur = cur["a"]
        return out

    rule = ScriptRule(pattern=".", tool_calls=[ScriptedToolCall(name="deep", args={})],
                      reply="done")
    agent = LlmAgent(name="deep_agent", model=ScriptedLlm(model="scripted-deep", rules=[rule]),
                     instruction="Answer.", tools=[deep])

    async def run() -> None:
        runner = InMemoryRunner(agent=agent, app_name="probe")
        session = await runner.session_service.create_session(app_name="probe", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="hi")])
        async for _ in runner.run_async(user_id="u", session_id=session.id,
                                        new_message=message):
            pass

    try:
        asyncio.run(run())
    except ValueError as error:
        return "serialization depth" in str(error)
    return False


def _resolves_to_adk_openai(model: str) -> bool:
    from google.adk.models import LLMRegistry

    try:
        cls = LLMRegistry.resolve(model)
    except ValueError:
        return False
    return cls.__name__ == "OpenAILlm" and cls.__module__.startswith("google.adk.")


needs_adk_openai_model = pytest.mark.skipif(
    not _resolves_to_adk_openai("gpt-4o"),
    reason=f"{ADK}'s LLMRegistry does not resolve a bare `gpt-4o` to its own OpenAILlm",
)

"""Tests for the offline stand-ins, run through ADK's REAL evaluators and runner.

Nothing here mocks ADK: the judge answers the prompts ADK's evaluator classes
build, and ADK's own parsers turn the answers into scores, so a change in ADK's
judge formats shows up as a failure here.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.evaluation.eval_case import Invocation, InvocationEvent, InvocationEvents
from google.adk.evaluation.eval_metrics import (
    EvalMetric,
    EvalStatus,
    HallucinationsCriterion,
    JudgeModelOptions,
    LlmAsAJudgeCriterion,
    RubricsBasedCriterion,
)
from google.adk.evaluation.eval_rubrics import Rubric, RubricContent
from google.adk.evaluation.evaluator import EvaluationResult
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from google.adk.models import LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import InMemoryRunner
from google.genai import types as genai_types

from adk_eval_action.testing.standins import (
    ScriptedLlm,
    ScriptedToolCall,
    ScriptRule,
    StandInJudge,
    answer_judge_prompt,
    property_verdict,
    register_standins,
    response_matches_reference,
    sentence_label,
)
from support.adk_features import ADK

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FRQ = "rubric_based_final_response_quality_v1"
TOOL_USE = "rubric_based_tool_use_quality_v1"
MULTI_TURN = "rubric_based_multi_turn_trajectory_quality_v1"

# What the installed google-adk does, read from its own code (docs/compatibility.md lists the
# versions): 2.x tags each rubric in the judge prompt with its id (1.x matches answers by
# property text), gathers judge samples with return_exceptions (before, a judge error
# propagates), and has the multi-turn rubric metric.
_ADK_SOURCE = {name: inspect.getsource(importlib.import_module(f"google.adk.evaluation.{name}"))
               for name in ("rubric_based_final_response_quality_v1", "llm_as_judge")}
RUBRIC_IDS_IN_PROMPT = "[id: " in _ADK_SOURCE["rubric_based_final_response_quality_v1"]
JUDGE_ERRORS_NOT_EVALUATED = "return_exceptions=True" in _ADK_SOURCE["llm_as_judge"]
HAS_MULTI_TURN_RUBRICS = MULTI_TURN in {
    m.metric_name for m in MetricEvaluatorRegistry().get_registered_metrics()}


@pytest.fixture(autouse=True)
def _quiet_adk_experimental_warnings() -> Iterator[None]:
    """ADK flags its evaluators as experimental on every construction."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------


def _text(role: str, text: str) -> genai_types.Content:
    return genai_types.Content(role=role, parts=[genai_types.Part(text=text)])


def _invocation(
    user: str,
    final: str,
    calls: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (),
    rubrics: list[Rubric] | None = None,
) -> Invocation:
    """Builds an invocation whose events hold each (tool, args, response)."""
    events = []
    for index, (name, args, response) in enumerate(calls):
        call_id = f"call-{index}"
        events.append(
            InvocationEvent(
                author="travel_agent",
                content=genai_types.Content(
                    role="model",
                    parts=[
                        genai_types.Part(
                            function_call=genai_types.FunctionCall(id=call_id, name=name, args=args)
                        )
                    ],
                ),
            )
        )
        events.append(
            InvocationEvent(
                author="travel_agent",
                content=genai_types.Content(
                    role="user",
                    parts=[
                        genai_types.Part(
                            function_response=genai_types.FunctionResponse(
                                id=call_id, name=name, response=response
                            )
                        )
                    ],
                ),
            )
        )
    return Invocation(
        user_content=_text("user", user),
        final_response=_text("model", final),
        intermediate_data=InvocationEvents(invocation_events=events),
        rubrics=rubrics,
    )


def _rubric(rubric_id: str, text: str, rubric_type: str | None = None) -> Rubric:
    return Rubric(
        rubric_id=rubric_id, rubric_content=RubricContent(text_property=text), type=rubric_type
    )


def _rubric_metric(name: str, rubrics: list[Rubric], judge: str = "stand-in-judge") -> EvalMetric:
    return EvalMetric(
        metric_name=name,
        threshold=0.8,  # required by google-adk 1.x, which reads it instead of the criterion's
        criterion=RubricsBasedCriterion(
            threshold=0.8,
            judge_model_options=JudgeModelOptions(judge_model=judge, num_samples=1),
            rubrics=rubrics,
        ),
    )


def _evaluate(
    metric: EvalMetric,
    actual: list[Invocation],
    expected: list[Invocation] | None = None,
) -> EvaluationResult:
    evaluator = MetricEvaluatorRegistry().get_evaluator(metric)
    result = evaluator.evaluate_invocations(actual, expected)
    if asyncio.iscoroutine(result):
        return asyncio.run(result)
    assert isinstance(result, EvaluationResult)
    return result


PARIS_CALL = (
    "get_weather",
    {"city": "Paris"},
    {"status": "success", "city": "Paris", "condition": "sunny", "temperature_c": 22},
)
MENTIONS_PARIS = _rubric("mentions_paris", 'The final answer mentions "Paris".')


# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------


def test_registry_resolves_standins_and_registration_is_idempotent() -> None:
    register_standins()
    register_standins()
    assert LLMRegistry.resolve("scripted-anything") is ScriptedLlm
    assert LLMRegistry.resolve("stand-in-judge") is StandInJudge
    assert LLMRegistry.resolve("stand-in-judge-timeout") is StandInJudge
    assert isinstance(LLMRegistry.new_llm("stand-in-judge-garbage"), StandInJudge)


# --------------------------------------------------------------------------
# rubric_based_final_response_quality_v1
# --------------------------------------------------------------------------


def test_final_response_quality_scores_each_rubric_exactly() -> None:
    rubrics = [
        MENTIONS_PARIS,
        _rubric("no_apology", "The final answer never mentions 'sorry'."),
        _rubric("unquoted", "The final answer is concise."),
    ]
    actual = [
        _invocation("Weather in Paris?", "It is sunny in paris.", (PARIS_CALL,)),
        _invocation("Weather in Rome?", "Sorry, it is rainy in London."),
    ]
    result = _evaluate(_rubric_metric(FRQ, rubrics), actual)

    first, second = result.per_invocation_results
    assert first.score == 1.0
    assert first.eval_status == EvalStatus.PASSED
    assert [(s.rubric_id, s.score) for s in first.rubric_scores or []] == [
        ("mentions_paris", 1.0),
        ("no_apology", 1.0),
        ("unquoted", 1.0),
    ]
    # "Sorry" fails the negated rubric; the unquoted rubric is always yes.
    assert [(s.rubric_id, s.score) for s in second.rubric_scores or []] == [
        ("mentions_paris", 0.0),
        ("no_apology", 0.0),
        ("unquoted", 1.0),
    ]
    assert all(s.rationale for s in (first.rubric_scores or []) + (second.rubric_scores or []))
    assert result.overall_score == pytest.approx(4 / 6)


def test_final_response_quality_paris_rubric_is_zero_without_paris() -> None:
    actual = [_invocation("Weather in London?", "It is rainy in London.")]
    result = _evaluate(_rubric_metric(FRQ, [MENTIONS_PARIS]), actual)
    assert result.overall_score == 0.0
    assert result.overall_eval_status == EvalStatus.FAILED
    (score,) = result.per_invocation_results[0].rubric_scores or []
    assert score.rubric_id == "mentions_paris"
    assert score.score == 0.0
    assert "missing" in (score.rationale or "")


def test_final_response_quality_judges_only_the_real_final_answer() -> None:
    # The user prompt and tool output mention Paris; only the final answer counts.
    actual = [_invocation("Weather in Paris?", "It is sunny there.", (PARIS_CALL,))]
    result = _evaluate(_rubric_metric(FRQ, [MENTIONS_PARIS]), actual)
    assert result.overall_score == 0.0


def test_final_response_quality_uses_typed_invocation_rubrics_and_keeps_ids() -> None:
    typed = _rubric("says_sunny", 'The answer says "sunny".', "FINAL_RESPONSE_QUALITY")
    untyped = _rubric("says_rainy", 'The answer says "rainy".')  # ADK filters it out.
    actual = [_invocation("Weather in Paris?", "Sunny in Paris.", rubrics=[typed, untyped])]
    result = _evaluate(_rubric_metric(FRQ, [MENTIONS_PARIS]), actual)
    scores = result.per_invocation_results[0].rubric_scores or []
    assert [(s.rubric_id, s.score) for s in scores] == [
        ("mentions_paris", 1.0),
        ("says_sunny", 1.0),
    ]


@pytest.mark.skipif(not RUBRIC_IDS_IN_PROMPT, reason=f"{ADK} matches the judge's "
                    "answers to rubrics by property text, which a multi-line property breaks")
def test_multiline_and_tricky_properties_still_parse() -> None:
    rubrics = [
        _rubric("multi", 'First line mentions "Paris"\nsecond line mentions "sunny".'),
        _rubric("verdict_text", 'Verdict: the answer mentions "22".'),
        _rubric("apostrophe", "The agent's answer doesn't mention 'snow'."),
    ]
    actual = [_invocation("Weather in Paris?", "Sunny in Paris, 22C.", (PARIS_CALL,))]
    result = _evaluate(_rubric_metric(FRQ, rubrics), actual)
    scores = result.per_invocation_results[0].rubric_scores or []
    assert [(s.rubric_id, s.score) for s in scores] == [
        ("multi", 1.0),
        ("verdict_text", 1.0),
        ("apostrophe", 1.0),
    ]


# --------------------------------------------------------------------------
# rubric_based_tool_use_quality_v1 and multi-turn trajectory
# --------------------------------------------------------------------------


def test_tool_use_quality_judges_tool_calls() -> None:
    rubrics = [
        _rubric("calls_weather", 'The agent calls "get_weather" with "Paris".'),
        _rubric("no_currency", 'The agent must not call "convert_currency".'),
    ]
    good = _invocation("Weather in Paris?", "Sunny.", (PARIS_CALL,))
    wrong_city = _invocation(
        "Weather in Paris?",
        "Sunny in Paris.",  # The final answer is not part of the tool-use prompt.
        (("get_weather", {"city": "Lyon"}, {"status": "error"}),),
    )
    result = _evaluate(_rubric_metric(TOOL_USE, rubrics), [good, wrong_city])
    assert [
        [(s.rubric_id, s.score) for s in r.rubric_scores or []]
        for r in result.per_invocation_results
    ] == [
        [("calls_weather", 1.0), ("no_currency", 1.0)],
        [("calls_weather", 0.0), ("no_currency", 1.0)],
    ]
    assert result.overall_score == 0.75


@pytest.mark.skipif(not HAS_MULTI_TURN_RUBRICS, reason=f"{ADK} has no {MULTI_TURN}")
def test_multi_turn_trajectory_judges_the_whole_conversation() -> None:
    rubrics = [
        _rubric("asked_paris", 'The agent looks up "Paris".'),
        _rubric("said_bye", 'The agent says "great trip".'),
    ]
    actual = [
        _invocation("Weather in Paris?", "Sunny in Paris.", (PARIS_CALL,)),
        _invocation("Thanks!", "Have a great trip."),
    ]
    result = _evaluate(_rubric_metric(MULTI_TURN, rubrics), actual)
    first, last = result.per_invocation_results
    assert first.eval_status == EvalStatus.NOT_EVALUATED
    assert [(s.rubric_id, s.score) for s in last.rubric_scores or []] == [
        ("asked_paris", 1.0),
        ("said_bye", 1.0),
    ]
    assert result.overall_score == 1.0


# --------------------------------------------------------------------------
# final_response_match_v2 and hallucinations_v1
# --------------------------------------------------------------------------


def _judge_metric(name: str, judge: str = "stand-in-judge") -> EvalMetric:
    options = JudgeModelOptions(judge_model=judge, num_samples=1)
    criterion_type = (
        HallucinationsCriterion if name == "hallucinations_v1" else LlmAsAJudgeCriterion
    )
    return EvalMetric(
        metric_name=name, threshold=0.5,  # google-adk 1.x requires it here
        criterion=criterion_type(threshold=0.5, judge_model_options=options),
    )


def test_final_response_match_v2_uses_reference_word_overlap() -> None:
    reference = _invocation("Weather in Paris?", "The weather in Paris is sunny.")
    actual = [
        _invocation("Weather in Paris?", "Paris: sunny weather today."),  # 4 of 6 words
        _invocation("Weather in Paris?", "I cannot tell."),  # 0 of 6 words
    ]
    result = _evaluate(_judge_metric("final_response_match_v2"), actual, [reference, reference])
    assert [r.score for r in result.per_invocation_results] == [1.0, 0.0]
    assert result.overall_score == 0.5


def test_hallucinations_v1_checks_numbers_against_context() -> None:
    actual = [
        _invocation(
            "Weather in Paris?",
            "Happy to help! It is 22 degrees in Paris. Tomorrow it will be 30 degrees.",
            (PARIS_CALL,),
        )
    ]
    result = _evaluate(_judge_metric("hallucinations_v1"), actual)
    # not_applicable, supported, unsupported
    assert result.overall_score == pytest.approx(2 / 3)


# --------------------------------------------------------------------------
# Failure variants
# --------------------------------------------------------------------------


@pytest.mark.parametrize("metric_name", [FRQ, TOOL_USE])
def test_timeout_judge_yields_not_evaluated(metric_name: str) -> None:
    metric = _rubric_metric(metric_name, [MENTIONS_PARIS], judge="stand-in-judge-timeout")
    actual = [_invocation("Weather in Paris?", "Paris.", (PARIS_CALL,))]
    if not JUDGE_ERRORS_NOT_EVALUATED:  # the engine records the raised error on the metric
        with pytest.raises(asyncio.TimeoutError):
            _evaluate(metric, actual)
        return
    result = _evaluate(metric, actual)
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED
    assert result.overall_score is None
    assert [r.eval_status for r in result.per_invocation_results] == [EvalStatus.NOT_EVALUATED]


def test_timeout_judge_raises_timeout_error() -> None:
    judge = StandInJudge(model="stand-in-judge-timeout")

    async def first() -> None:
        async for _ in judge.generate_content_async(LlmRequest(contents=[_text("user", "x")])):
            pass

    with pytest.raises(asyncio.TimeoutError, match="stand-in judge timed out"):
        asyncio.run(first())


@pytest.mark.parametrize("metric_name", [FRQ, TOOL_USE])
def test_garbage_judge_yields_no_parsable_verdict(metric_name: str) -> None:
    metric = _rubric_metric(metric_name, [MENTIONS_PARIS], judge="stand-in-judge-garbage")
    result = _evaluate(metric, [_invocation("Weather in Paris?", "Paris.", (PARIS_CALL,))])
    assert result.overall_score is None
    assert result.per_invocation_results[0].score is None
    assert not result.per_invocation_results[0].rubric_scores


def test_garbage_judge_final_response_match_v2_has_no_score() -> None:
    reference = _invocation("q", "Sunny in Paris.")
    metric = _judge_metric("final_response_match_v2", "stand-in-judge-garbage")
    try:
        result = _evaluate(metric, [_invocation("q", "Sunny in Paris.")], [reference])
    except ZeroDivisionError:  # google-adk before 2.7 divides by zero with no parsable sample
        assert not JUDGE_ERRORS_NOT_EVALUATED
        return
    assert result.per_invocation_results[0].score is None
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED


# --------------------------------------------------------------------------
# Pure rules
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "text", "expected"),
    [
        ('mentions "Paris"', "sunny in PARIS", True),
        ("mentions 'Paris' and 'sunny'", "sunny in Paris", True),
        ("mentions 'Paris' and 'rain'", "sunny in Paris", False),
        ("does not mention “sorry”", "Sorry!", False),
        ("must not say 'sorry'", "Fine.", True),
        ("the agent's reply is short", "anything", True),
        ("never mentions 'x'", "", True),
    ],
)
def test_property_verdict_rule(prop: str, text: str, expected: bool) -> None:
    assert property_verdict(prop, text)[0] is expected


def test_reference_match_and_sentence_rules() -> None:
    assert response_matches_reference("anything", "") == (True, 1.0)
    assert response_matches_reference("a b", "a b c d")[0] is True
    assert response_matches_reference("a", "a b c d")[0] is False
    assert sentence_label("Hello there!", "ctx") == "not_applicable"
    assert sentence_label("It costs 1,000.0 USD.", '{"price": 1000}') == "supported"
    assert sentence_label("It is 30C.", '{"temp": 22}') == "unsupported"


def test_unrecognised_prompt_gets_empty_answer() -> None:
    assert answer_judge_prompt("Write me a poem about evals.") == ""


# --------------------------------------------------------------------------
# ScriptedLlm through ADK's runner
# --------------------------------------------------------------------------


def get_weather(city: str) -> dict[str, Any]:
    """Returns fixed weather for a city (test tool)."""
    return {"city": city, "condition": "sunny", "temperature_c": 22}


def _run_agent(agent: LlmAgent, messages: list[str]) -> list[Any]:
    """Runs ``messages`` as consecutive turns of one session; returns all events."""

    async def run() -> list[Any]:
        runner = InMemoryRunner(agent=agent, app_name="standins_test")
        session = await runner.session_service.create_session(app_name="standins_test", user_id="u")
        events = []
        for message in messages:
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message=_text("user", message)
            ):
                events.append(event)
        await runner.close()
        return events

    return asyncio.run(run())


def _scripted_agent() -> LlmAgent:
    return LlmAgent(
        name="weather_agent",
        model=ScriptedLlm(
            model="scripted-test",
            rules=[
                ScriptRule(
                    pattern=r"weather in (?P<city>\w+)",
                    tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "{city}"})],
                    reply="It is {result[condition]} in {result[city]} ({result[temperature_c]}C).",
                ),
                ScriptRule(pattern=r"\bjson\b", reply="Raw: {result} / {missing}"),
            ],
            default_reply="No rule matched.",
        ),
        instruction="Answer weather questions.",
        tools=[get_weather],
    )


def test_scripted_llm_drives_tool_call_and_final_reply() -> None:
    events = _run_agent(_scripted_agent(), ["What's the weather in Paris?"])
    calls = [call for event in events for call in event.get_function_calls()]
    responses = [resp for event in events for resp in event.get_function_responses()]
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert responses[0].response == {"city": "Paris", "condition": "sunny", "temperature_c": 22}
    final = [e for e in events if e.is_final_response()][-1]
    assert final.content.parts[0].text == "It is sunny in Paris (22C)."
    usage = final.usage_metadata
    assert usage is not None
    # Whitespace words: 6 in the reply; 5 (user) + 3 (call) + 7 (response) in the request.
    assert usage.candidates_token_count == 6
    assert usage.prompt_token_count == 15
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count


def test_scripted_llm_multi_turn_uses_latest_user_text_and_defaults() -> None:
    events = _run_agent(_scripted_agent(), ["weather in Tokyo", "show json", "hello"])
    finals = [e.content.parts[0].text for e in events if e.is_final_response()]
    assert finals == [
        "It is sunny in Tokyo (22C).",
        "Raw:  / {missing}",  # No tool ran this turn; unknown fields stay visible.
        "No rule matched.",
    ]


def test_numeric_group_becomes_number_in_tool_args() -> None:
    llm = ScriptedLlm(
        model="scripted-num",
        rules=[
            ScriptRule(
                pattern=r"convert (?P<amount>[\d.]+) (?P<cur>\w+)",
                tool_calls=[
                    ScriptedToolCall(
                        name="convert", args={"amount": "{amount}", "label": "{amount} {cur}"}
                    )
                ],
                reply="done",
            )
        ],
    )

    async def first() -> Any:
        async for response in llm.generate_content_async(
            LlmRequest(contents=[_text("user", "Convert 12.5 EUR please")])
        ):
            return response

    response = asyncio.run(first())
    call = response.content.parts[0].function_call
    assert call.args == {"amount": 12.5, "label": "12.5 EUR"}


def test_example_travel_agent_matches_its_eval_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The good example agent says exactly what its eval set expects."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from travel_agent.agent import root_agent  # type: ignore[import-not-found]  # examples/ is on sys.path now

    events = _run_agent(
        root_agent,
        ["What's the weather in London?", "Convert 50 GBP to USD.", "Thanks, bye!"],
    )
    finals = [e.content.parts[0].text for e in events if e.is_final_response()]
    assert finals == [
        "Happy to help! It is rainy in London at 14 degrees Celsius.",
        "Happy to help! 50 GBP is 62.50 USD.",
        "You're welcome, happy to help! Have a great trip.",
    ]

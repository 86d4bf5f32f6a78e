"""Judge verdicts are never dropped (issue 11, items 2 and 3), on real google-adk runs of the
example agent with the stand-in judge reading ADK's real rubric prompts:

* each invocation is judged against its own rubrics (google-adk 2.13 parses every turn's
  answer against the last turn's rubrics and drops the rest);
* a rubric sent to the judge without a usable verdict is ``not evaluated`` with the reason,
  and its case cannot pass on it;
* thought parts are not part of the final response that metrics and judges see.

Expected verdicts are the stand-in judge's documented rule (``property_verdict``) applied by
hand to the agent's recorded answers; expected ROUGE-1 scores come from ``rouge_score``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric
from google.adk.evaluation.evaluator import EvaluationResult
from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
from google.genai import types
from rouge_score import rouge_scorer

from adk_eval_action.adk.evaluate.thoughts import adk_scores_thoughts
from adk_eval_action.testing.gemini_fake import GeminiFake
from adk_eval_action.testing.standins import (
    EXTRA_JUDGE_PREFIX,
    OMIT_JUDGE_PREFIX,
    UNSURE_JUDGE_PREFIX,
    property_verdict,
)
from conftest import CliRun, case_runs, load_json, metric
from support.adk_features import needs_case_rubrics_alone, needs_metric

FINAL = "rubric_based_final_response_quality_v1"
TRAJECTORY = "rubric_based_multi_turn_trajectory_quality_v1"


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def _rubric(rubric_id: str, text: str, kind: str = "FINAL_RESPONSE_QUALITY") -> dict[str, Any]:
    return {"rubric_id": rubric_id, "rubric_content": {"text_property": text}, "type": kind}


def _turn(text: str, rubrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": text}]}}
    if rubrics is not None:
        turn["rubrics"] = rubrics
    return turn


def _suite(repo: Path, turns: list[dict[str, Any]], criteria: dict[str, Any],
           **case: Any) -> None:
    """travel_agent's eval folder holding one eval case ``trip`` and this eval config."""
    folder = repo / "travel_agent/eval"
    for path in folder.glob("*.json"):
        path.unlink()
    trip = {"eval_id": "trip", "conversation": turns, **case}
    _write(folder / "trip.evalset.json", {"eval_set_id": "trip", "eval_cases": [trip]})
    _write(folder / "test_config.json", {"criteria": criteria})


def _judge(metric_name: str = FINAL, judge: str = "stand-in-judge", threshold: float = 0.8,
           rubrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    criterion: dict[str, Any] = {
        "threshold": threshold,
        "judge_model_options": {"judge_model": judge, "num_samples": 1},
    }
    if rubrics:
        criterion["rubrics"] = rubrics
    return {metric_name: criterion}


def _answers(run: dict[str, Any]) -> list[str]:
    """The agent's final answer per turn, as recorded in the results file."""
    return [
        " ".join(p.get("text", "") for p in (inv.get("final_response") or {}).get("parts", [])
                 if not p.get("thought"))
        for inv in run["actual_invocations"]
    ]


def _verdicts(invocation: dict[str, Any]) -> dict[str, Any]:
    return {r["rubric_id"]: (r.get("score"), r.get("reason")) for r in invocation["rubrics"]}


TOKYO = 'The final answer mentions "Tokyo".'
# Each rubric id a judge variant names (OMIT_JUDGE_PREFIX...) is a word of its property:
# google-adk 1.x's judge prompt lists properties without ids.
POLITE = 'The final answer is polite: it says "happy to help".'
USD = 'The final answer mentions "USD".'


@needs_case_rubrics_alone
def test_each_turn_is_judged_against_its_own_rubrics(example_repo: Path, cli: CliRun) -> None:
    _suite(example_repo, [
        _turn("What's the weather in London?", [_rubric("t1_tokyo", TOKYO)]),
        _turn("Convert 50 GBP to USD.", [_rubric("t2_usd", USD)]),
    ], _judge())
    result = cli("run", "travel_agent", "--results-out", "r.json", "--comment-out", "c.md")
    assert result.exit_code == 1, result.output
    [run] = case_runs(load_json(example_repo / "r.json"), "trip")
    first, second = _answers(run)
    # The stand-in judge's rule by hand: turn 1 (London) does not mention Tokyo, turn 2 does
    # mention USD.
    assert property_verdict(TOKYO, first)[0] is False
    assert property_verdict(USD, second)[0] is True
    m = metric(run, FINAL)
    assert [_verdicts(i) for i in m["invocations"]] == [
        {"t1_tokyo": (0.0, None)}, {"t2_usd": (1.0, None)},
    ]
    assert m["score"] == pytest.approx(0.5)  # ADK's mean over the verdicts, one per turn
    assert (m["status"], run["status"]) == ("failed", "failed")
    comment = (example_repo / "c.md").read_text()
    assert "`t1_tokyo`" in comment and "`t2_usd`" in comment


def test_a_rubric_the_judge_leaves_out_is_not_evaluated_with_the_reason(
    example_repo: Path, cli: CliRun
) -> None:
    rubrics = [_rubric("polite", POLITE),
               _rubric("celsius", 'The final answer gives the temperature in "Celsius".')]
    _suite(example_repo, [_turn("What's the weather in Paris?")],
           _judge(judge=f"{OMIT_JUDGE_PREFIX}celsius", rubrics=rubrics))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    # The judge's fault, not the agent's: incomplete while not_evaluated is left unset.
    assert result.exit_code == 2, result.output
    [run] = case_runs(load_json(example_repo / "r.json"), "trip")
    m = metric(run, FINAL)
    no_verdict = "the judge's answer gave no verdict for it"
    [invocation] = m["invocations"]
    assert _verdicts(invocation) == {"polite": (1.0, None), "celsius": (None, no_verdict)}
    assert (m["status"], run["status"]) == ("not_evaluated", "not_evaluated")
    assert m["reason"] == f"no verdict for rubric `celsius` (turn 1): {no_verdict}"
    assert (f"the judge model `{OMIT_JUDGE_PREFIX}celsius` of `{FINAL}` answered off-format: "
            "no verdict in 1 run of 1 eval case in trip.evalset.json (trip): no verdict for "
            "rubric `celsius`") in result.output
    assert "gate INCOMPLETE (the judge model answered off-format): 0 of 1 eval case could be " \
        "evaluated (exit 2)" in result.output
    warned = cli("run", "travel_agent", "--results-out", "w.json", "--not-evaluated", "warn",
                 "--comment-out", "w.md")
    assert warned.exit_code == 0, warned.output
    # The headline, the console and the error's hint follow the not_evaluated mode.
    comment = (example_repo / "w.md").read_text()
    assert "⚠️ **ADK eval passed with warnings**: 0 of 1 eval case could be evaluated (a " \
        "metric or rubric without a score); it is only warned about (not\\_evaluated: " \
        "warn)" in comment
    assert "only warned about (not\\_evaluated: warn)" in comment.split("### Errors")[1]
    assert "gate PASSED with warnings: 0 of 1 eval case could be evaluated (a metric or " \
        "rubric without a score); it is only warned about (not_evaluated: warn)" in warned.output
    # Set explicitly, not_evaluated: fail counts the case as failing, as the user asked.
    failed = cli("run", "travel_agent", "--results-out", "f.json", "--comment-out", "f.md",
                 "--not-evaluated", "fail")
    comment = (example_repo / "f.md").read_text()
    assert "❌ **ADK eval failed**: 0 of 1 eval case could be evaluated (a metric or " \
        "rubric without a score); it is counted as failing (not\\_evaluated: fail)" in comment
    assert "counts as a failure of its eval case (not\\_evaluated: fail)" in comment
    assert failed.exit_code == 1


def test_a_verdict_neither_yes_nor_no_is_not_a_pass(example_repo: Path, cli: CliRun) -> None:
    rubrics = [_rubric("polite", POLITE), _rubric("paris", 'The final answer mentions "Paris".')]
    _suite(example_repo, [_turn("What's the weather in Paris?")],
           _judge(judge=f"{UNSURE_JUDGE_PREFIX}paris", rubrics=rubrics, threshold=0.5))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    [run] = case_runs(load_json(example_repo / "r.json"), "trip")
    m = metric(run, FINAL)
    assert _verdicts(m["invocations"][0])["paris"] == (
        None, "the judge's verdict was neither yes nor no"
    )
    # ADK scores the case 1.0 on the one verdict it got, above the threshold: not a pass here.
    assert m["score"] == 1.0 and m["status"] == "not_evaluated"
    assert result.exit_code == 2, result.output  # the judge answered off-format


def test_verdicts_given_fail_the_metric_whatever_the_missing_one_says(
    example_repo: Path, cli: CliRun
) -> None:
    rubrics = [_rubric("tokyo", TOKYO), _rubric("london", 'The final answer mentions "Lima".'),
               _rubric("polite", POLITE)]
    _suite(example_repo, [_turn("What's the weather in Paris?")],
           _judge(judge=f"{OMIT_JUDGE_PREFIX}polite", rubrics=rubrics, threshold=0.8))
    cli("run", "travel_agent", "--results-out", "r.json")
    m = metric(case_runs(load_json(example_repo / "r.json"), "trip")[0], FINAL)
    # Two "no" verdicts: even a "yes" for the missing rubric would give 1/3 < 0.8.
    assert m["status"] == "failed" and m["score"] == 0.0
    no_verdict = "the judge's answer gave no verdict for it"
    assert _verdicts(m["invocations"][0])["polite"] == (None, no_verdict)


def test_a_verdict_on_a_rubric_never_sent_is_a_warning_not_a_score(
    example_repo: Path, cli: CliRun
) -> None:
    """ADK drops an answer about a rubric it did not send with only a log line ("Rubric …
    not found in the rubrics provided to the metric"); the run says so as a warning, and
    the score is ADK's mean over the rubric that was sent."""
    rubrics = [_rubric("lima", 'The final answer mentions "Lima".')]
    _suite(example_repo, [_turn("What's the weather in Paris?")],
           _judge(judge=f"{EXTRA_JUDGE_PREFIX}ghost", rubrics=rubrics, threshold=0.5))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    results = load_json(example_repo / "r.json")
    [run] = case_runs(results, "trip")
    m = metric(run, FINAL)
    [answer] = _answers(run)
    assert property_verdict(rubrics[0]["rubric_content"]["text_property"], answer)[0] is False
    assert _verdicts(m["invocations"][0]) == {"lima": (0.0, None)}  # no `ghost` verdict
    assert (m["score"], m["status"], result.exit_code) == (0.0, "failed", 1)
    [warning] = [w for w in results["warnings"] if "not sent" in w]
    assert warning.startswith("eval case `trip`: the judge answered about a rubric that was "
                              "not sent (Rubric The answer satisfies ghost. not found in the "
                              "rubrics provided to the metric.)"), warning
    assert warning in result.output  # said on the console too


@needs_metric(TRAJECTORY)
def test_a_trajectory_rubric_on_an_earlier_turn_is_named_not_dropped(
    example_repo: Path, cli: CliRun
) -> None:
    calls_weather = 'The conversation calls "get_weather".'
    calls_currency = 'The conversation calls "convert_currency".'
    _suite(example_repo, [
        _turn("What's the weather in London?",
              [_rubric("t1_weather", calls_weather, "TRAJECTORY_QUALITY")]),
        _turn("Convert 50 GBP to USD.",
              [_rubric("t2_currency", calls_currency, "TRAJECTORY_QUALITY")]),
    ], _judge(TRAJECTORY, threshold=0.5))
    result = cli("run", "travel_agent", "--results-out", "r.json")
    [run] = case_runs(load_json(example_repo / "r.json"), "trip")
    m = metric(run, TRAJECTORY)
    first, last = (_verdicts(i) for i in m["invocations"])
    assert last == {"t2_currency": (1.0, None)}
    assert first["t1_weather"][0] is None
    assert "judges the whole conversation once" in first["t1_weather"][1]
    assert m["status"] == "not_evaluated" and result.exit_code == 1


THOUGHT = "The user asks about weather, so I should call the weather tool and answer briefly"


def _thinking_agent(gemini_api: GeminiFake, thought: str | None) -> None:
    """The fake Gemini API's travel_agent with a thought part before every weather reply
    (sent as a thinking model sends it: a part with ``thought: true``)."""
    agents = []
    for script in gemini_api.agents:
        rules = [r.model_copy(update={"thought": thought}) if "weather" in r.pattern else r
                 for r in script.rules]
        agents.append(script.model_copy(update={"rules": rules}))
    gemini_api.agents = agents


@pytest.mark.parametrize("thought", [THOUGHT, None])
def test_thought_parts_do_not_change_response_match_score(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake, thought: str | None
) -> None:
    reference = "It is rainy in London at 14 degrees Celsius."
    turn = _turn("What's the weather in London?")
    turn["final_response"] = {"role": "model", "parts": [{"text": reference}]}
    _suite(example_repo, [turn], {"response_match_score": 0.5})
    _thinking_agent(gemini_api, thought)
    result = cli("run", "travel_agent", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    results = load_json(example_repo / "r.json")
    [run] = case_runs(results, "trip")
    parts = run["actual_invocations"][0]["final_response"]["parts"]
    assert [p.get("thought", False) for p in parts] == ([True, False] if thought else [False])
    [answer] = _answers(run)  # the visible answer only
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    expected = scorer.score(reference, answer)["rouge1"].fmeasure
    assert metric(run, "response_match_score")["score"] == pytest.approx(expected)
    notes = [w for w in results["warnings"] if "thought part" in w]
    assert len(notes) == (1 if thought and adk_scores_thoughts() else 0)
    if notes:
        assert "PR 7091" in notes[0] and "would have scored them" in notes[0]
        assert notes[0] in result.output  # said on the console too


def test_the_thought_probe_agrees_with_adks_own_evaluator() -> None:
    """adk_scores_thoughts() against the installed google-adk's response_match_score on an
    answer with and without a thought part."""
    registry = MetricEvaluatorRegistry()
    evaluator = registry.get_evaluator(EvalMetric(metric_name="response_match_score",
                                                  threshold=0.5))
    answer = types.Part(text="It is rainy in London.")
    thought = types.Part(text=THOUGHT, thought=True)

    def score(parts: list[types.Part]) -> float:
        invocation = Invocation(user_content=types.Content(role="user", parts=[answer]),
                                final_response=types.Content(role="model", parts=parts))
        expected = invocation.model_copy(
            update={"final_response": types.Content(role="model", parts=[answer])})
        result = evaluator.evaluate_invocations([invocation], [expected])
        assert isinstance(result, EvaluationResult)  # this evaluator answers synchronously
        return result.overall_score

    assert adk_scores_thoughts() == (score([thought, answer]) < score([answer]))

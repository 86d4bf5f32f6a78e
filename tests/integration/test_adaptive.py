"""Adaptive repeats, end to end on real google-adk runs: an agent whose stand-in model
answers some cases wrongly is compared with a baseline recorded from a steady agent, and
``--adaptive-runs`` runs again exactly the cases that differ, up to the maximum, within the
budget, and says so in the comment. Plus the planning rule on hand-built comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_action.analysis.repeat_plan import plan_repeats
from adk_eval_action.run.pipeline import run_pipeline
from conftest import case_runs, load_json, request_for
from conftest import metric as run_metric
from support.results_builder import metric, results, scores_side, tokens
from support.tables import compare

N_CASES = 12

AGENT = '''
"""A test agent: its stand-in model answers "yes", or, while the environment variable
ANSWERS_FLAKY is 1, as a flaky model would but by rule, whatever order the work pool asks
in (a deterministic model, no LLM): the first time a question is asked (the file
ANSWERS_LOG counts the asks), "no" to questions 1, 4, 7 and 10; afterwards "no" to
question 4 only."""
import os
import re
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def _answer(llm_request):
    if os.environ.get("ANSWERS_FLAKY") != "1":
        return "yes"
    text = llm_request.contents[-1].parts[0].text
    number = int(re.search(r"Question (\\d+)", text).group(1))
    log = Path(os.environ["ANSWERS_LOG"])
    asked = log.read_text().split().count(str(number)) if log.exists() else 0
    with log.open("a") as f:
        f.write(f"{number}\\n")
    wrong = number % 3 == 1 if asked == 0 else number == 4
    return "no" if wrong else "yes"


class AnswerLlm(BaseLlm):
    @classmethod
    def supported_models(cls):
        return ["answer-.*"]

    async def generate_content_async(self, llm_request, stream=False):
        text = _answer(llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


root_agent = LlmAgent(name="answers", model=AnswerLlm(model="answer-1"), instruction="Answer.")
'''


def _project(root: Path) -> None:
    agent = root / "answers"
    (agent / "eval").mkdir(parents=True, exist_ok=True)
    (agent / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (agent / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = [
        {
            "eval_id": f"q{i:02d}",
            "conversation": [
                {
                    "invocation_id": f"q{i:02d}-1",
                    "user_content": {"parts": [{"text": f"Question {i}?"}], "role": "user"},
                    "final_response": {"parts": [{"text": "yes"}], "role": "model"},
                }
            ],
            "session_input": {"app_name": "answers", "user_id": "u", "state": {}},
        }
        for i in range(N_CASES)
    ]
    eval_set = {"eval_set_id": "answers", "eval_cases": cases}
    (agent / "eval" / "answers.evalset.json").write_text(json.dumps(eval_set), encoding="utf-8")
    config = {"criteria": {"response_match_score": 0.8}}
    (agent / "eval" / "test_config.json").write_text(json.dumps(config), encoding="utf-8")


def test_adaptive_runs_repeat_the_differing_cases_up_to_the_maximum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANSWERS_FLAKY", "0")
    _project(tmp_path)
    base_file = tmp_path / "base.json"
    options = {"num_runs": 1, "parallelism": 1}
    run_pipeline(request_for(baseline="none", results_path=base_file, **options))
    monkeypatch.setenv("ANSWERS_FLAKY", "1")
    monkeypatch.setenv("ANSWERS_LOG", str(tmp_path / "asked.txt"))
    head_file = tmp_path / "head.json"
    request = request_for(
        baseline=str(base_file),
        results_path=head_file,
        adaptive_runs=3,
        comment_out=tmp_path / "comment.md",
        **options,
    )
    outcome = run_pipeline(request)
    head = load_json(head_file)
    runs = {f"q{i:02d}": case_runs(head, f"q{i:02d}") for i in range(N_CASES)}
    first_wrong = {
        k for k, r in runs.items() if run_metric(r[0], "response_match_score")["score"] < 1
    }
    assert first_wrong == {"q01", "q04", "q07", "q10"}  # the stand-in's rule
    # Every case that differed from the baseline ran up to the maximum (its call stays
    # undecided: too few differing cases), every other case ran once, runs numbered on.
    for eval_id, case in runs.items():
        assert [r["run"] for r in case] == list(range(1, len(case) + 1))
        assert len(case) == (3 if eval_id in first_wrong else 1)
    adaptive = outcome.comparison.adaptive
    assert adaptive is not None and adaptive.max_runs == 3 and adaptive.budget == N_CASES
    assert adaptive.extra_runs == 2 * len(first_wrong) and adaptive.cases == len(first_wrong)
    assert adaptive.rounds == 2
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert f"Adaptive repeats: {adaptive.extra_runs} extra head runs" in comment


def test_plan_picks_differing_cases_of_undecided_metrics_largest_first() -> None:
    base = scores_side({f"c{i}": [0.5, 0.5] for i in range(6)})
    head = scores_side(
        {"c0": [0.5, 0.5], "c1": [0.4, 0.4], "c2": [0.1, 0.1], "c3": [0.5, 0.5, 0.45]}
        | {"c4": [0.6, 0.6], "c5": [0.5, 0.5]}
    )
    comparison = compare(head, base, "b")
    assert comparison.metrics[0].classification == "inconclusive"
    keys = [k[2] for k in plan_repeats(comparison, max_runs=3, budget=10)]
    assert keys == ["c2", "c1", "c4"]  # c3 is at 3 runs already; c0, c5 do not differ
    assert [k[2] for k in plan_repeats(comparison, max_runs=3, budget=1)] == ["c2"]
    assert plan_repeats(comparison, max_runs=2, budget=10) == []


def test_plan_ignores_decided_calls_and_informational_metrics() -> None:
    base = results({f"c{i}": [[metric("m", 0.9), tokens(100)]] * 2 for i in range(12)})
    head = results({f"c{i}": [[metric("m", 0.1), tokens(99 + i % 3)]] * 2 for i in range(12)})
    comparison = compare(head, base, "b", informational_min_effect=0.0)
    calls = {m.metric_name: m.classification for m in comparison.metrics}
    assert calls["m"] == "regressed" and calls["token_usage_v1"] == "inconclusive"
    assert plan_repeats(comparison, max_runs=5, budget=100) == []

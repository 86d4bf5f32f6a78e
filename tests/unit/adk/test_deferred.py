"""Deferring the libraries google-adk's evaluators import only to score
(:mod:`adk_eval_action.adk.deferred`): in a fresh interpreter, as ``plan`` runs."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r'''
import asyncio, json, sys, warnings
warnings.simplefilter("ignore")
from adk_eval_action.adk.deferred import deferred_scoring_imports

def lazy(name):
    module = sys.modules.get(name)
    return None if module is None else type(module).__name__ == "_LazyModule"

with deferred_scoring_imports():
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.metric_evaluator_registry import MetricEvaluatorRegistry
    evaluator = MetricEvaluatorRegistry().get_evaluator(
        EvalMetric(metric_name="response_match_score", threshold=0.5))
built = {"rouge_scorer_lazy": lazy("rouge_score.rouge_scorer"), "nltk": "nltk" in sys.modules}

from google.adk.evaluation.eval_case import Invocation
from google.genai import types

def invocation(text):
    return Invocation(user_content=types.Content(role="user", parts=[types.Part(text="q")]),
                      final_response=types.Content(role="model", parts=[types.Part(text=text)]))

import inspect
result = evaluator.evaluate_invocations([invocation("hello world")], [invocation("hello there")])
if inspect.isawaitable(result):  # async in some google-adk versions
    result = asyncio.run(result)
print(json.dumps({**built, "score": result.overall_score, "nltk_after": "nltk" in sys.modules,
                  "rouge_scorer_lazy_after": lazy("rouge_score.rouge_scorer")}))
'''


def test_plan_builds_evaluators_without_running_rouge_which_runs_when_it_scores() -> None:
    """Building ``response_match_score``'s evaluator leaves ROUGE (and NLTK) unrun; scoring
    with it runs them and gives google-adk's real ROUGE-1 F1: 'hello world' against
    'hello there' share 1 of 2 words each way, 0.5."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["rouge_scorer_lazy"] is True
    assert seen["nltk"] is False
    assert seen["score"] == 0.5
    assert seen["nltk_after"] is True
    assert seen["rouge_scorer_lazy_after"] is False


def test_a_module_already_imported_is_left_as_it_is() -> None:
    """The deferral changes nothing for a module the process has already run."""
    import json as already

    from adk_eval_action.adk.deferred import deferred_scoring_imports
    with deferred_scoring_imports(["json"]):
        import json as again
    assert again is already
    assert type(again).__name__ == "module"

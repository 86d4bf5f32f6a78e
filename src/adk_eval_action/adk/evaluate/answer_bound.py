"""The work google-adk's metrics do on one answer, bounded: an agent's answer (the final
response's text of an invocation) longer than :data:`MAX_SCORED_ANSWER_CHARS` is not given
to the metrics that read it, and ADK's ROUGE metric runs off the event loop.

Why: google-adk scores ``response_match_score`` (``final_response_match_v1``) with ROUGE-1,
tokenizing the answer character by character and stemming every word with NLTK's Porter
stemmer, synchronously, on the event loop every eval case run shares: ~5 s of CPU per MB of
answer, during which no other case makes progress (a 10 MB answer held every case of the
run for minutes). A judge-backed metric would send the whole answer to the judge model
(2.5 million tokens for 10 MB). ``benchmarks/bench_long_answer.py`` (one 10 MB answer beside
five short cases, parallelism 4, on a loaded 2-core machine): the run 361 s before, 100 s
after (3.6x); the slowest short case's own inference 270 s before, 5.8 s after (47x).

* :data:`MAX_SCORED_ANSWER_CHARS` is 1,048,576 characters: four times the most a Gemini
  model answers in one response (65,536 output tokens at ~4 characters a token), so no model
  answer of an eval reaches it. An answer beyond it leaves the metrics that read answers
  (:func:`reads_answers`: ``response_match_score`` and every judge-backed metric) "not
  evaluated" for that eval case run, the reason naming its length and the bound
  (:func:`too_long`); the run's other metrics and cases are scored as ever.
* ``response_match_score`` (:data:`THREADED_METRICS`: google-adk's own evaluator, a pure
  function of the two texts) runs in a worker thread, so the event loop, and the other
  cases' model calls, go on while it computes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: Characters of one answer the metrics that read answers are given at most.
MAX_SCORED_ANSWER_CHARS = 1_048_576
#: ADK's metrics computed in a worker thread (synchronous, CPU-bound on long answers).
THREADED_METRICS = ("response_match_score",)
#: ADK's metric that reads the answer without a judge (ROUGE-1 against the expected one).
_TEXT_METRICS = ("response_match_score",)


def answer_chars(invocation: Any) -> int:
    """The length in characters of ``invocation``'s final response text (an ADK
    ``Invocation``; 0 without one)."""
    response = getattr(invocation, "final_response", None)
    parts = getattr(response, "parts", None) or []
    return sum(len(getattr(p, "text", None) or "") for p in parts)


def reads_answers(metric_name: str, judged: bool) -> bool:
    """Whether the metric's work grows with the answer: ADK's ROUGE metric and every
    judge-backed metric (``judged``)."""
    return judged or metric_name in _TEXT_METRICS


def too_long(invocations: Iterable[Any], limit: int | None = None) -> str | None:
    """Why the answers of ``invocations`` are not scored (the first over ``limit``,
    default :data:`MAX_SCORED_ANSWER_CHARS`), or None."""
    limit = MAX_SCORED_ANSWER_CHARS if limit is None else limit
    for turn, invocation in enumerate(invocations, 1):
        size = answer_chars(invocation)
        if size > limit:
            return (f"the agent's answer on turn {turn} is {size:,} characters, over the "
                    f"{limit:,} a metric is given (adk.evaluate.answer_bound): not scored")
    return None

"""How often a judge disagrees with itself on the same answer: per judge model, the verdicts
it gave on answers it had already judged, and how many of them differ.

A verdict is one rubric's score of an eval case (per run: the mean over the case's
invocations), or, for a judge metric without rubrics (``final_response_match_v2``,
``hallucinations_v1``), its score. Two verdicts are on the same answer when the runs they
judge answered alike (:func:`adk_eval_action.results.answers.answer_key`: the same final
texts and tool calls, turn by turn).

Within one run (:func:`adk_eval_action.results.answers.within_run_noise`, what the results
file records as ``judge_noise``), an eval case whose runs all gave the same answer
(``num_runs`` ≥ 2) has each of its verdicts compared across its runs: one comparison per
verdict, a disagreement when the runs' scores are not all equal. Between the baseline and
the head, the comparison counts the same on the eval cases both sides answered alike
(:mod:`adk_eval_action.analysis.judgeflips`).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["UNKNOWN_JUDGE", "JudgeNoise", "judge_noise"]

UNKNOWN_JUDGE = "(judge model not recorded)"
"""The judge model of a verdict whose metric recorded none."""

class JudgeNoise(BaseModel):
    """One judge model's self-disagreement on the same answer: ``compared`` verdicts on
    answers it had judged before, ``disagreed`` of them differing; ``rate`` is
    ``disagreed / compared`` (None when nothing was compared)."""

    judge_model: str
    compared: int = 0
    disagreed: int = 0
    rate: float | None = None


def judge_noise(counts: dict[str, tuple[int, int]]) -> list[JudgeNoise]:
    """:class:`JudgeNoise` per judge model of ``counts`` (model -> (compared, disagreed)),
    by model name, those that compared nothing left out."""
    return [JudgeNoise(judge_model=model, compared=compared, disagreed=disagreed,
                       rate=disagreed / compared)
            for model, (compared, disagreed) in sorted(counts.items()) if compared]

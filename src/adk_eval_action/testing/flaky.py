"""A judge that disagrees with itself: the answers of ``stand-in-judge-flaky-<p>``
(:class:`~adk_eval_action.testing.judge.StandInJudge`) are the plain stand-in judge's with
each verdict turned over with probability ``p`` (:func:`flip_verdicts`). A test tool: judge
flips on the same answer to test the comparison against (no LLM is reachable offline).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re

__all__ = ["FLAKY_JUDGE_PREFIX", "JUDGE_SEED_VARIABLE", "flip_verdicts"]

FLAKY_JUDGE_PREFIX = "stand-in-judge-flaky-"
"""``stand-in-judge-flaky-<p>`` (``p`` in [0, 1], e.g. ``stand-in-judge-flaky-0.5``): each
verdict of the plain judge's answer (a rubric's ``Verdict: yes``/``no``,
``final_response_match_v2``'s ``valid``/``invalid``) is turned over with probability ``p``
(:func:`flip_verdicts`): a judge that disagrees with itself on the same answer."""

JUDGE_SEED_VARIABLE = "ADK_EVAL_JUDGE_SEED"
"""The environment variable that seeds the flaky judge's draws (read per call; unset: 0)."""


_VERDICTS = re.compile(r'(Verdict: )(yes|no)\b|("is_the_agent_response_valid": ")(valid|invalid)"')
_TURNED = {"yes": "no", "no": "yes", "valid": "invalid", "invalid": "valid"}


def flip_verdicts(answer: str, model: str, prompt: str, seed: str = "0") -> str:
    """The answer of ``stand-in-judge-flaky-<p>`` (:data:`FLAKY_JUDGE_PREFIX`): ``answer``
    with each verdict turned over with probability ``p``, the k-th verdict's draw seeded
    by ``seed`` (:data:`JUDGE_SEED_VARIABLE`), the prompt and k. So the same prompt (the
    same answer of the agent) judged under one seed always gets the same verdicts, and
    under two seeds each verdict differs between them with probability ``2p(1 − p)``.
    Answers of other models are returned unchanged.

    Raises:
        ValueError: ``p`` is not a number in [0, 1].
    """
    if not model.startswith(FLAKY_JUDGE_PREFIX):
        return answer
    p = float(model[len(FLAKY_JUDGE_PREFIX):])
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{model}: the probability must be in [0, 1]")
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    draws = itertools.count()

    def turned(match: re.Match[str]) -> str:
        if random.Random(f"{seed}/{digest}/{next(draws)}").random() >= p:
            return match.group(0)
        if match.group(1):
            return match.group(1) + _TURNED[match.group(2)]
        return f'{match.group(3)}{_TURNED[match.group(4)]}"'

    return _VERDICTS.sub(turned, answer)

"""How each judge metric of a suite was judged, beside its judge model
(:attr:`adk_eval_action.results.model.SuiteRecord.judge_models`): the samples asked of the
judge and the version of the prompt it was sent. Two runs whose judges differ in any of these
measure a rubric differently (:mod:`adk_eval_action.analysis.comparability`).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["JudgeSetup"]


class JudgeSetup(BaseModel):
    """One judge metric's judging, as the run resolved it.

    Attributes:
        num_samples: The judge's samples per invocation (the criterion's
            ``judge_model_options.num_samples``, google-adk's default filled in); None when
            not known.
        prompt: The version of the judge's prompt: the first 12 hex digits of the SHA-256 of
            the prompt templates google-adk's evaluator fills in (they change with
            google-adk, not with the eval case); None when the evaluator has none or could
            not be built.
    """

    num_samples: int | None = None
    prompt: str | None = None

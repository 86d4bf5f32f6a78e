"""Deterministic stand-ins for the agent model and the LLM judge.

These classes exist because no LLM is reachable offline: this project's tests,
demos and CI must run ADK's real evaluation pipeline (``LocalEvalService``, the
real metric evaluators and their real prompt/parse code) without network
access. They are test/demo tools only; real users' evals use real models, and
nothing in the action selects these classes unless an agent or an eval config
names them explicitly.

Two ``BaseLlm`` subclasses are provided and registered with ADK's
``LLMRegistry`` by :func:`register_standins`, which
the caller runs (importing registers nothing):

* :class:`ScriptedLlm` (model names ``scripted-*``): an agent model driven by
  regex rules (:class:`ScriptRule`) that emits tool calls and a templated reply.
* :class:`StandInJudge` (model names ``stand-in-judge*``): a judge that reads
  the prompt text ADK's LLM-as-judge evaluators build and answers in the exact
  format their parsers expect, using simple documented string rules
  (``stand-in-judge-flaky-<p>``: each verdict turned over with probability ``p``,
  :mod:`adk_eval_action.testing.flaky`).
"""

from __future__ import annotations

from google.adk.models import LLMRegistry

from adk_eval_action.testing.flaky import FLAKY_JUDGE_PREFIX, JUDGE_SEED_VARIABLE, flip_verdicts
from adk_eval_action.testing.judge import (
    EXTRA_JUDGE_PREFIX,
    GARBAGE_JUDGE_MODEL,
    OMIT_JUDGE_PREFIX,
    TIMEOUT_JUDGE_MODEL,
    UNSURE_JUDGE_PREFIX,
    StandInJudge,
    answer_judge_prompt,
    judge_prompt_kind,
    property_verdict,
    quoted_phrases,
    response_matches_reference,
    sentence_label,
)
from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule

__all__ = [
    "EXTRA_JUDGE_PREFIX",
    "FLAKY_JUDGE_PREFIX",
    "GARBAGE_JUDGE_MODEL",
    "JUDGE_SEED_VARIABLE",
    "OMIT_JUDGE_PREFIX",
    "TIMEOUT_JUDGE_MODEL",
    "UNSURE_JUDGE_PREFIX",
    "ScriptRule",
    "ScriptedLlm",
    "ScriptedToolCall",
    "StandInJudge",
    "answer_judge_prompt",
    "flip_verdicts",
    "judge_prompt_kind",
    "property_verdict",
    "quoted_phrases",
    "register_standins",
    "response_matches_reference",
    "sentence_label",
]


def register_standins() -> None:
    """Registers :class:`ScriptedLlm` and :class:`StandInJudge` with ADK's LLMRegistry.

    Idempotent: a class already resolved for its model names is not
    re-registered (re-registering would only log ADK's "Updating LLM class").
    """
    for llm_cls, probe in ((ScriptedLlm, "scripted-probe"), (StandInJudge, "stand-in-judge")):
        try:
            if LLMRegistry.resolve(probe) is llm_cls:
                continue
        except ValueError:
            pass  # Not registered yet.
        LLMRegistry.register(llm_cls)


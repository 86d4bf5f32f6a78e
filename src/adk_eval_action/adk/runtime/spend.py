"""What a run's model calls used, and the budget they may not pass.

:class:`Spend` is kept by :class:`~adk_eval_action.adk.runtime.model_calls.ModelCalls` (one per run)
and fed by :class:`~adk_eval_action.adk.runtime.model_calls.RetryingLlm`, which every model call of
an evaluation passes through (agents, judges, user simulator):

* **Tokens**: each answered call adds the usage its answer reported (the last
  ``usage_metadata`` of its responses; :mod:`adk_eval_action.results.usage` says which
  counts) to the run's totals per (model, role), and to the case run being evaluated, if
  any (a context variable :func:`case_usage` sets; the tasks ADK spawns for a case run
  inherit it), so the results say what each case run and each suite used.
* **The budget** (:class:`Budget`): :meth:`Spend.admit` is asked before every request to a
  model (each retry too), with the call's slot of ``parallelism`` held
  (:mod:`adk_eval_action.adk.runtime.model_limits`), so a call that waited for a slot is checked
  against what was spent while it waited. ``model_calls`` is a hard cap: a request is
  counted as it is admitted, so never more are sent. Tokens and dollars are known only once
  a call answers, so ``tokens`` and ``usd`` stop the run from *starting* calls once what
  the answered calls spent is at or past the limit; the calls then in flight (at most
  ``parallelism``) still finish and are counted, so the total can pass those limits by
  what they used. A refused request is a :class:`~.model_faults.ModelFault` of kind
  ``budget``: the case run it belonged to ends as an error of that kind, never a score.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from adk_eval_action.adk.runtime.model_faults import ModelFault, Role
from adk_eval_action.project.config import ModelSettings
from adk_eval_action.results.usage import ModelUsage, merge_usage, priced, usd_of


@dataclass(frozen=True)
class Budget:
    """What a run may spend (adk-eval.yaml ``budget:``; ``--max-model-calls``,
    ``--max-tokens``, ``--max-usd``): requests to models, tokens, dollars; None: no limit."""

    model_calls: int | None = None
    tokens: int | None = None
    usd: float | None = None

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return any(v is not None for v in (self.model_calls, self.tokens, self.usd))

    def describe(self) -> str:
        """The limits set, as the flags name them (``max_model_calls 5, max_usd $1``)."""
        parts = []
        if self.model_calls is not None:
            parts.append(f"max_model_calls {self.model_calls}")
        if self.tokens is not None:
            parts.append(f"max_tokens {self.tokens:,}")
        if self.usd is not None:
            parts.append(f"max_usd ${self.usd:g}")
        return ", ".join(parts)


def usage_of(model: str, role: Role, metadata: Any) -> ModelUsage:
    """One answered call's :class:`ModelUsage` from its ``usage_metadata`` (google-genai's
    ``GenerateContentResponseUsageMetadata``, as google-adk's ``Gemini`` and ``LiteLlm``
    give it); None: the call reported nothing (``unreported``). Thought tokens are counted
    once: Gemini reports them beside the answer's (``total = prompt + candidates +
    thoughts``), LiteLLM's ``completion_tokens`` hold them (``total = prompt +
    candidates``), and are then taken out of the output."""
    if metadata is None:
        return ModelUsage(model=model, role=role, calls=1, unreported=1)
    prompt = (metadata.prompt_token_count or 0) + (metadata.tool_use_prompt_token_count or 0)
    output = metadata.candidates_token_count or 0
    thoughts = metadata.thoughts_token_count or 0
    if thoughts and metadata.total_token_count == prompt + output:
        # The answer's count already holds the reasoning (OpenAI's completion_tokens, as
        # google-adk's LiteLlm maps it; Gemini reports them apart): counted once.
        output = max(0, output - thoughts)
    return ModelUsage(
        model=model,
        role=role,
        calls=1,
        input_tokens=prompt,
        cached_tokens=metadata.cached_content_token_count or 0,
        output_tokens=output,
        thoughts_tokens=thoughts,
    )


class CaseUsage:
    """What the model calls of one case run used, per (model, role)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: list[ModelUsage] = []

    def add(self, usage: ModelUsage) -> None:
        with self._lock:
            self._usage = merge_usage(self._usage, [usage])

    def records(self, prices: Mapping[str, ModelSettings]) -> list[ModelUsage]:
        """The case run's usage, priced (:func:`~adk_eval_action.results.usage.priced`)."""
        with self._lock:
            return priced(self._usage, prices)


_CASE: contextvars.ContextVar[CaseUsage | None] = contextvars.ContextVar(
    "adk_eval_action_case_usage", default=None
)


@contextmanager
def case_usage() -> Iterator[CaseUsage]:
    """Counts the model calls made inside the block (and the tasks it starts) as one case
    run's, besides the run's totals."""
    usage = CaseUsage()
    token = _CASE.set(usage)
    try:
        yield usage
    finally:
        _CASE.reset(token)


class Spend:
    """The run's spending and its budget (module docstring). Safe across threads.

    Args:
        budget: The limits (none: nothing is refused).
        prices: Model settings by name; those with prices give dollars.
    """

    def __init__(
        self, budget: Budget | None = None, prices: Mapping[str, ModelSettings] | None = None
    ) -> None:
        self.budget = budget or Budget()
        self.prices = dict(prices or {})
        self._lock = threading.Lock()
        self._usage: list[ModelUsage] = []
        self.requests = 0
        self.refused = 0
        self.tokens = 0
        self.usd: float | None = None
        self.unpriced: list[str] = []
        self.stopped_by: str | None = None

    def admit(self) -> ModelFault | None:
        """Admits one request to a model (counted in :attr:`requests`), or the ``budget``
        fault that refuses it once a limit is spent (module docstring)."""
        with self._lock:
            spent = self._spent_limit()
            if spent is None:
                self.requests += 1
                return None
            self.refused += 1
            self.stopped_by = self.stopped_by or spent
        return ModelFault(kind="budget", summary=f"budget spent ({spent})", retryable=False)

    def _spent_limit(self) -> str | None:
        budget = self.budget
        if budget.model_calls is not None and self.requests >= budget.model_calls:
            return f"max_model_calls {budget.model_calls}"
        if budget.tokens is not None and self.tokens >= budget.tokens:
            return f"max_tokens {budget.tokens:,}"
        if budget.usd is not None and self.usd is not None and self.usd >= budget.usd:
            return f"max_usd ${budget.usd:g}"
        return None

    def answered(self, model: str, role: Role, metadata: Any) -> None:
        """Records one answered call's usage (``usage_metadata``, None when it reported
        none) for the run and the current case run."""
        usage = usage_of(model, role, metadata)
        dollars = usd_of(usage, self.prices.get(model))
        with self._lock:
            self._usage = merge_usage(self._usage, [usage])
            self.tokens += usage.tokens
            if dollars is not None:
                self.usd = (self.usd or 0.0) + dollars
            elif model not in self.unpriced:
                self.unpriced.append(model)
        case = _CASE.get()
        if case is not None:
            case.add(usage)

    def usage(self) -> list[ModelUsage]:
        """The run's usage per (model, role), priced."""
        with self._lock:
            return priced(self._usage, self.prices)

    def spent(self) -> str:
        """What was spent, for the budget's error: requests, tokens and (with prices)
        dollars."""
        with self._lock:
            dollars = "" if self.usd is None else f", ${self.usd:.4f}"
            return f"{self.requests} model call(s), {self.tokens:,} tokens{dollars}"

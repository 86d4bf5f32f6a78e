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
  a call answers, so each admitted request **reserves** what it is expected to use, and a
  request whose reservation would take what was spent, what the calls in flight reserved
  and its own past ``tokens`` or ``usd`` is refused: the run stops starting calls there, and
  the total ends within the calls in flight's misestimate of the cap instead of past it by
  ``parallelism`` whole calls. When the call answers, its reservation is replaced by what it
  reported (a call that reported nothing keeps its expected tokens against the budget: its
  tokens are unknown, never zero); a call that failed before answering gives it back. A
  request's expected use (:meth:`Spend.expected`) is the mean of the answered calls of the
  same model and role, else of the same model, else the plan's estimate per call (the
  baseline's recorded usage over the calls the plan counts:
  :mod:`adk_eval_action.adk.evaluate.estimate`, :meth:`Spend.expect`); with none of these
  known, the request is a *probe*, reserving nothing: it waits until no other probe of its
  model and role is in flight, so a model's first calls in a role go one at a time until one
  has answered (a judge's calls are not guessed from an agent's). A
  refused request is a :class:`~.model_faults.ModelFault` of kind ``budget``: the case run it
  belonged to ends as an error of that kind, never a score; once one is refused, every
  later one is (the budget has stopped the run).
"""

from __future__ import annotations

import asyncio
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


@dataclass(frozen=True)
class Reservation:
    """What one admitted request holds of the budget until it answers or fails: its
    expected ``tokens`` and ``usd``, and whether it is a probe (nothing was known to
    expect: module docstring) of its ``key`` (model, role)."""

    tokens: float = 0.0
    usd: float = 0.0
    probe: bool = False
    key: tuple[str, str] = ("", "")


class _Means:
    """Running sums of the answered calls that reported usage, per key."""

    def __init__(self) -> None:
        self.sums: dict[Any, tuple[float, float, int]] = {}

    def add(self, key: Any, tokens: float, usd: float) -> None:
        total, dollars, n = self.sums.get(key, (0.0, 0.0, 0))
        self.sums[key] = (total + tokens, dollars + usd, n + 1)

    def mean(self, key: Any) -> tuple[float, float] | None:
        found = self.sums.get(key)
        return None if found is None else (found[0] / found[2], found[1] / found[2])


class Spend:
    """The run's spending and its budget (module docstring). Safe across threads; a
    probe's wait (:meth:`admit`) is on the running event loop.

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
        #: What the first refused request was expected to use, when the total had not
        #: reached the limit yet (it would have passed it); None otherwise.
        self.stopped_before: tuple[float, float] | None = None
        self._means = _Means()
        self._planned: tuple[float, float] | None = None
        self._reserved = (0.0, 0.0)  # tokens and dollars the calls in flight hold
        self._assumed = (0.0, 0.0)  # what answered calls that reported nothing are taken at
        self._probes: dict[tuple[str, str], asyncio.Event] = {}

    def expect(self, tokens: float | None, usd: float | None = None) -> None:
        """The plan's estimate of one model call's tokens and dollars (module docstring;
        None: not estimated)."""
        with self._lock:
            self._planned = None if tokens is None else (tokens, usd or 0.0)

    def expected(self, model: str, role: Role) -> tuple[float, float] | None:
        """What one request of ``model`` in ``role`` is expected to use, ``(tokens,
        dollars)``; None when nothing is known (module docstring)."""
        with self._lock:
            return self._expected(model, role)

    def _expected(self, model: str, role: Role) -> tuple[float, float] | None:
        found = self._means.mean((model, role)) or self._means.mean(model) or self._planned
        # A model that reports no usage would make every call of it a probe: nothing is
        # learnt from its answers, so its calls reserve nothing (their tokens are unknown).
        silent = any(u.unreported and (u.model, u.role) == (model, role) for u in self._usage)
        return found or ((0.0, 0.0) if silent else None)

    @property
    def _limits_spend(self) -> bool:
        return self.budget.tokens is not None or self.budget.usd is not None

    async def admit(self, model: str = "", role: Role = "agent") -> Reservation | ModelFault:
        """Admits one request to a model (counted in :attr:`requests`) with what it
        reserves, or the ``budget`` fault that refuses it (module docstring). A probe
        waits here while another probe of its model and role is in flight."""
        while True:
            with self._lock:
                waiting = self._probes.get((model, role))
                probe = self._limits_spend and self._expected(model, role) is None
                if waiting is None or not probe or self.stopped_by:
                    return self._admit(model, role)
            await waiting.wait()

    def _admit(self, model: str, role: Role) -> Reservation | ModelFault:
        expected = self._expected(model, role) if self._limits_spend else (0.0, 0.0)
        spent = self.stopped_by or self._spent_limit(expected or (0.0, 0.0))
        if spent is not None:
            self.refused += 1
            if self.stopped_by is None and self._spent_limit((0.0, 0.0)) is None:
                self.stopped_before = expected  # it fit; its expected use would not have
            self.stopped_by = spent
            return ModelFault(kind="budget", summary=f"budget spent ({spent})",
                              retryable=False)
        self.requests += 1
        if expected is None:
            self._probes[(model, role)] = asyncio.Event()
            return Reservation(probe=True, key=(model, role))
        tokens, usd = self._reserved
        self._reserved = (tokens + expected[0], usd + expected[1])
        return Reservation(tokens=expected[0], usd=expected[1])

    def _spent_limit(self, expected: tuple[float, float]) -> str | None:
        """The limit a request expected to use ``expected`` would cross, counting what was
        spent, assumed and reserved; None when it fits."""
        budget = self.budget
        if budget.model_calls is not None and self.requests >= budget.model_calls:
            return f"max_model_calls {budget.model_calls}"
        tokens = self.tokens + self._assumed[0] + self._reserved[0]
        if budget.tokens is not None and (
                tokens >= budget.tokens or tokens + expected[0] > budget.tokens):
            return f"max_tokens {budget.tokens:,}"
        usd = (self.usd or 0.0) + self._assumed[1] + self._reserved[1]
        if budget.usd is not None and (self.usd is not None or expected[1]) and (
                usd >= budget.usd or usd + expected[1] > budget.usd):
            return f"max_usd ${budget.usd:g}"
        return None

    def release(self, reservation: Reservation | None) -> None:
        """Gives back what a request reserved (it failed before answering)."""
        if reservation is None:
            return
        with self._lock:
            self._unreserve(reservation)

    def _unreserve(self, reservation: Reservation) -> None:
        tokens, usd = self._reserved
        self._reserved = (max(0.0, tokens - reservation.tokens), max(0.0, usd - reservation.usd))
        waiting = self._probes.pop(reservation.key, None) if reservation.probe else None
        if waiting is not None:
            waiting.set()

    def answered(
        self, model: str, role: Role, metadata: Any, reservation: Reservation | None = None
    ) -> None:
        """Records one answered call's usage (``usage_metadata``, None when it reported
        none) for the run and the current case run, in place of what its ``reservation``
        held (a call that reported none stays counted at its expected use against the
        budget, never at zero)."""
        usage = usage_of(model, role, metadata)
        dollars = usd_of(usage, self.prices.get(model))
        with self._lock:
            if reservation is not None:
                self._unreserve(reservation)
            self._usage = merge_usage(self._usage, [usage])
            if usage.unreported:
                held = reservation or Reservation()
                self._assumed = (self._assumed[0] + held.tokens, self._assumed[1] + held.usd)
            else:
                self.tokens += usage.tokens
                for key in ((model, role), model):
                    self._means.add(key, usage.tokens, dollars or 0.0)
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
            unreported = sum(u.unreported for u in self._usage)
            unknown = f" ({unreported} reported no usage)" if unreported else ""
            return f"{self.requests} model call(s){unknown}, {self.tokens:,} tokens{dollars}"

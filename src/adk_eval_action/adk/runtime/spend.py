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
  a call answers, so each admitted request **reserves** what it may use, and the rule is:

  - *What a request reserves* (:meth:`Spend.expected`, tokens and USD): a high quantile of
    what the answered calls of the same model and role reported, else of the same model:
    the nearest-rank :data:`QUANTILE` (90th percentile: the smallest answered size that at
    least 9 in 10 of them did not pass; with fewer than 10 answered calls, the largest).
    With none answered, the plan's estimate per call (the baseline's recorded usage over
    the calls the plan counts: :mod:`adk_eval_action.adk.evaluate.estimate`,
    :meth:`Spend.expect`); with that unknown too, nothing (the request is a *probe*).
  - *Slow start*: a model and role has at most as many calls in flight as it has answered
    calls (at least one), so its first call goes alone, then two, four…: the reservations
    of many calls never rest on one answered size, and a judge's calls are not guessed
    from an agent's.
  - *Fit*: a request fits when what was spent, what the calls in flight reserved and its own
    reservation stay within ``tokens`` and ``usd``. One that does not fit waits while calls
    are in flight (each gives back its reservation when it answers or fails); one that
    would pass the budget on what was spent alone is refused, and the run stops starting
    calls there (once one is refused, every later one is).

  So the total passes the cap only by what the calls in flight at the end used beyond
  their reservations, within one call's size (``benchmarks/bench_budget.py``), where
  reserving each call's mean passed it by up to 2.3 calls, and no reservations by up to
  ``parallelism`` whole calls; and waiting instead of refusing keeps the high reservations
  from leaving the budget unspent. When a call answers, its reservation is replaced by
  what it reported (a call that reported nothing keeps its reservation against the
  budget: its tokens are unknown, never zero; a model that reports no usage reserves
  nothing); a call that failed before answering gives it back. A refused request is a
  :class:`~.model_faults.ModelFault` of kind ``budget``: the case run it belonged to ends
  as an error of that kind, never a score.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import math
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


#: The share of a model's answered calls at or below what its next call reserves (module
#: docstring): the nearest-rank 90th percentile of their sizes.
QUANTILE = 0.9


@dataclass(frozen=True)
class Reservation:
    """What one admitted request holds of the budget until it answers or fails: the
    ``tokens`` and ``usd`` it reserved, whether it is a probe (nothing was known to reserve:
    module docstring), and its ``key`` (model, role)."""

    tokens: float = 0.0
    usd: float = 0.0
    probe: bool = False
    key: tuple[str, str] = ("", "")


class _Sizes:
    """The tokens and dollars of the answered calls that reported usage, each kept sorted,
    per key ((model, role) or model)."""

    def __init__(self) -> None:
        self.sizes: dict[Any, tuple[list[float], list[float]]] = {}

    def add(self, key: Any, tokens: float, usd: float) -> None:
        tokens_seen, usd_seen = self.sizes.setdefault(key, ([], []))
        bisect.insort(tokens_seen, tokens)
        bisect.insort(usd_seen, usd)

    def high(self, key: Any) -> tuple[float, float] | None:
        """The nearest-rank :data:`QUANTILE` of the key's tokens and of its dollars (the
        value at rank ``ceil(QUANTILE * n)`` of ``n`` sorted); None: none answered."""
        found = self.sizes.get(key)
        if not found:
            return None
        rank = max(1, math.ceil(QUANTILE * len(found[0])))
        return found[0][rank - 1], found[1][rank - 1]


class Spend:
    """The run's spending and its budget (module docstring). Safe across threads; the waits
    of :meth:`admit` are on the running event loop.

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
        #: What the first refused request would have reserved (tokens, USD), when the total
        #: had not reached the limit yet (it would have passed it); None otherwise.
        self.stopped_before: tuple[float, float] | None = None
        self._sizes = _Sizes()
        self._planned: tuple[float, float] | None = None
        self._reserved = (0.0, 0.0)  # tokens and dollars the calls in flight hold
        self._assumed = (0.0, 0.0)  # what answered calls that reported nothing are taken at
        self._in_flight: dict[tuple[str, str], int] = {}  # admitted, not answered or failed
        self._answered: dict[tuple[str, str], int] = {}  # answered calls, reported or not
        self._settled: asyncio.Event | None = None  # set when a call in flight settles

    def expect(self, tokens: float | None, usd: float | None = None) -> None:
        """The plan's estimate of one model call's tokens and dollars (module docstring;
        None: not estimated)."""
        with self._lock:
            self._planned = None if tokens is None else (tokens, usd or 0.0)

    def expected(self, model: str, role: Role) -> tuple[float, float] | None:
        """What one request of ``model`` in ``role`` reserves, ``(tokens, USD)``: the
        :data:`QUANTILE` of its model's and role's answered calls, else of its model's,
        else the plan's estimate; None when nothing is known (module docstring)."""
        with self._lock:
            return self._expected(model, role)

    def _expected(self, model: str, role: Role) -> tuple[float, float] | None:
        found = self._sizes.high((model, role)) or self._sizes.high(model) or self._planned
        # A model that reports no usage would make every call of it a probe: nothing is
        # learnt from its answers, so its calls reserve nothing (their tokens are unknown).
        silent = any(u.unreported and (u.model, u.role) == (model, role) for u in self._usage)
        return found or ((0.0, 0.0) if silent else None)

    @property
    def _limits_spend(self) -> bool:
        return self.budget.tokens is not None or self.budget.usd is not None

    async def admit(self, model: str = "", role: Role = "agent") -> Reservation | ModelFault:
        """Admits one request to a model (counted in :attr:`requests`) with what it
        reserves, or the ``budget`` fault that refuses it (module docstring). Waits here,
        on the running event loop, while its model and role have as many calls in flight as
        answered ones (slow start) and while its reservation does not fit beside the calls
        in flight's."""
        while True:
            with self._lock:
                found = self._admit(model, role)
                if found is not None:
                    return found
                if self._settled is None:
                    self._settled = asyncio.Event()
                settled = self._settled
            await settled.wait()

    def _admit(self, model: str, role: Role) -> Reservation | ModelFault | None:
        """The request's admission or refusal; None: it waits for a call in flight."""
        budget, key = self.budget, (model, role)
        known: tuple[float, float] | None = (0.0, 0.0)
        if self._limits_spend and not self.stopped_by:
            if self._in_flight.get(key, 0) >= max(1, self._answered.get(key, 0)):
                return None  # slow start
            known = self._expected(model, role)
        expected = known or (0.0, 0.0)
        spent = self.stopped_by
        if spent is None and budget.model_calls is not None and (
                self.requests >= budget.model_calls):
            spent = f"max_model_calls {budget.model_calls}"
        if spent is None:
            spent = self._crosses(expected, held=False)
            if spent is not None and self._crosses((0.0, 0.0), held=False) is None:
                self.stopped_before = expected  # it fit; its reservation would not have
        if spent is not None:
            self.refused += 1
            self.stopped_by = spent
            return ModelFault(kind="budget", summary=f"budget spent ({spent})",
                              retryable=False)
        if any(self._in_flight.values()) and self._crosses(expected, held=True) is not None:
            return None  # the calls in flight may give back what they reserved
        self.requests += 1
        self._in_flight[key] = self._in_flight.get(key, 0) + 1
        tokens, usd = self._reserved
        self._reserved = (tokens + expected[0], usd + expected[1])
        return Reservation(tokens=expected[0], usd=expected[1], probe=known is None, key=key)

    def _crosses(self, expected: tuple[float, float], held: bool) -> str | None:
        """The ``tokens`` or ``usd`` limit a request reserving ``expected`` would cross,
        counting what was spent and assumed, and with ``held`` what the calls in flight
        reserved; None when it fits."""
        budget = self.budget
        reserved = self._reserved if held else (0.0, 0.0)
        tokens = self.tokens + self._assumed[0] + reserved[0]
        if budget.tokens is not None and (
                tokens >= budget.tokens or tokens + expected[0] > budget.tokens):
            return f"max_tokens {budget.tokens:,}"
        usd = (self.usd or 0.0) + self._assumed[1] + reserved[1]
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
        flying = self._in_flight.get(reservation.key, 0)
        if flying:
            self._in_flight[reservation.key] = flying - 1
        if not any(self._in_flight.values()):
            self._reserved = (0.0, 0.0)  # no rounding left over from the sums of dollars
        if self._settled is not None:  # the waiting requests look again
            self._settled.set()
            self._settled = None

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
            self._answered[(model, role)] = self._answered.get((model, role), 0) + 1
            if reservation is not None:
                self._unreserve(reservation)
            self._usage = merge_usage(self._usage, [usage])
            if usage.unreported:
                held = reservation or Reservation()
                self._assumed = (self._assumed[0] + held.tokens, self._assumed[1] + held.usd)
            else:
                self.tokens += usage.tokens
                for key in ((model, role), model):
                    self._sizes.add(key, usage.tokens, dollars or 0.0)
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

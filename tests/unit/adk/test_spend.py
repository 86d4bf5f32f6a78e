"""The budget's reservations (adk.runtime.spend): each request reserves the 90th percentile
(nearest rank) of what its model's and role's answered calls used before it starts, a
model and role has at most as many calls in flight as answered ones, a request that does
not fit beside the calls in flight waits for them, the request that would pass the budget
on what was spent alone is refused, and what a call reported (or, reporting nothing, what
it reserved) replaces its reservation. Values worked out by hand from the rule in the
module docstring."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from adk_eval_action.adk.runtime.model_faults import ModelFault, Role
from adk_eval_action.adk.runtime.spend import Budget, Reservation, Spend
from adk_eval_action.project.config import ModelSettings


def _usage(tokens: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=tokens - 10, candidates_token_count=10, total_token_count=tokens)


def _role(model: str) -> Role:
    return "judge" if model.startswith("judge") else "agent"


async def _admit(spend: Spend, model: str = "m") -> Reservation:
    got = await spend.admit(model, _role(model))
    assert isinstance(got, Reservation), got
    return got


async def _answer(spend: Spend, tokens: int, model: str = "m") -> None:
    """One call admitted and answered with ``tokens``, before the next starts."""
    spend.answered(model, _role(model), _usage(tokens), await _admit(spend, model))


async def _pending(spend: Spend, model: str = "m") -> asyncio.Future[Reservation | ModelFault]:
    """A request that is still waiting in admit after the loop has run."""
    waiting = asyncio.ensure_future(spend.admit(model, "agent"))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    return waiting


def test_a_request_reserves_the_90th_percentile_of_its_models_answered_calls() -> None:
    """Nearest rank: the value at rank ceil(0.9 n) of the n sorted sizes, tokens and
    dollars each (at $1 per 1M tokens in and out, dollars are tokens / 1e6)."""
    async def run() -> None:
        price = ModelSettings(input_usd_per_1m_tokens=1.0, output_usd_per_1m_tokens=1.0)
        spend = Spend(Budget(tokens=100_000), {"judge": price})
        spend.expect(50)
        for tokens in (2000, 1000):
            await _answer(spend, tokens, "judge")
        await _answer(spend, 300, "agent")
        # 2 answered: rank ceil(1.8) = 2, the largest (the mean would be 1,500).
        assert spend.expected("judge", "judge") == pytest.approx((2000, 0.002))
        assert spend.expected("agent", "agent") == (300, 0.0)  # no price: no dollars
        assert spend.expected("other", "agent") == (50, 0.0)  # the plan's, before any answer
        for tokens in (100, 200, 300, 400, 500, 600, 700, 800):
            await _answer(spend, tokens, "judge")
        # 10 answered (100..800, 1,000, 2,000): rank 9 = 1,000, not the outlier 2,000.
        assert spend.expected("judge", "judge") == pytest.approx((1000, 0.001))
        await _answer(spend, 900, "judge")
        # 11 answered (100..900, 1,000, 2,000): rank ceil(9.9) = 10, still 1,000.
        assert spend.expected("judge", "judge") == pytest.approx((1000, 0.001))

    asyncio.run(run())


def test_the_request_that_would_pass_the_budget_on_what_was_spent_is_refused() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=1000))
        await _answer(spend, 300)  # a probe: nothing known, it reserves nothing
        second = await _admit(spend)
        assert (second.tokens, second.probe) == (300, False)  # the one answered size
        spend.answered("m", "agent", _usage(400), second)
        # 700 spent + 400 (rank 2 of [300, 400]) > 1,000: refused before it is sent.
        refused = await spend.admit("m", "agent")
        assert isinstance(refused, ModelFault) and refused.kind == "budget"
        assert spend.stopped_by == "max_tokens 1,000"
        assert spend.stopped_before == (400, 0.0)
        assert isinstance(await spend.admit("other", "judge"), ModelFault)  # stopped stays
        assert (spend.requests, spend.refused, spend.tokens) == (2, 2, 700)

    asyncio.run(run())


def test_a_request_that_does_not_fit_beside_the_calls_in_flight_waits_for_them() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=1000))
        await _answer(spend, 300)
        await _answer(spend, 300)  # 600 spent; two answered: two may be in flight
        first = await _admit(spend)
        assert first.tokens == 300
        # 600 spent + 300 reserved + 300 > 1,000, but 600 + 300 fits: it waits.
        second = await _pending(spend)
        spend.answered("m", "agent", _usage(100), first)
        got = await asyncio.wait_for(second, 1)  # 700 spent + 300 (rank 3 of 3) = 1,000
        assert isinstance(got, Reservation) and got.tokens == 300
        third = await _pending(spend)  # 700 + 300 reserved + 300 > 1,000: waits
        spend.answered("m", "agent", _usage(250), got)
        # 950 spent + 300 (rank 4 of [100, 250, 300, 300]) > 1,000: refused.
        refused = await asyncio.wait_for(third, 1)
        assert isinstance(refused, ModelFault) and refused.kind == "budget"
        assert spend.stopped_before == (300, 0.0)
        assert (spend.requests, spend.refused, spend.tokens) == (4, 1, 950)

    asyncio.run(run())


def test_a_models_calls_in_flight_grow_with_its_answered_calls() -> None:
    """No estimate: the first request is a probe; the next waits until it has answered
    (one answered, one in flight), then two go at once."""
    async def run() -> None:
        spend = Spend(Budget(tokens=10_000))
        probe = await _admit(spend)
        assert probe.probe and probe.tokens == 0
        second = await _pending(spend)
        spend.answered("m", "agent", _usage(700), probe)
        got = await asyncio.wait_for(second, 1)
        assert isinstance(got, Reservation) and (got.tokens, got.probe) == (700, False)
        third = await _pending(spend)  # one answered: one in flight at most
        # A judge's calls are not guessed from the agent's: its first call is a probe too.
        judge = await _admit(spend, "judge-model")
        assert judge.probe and judge.tokens == 0
        spend.answered("m", "agent", _usage(500), got)
        admitted = await asyncio.wait_for(third, 1)
        assert isinstance(admitted, Reservation) and admitted.tokens == 700  # rank 2 of 2
        fourth = await _admit(spend)  # two answered: a second in flight
        assert fourth.tokens == 700
        await _pending(spend)

    asyncio.run(run())


def test_a_call_that_reported_nothing_keeps_its_reservation_against_the_budget() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=1000))
        spend.expect(600)
        spend.answered("m", "agent", None, await _admit(spend))
        assert spend.tokens == 0  # nothing reported: not counted as tokens...
        # ...but not as zero either: 600 assumed + 600 expected > 1,000.
        assert isinstance(await spend.admit("m", "agent"), ModelFault)
        assert spend.stopped_before == (600, 0.0)  # 600 < 1,000: it would have passed it

    asyncio.run(run())


def test_without_a_token_or_dollar_budget_nothing_is_reserved_or_waited_for() -> None:
    async def run() -> None:
        spend = Spend(Budget(model_calls=2))
        first, second = await _admit(spend), await _admit(spend)
        assert (first.tokens, first.probe, second.tokens, second.probe) == (0, False, 0, False)
        assert isinstance(await spend.admit("m", "agent"), ModelFault)
        assert spend.stopped_by == "max_model_calls 2"

    asyncio.run(run())

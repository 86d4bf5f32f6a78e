"""The budget's reservations (adk.runtime.spend): each request reserves what it is expected
to use before it starts, the request that would pass the budget is refused, and what a
call reported (or, reporting nothing, what it was expected to use) replaces its
reservation. Values worked out by hand from the rule in the module docstring."""

from __future__ import annotations

import asyncio

from google.genai import types

from adk_eval_action.adk.runtime.model_faults import ModelFault
from adk_eval_action.adk.runtime.spend import Budget, Reservation, Spend


def _usage(tokens: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=tokens - 10, candidates_token_count=10, total_token_count=tokens)


async def _admit(spend: Spend, model: str = "m") -> Reservation:
    got = await spend.admit(model, "judge" if model.startswith("judge") else "agent")
    assert isinstance(got, Reservation), got
    return got


def test_the_request_that_would_pass_the_budget_is_refused() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=1000))
        spend.expect(400)  # the plan's estimate per call
        first, second = await _admit(spend), await _admit(spend)
        assert (first.tokens, second.tokens) == (400, 400)
        # 800 reserved + 400 expected > 1,000: refused before it is sent, and every later one.
        refused = await spend.admit("m", "agent")
        assert isinstance(refused, ModelFault) and refused.kind == "budget"
        assert spend.stopped_by == "max_tokens 1,000"
        assert spend.stopped_before == (400, 0.0)
        spend.answered("m", "agent", _usage(300), first)
        spend.release(second)  # failed before answering: its reservation is given back
        assert spend.tokens == 300
        assert isinstance(await spend.admit("m", "agent"), ModelFault)  # stopped stays stopped
        assert (spend.requests, spend.refused) == (2, 2)

    asyncio.run(run())


def test_a_call_that_reported_nothing_keeps_its_expected_tokens_against_the_budget() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=1000))
        spend.expect(600)
        spend.answered("m", "agent", None, await _admit(spend))
        assert spend.tokens == 0  # nothing reported: not counted as tokens...
        # ...but not as zero either: 600 assumed + 600 expected > 1,000.
        assert isinstance(await spend.admit("m", "agent"), ModelFault)
        assert spend.stopped_before == (600, 0.0)  # 600 < 1,000: it would have passed it

    asyncio.run(run())


def test_the_expected_use_is_the_mean_of_the_same_model_and_role() -> None:
    async def run() -> None:
        spend = Spend(Budget(tokens=100_000))
        spend.expect(50)
        spend.answered("judge", "judge", _usage(2000), await _admit(spend, "judge"))
        spend.answered("judge", "judge", _usage(1000), await _admit(spend, "judge"))
        spend.answered("agent", "agent", _usage(300), await _admit(spend, "agent"))
        assert spend.expected("judge", "judge") == (1500, 0.0)
        assert spend.expected("agent", "agent") == (300, 0.0)
        assert spend.expected("other", "agent") == (50, 0.0)  # the plan's, before the mean

    asyncio.run(run())


def test_with_nothing_known_the_first_calls_go_one_at_a_time() -> None:
    """No estimate: the first request is a probe; the next waits until it has answered,
    then reserves what it reported."""
    async def run() -> None:
        spend = Spend(Budget(tokens=10_000))
        probe = await _admit(spend)
        assert probe.probe and probe.tokens == 0
        second = asyncio.ensure_future(spend.admit("m", "agent"))
        await asyncio.sleep(0.01)
        assert not second.done()
        spend.answered("m", "agent", _usage(700), probe)
        got = await asyncio.wait_for(second, 1)
        assert isinstance(got, Reservation) and (got.tokens, got.probe) == (700, False)
        # A judge's calls are not guessed from the agent's: its first call is a probe too.
        judge = await _admit(spend, "judge-model")
        assert judge.probe and judge.tokens == 0

    asyncio.run(run())


def test_without_a_token_or_dollar_budget_nothing_is_reserved_or_waited_for() -> None:
    async def run() -> None:
        spend = Spend(Budget(model_calls=2))
        first, second = await _admit(spend), await _admit(spend)
        assert first == second == Reservation()
        assert isinstance(await spend.admit("m", "agent"), ModelFault)
        assert spend.stopped_by == "max_model_calls 2"

    asyncio.run(run())

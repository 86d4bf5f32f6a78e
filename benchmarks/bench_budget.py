"""Benchmark how far a token budget is passed (a script, not a test): the budget's overshoot
before and after calls reserve their expected tokens (:mod:`adk_eval_action.adk.runtime.spend`).

Every call goes the real way, through :class:`~adk_eval_action.adk.runtime.model_calls.
RetryingLlm` behind the evaluation's ``parallelism`` slots
(:class:`~adk_eval_action.adk.runtime.model_limits.ModelGate`), to a stand-in ``BaseLlm`` that
answers after a random latency and reports random usage: agent calls of about
``--agent-tokens`` tokens and judge calls of about ``--judge-tokens`` (log-normal, sigma
``--spread``), one agent call then one judge call per case run, ``--cases`` case runs
started at once (the scheduler keeps far more case runs open than slots). The run stops
starting calls when the budget says so; what the calls reported in all is compared with the
cap:

* before: the rule this replaced, refusing a call only once the answered calls' tokens are
  at or past the cap (the calls in flight then finish: up to ``parallelism`` whole calls
  over);
* after: :class:`~adk_eval_action.adk.runtime.spend.Spend` as the run uses it (no plan
  estimate: the first call goes alone, then each call reserves the mean of its model's and
  role's answered calls).

For each cap and parallelism, ``--seeds`` runs of each: the mean and worst overshoot
(tokens past the cap, as a multiple of the largest call of that run) and the calls made,
side by side, with the ratio after / before.

Usage: ``.venv/bin/python benchmarks/bench_budget.py [--caps 3000,20000,100000]
[--parallelism 1,4,8] [--seeds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_eval_action.adk.runtime.model_calls import ModelCalls, RetryingLlm
from adk_eval_action.adk.runtime.model_faults import ModelCallError, ModelFault, Role
from adk_eval_action.adk.runtime.model_limits import ModelGate
from adk_eval_action.adk.runtime.spend import Budget, Reservation, Spend
from adk_eval_action.project.config import ModelRetrySettings


class SizedLlm(BaseLlm):
    """Answers after ``latency`` seconds (uniform 0.5x-1.5x), reporting about ``mean``
    tokens (log-normal, ``spread``), each size drawn from ``rng``; ``sizes`` logs them."""

    mean: float = 1000.0
    spread: float = 0.5
    latency: float = 0.005
    rng: Any = None
    sizes: Any = None  # the run's list (a list field would be copied)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.sleep(self.latency * self.rng.uniform(0.5, 1.5))
        size = max(2, round(self.rng.lognormvariate(0, self.spread) * self.mean))
        self.sizes.append(size)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=size - size // 10, candidates_token_count=size // 10,
            total_token_count=size)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]),
                          usage_metadata=usage)


class Unreserved(Spend):
    """The rule before reservations: a call is refused only once the answered calls'
    tokens are at or past the cap."""

    async def admit(self, model: str = "", role: Role = "agent") -> Reservation | ModelFault:
        cap = self.budget.tokens
        if self.stopped_by or (cap is not None and self.tokens >= cap):
            self.refused += 1
            self.stopped_by = f"max_tokens {cap:,}"
            return ModelFault(kind="budget", summary="budget spent", retryable=False)
        self.requests += 1
        return Reservation()


async def _case(agent: BaseLlm, judge: BaseLlm) -> None:
    """One case run: the agent's call, then the judge's; a refused call ends it."""
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])
    try:
        for model in (agent, judge):
            async for _ in model.generate_content_async(request):
                pass
    except ModelCallError:
        return


async def _run(spend: Spend, parallelism: int, args: argparse.Namespace, seed: int) -> tuple[
        int, int, int]:
    """One run: (tokens reported, calls made, largest call)."""
    rng = random.Random(seed)
    sizes: list[int] = []
    calls = ModelCalls(ModelRetrySettings(), spend=spend)
    gate = ModelGate({}, parallelism)
    models = []
    for name, role, mean in (("agent-model", "agent", args.agent_tokens),
                             ("judge-model", "judge", args.judge_tokens)):
        inner = SizedLlm(model=name, mean=mean, spread=args.spread, rng=rng, sizes=sizes)
        models.append(RetryingLlm.wrap(gate.wrap(inner), calls, role=role))  # type: ignore[arg-type]
    await asyncio.gather(*(_case(*models) for _ in range(args.cases)))
    return sum(sizes), len(sizes), max(sizes, default=0)


def _measure(kind: type[Spend], cap: int, parallelism: int,
             args: argparse.Namespace) -> dict[str, float]:
    over, worst, made = [], 0.0, []
    for seed in range(args.seeds):
        spend = kind(Budget(tokens=cap))
        used, count, largest = asyncio.run(_run(spend, parallelism, args, seed))
        past = max(0, used - cap) / largest if largest else 0.0
        over.append(past)
        worst = max(worst, past)
        made.append(count)
    return {"mean": statistics.fmean(over), "worst": worst, "calls": statistics.fmean(made)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--caps", default="3000,20000,100000")
    parser.add_argument("--parallelism", default="1,4,8")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--agent-tokens", type=float, default=600.0)
    parser.add_argument("--judge-tokens", type=float, default=1800.0)
    parser.add_argument("--spread", type=float, default=0.5)
    args = parser.parse_args()
    print(f"{args.seeds} seeds; agent calls ~{args.agent_tokens:g} tokens, judge calls "
          f"~{args.judge_tokens:g} (log-normal sigma {args.spread:g}); overshoot = tokens "
          "past the cap / the run's largest call")
    print(f"{'cap':>8} {'par':>3} | {'before mean':>11} {'worst':>6} {'calls':>6} | "
          f"{'after mean':>10} {'worst':>6} {'calls':>6} | {'ratio mean':>10} {'worst':>6}")
    for cap in (int(c) for c in args.caps.split(",")):
        for parallelism in (int(p) for p in args.parallelism.split(",")):
            before = _measure(Unreserved, cap, parallelism, args)
            after = _measure(Spend, cap, parallelism, args)
            ratio = (after["mean"] / before["mean"]) if before["mean"] else float("nan")
            worst = (after["worst"] / before["worst"]) if before["worst"] else float("nan")
            print(f"{cap:>8,} {parallelism:>3} | {before['mean']:>11.2f} "
                  f"{before['worst']:>6.2f} {before['calls']:>6.1f} | {after['mean']:>10.2f} "
                  f"{after['worst']:>6.2f} {after['calls']:>6.1f} | {ratio:>10.2f} "
                  f"{worst:>6.2f}")


if __name__ == "__main__":
    main()

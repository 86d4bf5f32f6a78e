"""Tokens and dollars a plan will cost, estimated from what a baseline's runs used, and the
plan checked against the run's budget before any model is called.

Estimate (``plan --baseline FILE``; ``run`` with a budget and a baseline file): each planned
eval case costs, per run, what its runs cost on average in the baseline (every model call
of the case run: agent, judges, user simulator; ``RunRecord.usage``); a case the baseline
does not have costs its suite's mean per case run there; a suite the baseline does not have
(or that recorded no usage) is not estimated, and the estimate says how many case runs that
leaves out. Dollars are the baseline's tokens at today's prices (``models:`` in
adk-eval.yaml), so a price change shows at once; a model without a price adds tokens and
no dollars, and is named.

Refusal (:func:`refusal`): a plan whose model calls (agent and judge calls the plan counts:
:class:`~adk_eval_action.adk.evaluate.plan.Plan`, a lower bound where it estimates nothing) exceed
``max_model_calls``, or whose estimated tokens or dollars exceed ``max_tokens`` or
``max_usd``, is refused before any model call, with the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from adk_eval_action.adk.evaluate.plan import Plan
from adk_eval_action.adk.runtime.spend import Budget
from adk_eval_action.project.config import ModelSettings
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import CaseKey
from adk_eval_action.results.usage import ModelUsage, usd_of


class RunCost(BaseModel):
    """What one case run used: tokens, dollars of the priced models, and the models
    without a price."""

    tokens: float = 0.0
    usd: float = 0.0
    unpriced: list[str] = Field(default_factory=list)


class CostEstimate(BaseModel):
    """A plan's estimated cost (module docstring).

    Attributes:
        tokens: Estimated tokens of every model call of the planned case runs.
        usd: Their dollars at the prices given (None when no model has a price).
        unpriced: Models whose tokens have no price.
        from_case: Case runs estimated from the same eval case's baseline runs.
        from_suite: Case runs estimated from their suite's mean (a case new since then).
        not_estimated: Case runs of suites the baseline has no usage for.
    """

    tokens: int = 0
    usd: float | None = None
    unpriced: list[str] = Field(default_factory=list)
    from_case: int = 0
    from_suite: int = 0
    not_estimated: int = 0

    def line(self) -> str:
        """The estimate in one line, as ``plan`` prints it."""
        dollars = "" if self.usd is None else f", ~${self.usd:.4f}"
        unpriced = f" (no price: {', '.join(self.unpriced)})" if self.unpriced else ""
        left = f"; {self.not_estimated} case run(s) of suites it lacks not estimated" \
            if self.not_estimated else ""
        return (
            f"estimated cost: ~{self.tokens:,} tokens{dollars}{unpriced}, from the baseline's "
            f"runs of the same eval cases ({self.from_case} case run(s)) or of their suite "
            f"({self.from_suite}){left}"
        )


def run_cost(usage: Iterable[ModelUsage], prices: Mapping[str, ModelSettings]) -> RunCost:
    """The cost of one run's usage at ``prices``."""
    cost = RunCost()
    for entry in usage:
        cost.tokens += entry.tokens
        dollars = usd_of(entry, prices.get(entry.model))
        if dollars is None:
            cost.unpriced.append(entry.model)
        else:
            cost.usd += dollars
    return cost


def _mean(costs: list[RunCost]) -> RunCost:
    n = len(costs)
    return RunCost(
        tokens=sum(c.tokens for c in costs) / n,
        usd=sum(c.usd for c in costs) / n,
        unpriced=list(dict.fromkeys(m for c in costs for m in c.unpriced)),
    )


def baseline_costs(
    baseline: RunResults, prices: Mapping[str, ModelSettings]
) -> tuple[dict[CaseKey, RunCost], dict[str, RunCost]]:
    """The baseline's mean cost per case run, by eval case and by suite (runs without
    recorded usage left out)."""
    by_case: dict[CaseKey, list[RunCost]] = {}
    by_suite: dict[str, list[RunCost]] = {}
    for suite in baseline.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    if not run.usage:
                        continue
                    cost = run_cost(run.usage, prices)
                    by_case.setdefault((suite.name, eval_set.eval_set_id, case.eval_id),
                                       []).append(cost)
                    by_suite.setdefault(suite.name, []).append(cost)
    return ({k: _mean(v) for k, v in by_case.items()},
            {k: _mean(v) for k, v in by_suite.items()})


def estimate(
    plan: Plan,
    baseline: RunResults,
    prices: Mapping[str, ModelSettings],
    cases: set[CaseKey] | None = None,
) -> CostEstimate:
    """The plan's cost from ``baseline`` (module docstring); ``cases``: only these planned
    eval cases (a shard's)."""
    by_case, by_suite = baseline_costs(baseline, prices)
    out = CostEstimate()
    tokens, dollars, unpriced = 0.0, 0.0, []
    for suite in plan.suites:
        for case in suite.cases:
            key = (case.suite, case.eval_set_id, case.eval_id)
            if cases is not None and key not in cases:
                continue
            cost = by_case.get(key) or by_suite.get(case.suite)
            if cost is None:
                out.not_estimated += suite.num_runs
                continue
            if key in by_case:
                out.from_case += suite.num_runs
            else:
                out.from_suite += suite.num_runs
            tokens += cost.tokens * suite.num_runs
            dollars += cost.usd * suite.num_runs
            unpriced += cost.unpriced
    out.tokens = round(tokens)
    out.unpriced = list(dict.fromkeys(unpriced))
    priced = any(p.priced for p in prices.values())
    out.usd = dollars if priced else None
    return out


def planned_calls(plan: Plan, cases: set[CaseKey] | None = None) -> int:
    """The model calls the plan counts (agents' and judges'), of ``cases`` only when
    given."""
    return sum(
        (case.agent_calls + sum(case.judge_calls.values())) * suite.num_runs
        for suite in plan.suites
        for case in suite.cases
        if cases is None or (case.suite, case.eval_set_id, case.eval_id) in cases
    )


def refusal(
    plan: Plan,
    budget: Budget,
    estimated: CostEstimate | None = None,
    cases: set[CaseKey] | None = None,
) -> str | None:
    """Why the plan is refused before any model call (module docstring), with the numbers;
    None when it fits the budget (or none is set)."""
    calls = planned_calls(plan, cases)
    if budget.model_calls is not None and calls > budget.model_calls:
        return (
            f"the plan needs ~{calls} model calls (agents' and judges', as `plan` counts them) "
            f"and the budget allows max_model_calls {budget.model_calls}"
        )
    if estimated is None:
        return None
    if budget.tokens is not None and estimated.tokens > budget.tokens:
        return (
            f"the plan is estimated at ~{estimated.tokens:,} tokens from the baseline's runs "
            f"and the budget allows max_tokens {budget.tokens:,}"
        )
    if budget.usd is not None and estimated.usd is not None and estimated.usd > budget.usd:
        return (
            f"the plan is estimated at ~${estimated.usd:.4f} from the baseline's runs and the "
            f"budget allows max_usd ${budget.usd:g}"
        )
    return None

"""The run's spending: its budget (``budget:`` in adk-eval.yaml, ``--max-model-calls``,
``--max-tokens``, ``--max-usd``), the model calls that keep it
(:mod:`adk_eval_action.adk.runtime.spend`), what is left of it for later stages, the error
of a run it stopped and the warning of one the calls in flight carried past it (each call
reserves a high quantile of its model's answered calls: adk.runtime.spend), the cost
``plan`` estimates from a baseline file, and the console's model-calls line.

google-adk is imported only inside the functions that need it (as in
:mod:`adk_eval_action.run.evaluation`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from adk_eval_action.baseline.models import RerunBudget
from adk_eval_action.baseline.resolve import file_baseline
from adk_eval_action.errors import ConfigError
from adk_eval_action.results.model import ErrorRecord, ModelCallCounts, RunResults
from adk_eval_action.results.scoretable import CaseKey
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.settings import RunRequest

if TYPE_CHECKING:
    from adk_eval_action.adk.evaluate.plan import Plan
    from adk_eval_action.adk.evaluate.scheduler import PlanCheck
    from adk_eval_action.adk.runtime.model_calls import ModelCalls
    from adk_eval_action.adk.runtime.spend import Budget, Spend

log = logging.getLogger(__name__)


def run_budget(request: RunRequest) -> Budget:
    """The run's budget (``budget:`` in adk-eval.yaml, ``--max-*``; adk.runtime.spend)."""
    from adk_eval_action.adk.runtime.spend import Budget

    settings = request.settings
    return Budget(settings.max_model_calls, settings.max_tokens, settings.max_usd)


def model_calls(request: RunRequest) -> ModelCalls:
    """The run's model calls: one retry budget, the tokens counted and priced at the
    ``models:`` prices, and the run's budget (adk.runtime.spend)."""
    from adk_eval_action.adk.runtime.model_calls import ModelCalls
    from adk_eval_action.adk.runtime.spend import Spend

    spend = Spend(run_budget(request), request.settings.models)
    return ModelCalls(request.settings.model_retries, spend=spend)


def cost_baseline(request: RunRequest, always: bool = False) -> RunResults | None:
    """The baseline results file whose recorded usage estimates the plan's tokens and
    dollars (adk.evaluate.estimate): when ``--baseline`` names a file, and a token or dollar budget
    is set (``always``: the ``plan`` command). None otherwise, or when it cannot be read
    (``run`` reports that with the comparison; ``plan`` says it cannot estimate).
    """
    settings = request.settings
    path = settings.baseline.file
    wanted = always or settings.max_tokens is not None or settings.max_usd is not None
    if path is None or not wanted:
        return None
    try:
        return file_baseline(request.path(path), path).results
    except ConfigError as e:
        log.info("note: no estimate of tokens and dollars: %s", e)
        return None


def budget_check(
    request: RunRequest, baseline: RunResults | None, spend: Spend | None = None
) -> PlanCheck | None:
    """The check of the plan against the run's budget (adk.evaluate.estimate.refusal; with
    ``baseline``, its estimated tokens and dollars too, which also give ``spend`` what one
    call is expected to use: :meth:`~adk_eval_action.adk.runtime.spend.Spend.expect`); None
    without a budget."""
    from adk_eval_action.adk.evaluate.estimate import estimate, planned_calls, refusal

    budget = run_budget(request)
    if not budget.active:
        return None
    prices = request.settings.models

    def check(plan: Plan, cases: set[CaseKey] | None) -> str | None:
        estimated = estimate(plan, baseline, prices, cases) if baseline is not None else None
        calls = planned_calls(plan, cases)
        if spend is not None and estimated is not None and estimated.tokens and calls:
            spend.expect(estimated.tokens / calls,
                         None if estimated.usd is None else estimated.usd / calls)
        return refusal(plan, budget, estimated, cases)

    return check


def budget_left(calls: ModelCalls) -> RerunBudget:
    """What is left of each limit of the run's budget (None: no limit), for a re-run of
    the base commit."""
    spend = calls.spend
    budget = spend.budget
    return RerunBudget(
        max_model_calls=None if budget.model_calls is None
        else budget.model_calls - spend.requests,
        max_tokens=None if budget.tokens is None else budget.tokens - spend.tokens,
        max_usd=None if budget.usd is None else budget.usd - (spend.usd or 0.0),
    )


def record_budget_stop(calls: ModelCalls, writer: ResultsWriter) -> None:
    """Adds the run's budget error (:func:`budget_error`) to ``writer`` once, when the
    budget stopped model calls (evaluating, re-scoring the baseline or adaptive repeats)."""
    stopped = budget_error(calls)
    said = any(e.kind == "budget" and e.suite is None for e in writer.errors())
    if stopped is not None and not said:
        writer.add_error(stopped)
    passed = budget_passed(calls)
    if stopped is None and passed is not None:
        writer.add_warnings([passed])


def budget_passed(calls: ModelCalls) -> str | None:
    """The warning of a run that finished past its ``max_tokens`` or ``max_usd`` without
    being stopped: the calls in flight used more than they reserved (adk.runtime.spend) and
    their answers carried the total past it; None otherwise."""
    spend, budget = calls.spend, calls.spend.budget
    over = []
    if budget.tokens is not None and spend.tokens > budget.tokens:
        over.append(f"max_tokens {budget.tokens:,}")
    if budget.usd is not None and spend.usd is not None and spend.usd > budget.usd:
        over.append(f"max_usd ${budget.usd:g}")
    if not over:
        return None
    return (f"the budget's {' and '.join(over)} was passed by calls that used more than "
            f"they reserved ({spend.spent()} spent); each call reserves what 9 in 10 of its "
            "model's answered calls used at most before it starts, so the total passes the "
            "budget only by what the calls in flight used beyond their reservations")


def budget_error(calls: ModelCalls) -> ErrorRecord | None:
    """The run's error when its budget stopped model calls: which limit, and what was
    spent; None when it did not."""
    spend = calls.spend
    if spend.stopped_by is None:
        return None
    before = spend.stopped_before
    if before is None:
        stop = f"the budget's {spend.stopped_by} was reached ({spend.spent()} spent)"
    else:
        usd = f", ${before[1]:.4f}" if spend.stopped_by.startswith("max_usd") else ""
        stop = (f"the budget's {spend.stopped_by} would have been passed by the next model "
                f"call, which reserves ~{before[0]:,.0f} tokens{usd} ({spend.spent()} "
                "spent)")
    return ErrorRecord(
        kind="budget",
        message=f"{stop}; {spend.refused} model call(s) were not made, so the eval cases "
        "they belonged to have no scores",
        hint="every score computed before is kept; raise the budget (budget: in "
        "adk-eval.yaml, --max-model-calls/--max-tokens/--max-usd) or evaluate fewer eval cases",
    )


def plan_cost(request: RunRequest, found: Plan) -> tuple[str, str | None]:
    """What ``plan`` adds to the plan: the estimated tokens and dollars from a baseline
    file (``--baseline FILE``; else why there is no estimate), and why the run's budget
    would refuse the plan (None: it would not)."""
    from adk_eval_action.adk.evaluate.estimate import estimate, refusal

    baseline = cost_baseline(request, always=True)
    estimated = None
    if baseline is None:
        line = ("estimated cost: not estimated (tokens and dollars are estimated from a "
                "baseline's recorded usage: pass --baseline with a results file of the base "
                "branch)")
    else:
        estimated = estimate(found, baseline, request.settings.models)
        line = estimated.line()
        planned = {suite.name for suite in found.suites}
        recorded = {suite.name for suite in baseline.suites}
        if estimated.from_case + estimated.from_suite == 0 and not planned & recorded:
            line = ("estimated cost: not estimated (the baseline file's suites ("
                    + (", ".join(sorted(recorded)) or "none") + ") are not these ("
                    + ", ".join(sorted(planned)) + "): pass the results file of this "
                    "project's base branch)")
        elif estimated.from_case + estimated.from_suite == 0:
            line = ("estimated cost: not estimated (the baseline file recorded no usage of "
                    "these suites: it was written before tokens were recorded, or by ADK)")
    budget = run_budget(request)
    reason = refusal(found, budget, estimated) if budget.active else None
    return line, reason


def model_calls_line(counts: ModelCallCounts) -> str:
    """One line on the run's model calls: how many, how many retried and why, how many
    failed for good, how many the budget refused, and the tokens and dollars (``model
    calls: 12, 3 retried (3 retries: 429 RESOURCE_EXHAUSTED ×3; waited 4.5s); 48,210
    tokens, $0.0142``); tokens some calls did not report are said, never read as zero
    (``≥ 410 tokens (3 of 12 calls reported no usage)``, ``tokens unknown``)."""
    line = f"model calls: {counts.calls}"
    if counts.retried_calls:
        causes = ", ".join(f"{c} ×{n}" for c, n in counts.retry_causes.items())
        line += (
            f", {counts.retried_calls} retried ({counts.retries} retries: {causes}; "
            f"waited {counts.waited_s:.1f}s)"
        )
    if counts.failed_calls:
        causes = ", ".join(f"{c} ×{n}" for c, n in counts.failure_causes.items())
        line += f", {counts.failed_calls} failed ({causes})"
    if counts.refused_calls:
        line += f", {counts.refused_calls} not made (budget spent)"
    answered = sum(u.calls for u in counts.usage)
    if counts.usage and counts.unreported == answered:
        line += "; tokens unknown (no call reported usage)"
    elif counts.usage:
        floor = "≥ " if counts.unreported else ""
        line += f"; {floor}{counts.tokens:,} tokens"
        if counts.usd is not None:
            line += f", {floor}${counts.usd:.4f}"
        if counts.unreported:
            line += f" ({counts.unreported} of {answered} calls reported no usage)"
        if counts.unpriced:
            line += f" (no price: {', '.join(counts.unpriced)})"
    return line

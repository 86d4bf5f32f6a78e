"""What the run cost, and how the pull request changed what the agent costs.

* **The run's cost**: tokens per model (agents, judges, user simulator) and per suite, and
  their dollars where adk-eval.yaml prices the model
  (:mod:`adk_eval_action.results.usage`), read from the head's results.
* **The agent's own cost per eval case**, baseline vs head: each case run's agent tokens
  (the calls of role ``agent``, judges and user simulator left out;
  :meth:`~adk_eval_action.results.model.RunRecord.agent_tokens`), averaged per eval case,
  over the eval cases both sides have tokens for. The change gets the same paired test
  as every metric (:func:`adk_eval_action.analysis.paired.paired_tests`, as an
  informational quantity whose smallest change worth calling is
  ``informational_min_effect`` of the baseline's mean, 10% by default) and the same call
  (:func:`adk_eval_action.analysis.noise.classify`, lower is better): "this pull request's
  agent uses 23% more tokens per eval case (regressed)". Each suite is one test (one
  agent); the suites' tests are corrected together, apart from the metrics'. Dollars per
  eval case are the same cases' agent dollars, where every agent model has a price on
  both sides.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np
from pydantic import BaseModel, Field

from adk_eval_action.analysis.noise import Classification, DeltaInterval, classify
from adk_eval_action.analysis.paired import PairedInput, RunScores, paired_tests
from adk_eval_action.results.model import ModelCallCounts
from adk_eval_action.results.scoretable import CaseKey, ScoreTable
from adk_eval_action.results.usage import ModelUsage, total_tokens, total_usd, unpriced_models

AGENT_TOKENS = "agent_tokens"
"""The name the agent's tokens per eval case go by where the relative smallest change is
looked up per metric (``GateConfig.informational_min_effect_for``, project.config)."""


class SuiteUsage(BaseModel):
    """What one suite's case runs used, per (model, role)."""

    suite: str
    usage: list[ModelUsage] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        return total_tokens(self.usage)

    @property
    def usd(self) -> float | None:
        return total_usd(self.usage)


class AgentCost(BaseModel):
    """One suite's agent: tokens (and dollars) per eval case, baseline vs head, over the
    ``n_cases`` eval cases both sides have tokens for (module docstring). ``delta`` and
    ``relative`` (``delta / baseline_tokens``) are None without such cases;
    ``interval``/``classification`` as for a metric (lower is better)."""

    suite: str
    n_cases: int = 0
    baseline_tokens: float | None = None
    head_tokens: float | None = None
    delta: float | None = None
    relative: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None
    baseline_usd: float | None = None
    head_usd: float | None = None


class CostComparison(BaseModel):
    """The cost part of a comparison: the head run's ``usage`` per (model, role) and
    ``suites`` (per suite and model), the baseline run's tokens and dollars when it
    recorded them, and each suite agent's cost per eval case (``agent``, with a
    baseline)."""

    usage: list[ModelUsage] = Field(default_factory=list)
    suites: list[SuiteUsage] = Field(default_factory=list)
    baseline_tokens: int | None = None
    baseline_usd: float | None = None
    agent: list[AgentCost] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        """All tokens of the head run."""
        return total_tokens(self.usage)

    @property
    def usd(self) -> float | None:
        """The head run's dollars (models with prices; None: none has one)."""
        return total_usd(self.usage)

    @property
    def unpriced(self) -> list[str]:
        """The head's models without a price (tokens only)."""
        return unpriced_models(self.usage)

    def role_tokens(self, role: str) -> int:
        """The head's tokens of one role (``agent``, ``judge``, ``user_simulator``)."""
        return total_tokens(u for u in self.usage if u.role == role)

    @property
    def calls(self) -> int:
        """The head's answered model calls."""
        return sum(u.calls for u in self.usage)

    @property
    def unreported(self) -> int:
        """Of :attr:`calls`, those whose answer reported no usage: their tokens are
        unknown, so :attr:`tokens` is a floor (never read as their zero)."""
        return sum(u.unreported for u in self.usage)

    def role_known(self, role: str) -> str:
        """What is known of one role's tokens: ``462``, ``≥ 462`` when some of its calls
        reported no usage, ``unknown`` when none reported any; "" when the role made no
        call."""
        entries = [u for u in self.usage if u.role == role]
        calls = sum(u.calls for u in entries)
        unreported = sum(u.unreported for u in entries)
        if not calls:
            return ""
        if unreported == calls:
            return "unknown"
        return ("≥ " if unreported else "") + f"{total_tokens(entries):,}"


def _per_case(table: ScoreTable, column: np.ndarray) -> dict[CaseKey, list[float]]:
    """Each eval case's known values of a per-run column, by case key (runs in order)."""
    out: dict[CaseKey, list[float]] = {}
    for row, value in zip(table.run_case.tolist(), column.tolist(), strict=True):
        if not math.isnan(value):
            out.setdefault(table.case_keys[row], []).append(value)
    return out


def _suite_input(
    keys: list[CaseKey],
    base: dict[CaseKey, list[float]],
    head: dict[CaseKey, list[float]],
    relative: float,
) -> PairedInput:
    """The paired test's input over the case ids 0..n-1 of ``keys`` (a case without values
    on a side has no runs there)."""
    sides = []
    for values in (base, head):
        runs = [values.get(k, []) for k in keys]
        counts = np.asarray([len(r) for r in runs], dtype=np.int64)
        flat = np.asarray([v for r in runs for v in r], dtype=np.float64)
        start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        means = np.asarray([sum(r) / len(r) if r else 0.0 for r in runs])
        sides.append((means, counts, RunScores(partial(_columns, flat, start))))
    (b_mean, b_runs, b_scores), (h_mean, h_runs, h_scores) = sides
    return PairedInput(
        baseline_mean=b_mean, baseline_runs=b_runs, head_mean=h_mean, head_runs=h_runs,
        baseline_scores=b_scores, head_scores=h_scores, relative_min_effect=relative,
        higher_is_better=False, informational=True,
    )


def _columns(values: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return values, start


def _only(values: dict[CaseKey, list[float]], keys: list[CaseKey]) -> dict[CaseKey, list[float]]:
    return {k: values[k] for k in keys}


def _mean_usd(
    keys: list[CaseKey], usd: dict[CaseKey, list[float]], tokens: dict[CaseKey, list[float]]
) -> float | None:
    """The mean per eval case of the agent's dollars, when every run with tokens of the
    matched cases has dollars."""
    if any(len(usd.get(k, [])) != len(tokens[k]) for k in keys) or not keys:
        return None
    return sum(sum(usd[k]) / len(usd[k]) for k in keys) / len(keys)


def agent_costs(
    head: ScoreTable,
    baseline: ScoreTable,
    relative: Callable[[str], float],
    seed: int = 0,
    alpha: float = 0.05,
) -> list[AgentCost]:
    """Each head suite's agent cost per eval case against ``baseline`` (module docstring);
    ``relative(suite)`` is the share of the baseline's mean that is the smallest change
    worth calling."""
    head_tokens, base_tokens = (
        _per_case(head, head.run_agent_tokens), _per_case(baseline, baseline.run_agent_tokens)
    )
    head_usd, base_usd = (
        _per_case(head, head.run_agent_usd), _per_case(baseline, baseline.run_agent_usd)
    )
    suites = [s.name for s in head.skeleton.suites]
    matched = {
        name: sorted(k for k in head_tokens if k[0] == name and k in base_tokens)
        for name in suites
    }
    # One id per matched case of any suite (sorted keys): each suite's test sees its own.
    ids = sorted(k for keys in matched.values() for k in keys)
    inputs = [
        _suite_input(ids, _only(base_tokens, matched[n]), _only(head_tokens, matched[n]),
                     relative(n))
        for n in suites
    ]
    results, _ = paired_tests(inputs, np.arange(len(ids)), seed=seed, alpha=alpha)
    out = []
    for name, result in zip(suites, results, strict=True):
        keys = matched[name]
        row = AgentCost(suite=name, n_cases=len(keys), interval=result.interval)
        if keys:
            row.baseline_tokens, row.head_tokens = result.baseline_mean, result.head_mean
            row.delta = result.interval.delta
            if row.baseline_tokens:
                row.relative = row.delta / row.baseline_tokens
            row.classification = classify(result.interval, row.delta,
                                          min_effect=result.min_effect, higher_is_better=False)
            row.baseline_usd = _mean_usd(keys, base_usd, base_tokens)
            row.head_usd = _mean_usd(keys, head_usd, head_tokens)
        out.append(row)
    return out


def compare_cost(
    head: ScoreTable,
    baseline: ScoreTable | None,
    relative: Callable[[str], float],
    seed: int = 0,
    alpha: float = 0.05,
) -> CostComparison | None:
    """The cost part of the comparison of ``head`` with ``baseline`` (module docstring);
    None when the head recorded no usage (written before tokens were, or ADK's
    eval_history)."""
    counts = head.skeleton.metadata.model_calls or ModelCallCounts()
    if not counts.usage and not any(s.usage for s in head.skeleton.suites):
        return None
    cost = CostComparison(
        usage=counts.usage,
        suites=[SuiteUsage(suite=s.name, usage=s.usage) for s in head.skeleton.suites
                if s.usage],
    )
    if baseline is not None:
        base_counts = baseline.skeleton.metadata.model_calls
        if base_counts is not None and base_counts.usage:
            cost.baseline_tokens, cost.baseline_usd = base_counts.tokens, base_counts.usd
        cost.agent = agent_costs(head, baseline, relative, seed, alpha)
    return cost

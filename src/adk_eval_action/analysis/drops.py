"""What got worse than the baseline, whatever the gate decides: the gated metrics and
rubrics that dropped, why each did or did not fail the gate, and the eval cases that drove
each drop (rules in full: ``docs/gating.md``, "Drops the gate does not fail on").

* **A metric dropped** (a gated one; informational metrics never count) when its matched
  delta is worse than the baseline in its direction and it is called 🔴 regressed, or the
  drop exceeds the regression rule's budget (``max_regression``; unset: ``min_effect``,
  :meth:`adk_eval_action.project.config.GateConfig.rule_for`), the point drop that
  ``fail_on: regression`` would fail without ``require_significance``. So a drop is named
  exactly when the regression rule, or the call, says something about it.
* **A rubric dropped** by the same rule with its metric's budget, unless its metric
  dropped too (then the metric says it).
* **Gated** when the gate failed on it (``fail_on: regression`` or ``any`` and the
  regression rule fails it); otherwise ``note`` says why not: ``not gated: fail_on
  threshold``, ``not significant: require_significance``, ``within max_regression 0.1``,
  ``rubrics are not gated``.
* **The cases** of a drop are the matched eval cases of its suite whose own delta of that
  metric (the rubric's metric, for a rubric: its score is the mean of its rubric verdicts)
  is worse than the metric's ``min_effect`` (any worsening when it is 0), largest first as
  a fraction of the metric's value range (metric units when the range is unknown), so
  drops of metrics on different scales order together; a judge flip on the same answer
  (:mod:`adk_eval_action.analysis.judgeflips`) is never one of them.
* **An eval case crashed** (:class:`CaseCrash`) when it passed on the baseline and its head
  has no verdict of its own scores: a run raised (the agent's own code: the run failed;
  ADK, the model or the credentials: it errored) or a gated metric errored or was not
  evaluated. Its scores are missing, so no metric delta can show it (deltas are over the
  cases scored on both sides); it is named apart. **Gated** under ``fail_on: regression``
  or ``any`` when the agent raised, or when it has no verdict and ``not_evaluated`` is
  ``fail``; otherwise ``note`` says why not (``not gated: fail_on threshold``,
  ``not_evaluated: warn``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from pydantic import BaseModel

from adk_eval_action.analysis.comparison import (
    CaseComparison,
    Comparison,
    MetricComparison,
    MetricSide,
    RubricComparison,
)
from adk_eval_action.analysis.noise import Classification, regression_fails
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import CaseStatus, MetricStatus

__all__ = ["CaseCrash", "CaseDrop", "MetricDrop", "crashed_cases", "dropped_cases", "find_drops"]

_TOLERANCE = 1e-9
"""Score differences closer than this count as equal (as in analysis.noise)."""


class MetricDrop(BaseModel):
    """A gated metric (``rubric_id`` None) or rubric of ``suite`` that got worse than the
    baseline (module docstring).

    Attributes:
        delta: matched ``head − baseline`` in metric units (a rubric's in [0, 1]).
        higher_is_better: the metric's direction (a rubric's is higher).
        classification: the delta's call.
        min_effect: the metric's ``min_effect`` (what a case's own drop must exceed).
        budget: the regression rule's ``max_regression`` for the metric.
        scaled: how much worse as a fraction of the metric's value range (in metric units
            when the range is unknown): what orders drops of metrics on different scales.
        gated: the gate failed on this drop.
        note: why it did not fail the gate ("" when ``gated``).
    """

    suite: str
    metric_name: str
    rubric_id: str | None = None
    delta: float
    higher_is_better: bool = True
    classification: Classification | None = None
    min_effect: float = 0.0
    budget: float = 0.0
    scaled: float = 0.0
    gated: bool = False
    note: str = ""

    @property
    def worse(self) -> float:
        """How much worse, in metric units, positive."""
        return -self.delta if self.higher_is_better else self.delta


class CaseDrop(NamedTuple):
    """One eval case's drop of one dropped metric: its case means on each side (metric
    units), ``worse`` (positive, metric units) and ``scaled`` (``worse`` as a fraction of
    the metric's value range, or ``worse`` when the range is unknown)."""

    metric_name: str
    baseline: float
    head: float
    worse: float
    scaled: float


def _is_drop(classification: Classification | None, worse: float, budget: float) -> bool:
    return classification == "regressed" or worse > budget + _TOLERANCE


def _metric_drop(row: MetricComparison, config: GateConfig) -> MetricDrop | None:
    if row.informational or row.delta is None:
        return None
    rule = config.rule_for(row.suite, row.metric_name)
    budget = rule.max_regression or 0.0
    drop = MetricDrop(
        suite=row.suite, metric_name=row.metric_name, delta=row.delta,
        higher_is_better=row.higher_is_better, classification=row.classification,
        min_effect=row.min_effect or 0.0, budget=budget,
    )
    drop.scaled = drop.worse / _scale(row.head or row.baseline)
    if drop.worse <= 0 or not _is_drop(row.classification, drop.worse, budget):
        return None
    significance = bool(rule.require_significance)
    fails = regression_fails(row.interval, row.delta, max_regression=budget,
                             require_significance=significance,
                             higher_is_better=row.higher_is_better)
    if config.fail_on not in ("regression", "any"):
        drop.note = f"not gated: fail_on {config.fail_on}"
    elif fails:
        drop.gated = True
    elif significance and drop.worse > budget + _TOLERANCE:
        drop.note = "not significant: require_significance"
    else:
        drop.note = f"within max_regression {budget:g}"
    return drop


def _rubric_drop(row: RubricComparison, config: GateConfig) -> MetricDrop | None:
    if row.delta is None or row.delta >= 0:
        return None
    budget = config.rule_for(row.suite, row.metric_name).max_regression or 0.0
    if not _is_drop(row.classification, -row.delta, budget):
        return None
    gated_rules = config.fail_on in ("regression", "any")
    return MetricDrop(
        suite=row.suite, metric_name=row.metric_name, rubric_id=row.rubric_id,
        delta=row.delta, classification=row.classification,
        min_effect=row.min_effect or 0.0, budget=budget, scaled=-row.delta,
        note="rubrics are not gated" if gated_rules
        else f"not gated: fail_on {config.fail_on}",
    )


def find_drops(comparison: Comparison, config: GateConfig) -> list[MetricDrop]:
    """The metrics and rubrics that got worse than the baseline (module docstring), the
    largest drop (``scaled``) first; none without a baseline."""
    if not comparison.has_baseline:
        return []
    metrics = [d for d in (_metric_drop(m, config) for m in comparison.metrics) if d]
    named = {(d.suite, d.metric_name) for d in metrics}
    rubrics = [
        d for d in (_rubric_drop(r, config) for r in comparison.rubrics)
        if d and (d.suite, d.metric_name) not in named
    ]
    return sorted(metrics + rubrics, key=lambda d: d.scaled, reverse=True)


def _scale(side: MetricSide | None) -> float:
    """The metric's value range (max − min) when both ends are known and finite, else 1."""
    if side is None or side.min_value is None or side.max_value is None:
        return 1.0
    span = side.max_value - side.min_value
    return span if math.isfinite(span) and span > 0 else 1.0


def dropped_cases(
    comparison: Comparison, drops: list[MetricDrop]
) -> list[tuple[CaseComparison, list[CaseDrop]]]:
    """The matched eval cases that drove ``drops`` (module docstring), each with its drops
    (largest first), ordered by their largest ``scaled`` drop, then in case order."""
    wanted: dict[tuple[str, str], tuple[float, bool, float]] = {}
    rows = {(m.suite, m.metric_name): m for m in comparison.metrics}
    for drop in drops:
        row = rows.get((drop.suite, drop.metric_name))
        side = (row.head or row.baseline) if row else None
        higher = row.higher_is_better if row else True
        wanted.setdefault((drop.suite, drop.metric_name),
                          (drop.min_effect, higher, _scale(side)))
    suites = {suite for suite, _ in wanted}
    # A judge flip (same answer) is the judge's change, never a case behind a drop.
    flipped = {(f.suite, f.eval_set_id, f.eval_id, f.metric_name) for f in comparison.judge_flips}
    found = []
    for case in comparison.cases:
        if case.suite not in suites or case.baseline_status is None or case.head_status is None:
            continue
        if case.largest_drop <= 0:
            continue  # no gated metric of it got worse: its rows need not be built
        own = []
        for d in case.metrics:
            rule = wanted.get((case.suite, d.metric_name))
            if (rule is None or d.delta is None or d.baseline is None or d.head is None
                    or (*case.key, d.metric_name) in flipped):
                continue
            min_effect, higher, scale = rule
            worse = -d.delta if higher else d.delta
            if worse > min_effect + _TOLERANCE:
                own.append(CaseDrop(d.metric_name, d.baseline, d.head, worse, worse / scale))
        if own:
            own.sort(key=lambda x: x.scaled, reverse=True)
            found.append((case, own))
    found.sort(key=lambda item: item[1][0].scaled, reverse=True)
    return found


class CaseCrash(BaseModel):
    """An eval case that passed on the baseline and crashed on the head (module docstring).

    Attributes:
        why: the head's error of the case (``the agent raised RuntimeError: … (at
            agent.py:12)``), or which gated metrics got no score.
        agent_raised: the agent's own code raised (the case failed: the agent's fault);
            False when it errored or a metric got no verdict.
        gated: the gate failed on it; ``note`` says why not otherwise.
    """

    suite: str
    eval_set_id: str
    eval_id: str
    why: str
    agent_raised: bool = False
    gated: bool = False
    note: str = ""


def _crash_why(case: CaseComparison) -> str | None:
    """Why a head case that is not passing has no verdict of its own scores (None when its
    scores decided it): its run error, or its gated metrics without a score."""
    if case.error:
        return case.error
    if case.head_status not in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED):
        return None
    missing = [d.metric_name for d in case.metrics
               if d.head_status in (MetricStatus.ERROR, MetricStatus.NOT_EVALUATED)]
    what = "errored" if case.head_status == CaseStatus.ERROR else "not evaluated"
    return f"{', '.join(f'`{m}`' for m in missing) or 'its metrics'} {what}"


def crashed_cases(comparison: Comparison, config: GateConfig) -> list[CaseCrash]:
    """The eval cases that passed on the baseline and crashed on the head (module
    docstring), in case order; none without a baseline."""
    if not comparison.has_baseline:
        return []
    regression = config.fail_on in ("regression", "any")
    out = []
    for case in comparison.cases:
        if case.baseline_status != CaseStatus.PASSED or case.head_status in (
                None, CaseStatus.PASSED):
            continue
        why = _crash_why(case)
        if why is None:
            continue
        raised = case.head_status == CaseStatus.FAILED
        crash = CaseCrash(suite=case.suite, eval_set_id=case.eval_set_id,
                          eval_id=case.eval_id, why=why, agent_raised=raised)
        if not regression:
            crash.note = f"not gated: fail_on {config.fail_on}"
        elif raised or config.not_evaluated == "fail":
            crash.gated = True
        else:
            crash.note = "not_evaluated: warn"
        out.append(crash)
    return out

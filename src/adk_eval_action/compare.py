"""Comparing head results with a baseline: per metric, per rubric, per eval case.

Rules (all scores in the metric's own range):

* A metric's value on one side is the mean of its score over every eval case and run that
  has a score; NOT_EVALUATED and errored runs are counted separately, never averaged as 0.
* Its pass rate is passed / (passed + failed) over case runs, by the status ADK's evaluator
  gave the metric.
* A rubric's value is the mean, by rubric id, of its per-case (overall) score over cases and
  runs.
* Eval cases match by (suite, eval set id, eval id). A case passes when every run passed;
  it is ``error`` when a run errored, ``not_evaluated`` when no metric gave a verdict.
* Noise (:mod:`adk_eval_action.noise`): every metric and rubric delta gets a 95% paired
  bootstrap interval over eval cases (each case's runs averaged first; 2000 resamples,
  seeded, so the same inputs give the same numbers) unless every paired case has a single
  run on both sides, in which case the interval says so (``ONE_RUN_REASON``). The interval
  is of the mean per-case change over cases scored on both sides, which can differ from
  ``delta`` (all scores on each side) when cases were added or removed. Each delta is then
  classified regressed / improved / unchanged / inconclusive against ``min_effect``
  (:func:`adk_eval_action.noise.classify`), from the point delta when there is no interval.
* A case is flaky on a side when its pass/fail status, overall or for one metric, differs
  across runs (:func:`adk_eval_action.noise.flaky_cases`).

Cost: one walk over each side's results, then one bootstrap draw per distinct number of
paired cases, shared by all metrics and rubrics, and one matrix product per block for all
of them. For 10,000 cases x 8 metrics x 3 runs (``benchmarks/bench_compare.py``) ~3.5 s
on a 2-core EPYC VM: ~2 s walking the 480,000 result objects (reading their fields
alone takes ~1.2 s), ~0.4 s drawing the resamples, ~0.5 s building the per-case rows;
~220 MB allocated at peak.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from .noise import (
    NO_CASES_REASON,
    ONE_CASE_REASON,
    ONE_RUN_REASON,
    Classification,
    DeltaInterval,
    bootstrap_counts,
    classify,
    flaky_cases,
)
from .results import (
    CaseStatus,
    ErrorRecord,
    MetricResult,
    MetricStatus,
    RunMetadata,
    RunRecord,
    RunResults,
)

CaseKey = tuple[str, str, str]
"""(suite, eval set id, eval id)."""
MetricKey = tuple[str, str]
"""(suite, metric name)."""
RubricKey = tuple[str, str, str]
"""(suite, metric name, rubric id)."""
MinEffect = float | Callable[[str, str], float]
"""The smallest delta worth calling, in metric units: one value, or a function of
(suite, metric name) such as :meth:`adk_eval_action.config.GateConfig.min_effect_for`."""

DEFAULT_RESAMPLES = 2000
CHANGE_ORDER = (
    "errored",
    "newly_failing",
    "newly_passing",
    "still_failing",
    "failing",
    "new",
    "removed",
)
"""How the comment orders changed eval cases: what needs a look first."""
DEFAULT_CONFIDENCE = 0.95


class MetricSide(BaseModel):
    """One metric on one side (baseline or head) of the comparison.

    ``mean`` is over every scored case run (metric units); ``scored`` counts those runs;
    ``passed``/``failed``/``not_evaluated``/``errors`` count case runs by status.
    """

    mean: float | None = None
    scored: int = 0
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    errors: int = 0
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    informational: bool = False
    reasons: list[str] = Field(default_factory=list)

    @property
    def pass_rate(self) -> float | None:
        """passed / (passed + failed), or None when no run had a verdict."""
        total = self.passed + self.failed
        return self.passed / total if total else None


class MetricComparison(BaseModel):
    """A metric of a suite, baseline vs head. ``delta`` = head mean − baseline mean.

    ``interval`` is the paired bootstrap of the per-case change (None without a baseline;
    without bounds, its ``reason`` says why); ``classification`` is None without a delta.
    """

    suite: str
    metric_name: str
    baseline: MetricSide | None = None
    head: MetricSide | None = None
    delta: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None

    @property
    def informational(self) -> bool:
        """True for efficiency metrics (tokens, duration, tool calls): shown, never gated."""
        side = self.head or self.baseline
        return bool(side and side.informational)

    @property
    def higher_is_better(self) -> bool:
        """The metric's direction (head's when known)."""
        side = self.head or self.baseline
        return side.higher_is_better if side else True

    @property
    def only_in(self) -> Literal["head", "baseline"] | None:
        """Which side alone has the metric, or None when both have it."""
        if self.head is None:
            return "baseline"
        return "head" if self.baseline is None else None


class RubricComparison(BaseModel):
    """A rubric (by id) of a rubric metric, baseline vs head; scores are in [0, 1].

    ``*_n`` count the scored (case, run) verdicts; ``interval`` and ``classification`` as
    for :class:`MetricComparison`, over per-case rubric means.
    """

    suite: str
    metric_name: str
    rubric_id: str
    text: str | None = None
    baseline_mean: float | None = None
    head_mean: float | None = None
    baseline_n: int = 0
    head_n: int = 0
    delta: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None


class MetricDelta(BaseModel):
    """One metric of one eval case: mean over scored runs on each side (metric units)."""

    metric_name: str
    baseline: float | None = None
    head: float | None = None
    delta: float | None = None
    head_status: MetricStatus | None = None
    reason: str | None = None


class CaseComparison(BaseModel):
    """One eval case, baseline vs head.

    ``flaky_head`` / ``flaky_baseline`` map ``"overall"`` or a metric name to
    ``(passing runs, runs with a verdict)`` where runs disagree, e.g.
    ``{"response_match_score": (2, 3)}``.
    """

    suite: str
    eval_set_id: str
    eval_id: str
    file: str | None = None
    line: int | None = None
    baseline_status: CaseStatus | None = None
    head_status: CaseStatus | None = None
    change: Literal[
        "newly_failing",
        "newly_passing",
        "new",
        "removed",
        "errored",
        "still_failing",
        "failing",
        "unchanged",
    ]
    metrics: list[MetricDelta] = Field(default_factory=list)
    error: str | None = None
    head_passes: int = 0
    head_runs: int = 0
    flaky_head: dict[str, tuple[int, int]] = Field(default_factory=dict)
    flaky_baseline: dict[str, tuple[int, int]] = Field(default_factory=dict)

    @property
    def key(self) -> CaseKey:
        """(suite, eval set id, eval id)."""
        return (self.suite, self.eval_set_id, self.eval_id)

    @property
    def flaky(self) -> bool:
        """Flaky on either side."""
        return bool(self.flaky_head or self.flaky_baseline)


class Comparison(BaseModel):
    """Everything the comment, summary and gate need. ``baseline_note`` says which
    baseline was used or why there is none; ``no_interval_reason`` says why no delta has an
    interval (e.g. one run per case), None when some do or there is no baseline."""

    has_baseline: bool
    baseline_note: str
    head_metadata: RunMetadata
    baseline_metadata: RunMetadata | None = None
    metrics: list[MetricComparison] = Field(default_factory=list)
    rubrics: list[RubricComparison] = Field(default_factory=list)
    cases: list[CaseComparison] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    num_runs: int = 1
    comparability: list[str] = Field(default_factory=list)
    confidence: float = DEFAULT_CONFIDENCE
    no_interval_reason: str | None = None

    @property
    def flaky_cases(self) -> list[CaseComparison]:
        """Cases flaky on either side, in case order."""
        return [c for c in self.cases if c.flaky_head or c.flaky_baseline]

    @property
    def changed_cases(self) -> list[CaseComparison]:
        """Cases that are not ``unchanged``, worst change first (``CHANGE_ORDER``), then in
        case order. A property rather than a template filter chain: selecting among
        10,000 cases in the sandboxed template took most of the render time."""
        rank = {change: index for index, change in enumerate(CHANGE_ORDER)}
        changed = [c for c in self.cases if c.change != "unchanged"]
        return sorted(changed, key=lambda c: rank[c.change])


_PASSED = MetricStatus.PASSED
_FAILED = MetricStatus.FAILED
_NOT_EVALUATED = MetricStatus.NOT_EVALUATED
_ERROR = MetricStatus.ERROR
# A case metric's status is its first run's status unless a later run is one of these:
# a failure anywhere is what the reader must see.
_WORST = (_ERROR, _NOT_EVALUATED, _FAILED)
_CASE_PASSED = CaseStatus.PASSED

# Elements (resamples x cases) of the counts matrix multiplied per block: the reasoning and
# value of noise._BLOCK_ELEMENTS (a block's float64 copy stays cache-resident).
_BLOCK_ELEMENTS = 262_144


@dataclass(slots=True)
class _PerCase:
    """One metric's (or rubric's) per-case values on one side, in case-id order of
    appearance: the case id, the mean over the case's scored runs (fsum: exact and
    order-free, as noise.paired_bootstrap) and how many runs were scored."""

    ids: list[int] = field(default_factory=list)
    means: list[float] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)

    def add(self, case_id: int, scores: list[float]) -> float:
        """Records a case's scores (non-empty); returns their mean."""
        mean = math.fsum(scores) / len(scores)
        self.ids.append(case_id)
        self.means.append(mean)
        self.runs.append(len(scores))
        return mean


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for the duration (compare, gate, render).

    These stages allocate ~10^6 small acyclic objects (accumulators, rows, strings); the
    allocation bursts trigger full collections that re-scan the caller's millions of live
    result objects, which measured 2-13 s extra at 10,000 cases x 8 metrics x 3 runs.
    Nothing made here forms a cycle worth collecting early, so pausing loses nothing; the
    previous state is restored on exit (nested uses are fine).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(slots=True)
class _CaseMetric:
    """One metric of one eval case on one side, accumulated over the case's runs.
    ``mean`` is set when the case is indexed (fsum: exact, order-free)."""

    scores: list[float] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)
    not_evaluated: int = 0
    errors: int = 0
    status: MetricStatus | None = None
    reason: str | None = None
    mean: float | None = None


@dataclass(slots=True)
class _Totals:
    """One metric on one side over all cases: every scored value and run counts by status."""

    scores: list[float] = field(default_factory=list)
    passed: int = 0
    verdicts: int = 0
    not_evaluated: int = 0
    errors: int = 0


@dataclass(slots=True)
class _Case:
    """One eval case on one side."""

    file: str | None
    line: int | None
    runs: list[RunRecord]
    metrics: dict[str, _CaseMetric]
    flaky: dict[str, tuple[int, int]]
    status: CaseStatus


@dataclass(slots=True)
class _Side:
    """One side's results indexed once, so nothing below re-walks them (a walk per metric
    was the hot spot at 10,000 cases)."""

    cases: dict[CaseKey, _Case] = field(default_factory=dict)
    first_result: dict[MetricKey, MetricResult] = field(default_factory=dict)
    totals: dict[MetricKey, _Totals] = field(default_factory=dict)
    reasons: dict[MetricKey, dict[str, None]] = field(default_factory=dict)
    metric_per_case: dict[MetricKey, _PerCase] = field(default_factory=dict)
    rubric_values: dict[RubricKey, list[float]] = field(default_factory=dict)
    rubric_per_case: dict[RubricKey, _PerCase] = field(default_factory=dict)
    rubric_text: dict[RubricKey, str | None] = field(default_factory=dict)
    num_runs: int = 1


def _case_status(
    run_statuses: set[CaseStatus], metric_error: bool, metric_not_evaluated: bool
) -> CaseStatus:
    """A case fails when any run failed; otherwise a run error, or a (non-informational)
    metric that errored or was not evaluated (ADK skips those when it derives a case's
    status), makes it ``error`` or ``not_evaluated``: never ``passed``. The flags come from
    the index walk, which sees every metric anyway."""
    if not run_statuses or CaseStatus.ERROR in run_statuses:
        return CaseStatus.ERROR
    if CaseStatus.FAILED in run_statuses:
        return CaseStatus.FAILED
    if metric_error:
        return CaseStatus.ERROR
    if CaseStatus.NOT_EVALUATED in run_statuses or metric_not_evaluated:
        return CaseStatus.NOT_EVALUATED
    return CaseStatus.PASSED


def _register_metric(side: _Side, mkey: MetricKey, metric: MetricResult) -> None:
    """First sight of a metric on this side: keep its threshold, range and direction."""
    side.first_result[mkey] = metric
    side.totals[mkey] = _Totals()
    side.metric_per_case[mkey] = _PerCase()
    side.reasons[mkey] = {}


def _register_rubric(side: _Side, rkey: RubricKey) -> None:
    side.rubric_values[rkey] = []
    side.rubric_per_case[rkey] = _PerCase()
    side.rubric_text[rkey] = None


def _index_case(side: _Side, suite: str, case_id: int, runs: list[RunRecord]) -> _Case:
    # The innermost loops of compare (once per metric result, once per rubric verdict) run
    # ~10^6 times at 10,000 cases: kept flat, with no call on the common path.
    metrics: dict[str, _CaseMetric] = {}
    case_rubrics: dict[RubricKey, list[float]] = {}
    overall = []
    run_statuses = set()
    metric_error = metric_not_evaluated = False
    for run in runs:
        run_status = run.status
        overall.append(run_status == _CASE_PASSED)
        run_statuses.add(run_status)
        for metric in run.metrics:
            name = metric.metric_name
            acc = metrics.get(name)
            if acc is None:
                acc = metrics[name] = _CaseMetric()
                if (suite, name) not in side.first_result:
                    _register_metric(side, (suite, name), metric)
            status = metric.status
            score = metric.score
            if status in (_PASSED, _FAILED):
                acc.verdicts.append(status == _PASSED)
                if score is not None:
                    acc.scores.append(score)
            elif status == _NOT_EVALUATED:
                acc.not_evaluated += 1
                metric_not_evaluated = metric_not_evaluated or not metric.informational
            elif status == _ERROR:
                acc.errors += 1
                metric_error = metric_error or not metric.informational
            elif score is not None:
                acc.scores.append(score)
            if acc.status is None or (status in _WORST and acc.status not in _WORST):
                acc.status = status
            if metric.reason:
                acc.reason = acc.reason or metric.reason
                side.reasons[(suite, name)][metric.reason] = None
            for rubric in metric.rubrics:
                rkey = (suite, name, rubric.rubric_id)
                scores = case_rubrics.get(rkey)
                if scores is None:
                    scores = case_rubrics[rkey] = []
                    if rkey not in side.rubric_values:
                        _register_rubric(side, rkey)
                if side.rubric_text[rkey] is None:
                    side.rubric_text[rkey] = rubric.text
                if rubric.score is not None:
                    scores.append(rubric.score)
    for rkey, scores in case_rubrics.items():
        if scores:
            side.rubric_per_case[rkey].add(case_id, scores)
            side.rubric_values[rkey].extend(scores)
    verdicts: dict[str, list[bool]] = {"overall": overall} if len(runs) > 1 else {}
    for name, acc in metrics.items():
        mkey = (suite, name)
        totals = side.totals[mkey]
        if acc.scores:
            acc.mean = side.metric_per_case[mkey].add(case_id, acc.scores)
            totals.scores.extend(acc.scores)
        totals.passed += acc.verdicts.count(True)
        totals.verdicts += len(acc.verdicts)
        totals.not_evaluated += acc.not_evaluated
        totals.errors += acc.errors
        if len(acc.verdicts) > 1:
            verdicts[name] = acc.verdicts
    # noise.flaky_cases is the rule; a case whose runs all agree cannot be flaky, so only
    # disagreeing entries are handed over (most cases agree, and this runs per case).
    mixed = {name: v for name, v in verdicts.items() if True in v and False in v}
    flaky = flaky_cases(mixed) if mixed else {}
    status = _case_status(run_statuses, metric_error, metric_not_evaluated)
    return _Case(file=None, line=None, runs=runs, metrics=metrics, flaky=flaky, status=status)


def _index_side(results: RunResults, case_ids: dict[CaseKey, int]) -> _Side:
    """Indexes one side; ``case_ids`` (shared by both sides, extended here) numbers every
    case so both sides' per-case values line up in arrays."""
    side = _Side(num_runs=max((s.num_runs for s in results.suites), default=1))
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                key = (suite.name, eval_set.eval_set_id, case.eval_id)
                case_id = case_ids.setdefault(key, len(case_ids))
                indexed = _index_case(side, suite.name, case_id, case.runs)
                indexed.file, indexed.line = eval_set.file, case.line
                side.cases[key] = indexed
    return side


def _metric_side(side: _Side, key: MetricKey) -> MetricSide:
    first = side.first_result[key]
    totals = side.totals[key]
    scores = totals.scores
    return MetricSide(
        mean=math.fsum(scores) / len(scores) if scores else None,
        scored=len(scores),
        passed=totals.passed,
        failed=totals.verdicts - totals.passed,
        not_evaluated=totals.not_evaluated,
        errors=totals.errors,
        threshold=first.threshold,
        min_value=first.min_value,
        max_value=first.max_value,
        higher_is_better=first.higher_is_better,
        informational=first.informational,
        reasons=list(side.reasons[key]),
    )


def _spread(
    values: _PerCase, n_ids: int, side: str, case_keys: list[CaseKey]
) -> tuple[np.ndarray, np.ndarray]:
    """(mean, runs) arrays indexed by case id; runs is 0 where the case has no score.

    Raises:
        ValueError: A mean is not finite (a NaN or infinite score), naming the case.
    """
    ids = np.asarray(values.ids, dtype=np.intp)
    means = np.asarray(values.means, dtype=np.float64)
    if not np.isfinite(means).all():
        bad = int(ids[~np.isfinite(means)][0])
        raise ValueError(f"non-finite {side} score for case {case_keys[bad]!r}")
    mean = np.zeros(n_ids, dtype=np.float64)
    runs = np.zeros(n_ids, dtype=np.intp)
    mean[ids] = means
    runs[ids] = values.runs
    return mean, runs


@dataclass(slots=True)
class _Bootstrap:
    """The paired case bootstrap of :func:`adk_eval_action.noise.paired_bootstrap`, for many
    metrics at once.

    Same rule, same numbers (to the last bits of float rounding): per-case mean differences
    over the sorted shared cases, resamples drawn by
    :func:`adk_eval_action.noise.bootstrap_counts` from ``seed``, percentile interval, and
    the same no-interval reasons. Batched because at 10,000 cases the per-metric Python
    work (sorting keys, averaging runs) and one matrix-vector product per metric cost more
    than the draw: here keys are sorted once per case set, means come from the index, and
    all metrics sharing a case set are one matrix-matrix product per block. One draw per
    paired-case count is shared by all of them.
    """

    seed: int
    n_resamples: int
    confidence: float
    case_keys: list[CaseKey]
    order: np.ndarray = field(init=False)
    counts: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Case ids by sorted case key: noise.paired_bootstrap sorts the shared keys and
        # its resample columns follow that order, so this reproduces its numbers.
        ranked = sorted(range(len(self.case_keys)), key=self.case_keys.__getitem__)
        self.order = np.asarray(ranked, dtype=np.intp)

    def intervals(self, pairs: list[tuple[_PerCase, _PerCase]]) -> list[DeltaInterval]:
        """One interval per ``(baseline, head)`` pair of per-case values.

        Raises:
            ValueError: A per-case mean is not finite.
        """
        order, n_ids = self.order, len(self.case_keys)
        out: list[DeltaInterval | None] = [None] * len(pairs)
        groups: dict[bytes, tuple[int, list[tuple[int, np.ndarray, float]]]] = {}
        for index, (base, head) in enumerate(pairs):
            b_mean, b_runs = _spread(base, n_ids, "baseline", self.case_keys)
            h_mean, h_runs = _spread(head, n_ids, "head", self.case_keys)
            paired = order[(b_runs[order] > 0) & (h_runs[order] > 0)]
            n_cases = len(paired)
            diffs = h_mean[paired] - b_mean[paired]
            delta = math.fsum(diffs.tolist()) / n_cases if n_cases else 0.0
            reason = None
            if n_cases == 0:
                reason = NO_CASES_REASON
            elif n_cases < 2:
                reason = ONE_CASE_REASON
            elif not ((b_runs[paired] > 1) | (h_runs[paired] > 1)).any():
                reason = ONE_RUN_REASON
            if reason is not None:
                out[index] = DeltaInterval(
                    delta=delta,
                    low=None,
                    high=None,
                    n_cases=n_cases,
                    n_resamples=0,
                    confidence=self.confidence,
                    reason=reason,
                )
                continue
            group = groups.setdefault(paired.tobytes(), (n_cases, []))
            group[1].append((index, diffs, delta))
        for n_cases, members in groups.values():
            lows, highs = self._percentiles(np.column_stack([d for _, d, _ in members]))
            for (index, _, delta), low, high in zip(members, lows, highs, strict=True):
                out[index] = DeltaInterval(
                    delta=delta,
                    low=float(low),
                    high=float(high),
                    n_cases=n_cases,
                    n_resamples=self.n_resamples,
                    confidence=self.confidence,
                )
        return [i for i in out if i is not None]

    def _percentiles(self, diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper percentile of each column's resampled mean; ``diffs`` is
        (cases, metrics)."""
        n_cases = diffs.shape[0]
        counts = self.counts.get(n_cases)
        if counts is None:
            counts = self.counts[n_cases] = bootstrap_counts(
                n_cases, n_resamples=self.n_resamples, seed=self.seed
            )
        means = np.empty((counts.shape[0], diffs.shape[1]), dtype=np.float64)
        step = max(1, _BLOCK_ELEMENTS // n_cases)
        for start in range(0, counts.shape[0], step):
            block = counts[start : start + step]
            means[start : start + block.shape[0]] = (block.astype(np.float64) @ diffs) / n_cases
        alpha = 1.0 - self.confidence
        low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
        return low, high


def _delta(head: float | None, baseline: float | None) -> float | None:
    return None if head is None or baseline is None else head - baseline


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _ordered(head: Mapping, baseline: Mapping) -> list:
    """Head's keys in head order, then baseline-only keys."""
    return [*head, *(k for k in baseline if k not in head)]


def _compare_metrics(
    head: _Side,
    baseline: _Side | None,
    min_effect: Callable[[str, str], float],
    bootstrap: _Bootstrap,
) -> list[MetricComparison]:
    rows = []
    base_keys = baseline.first_result if baseline else {}
    for key in _ordered(head.first_result, base_keys):
        head_side = _metric_side(head, key) if key in head.first_result else None
        base_side = _metric_side(baseline, key) if baseline and key in base_keys else None
        rows.append(
            MetricComparison(
                suite=key[0],
                metric_name=key[1],
                baseline=base_side,
                head=head_side,
                delta=_delta(
                    head_side.mean if head_side else None, base_side.mean if base_side else None
                ),
            )
        )
    if baseline is None:
        return rows
    paired = [row for row in rows if row.delta is not None]
    empty = _PerCase()
    intervals = bootstrap.intervals(
        [
            (
                baseline.metric_per_case.get((r.suite, r.metric_name), empty),
                head.metric_per_case.get((r.suite, r.metric_name), empty),
            )
            for r in paired
        ]
    )
    for row, interval in zip(paired, intervals, strict=True):
        row.interval = interval
        row.classification = classify(
            interval,
            row.delta or 0.0,
            min_effect=min_effect(row.suite, row.metric_name),
            higher_is_better=row.higher_is_better,
        )
    return rows


def _compare_rubrics(
    head: _Side,
    baseline: _Side | None,
    min_effect: Callable[[str, str], float],
    bootstrap: _Bootstrap,
) -> list[RubricComparison]:
    rows = []
    pairs = []
    base_values_by_key = baseline.rubric_values if baseline else {}
    for key in _ordered(head.rubric_values, base_values_by_key):
        head_values = head.rubric_values.get(key, [])
        base_values = base_values_by_key.get(key, [])
        text = head.rubric_text.get(key) or (baseline.rubric_text.get(key) if baseline else None)
        row = RubricComparison(
            suite=key[0],
            metric_name=key[1],
            rubric_id=key[2],
            text=text,
            head_mean=_mean(head_values),
            baseline_mean=_mean(base_values),
            head_n=len(head_values),
            baseline_n=len(base_values),
        )
        row.delta = _delta(row.head_mean, row.baseline_mean)
        rows.append(row)
        if baseline is not None and row.delta is not None:
            pairs.append((row, baseline.rubric_per_case[key], head.rubric_per_case[key]))
    intervals = bootstrap.intervals([(base, head) for _, base, head in pairs])
    for (row, _, _), interval in zip(pairs, intervals, strict=True):
        row.interval = interval
        # A rubric is a yes/no verdict on its metric's scale: the metric's min_effect.
        row.classification = classify(
            interval, row.delta or 0.0, min_effect=min_effect(row.suite, row.metric_name)
        )
    return rows


def _metric_deltas(head: _Case | None, baseline: _Case | None) -> list[MetricDelta]:
    head_metrics = head.metrics if head else {}
    base_metrics = baseline.metrics if baseline else {}
    deltas = []
    for name in _ordered(head_metrics, base_metrics):
        head_acc, base_acc = head_metrics.get(name), base_metrics.get(name)
        head_mean = head_acc.mean if head_acc else None
        base_mean = base_acc.mean if base_acc else None
        deltas.append(
            MetricDelta(
                metric_name=name,
                baseline=base_mean,
                head=head_mean,
                delta=_delta(head_mean, base_mean),
                head_status=head_acc.status if head_acc else None,
                reason=head_acc.reason if head_acc else None,
            )
        )
    return deltas


def _case_change(head: CaseStatus | None, base: CaseStatus | None, has_baseline: bool) -> str:
    if not has_baseline:
        if head in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED):
            return "errored"
        # Nothing to be "still" failing against on a first run.
        return "failing" if head == CaseStatus.FAILED else "unchanged"
    if base is None:
        return "new"
    if head is None:
        return "removed"
    if head in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED):
        return "errored"
    failing = head == CaseStatus.FAILED
    was_failing = base != CaseStatus.PASSED
    if failing and not was_failing:
        return "newly_failing"
    if not failing and was_failing:
        return "newly_passing"
    return "still_failing" if failing else "unchanged"


def _compare_cases(head: _Side, baseline: _Side | None) -> list[CaseComparison]:
    base_cases = baseline.cases if baseline else {}
    cases = []
    for key in _ordered(head.cases, base_cases):
        head_case, base_case = head.cases.get(key), base_cases.get(key)
        head_runs = head_case.runs if head_case else []
        head_status = head_case.status if head_case else None
        base_status = base_case.status if base_case else None
        where = head_case or base_case
        cases.append(
            CaseComparison(
                suite=key[0],
                eval_set_id=key[1],
                eval_id=key[2],
                file=where.file if where else None,
                line=where.line if where else None,
                baseline_status=base_status,
                head_status=head_status,
                change=_case_change(head_status, base_status, baseline is not None),
                metrics=_metric_deltas(head_case, base_case),
                error=next((r.error for r in head_runs if r.error), None),
                head_passes=sum(r.status == _CASE_PASSED for r in head_runs),
                head_runs=len(head_runs),
                flaky_head=head_case.flaky if head_case else {},
                flaky_baseline=base_case.flaky if base_case else {},
            )
        )
    return cases


def _no_interval_reason(metrics: list[MetricComparison]) -> str | None:
    """The reason no delta has an interval, when none has; None when one has or none
    was attempted."""
    intervals = [m.interval for m in metrics if m.interval is not None]
    if not intervals or any(i.has_interval for i in intervals):
        return None
    return intervals[0].reason


def _comparability(head: RunResults, baseline: RunResults) -> list[str]:
    notes = []
    if head.metadata.adk_version != baseline.metadata.adk_version and baseline.metadata.adk_version:
        notes.append(
            f"google-adk {baseline.metadata.adk_version} (baseline) vs "
            f"{head.metadata.adk_version} (head)"
        )
    base_suites = {s.name: s for s in baseline.suites}
    for suite in head.suites:
        other = base_suites.get(suite.name)
        if other is None:
            notes.append(f"suite `{suite.name}` has no baseline")
            continue
        if other.eval_config_hash and other.eval_config_hash != suite.eval_config_hash:
            notes.append(f"suite `{suite.name}`: the eval config changed")
        if other.judge_models and other.judge_models != suite.judge_models:
            notes.append(f"suite `{suite.name}`: judge models differ")
        if other.num_runs != suite.num_runs:
            notes.append(
                f"suite `{suite.name}`: num_runs {other.num_runs} (baseline) vs {suite.num_runs}"
            )
        base_sets = {e.eval_set_id: e for e in other.eval_sets}
        for eval_set in suite.eval_sets:
            base_set = base_sets.get(eval_set.eval_set_id)
            changed = base_set and base_set.content_hash != eval_set.content_hash
            if changed and base_set.content_hash:
                notes.append(f"suite `{suite.name}`: eval set `{eval_set.eval_set_id}` changed")
    return notes


def compare(
    head: RunResults,
    baseline: RunResults | None,
    baseline_note: str,
    *,
    min_effect: MinEffect = 0.0,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compares ``head`` with ``baseline`` (None: head scores only) by the module's rules.

    Args:
        head: Results of the PR head.
        baseline: Results of the base branch, or None.
        baseline_note: Which baseline this is, or why there is none (shown in the comment).
        min_effect: Smallest delta worth calling regressed or improved (metric units), one
            value or a function of (suite, metric name).
        seed: Bootstrap seed; the same inputs and seed give the same intervals.
        n_resamples: Bootstrap resamples, ``>= 1``.
        confidence: Two-sided interval level in ``(0, 1)``.

    Raises:
        ValueError: A ``min_effect`` below 0, a non-finite score, or a bad ``confidence``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    effect: Callable[[str, str], float] = (
        min_effect if callable(min_effect) else (lambda _suite, _metric: float(min_effect))
    )
    with gc_paused():
        case_ids: dict[CaseKey, int] = {}
        head_side = _index_side(head, case_ids)
        base_side = _index_side(baseline, case_ids) if baseline is not None else None
        bootstrap = _Bootstrap(
            seed=seed, n_resamples=n_resamples, confidence=confidence, case_keys=list(case_ids)
        )
        metrics = _compare_metrics(head_side, base_side, effect, bootstrap)
        return Comparison(
            has_baseline=baseline is not None,
            baseline_note=baseline_note,
            head_metadata=head.metadata,
            baseline_metadata=baseline.metadata if baseline else None,
            metrics=metrics,
            rubrics=_compare_rubrics(head_side, base_side, effect, bootstrap),
            cases=_compare_cases(head_side, base_side),
            errors=head.all_errors(),
            warnings=head.warnings,
            num_runs=head_side.num_runs,
            comparability=_comparability(head, baseline) if baseline else [],
            confidence=confidence,
            no_interval_reason=_no_interval_reason(metrics),
        )

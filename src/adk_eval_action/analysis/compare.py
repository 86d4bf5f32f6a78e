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
* Deltas use *matched* eval cases only, those scored on both sides: ``delta`` is the mean
  over them of each case's ``head − baseline`` (runs averaged first), and
  ``baseline_matched``/``head_matched`` are the sides' means over the same cases. New and
  removed cases are listed (``change``) and never move a delta; ``head.mean`` and
  ``baseline.mean`` stay the all-case means.
* Every metric and rubric delta gets the paired sign-flip test of
  :mod:`adk_eval_action.analysis.paired` (exact with few cases, 2000 seeded sign patterns
  otherwise), corrected per direction across all of them, and an interval that is the
  inverted corrected test; each delta is then classified regressed / improved / unchanged
  / inconclusive against ``min_effect`` (:func:`adk_eval_action.analysis.noise.classify`). The
  seed, pattern count and levels are recorded in ``Comparison.tests``. Informational
  metrics (durations, tokens) use at least ``informational_min_effect`` of their matched
  baseline mean as min_effect.
* A case is flaky on a side when its pass/fail status, overall or for one metric, differs
  across runs (:func:`adk_eval_action.analysis.noise.flaky_cases`).

Cost: each side is read as a :class:`~adk_eval_action.results.scoretable.ScoreTable` (numpy columns;
a loaded :class:`RunResults` is turned into one first, ~0.9 s per side at the size below),
and every aggregate is a group-by over its columns; then one draw of sign patterns per distinct
number of matched cases, shared by all metrics and rubrics, and one matrix product per
block for all of them. Per-case metric rows are built when first read (:class:`CaseMetrics`). For
10,000 cases x 8 metrics x 3 runs from tables (``benchmarks/bench_compare.py``) compare
takes ~0.45-0.6 s on a 2-core EPYC VM, of which ~0.15 s is drawing the resamples, and
compare + gate + render ~0.7 s with a process peak of ~200 MB.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, Field, PlainSerializer

from adk_eval_action.analysis.noise import Classification, DeltaInterval, classify, disagree
from adk_eval_action.analysis.paired import (
    DEFAULT_RESAMPLES,
    PairedInput,
    TestMethod,
    paired_tests,
)
from adk_eval_action.results.io import gc_paused
from adk_eval_action.results.model import (
    AVERAGED_STATUSES,
    CaseStatus,
    ErrorRecord,
    MetricStatus,
    RunMetadata,
    RunResults,
)
from adk_eval_action.results.scoretable import (
    CASE_STATUSES,
    METRIC_STATUSES,
    CaseKey,
    MetricInfo,
    MetricKey,
    RubricKey,
    ScoreTable,
    fsum_mean_by_group,
)

MinEffect = float | Callable[[str, str], float]
"""The smallest delta worth calling, in metric units: one value, or a function of
(suite, metric name) such as :meth:`adk_eval_action.project.config.GateConfig.min_effect_for`."""

DEFAULT_INFORMATIONAL_MIN_EFFECT = 0.1
"""Informational metrics' min_effect as a share of their matched baseline mean (10%): wall
clock and token counts move by more than that on noise alone."""
NO_RUNS_ERROR = "no runs were recorded for this eval case (the run was cut short?)"
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
    """A metric of a suite, baseline vs head, over matched eval cases (module docstring).

    ``delta`` is the mean per-case change ``head − baseline`` over the matched cases (None
    without any), ``baseline_matched``/``head_matched`` the sides' means over them;
    ``baseline``/``head`` describe each side over all its cases. ``interval`` is the
    corrected paired test of the change (None without a baseline; without bounds, its
    ``reason`` says why); ``classification`` is None without a baseline; ``min_effect``
    is the one it was called with (metric units).
    """

    suite: str
    metric_name: str
    baseline: MetricSide | None = None
    head: MetricSide | None = None
    delta: float | None = None
    baseline_matched: float | None = None
    head_matched: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None
    min_effect: float | None = None

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

    ``*_mean`` are over every scored verdict of a side, ``*_n`` count them; ``delta``,
    ``*_matched``, ``interval`` and ``classification`` as for :class:`MetricComparison`,
    over per-case rubric means of matched cases.
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
    baseline_matched: float | None = None
    head_matched: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None
    min_effect: float | None = None


class MetricDelta(NamedTuple):
    """One metric of one eval case: mean over scored runs on each side (metric units).

    A named tuple, not a pydantic model or dataclass: compare makes one per metric per case
    (80,000 at 10,000 cases x 8 metrics), and building them was the largest part of
    compare's time (validation ~7 us each, a dataclass ~2 us, a named tuple ~0.8 us here)."""

    metric_name: str
    baseline: float | None = None
    head: float | None = None
    delta: float | None = None
    head_status: MetricStatus | None = None
    reason: str | None = None


def _rows_as_dicts(rows: Sequence[MetricDelta]) -> list[dict[str, Any]]:
    return [row._asdict() for row in rows]


_MetricRows = Annotated[
    Sequence[MetricDelta], PlainSerializer(_rows_as_dicts, return_type=list[dict[str, Any]])
]
"""A case's metric rows; written as a list of objects by ``model_dump``/``model_dump_json``
(they may be a lazy :class:`CaseMetrics`, which pydantic cannot serialise itself)."""

ChangeKind = Literal[
    "newly_failing",
    "newly_passing",
    "new",
    "removed",
    "errored",
    "still_failing",
    "failing",
    "unchanged",
]


@dataclass(slots=True)
class CaseComparison:
    """One eval case, baseline vs head (a dataclass: 10,000 of them are made at 10,000 cases,
    and pydantic validation of each cost more than the rest of compare).

    ``metrics`` are the case's metric deltas (head's metrics in the case's order, then those
    only the baseline has); ``largest_drop`` is the largest worsening among its gated
    metrics, in each metric's direction and as a fraction of its value range when known
    (else in metric units), 0 when none got worse: what orders failing cases.
    ``flaky_head`` / ``flaky_baseline`` map ``"overall"`` or a metric name to ``(passing
    runs, runs with a verdict)`` where runs disagree, e.g. ``{"response_match_score": (2,
    3)}``.
    """

    suite: str
    eval_set_id: str
    eval_id: str
    change: ChangeKind
    file: str | None = None
    line: int | None = None
    baseline_status: CaseStatus | None = None
    head_status: CaseStatus | None = None
    metrics: _MetricRows = field(default_factory=list)
    error: str | None = None
    largest_drop: float = 0.0
    head_passes: int = 0
    head_runs: int = 0
    flaky_head: dict[str, tuple[int, int]] = field(default_factory=dict)
    flaky_baseline: dict[str, tuple[int, int]] = field(default_factory=dict)

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
    interval (e.g. one matched case), None when some do or there is no baseline; ``tests``
    records how the calls were made (None without a baseline). ``confidence`` is the
    nominal one-sided level of each interval end (1 − the per-direction error rate)."""

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
    tests: TestMethod | None = None

    @property
    def flaky_cases(self) -> list[CaseComparison]:
        """Cases flaky on either side, in case order."""
        return [c for c in self.cases if c.flaky_head or c.flaky_baseline]

    @property
    def new_cases(self) -> list[CaseComparison]:
        """Cases only the head has: listed, never in a delta."""
        return [c for c in self.cases if c.change == "new"]

    @property
    def removed_cases(self) -> list[CaseComparison]:
        """Cases only the baseline has: listed, never in a delta."""
        return [c for c in self.cases if c.change == "removed"]

    @property
    def changed_cases(self) -> list[CaseComparison]:
        """Cases that are not ``unchanged``, worst change first (``CHANGE_ORDER``), then in
        case order. A property rather than a template filter chain: selecting among
        10,000 cases in the sandboxed template took most of the render time."""
        rank = {change: index for index, change in enumerate(CHANGE_ORDER)}
        changed = [c for c in self.cases if c.change != "unchanged"]
        return sorted(changed, key=lambda c: rank[c.change])


# Status codes of ScoreTable columns.
_P, _F, _NE, _E = (
    METRIC_STATUSES.index(s)
    for s in (
        MetricStatus.PASSED,
        MetricStatus.FAILED,
        MetricStatus.NOT_EVALUATED,
        MetricStatus.ERROR,
    )
)
_RUN_P, _RUN_F, _RUN_NE, _RUN_E = (CASE_STATUSES.index(s) for s in CaseStatus)
_AVERAGED_CODES = [METRIC_STATUSES.index(s) for s in AVERAGED_STATUSES]


def _averaged(table: ScoreTable) -> np.ndarray:
    """Metric rows whose score goes into means: scored, with a status of
    :data:`adk_eval_action.results.model.AVERAGED_STATUSES`."""
    return table.m_has_score & np.isin(table.m_status, _AVERAGED_CODES)


def _count(groups: np.ndarray, mask: np.ndarray | None, n: int) -> np.ndarray:
    """How many rows of each group id in ``0..n-1`` (where ``mask``)."""
    return np.bincount(groups if mask is None else groups[mask], minlength=n)[:n]


def _first_where(groups: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """The first row (index into ``groups``) of each group where ``mask`` holds; -1 where
    none does."""
    rows = np.flatnonzero(mask)
    out = np.full(n, -1, dtype=np.intp)
    unique, first = np.unique(groups[rows], return_index=True)
    out[unique] = rows[first]
    return out


@dataclass(slots=True)
class _CaseMetrics:
    """Per (eval case, metric) groups of one side, ordered by case row and, within a case,
    by first appearance (so per-case metric order is the results file's).

    ``start[c]:start[c+1]`` are case row ``c``'s groups; ``case`` is each group's case row.
    ``mean`` is over the group's
    scored runs (NaN for none; summed in run order), ``scored`` how many; ``status`` is
    the first run's status unless a later run is error, not evaluated or failed (the
    first of those: a failure anywhere is what the reader must see); ``reason`` the first
    non-empty reason (-1: none); ``passes``/``verdicts`` count passed and passed+failed
    runs."""

    start: np.ndarray
    case: np.ndarray
    key: np.ndarray
    mean: np.ndarray
    scored: np.ndarray
    status: np.ndarray
    reason: np.ndarray
    passes: np.ndarray
    verdicts: np.ndarray


def _case_metrics(table: ScoreTable) -> _CaseMetrics:
    n_keys = max(1, len(table.metric_keys))
    raw = table.m_case.astype(np.int64) * n_keys + table.m_key
    _, first_row, group = np.unique(raw, return_index=True, return_inverse=True)
    # np.unique orders groups by (case, metric id); renumber by (case, first appearance).
    order = np.lexsort((first_row, table.m_case[first_row]))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    group = rank[group.ravel()]
    first_row = first_row[order]
    n = order.size
    status = table.m_status
    scored = _averaged(table)
    n_scored = _count(group, scored, n)
    # Each score divided by its group's size before summing: no overflow near the float
    # limit (a sum of three 1.7e308 scores is infinite, their mean is not).
    scaled = table.m_score[scored] / n_scored[group[scored]]
    mean = np.where(
        n_scored > 0, np.bincount(group[scored], weights=scaled, minlength=n)[:n], np.nan
    )
    worst = _first_where(group, (status == _E) | (status == _NE) | (status == _F), n)
    status_row = np.where(worst >= 0, worst, first_row)
    reason_row = _first_where(group, table.m_reason >= 0, n)
    cases = table.m_case[first_row]
    return _CaseMetrics(
        start=np.searchsorted(cases, np.arange(len(table.case_keys) + 1)),
        case=cases,
        key=table.m_key[first_row],
        mean=mean,
        scored=n_scored,
        status=status[status_row],
        reason=np.where(reason_row >= 0, table.m_reason[np.maximum(reason_row, 0)], -1),
        passes=_count(group, status == _P, n),
        verdicts=_count(group, (status == _P) | (status == _F), n),
    )


@dataclass(slots=True)
class _Side:
    """One side's table, indexed once for everything compare computes.

    ``ids`` maps the table's case rows to case ids shared by both sides; ``case_status``,
    ``passes``, ``runs``, ``errors`` and ``flaky`` are per case row (``flaky`` only for
    flaky rows); ``metric_rows``/``rubric_rows`` map keys to table indices."""

    table: ScoreTable
    ids: np.ndarray
    groups: _CaseMetrics
    case_status: list[CaseStatus]
    passes: list[int]
    runs: list[int]
    errors: dict[int, str]
    flaky: dict[int, dict[str, tuple[int, int]]]
    metric_rows: dict[MetricKey, int]
    rubric_rows: dict[RubricKey, int]


def _case_statuses(table: ScoreTable) -> tuple[list[CaseStatus], np.ndarray, np.ndarray]:
    """Per case row: status, passing runs (see below), runs.

    A case fails when any run failed; otherwise a run error, or a (non-informational)
    metric that errored or was not evaluated (ADK skips those when it derives a case's
    status), makes it ``error`` or ``not_evaluated``: never ``passed``."""
    n = len(table.case_keys)
    run_case, run_status = table.run_case, table.run_status
    runs = _count(run_case, None, n)
    gated = ~table.m_informational
    # A run passes when ADK said so and none of its gated metrics errored or went
    # unevaluated (ADK leaves those out when it derives a run's status).
    unsure = gated & ((table.m_status == _E) | (table.m_status == _NE))
    passed_run = run_status == _RUN_P
    passed_run[table.m_run[unsure]] = False
    passes = _count(run_case, passed_run, n)
    metric_error = _count(table.m_case, gated & (table.m_status == _E), n) > 0
    metric_ne = _count(table.m_case, gated & (table.m_status == _NE), n) > 0
    run_error = _count(run_case, run_status == _RUN_E, n) > 0
    run_failed = _count(run_case, run_status == _RUN_F, n) > 0
    run_ne = _count(run_case, run_status == _RUN_NE, n) > 0
    codes = np.select(
        [(runs == 0) | run_error, run_failed, metric_error, run_ne | metric_ne],
        [_RUN_E, _RUN_F, _RUN_E, _RUN_NE],
        default=_RUN_P,
    )
    return [CASE_STATUSES[c] for c in codes.tolist()], passes, runs


def _flaky(
    table: ScoreTable, groups: _CaseMetrics, passes: np.ndarray, runs: np.ndarray
) -> dict[int, dict[str, tuple[int, int]]]:
    """Flaky case rows: ``"overall"`` when run statuses disagree, then each metric whose
    verdicts disagree, as ``(passes, verdicts)`` (:func:`.noise.disagree`,
    the rule of :func:`.noise.flaky_cases`, applied to every case at once)."""
    flaky: dict[int, dict[str, tuple[int, int]]] = {}
    for row in np.flatnonzero(disagree(passes, runs)).tolist():
        flaky[row] = {"overall": (int(passes[row]), int(runs[row]))}
    mixed = np.flatnonzero(disagree(groups.passes, groups.verdicts))
    if mixed.size:
        names = [table.metric_keys[k][1] for k in groups.key[mixed].tolist()]
        for row, name, p, v in zip(
            groups.case[mixed].tolist(),
            names,
            groups.passes[mixed].tolist(),
            groups.verdicts[mixed].tolist(),
            strict=True,
        ):
            flaky.setdefault(row, {})[name] = (p, v)
    return flaky


def _index_side(table: ScoreTable, case_ids: dict[CaseKey, int]) -> _Side:
    """Indexes one side; ``case_ids`` (shared by both sides, extended here) numbers every
    case so both sides' per-case values line up in arrays."""
    ids = np.fromiter(
        (case_ids.setdefault(k, len(case_ids)) for k in table.case_keys),
        dtype=np.intp,
        count=len(table.case_keys),
    )
    groups = _case_metrics(table)
    statuses, passes, runs = _case_statuses(table)
    errors: dict[int, str] = {}
    for run_row, error in sorted(table.run_errors.items()):
        errors.setdefault(int(table.run_case[run_row]), error)
    return _Side(
        table=table,
        ids=ids,
        groups=groups,
        case_status=statuses,
        passes=passes.tolist(),
        runs=runs.tolist(),
        errors=errors,
        flaky=_flaky(table, groups, passes, runs),
        metric_rows={k: i for i, k in enumerate(table.metric_keys)},
        rubric_rows={k: i for i, k in enumerate(table.rubric_keys)},
    )


def _metric_sides(table: ScoreTable) -> list[MetricSide]:
    """Per metric key of ``table``: its :class:`MetricSide` (order-free exact means)."""
    n = len(table.metric_keys)
    key, status = table.m_key, table.m_status
    scored = _averaged(table)
    n_scored = _count(key, scored, n)
    means = fsum_mean_by_group(table.m_score[scored], key[scored], n)
    passed = _count(key, status == _P, n)
    failed = _count(key, status == _F, n)
    not_evaluated = _count(key, status == _NE, n)
    errors = _count(key, status == _E, n)
    reasons: list[list[str]] = [[] for _ in range(n)]
    with_reason = np.flatnonzero(table.m_reason >= 0)
    pairs = (
        key[with_reason].astype(np.int64) * max(1, len(table.reasons)) + table.m_reason[with_reason]
    )
    _, first = np.unique(pairs, return_index=True)
    for row in with_reason[np.sort(first)].tolist():
        reasons[int(key[row])].append(table.reasons[int(table.m_reason[row])])
    sides = []
    for k, info in enumerate(table.metric_info):
        count = int(n_scored[k])
        sides.append(
            MetricSide(
                mean=float(means[k]) if count else None,
                scored=count,
                passed=int(passed[k]),
                failed=int(failed[k]),
                not_evaluated=int(not_evaluated[k]),
                errors=int(errors[k]),
                threshold=info.threshold,
                min_value=info.min_value,
                max_value=info.max_value,
                higher_is_better=info.higher_is_better,
                informational=info.informational,
                reasons=reasons[k],
            )
        )
    return sides


@dataclass(slots=True)
class _Dense:
    """Per-key, per-case-id values of one side: ``mean[key, case id]`` over the case's
    scored runs and ``runs[key, case id]``, how many (0: not scored)."""

    mean: np.ndarray
    runs: np.ndarray


def _dense_metrics(side: _Side, n_ids: int) -> _Dense:
    groups = side.groups
    scored = groups.scored > 0
    case_rows = groups.case[scored]
    shape = (len(side.table.metric_keys), n_ids)
    mean, runs = np.zeros(shape), np.zeros(shape, dtype=np.intp)
    mean[groups.key[scored], side.ids[case_rows]] = groups.mean[scored]
    runs[groups.key[scored], side.ids[case_rows]] = groups.scored[scored]
    return _Dense(mean=mean, runs=runs)


def _dense_rubrics(side: _Side, n_ids: int) -> _Dense:
    table = side.table
    shape = (len(table.rubric_keys), n_ids)
    has = table.r_has_score
    flat = table.r_key[has].astype(np.int64) * n_ids + side.ids[table.r_case[has]]
    size = shape[0] * shape[1]
    runs = np.bincount(flat, minlength=size)[:size].reshape(shape)
    sums = np.bincount(flat, weights=table.r_score[has], minlength=size)[:size].reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(runs > 0, sums / np.maximum(runs, 1), 0.0)
    return _Dense(mean=mean, runs=runs)


def _ordered(head: Mapping, baseline: Mapping) -> list:
    """Head's keys in head order, then baseline-only keys."""
    return [*head, *(k for k in baseline if k not in head)]


def _compare_metrics(head: _Side, baseline: _Side | None) -> list[MetricComparison]:
    head_sides = _metric_sides(head.table)
    base_sides = _metric_sides(baseline.table) if baseline else []
    base_rows = baseline.metric_rows if baseline else {}
    rows = []
    for key in _ordered(head.metric_rows, base_rows):
        head_side = head_sides[head.metric_rows[key]] if key in head.metric_rows else None
        base_side = base_sides[base_rows[key]] if key in base_rows else None
        rows.append(
            MetricComparison(
                suite=key[0],
                metric_name=key[1],
                baseline=base_side,
                head=head_side,
            )
        )
    return rows


def _rubric_totals(table: ScoreTable) -> tuple[list[float | None], list[int]]:
    """Per rubric key: mean of every scored verdict (order-free, exact) and how many."""
    n = len(table.rubric_keys)
    has = table.r_has_score
    counts = _count(table.r_key, has, n)
    means = fsum_mean_by_group(table.r_score[has], table.r_key[has], n)
    return [None if m != m else m for m in means.tolist()], counts.tolist()


def _compare_rubrics(head: _Side, baseline: _Side | None) -> list[RubricComparison]:
    head_means, head_n = _rubric_totals(head.table)
    base_means, base_n = _rubric_totals(baseline.table) if baseline else ([], [])
    base_rows = baseline.rubric_rows if baseline else {}
    rows = []
    for key in _ordered(head.rubric_rows, base_rows):
        h, b = head.rubric_rows.get(key), base_rows.get(key)
        text = head.table.rubric_text[h] if h is not None else None
        if not text and b is not None and baseline is not None:
            text = baseline.table.rubric_text[b]
        row = RubricComparison(
            suite=key[0],
            metric_name=key[1],
            rubric_id=key[2],
            text=text,
            head_mean=head_means[h] if h is not None else None,
            baseline_mean=base_means[b] if b is not None else None,
            head_n=head_n[h] if h is not None else 0,
            baseline_n=base_n[b] if b is not None else 0,
        )
        rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class _TestOptions:
    """What the paired tests are run with (see :func:`compare`)."""

    min_effect: Callable[[str, str], float]
    informational_min_effect: float
    seed: int
    n_resamples: int
    alpha: float


def _attach_intervals(
    head: _Side,
    baseline: _Side,
    metrics: list[MetricComparison],
    rubrics: list[RubricComparison],
    order: np.ndarray,
    options: _TestOptions,
) -> TestMethod:
    """Sets the delta, matched means, interval and call of every metric and rubric both
    sides have, all tested as one family (:func:`adk_eval_action.analysis.paired.paired_tests`)."""
    n_ids = order.size
    metric_dense = _dense_metrics(baseline, n_ids), _dense_metrics(head, n_ids)
    rubric_dense = _dense_rubrics(baseline, n_ids), _dense_rubrics(head, n_ids)
    both_metrics = [m for m in metrics if m.head is not None and m.baseline is not None]
    both_rubrics = [
        r
        for r in rubrics
        if (r.suite, r.metric_name, r.rubric_id) in baseline.rubric_rows
        and (r.suite, r.metric_name, r.rubric_id) in head.rubric_rows
    ]
    inputs = [
        _input(
            metric_dense,
            baseline.metric_rows[(m.suite, m.metric_name)],
            head.metric_rows[(m.suite, m.metric_name)],
            min_effect=options.min_effect(m.suite, m.metric_name),
            relative=options.informational_min_effect if m.informational else 0.0,
            higher=m.higher_is_better,
        )
        for m in both_metrics
    ] + [
        # A rubric is a yes/no verdict on its metric's scale: the metric's min_effect.
        _input(
            rubric_dense,
            baseline.rubric_rows[(r.suite, r.metric_name, r.rubric_id)],
            head.rubric_rows[(r.suite, r.metric_name, r.rubric_id)],
            min_effect=options.min_effect(r.suite, r.metric_name),
        )
        for r in both_rubrics
    ]
    results, method = paired_tests(
        inputs, order, seed=options.seed, n_resamples=options.n_resamples, alpha=options.alpha
    )
    for row, result, one in zip([*both_metrics, *both_rubrics], results, inputs, strict=True):
        interval = result.interval
        row.interval = interval
        row.min_effect = result.min_effect
        if interval.n_cases == 0:
            continue
        row.delta = interval.delta
        row.baseline_matched, row.head_matched = result.baseline_mean, result.head_mean
        row.classification = classify(
            interval,
            interval.delta,
            min_effect=result.min_effect,
            higher_is_better=one.higher_is_better,
        )
    return method


def _input(
    dense: tuple[_Dense, _Dense],
    base_row: int,
    head_row: int,
    *,
    min_effect: float,
    relative: float = 0.0,
    higher: bool = True,
) -> PairedInput:
    base, head = dense
    return PairedInput(
        baseline_mean=base.mean[base_row],
        baseline_runs=base.runs[base_row],
        head_mean=head.mean[head_row],
        head_runs=head.runs[head_row],
        min_effect=min_effect,
        relative_min_effect=relative,
        higher_is_better=higher,
    )


def _none_for_nan(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]


@dataclass(slots=True)
class _DeltaColumns:
    """Head's per (case, metric) groups with the matching baseline mean (NaN: none), from
    which each case's :class:`MetricDelta` rows are built when first read."""

    names: list[str]
    key: np.ndarray
    base_mean: np.ndarray
    head_mean: np.ndarray
    status: np.ndarray
    reason: np.ndarray
    reasons: list[str]

    def rows(self, lo: int, hi: int) -> list[MetricDelta]:
        """The rows of groups ``lo:hi`` (one case's)."""
        heads = _none_for_nan(self.head_mean[lo:hi])
        bases = _none_for_nan(self.base_mean[lo:hi])
        return [
            MetricDelta(
                self.names[k],
                b,
                h,
                None if h is None or b is None else h - b,
                METRIC_STATUSES[status],
                self.reasons[r] if r >= 0 else None,
            )
            for k, b, h, status, r in zip(
                self.key[lo:hi].tolist(),
                bases,
                heads,
                self.status[lo:hi].tolist(),
                self.reason[lo:hi].tolist(),
                strict=True,
            )
        ]


class CaseMetrics(Sequence[MetricDelta]):
    """One case's :class:`MetricDelta` rows, built on first read.

    Compare makes one per case; at 10,000 cases x 8 metrics building every row up front was
    most of compare's time, while the comment and summary read a few hundred cases. Reads
    like a list (and compares equal to one with the same rows)."""

    __slots__ = ("_columns", "_lo", "_hi", "_extra", "_rows")

    def __init__(
        self, columns: _DeltaColumns | None, lo: int, hi: int, extra: list[MetricDelta]
    ) -> None:
        self._columns, self._lo, self._hi, self._extra = columns, lo, hi, extra
        self._rows: list[MetricDelta] | None = None

    def _built(self) -> list[MetricDelta]:
        if self._rows is None:
            own = self._columns.rows(self._lo, self._hi) if self._columns else []
            self._rows = own + self._extra
        return self._rows

    def __len__(self) -> int:
        return self._hi - self._lo + len(self._extra)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # Sequence's overloads
        return self._built()[index]

    def __iter__(self) -> Iterator[MetricDelta]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._built() == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a list

    def __repr__(self) -> str:
        return repr(self._built())


@dataclass(slots=True)
class _CaseDeltas:
    """Per head case row: its metrics and largest drop; per baseline-only case row: its
    metrics."""

    head: list[CaseMetrics]
    largest_drop: list[float]
    base_only: dict[int, CaseMetrics]


def _case_deltas(head: _Side, baseline: _Side | None) -> _CaseDeltas:
    """Matches every head (case, metric) group with the baseline's by array lookups and
    computes the largest drop per case at once; the rows themselves wait for a reader
    (:class:`CaseMetrics`)."""
    hg, table = head.groups, head.table
    base_mean = np.full(hg.key.size, np.nan)
    extra: dict[int, list[MetricDelta]] = {}
    base_only: dict[int, CaseMetrics] = {}
    if baseline is not None:
        base_group = _matching_groups(head, baseline)
        found = base_group >= 0
        base_mean[found] = baseline.groups.mean[base_group[found]]
        left = np.ones(baseline.groups.key.size, dtype=bool)
        left[base_group[found]] = False
        head_row_of_id = _rows_by_id(head)
        for base_row, rows in _baseline_only_deltas(baseline, left).items():
            case_id = int(baseline.ids[base_row])
            head_row = int(head_row_of_id[case_id]) if case_id < head_row_of_id.size else -1
            if head_row >= 0:
                extra[head_row] = rows
            else:
                base_only[base_row] = CaseMetrics(None, 0, 0, rows)
    columns = _DeltaColumns(
        names=[name for _, name in table.metric_keys],
        key=hg.key,
        base_mean=base_mean,
        head_mean=hg.mean,
        status=hg.status,
        reason=hg.reason,
        reasons=table.reasons,
    )
    start = hg.start.tolist()
    metrics = [
        CaseMetrics(columns, lo, hi, extra.get(row, []))
        for row, (lo, hi) in enumerate(zip(start, start[1:], strict=False))
    ]
    return _CaseDeltas(
        head=metrics,
        largest_drop=_largest_drops(table, hg, base_mean),
        base_only=base_only,
    )


def _largest_drops(table: ScoreTable, groups: _CaseMetrics, base_mean: np.ndarray) -> list[float]:
    """Per head case row: the largest worsening among its gated metrics, in the metric's
    direction and as a fraction of its value range when that is known (else in metric
    units); informational metrics and metrics without a delta count as 0, as does a case
    whose metrics all improved."""
    infos = table.metric_info
    sign = np.array([1.0 if i.higher_is_better else -1.0 for i in infos] or [1.0])
    scale = np.array([_range(i) for i in infos] or [1.0])
    gated = np.array([not i.informational for i in infos] or [True])
    key = groups.key
    worse = (base_mean - groups.mean) * sign[key] / scale[key]
    worse = np.where(np.isnan(worse) | ~gated[key], 0.0, worse)
    largest = np.zeros(len(table.case_keys))
    nonempty = np.flatnonzero(np.diff(groups.start) > 0)
    if nonempty.size:
        largest[nonempty] = np.maximum.reduceat(worse, groups.start[nonempty])
    return np.maximum(largest, 0.0).tolist()


def _range(info: MetricInfo) -> float:
    """The metric's value range (max - min) when both ends are known and finite, else 1."""
    low, high = info.min_value, info.max_value
    if low is None or high is None or not math.isfinite(high - low) or high <= low:
        return 1.0
    return high - low


def _rows_by_id(side: _Side) -> np.ndarray:
    """Case id -> the side's case row (-1: the side lacks the case); ids beyond the
    array's end are lacking too."""
    rows = np.full(int(side.ids.max()) + 1 if side.ids.size else 0, -1, dtype=np.intp)
    rows[side.ids] = np.arange(side.ids.size)
    return rows


def _matching_groups(head: _Side, baseline: _Side) -> np.ndarray:
    """For each head group, the baseline group of the same case and metric (-1: none)."""
    base_row_of_id = _rows_by_id(baseline)
    base_row = np.full(head.ids.size, -1, dtype=np.intp)
    known = head.ids < base_row_of_id.size
    base_row[known] = base_row_of_id[head.ids[known]]
    key_map = np.array(
        [baseline.metric_rows.get(k, -1) for k in head.table.metric_keys] or [-1], dtype=np.intp
    )
    bg = baseline.groups
    n_keys = max(1, len(baseline.table.metric_keys))
    lookup = np.full(len(baseline.table.case_keys) * n_keys, -1, dtype=np.intp)
    lookup[bg.case * n_keys + bg.key] = np.arange(bg.key.size)
    rows = base_row[head.groups.case]
    keys = key_map[head.groups.key]
    found = (rows >= 0) & (keys >= 0)
    out = np.full(rows.size, -1, dtype=np.intp)
    out[found] = lookup[rows[found] * n_keys + keys[found]]
    return out


def _baseline_only_deltas(baseline: _Side, left: np.ndarray) -> dict[int, list[MetricDelta]]:
    """Per baseline case row, rows for its groups where ``left`` (matched by no head group),
    in the case's order."""
    bg, table = baseline.groups, baseline.table
    out: dict[int, list[MetricDelta]] = {}
    rows = np.flatnonzero(left)
    for row, key, mean in zip(
        bg.case[rows].tolist(),
        bg.key[rows].tolist(),
        _none_for_nan(bg.mean[rows]),
        strict=True,
    ):
        out.setdefault(row, []).append(MetricDelta(table.metric_keys[key][1], mean))
    return out


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
    head_rows = {k: i for i, k in enumerate(head.table.case_keys)}
    base_rows = {k: i for i, k in enumerate(baseline.table.case_keys)} if baseline else {}
    deltas = _case_deltas(head, baseline)
    has_baseline = baseline is not None
    cases = []
    for key, h in head_rows.items():
        b = base_rows.get(key)
        head_status = head.case_status[h]
        base_status = baseline.case_status[b] if baseline and b is not None else None
        cases.append(
            CaseComparison(
                suite=key[0],
                eval_set_id=key[1],
                eval_id=key[2],
                change=_case_change(head_status, base_status, has_baseline),
                file=head.table.case_files[h],
                line=head.table.case_lines[h],
                baseline_status=base_status,
                head_status=head_status,
                metrics=deltas.head[h],
                error=head.errors.get(h) or (NO_RUNS_ERROR if not head.runs[h] else None),
                largest_drop=deltas.largest_drop[h],
                head_passes=head.passes[h],
                head_runs=head.runs[h],
                flaky_head=head.flaky.get(h, {}),
                flaky_baseline=baseline.flaky.get(b, {}) if baseline and b is not None else {},
            )
        )
    if baseline is None:
        return cases
    for key, b in base_rows.items():
        if key in head_rows:
            continue
        cases.append(
            CaseComparison(
                suite=key[0],
                eval_set_id=key[1],
                eval_id=key[2],
                change="removed",
                file=baseline.table.case_files[b],
                line=baseline.table.case_lines[b],
                baseline_status=baseline.case_status[b],
                metrics=deltas.base_only.get(b, []),
                flaky_baseline=baseline.flaky.get(b, {}),
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
    """Why the two sides may not be comparable; ``head``/``baseline`` are skeletons."""
    notes = []
    versions = (baseline.metadata.adk_version, head.metadata.adk_version)
    if all(versions) and versions[0] != versions[1]:
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
    head: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    *,
    min_effect: MinEffect = 0.0,
    informational_min_effect: float = DEFAULT_INFORMATIONAL_MIN_EFFECT,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compares ``head`` with ``baseline`` (None: head scores only) by the module's rules.

    Args:
        head: Results of the PR head, loaded or as a :class:`ScoreTable` (cheaper for large
            runs: see :mod:`adk_eval_action.results.scoretable`).
        baseline: Results of the base branch, likewise, or None.
        baseline_note: Which baseline this is, or why there is none (shown in the comment).
        min_effect: Smallest delta worth calling regressed or improved (metric units), one
            value or a function of (suite, metric name).
        informational_min_effect: For informational metrics, the min_effect is at least
            this share of the matched baseline mean (``>= 0``; 0 turns it off).
        seed: Seed of the sign patterns; the same inputs and seed give the same intervals.
        n_resamples: Random sign patterns per test, ``>= 1`` (fewer matched cases than
            ``log2(n_resamples)`` are enumerated exactly).
        confidence: ``1 −`` the per-direction error rate the calls are corrected to, in
            ``(0, 1)``; each interval end is a one-sided bound at that level before
            correction.

    Raises:
        ValueError: A ``min_effect`` below 0, or a bad ``confidence``, ``n_resamples`` or
            ``informational_min_effect``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not (math.isfinite(informational_min_effect) and informational_min_effect >= 0.0):
        raise ValueError(
            f"informational_min_effect must be a number >= 0, got {informational_min_effect}"
        )
    options = _TestOptions(
        min_effect=min_effect
        if callable(min_effect)
        else (lambda _suite, _metric: float(min_effect)),
        informational_min_effect=informational_min_effect,
        seed=seed,
        n_resamples=n_resamples,
        alpha=round(1.0 - confidence, 12),
    )
    with gc_paused():
        return _compare(head, baseline, baseline_note, options, confidence)


def _compare(
    head: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    options: _TestOptions,
    confidence: float,
) -> Comparison:
    head_table = _table(head)
    base_table = _table(baseline) if baseline is not None else None
    case_ids: dict[CaseKey, int] = {}
    head_side = _index_side(head_table, case_ids)
    base_side = _index_side(base_table, case_ids) if base_table is not None else None
    metrics = _compare_metrics(head_side, base_side)
    rubrics = _compare_rubrics(head_side, base_side)
    tests = None
    if base_side is not None:
        # Case ids by sorted case key: the sign patterns fall on the same cases whatever
        # order either results file lists them in.
        keys = list(case_ids)
        order = np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.intp)
        tests = _attach_intervals(head_side, base_side, metrics, rubrics, order, options)
    head_skeleton = head_table.skeleton
    base_skeleton = base_table.skeleton if base_table is not None else None
    return Comparison(
        has_baseline=base_skeleton is not None,
        baseline_note=baseline_note,
        head_metadata=head_skeleton.metadata,
        baseline_metadata=base_skeleton.metadata if base_skeleton else None,
        metrics=metrics,
        rubrics=rubrics,
        cases=_compare_cases(head_side, base_side),
        errors=head_skeleton.all_errors(),
        warnings=[
            *head_skeleton.warnings,
            *head_table.repeated_warnings("head"),
            *(base_table.repeated_warnings("baseline") if base_table is not None else []),
        ],
        num_runs=head_table.num_runs,
        comparability=_comparability(head_skeleton, base_skeleton) if base_skeleton else [],
        confidence=confidence,
        no_interval_reason=_no_interval_reason(metrics),
        tests=tests,
    )


def _table(results: RunResults | ScoreTable) -> ScoreTable:
    return results if isinstance(results, ScoreTable) else ScoreTable.from_results(results)

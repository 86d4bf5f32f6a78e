"""One side of a comparison indexed once: per (eval case, metric) groups, case statuses,
flaky cases, per-metric aggregates and dense per-case means, all as group-bys over a
:class:`~adk_eval_action.results.scoretable.ScoreTable`'s columns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from adk_eval_action.analysis.comparison import MetricSide
from adk_eval_action.analysis.noise import disagree
from adk_eval_action.results.model import AVERAGED_STATUSES, CaseStatus, MetricStatus
from adk_eval_action.results.scoretable import (
    CASE_STATUSES,
    METRIC_STATUSES,
    CaseKey,
    MetricKey,
    RubricKey,
    ScoreTable,
    fsum_mean_by_group,
)
from adk_eval_action.results.status import table_case_statuses

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
class CaseGroups:
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


def case_groups(table: ScoreTable) -> CaseGroups:
    """The :class:`CaseGroups` of ``table``: one group per (case row, metric key)."""
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
    return CaseGroups(
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
class Side:
    """One side's table, indexed once for everything compare computes.

    ``ids`` maps the table's case rows to case ids shared by both sides; ``case_status``,
    ``passes``, ``runs``, ``errors`` and ``flaky`` are per case row (``flaky`` only for
    flaky rows); ``metric_rows``/``rubric_rows`` map keys to table indices."""

    table: ScoreTable
    ids: np.ndarray
    groups: CaseGroups
    case_status: list[CaseStatus]
    passes: list[int]
    runs: list[int]
    errors: dict[int, str]
    flaky: dict[int, dict[str, tuple[int, int]]]
    metric_rows: dict[MetricKey, int]
    rubric_rows: dict[RubricKey, int]


def _case_statuses(table: ScoreTable) -> tuple[list[CaseStatus], np.ndarray, np.ndarray]:
    """Per case row: status, passing runs, runs, by the one status rule
    (:func:`adk_eval_action.results.status.table_case_statuses`)."""
    return table_case_statuses(table)


def _flaky(
    table: ScoreTable, groups: CaseGroups, passes: np.ndarray, runs: np.ndarray
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


def index_side(table: ScoreTable, case_ids: dict[CaseKey, int]) -> Side:
    """Indexes one side; ``case_ids`` (shared by both sides, extended here) numbers every
    case so both sides' per-case values line up in arrays."""
    ids = np.fromiter(
        (case_ids.setdefault(k, len(case_ids)) for k in table.case_keys),
        dtype=np.intp,
        count=len(table.case_keys),
    )
    groups = case_groups(table)
    statuses, passes, runs = _case_statuses(table)
    errors: dict[int, str] = {}
    for run_row, error in sorted(table.run_errors.items()):
        errors.setdefault(int(table.run_case[run_row]), error)
    return Side(
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


def metric_sides(table: ScoreTable) -> list[MetricSide]:
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
    raised, no_result = _runs_without_result(table)
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
                errors=int(errors[k]) + no_result[k],
                crashed=raised[k],
                threshold=info.threshold,
                min_value=info.min_value,
                max_value=info.max_value,
                higher_is_better=info.higher_is_better,
                informational=info.informational,
                reasons=reasons[k],
            )
        )
    return sides


def _runs_without_result(table: ScoreTable) -> tuple[list[int], list[int]]:
    """Per metric key: the runs of its suite that raised (a run error) before the metric got
    a result, those the agent's own code failed (recorded ``failed``) and the others
    (``error``: ADK, the model, the credentials); 0 for informational metrics."""
    n = len(table.metric_keys)
    raised, other = [0] * n, [0] * n
    if not table.run_errors:
        return raised, other
    failed_runs = np.fromiter(table.run_errors, dtype=np.intp, count=len(table.run_errors))
    rows = np.flatnonzero(np.isin(table.m_run, failed_runs))
    present = set(zip(table.m_run[rows].tolist(), table.m_key[rows].tolist(), strict=True))
    by_suite: dict[str, list[int]] = {}
    for k, ((suite, _), info) in enumerate(zip(table.metric_keys, table.metric_info,
                                               strict=True)):
        if not info.informational:
            by_suite.setdefault(suite, []).append(k)
    failed = CASE_STATUSES.index(CaseStatus.FAILED)
    for run in failed_runs.tolist():
        suite = table.case_keys[int(table.run_case[run])][0]
        counts = raised if int(table.run_status[run]) == failed else other
        for k in by_suite.get(suite, []):
            if (run, k) not in present:
                counts[k] += 1
    return raised, other


@dataclass(slots=True)
class Dense:
    """Per-key, per-case-id values of one side: ``mean[key, case id]`` over the case's
    scored runs and ``runs[key, case id]``, how many (0: not scored); ``source`` holds the
    scored runs (key, case id, score) that :meth:`run_values` sorts when first asked."""

    mean: np.ndarray
    runs: np.ndarray
    source: tuple[np.ndarray, np.ndarray, np.ndarray]
    _sorted: tuple[np.ndarray, np.ndarray] | None = None

    def run_values(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, start)``: key ``k``'s scores of case id ``i`` are
        ``values[start[k * n_ids + i]:start[k * n_ids + i + 1]]``, in run order. Sorted on
        first use: only the test within cases reads them (at most 100 matched cases)."""
        if self._sorted is None:
            shape = (self.mean.shape[0], self.mean.shape[1])
            self._sorted = _run_values(*self.source, shape)
        return self._sorted


def _run_values(
    keys: np.ndarray, ids: np.ndarray, scores: np.ndarray, shape: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Scores sorted by (key, case id), run order kept, and where each pair starts."""
    flat = keys.astype(np.int64) * shape[1] + ids
    order = np.argsort(flat, kind="stable")
    size = shape[0] * shape[1]
    start = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat, minlength=size)[:size], out=start[1:])
    return scores[order], start


def dense_metrics(side: Side, n_ids: int) -> Dense:
    """Per metric key and case id (``n_ids`` ids shared by both sides): the case's mean
    over its scored runs, how many, and the scores."""
    groups = side.groups
    scored = groups.scored > 0
    case_rows = groups.case[scored]
    shape = (len(side.table.metric_keys), n_ids)
    mean, runs = np.zeros(shape), np.zeros(shape, dtype=np.intp)
    mean[groups.key[scored], side.ids[case_rows]] = groups.mean[scored]
    runs[groups.key[scored], side.ids[case_rows]] = groups.scored[scored]
    table = side.table
    rows = _averaged(table)
    source = (table.m_key[rows], side.ids[table.m_case[rows]], table.m_score[rows])
    return Dense(mean=mean, runs=runs, source=source)


def dense_rubrics(side: Side, n_ids: int) -> Dense:
    """Per rubric key and case id: the case's mean verdict over its scored runs, how
    many, and the verdicts."""
    table = side.table
    shape = (len(table.rubric_keys), n_ids)
    has = table.r_has_score
    flat = table.r_key[has].astype(np.int64) * n_ids + side.ids[table.r_case[has]]
    size = shape[0] * shape[1]
    runs = np.bincount(flat, minlength=size)[:size].reshape(shape)
    sums = np.bincount(flat, weights=table.r_score[has], minlength=size)[:size].reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(runs > 0, sums / np.maximum(runs, 1), 0.0)
    source = (table.r_key[has], side.ids[table.r_case[has]], table.r_score[has])
    return Dense(mean=mean, runs=runs, source=source)


def rubric_totals(table: ScoreTable) -> tuple[list[float | None], list[int]]:
    """Per rubric key: mean of every scored verdict (order-free, exact) and how many."""
    n = len(table.rubric_keys)
    has = table.r_has_score
    counts = _count(table.r_key, has, n)
    means = fsum_mean_by_group(table.r_score[has], table.r_key[has], n)
    return [None if m != m else m for m in means.tolist()], counts.tolist()

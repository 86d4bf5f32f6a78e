"""Per eval case: each case's metric deltas (built when first read), its change (newly
failing, new, removed, ...) and its largest worsening, matched across the two sides by
array lookups."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from adk_eval_action.analysis.comparison import (
    NO_RUNS_ERROR,
    CaseComparison,
    ChangeKind,
    MetricDelta,
)
from adk_eval_action.analysis.sides import CaseGroups, Side
from adk_eval_action.results.model import (
    INCOMPLETE_ERROR_KINDS,
    CaseStatus,
    ErrorRecord,
    RunResults,
)
from adk_eval_action.results.scoretable import METRIC_STATUSES, MetricInfo, ScoreTable


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


def _case_deltas(head: Side, baseline: Side | None) -> _CaseDeltas:
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


def _largest_drops(table: ScoreTable, groups: CaseGroups, base_mean: np.ndarray) -> list[float]:
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
    worst: list[float] = np.maximum(largest, 0.0).tolist()
    return worst


def _range(info: MetricInfo) -> float:
    """The metric's value range (max - min) when both ends are known and finite, else 1."""
    low, high = info.min_value, info.max_value
    if low is None or high is None or not math.isfinite(high - low) or high <= low:
        return 1.0
    return high - low


def _rows_by_id(side: Side) -> np.ndarray:
    """Case id -> the side's case row (-1: the side lacks the case); ids beyond the
    array's end are lacking too."""
    rows = np.full(int(side.ids.max()) + 1 if side.ids.size else 0, -1, dtype=np.intp)
    rows[side.ids] = np.arange(side.ids.size)
    return rows


def _matching_groups(head: Side, baseline: Side) -> np.ndarray:
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


def _baseline_only_deltas(baseline: Side, left: np.ndarray) -> dict[int, list[MetricDelta]]:
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


def _case_change(
    head: CaseStatus | None, base: CaseStatus | None, has_baseline: bool
) -> ChangeKind:
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


def _not_run(head: RunResults) -> dict[str, str]:
    """Per suite, why its eval cases without runs have none: the first error of the suite,
    else of the run (no model credentials), that names no eval case and makes the run
    incomplete (an agent that does not import), as ``not run: <its message>``; a suite
    without one is left out (:data:`NO_RUNS_ERROR`: the run was cut short)."""
    def cause(errors: list[ErrorRecord]) -> str | None:
        return next((f"not run: {e.message}" for e in errors
                     if e.eval_id is None and e.kind in INCOMPLETE_ERROR_KINDS), None)

    run_wide = cause(head.errors)
    out = {suite.name: cause(suite.errors) or run_wide for suite in head.suites}
    return {name: why for name, why in out.items() if why}


def compare_cases(head: Side, baseline: Side | None,
                  incomplete: AbstractSet[str] = frozenset()) -> list[CaseComparison]:
    """Every head case in head order (with its baseline counterpart when there is one),
    then the cases only the baseline has (``removed``). The cases of the suites in
    ``incomplete`` (whose baseline run could not score them:
    :class:`~adk_eval_action.analysis.comparison.SuiteWithoutBaseline`) change as on a
    run without a baseline: they are not new, their baseline had them."""
    head_rows = {k: i for i, k in enumerate(head.table.case_keys)}
    base_rows = {k: i for i, k in enumerate(baseline.table.case_keys)} if baseline else {}
    deltas = _case_deltas(head, baseline)
    has_baseline = baseline is not None
    not_run = _not_run(head.table.skeleton)
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
                change=_case_change(head_status, base_status,
                                    has_baseline and key[0] not in incomplete),
                file=head.table.case_files[h],
                line=head.table.case_lines[h],
                baseline_status=base_status,
                head_status=head_status,
                metrics=deltas.head[h],
                error=head.errors.get(h) or (
                    not_run.get(key[0], NO_RUNS_ERROR) if not head.runs[h] else None),
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

"""Table cells of the comment and summary: statuses, per-case changes, flaky counts, and
the compact layout of the comment's tables (which columns carry something on this run)."""

from __future__ import annotations

from pydantic import BaseModel

from adk_eval_action.analysis.compare import (
    CaseComparison,
    Comparison,
    MetricComparison,
    MetricSide,
    RubricComparison,
)
from adk_eval_action.report.format import code, decimals, direction, md, score
from adk_eval_action.results.model import MetricStatus


def flaky_counts(flaky: dict[str, tuple[int, int]]) -> str:
    """``overall 2/3, `metric` 1/3`` (passing runs/runs per disagreeing status), or ``—``."""
    parts = [
        f"{name if name == 'overall' else code(name)} {passes}/{runs}"
        for name, (passes, runs) in flaky.items()
    ]
    return ", ".join(parts) or "—"


def metric_status(side: MetricSide, num_runs: int = 1) -> str:
    """A metric's status cell: ``✅``, or every kind of trouble with its count, e.g.
    ``❌ 2 failed runs, ❌ 1 crashed run, ⚠️ 1 errored run`` (``runs`` when cases have
    repeats; ``crashed``: the agent's own code raised before the metric got a result)."""
    def unit(n: int) -> str:
        return f" {'run' if n == 1 else 'runs'}" if num_runs > 1 else ""

    parts = [
        f"{mark} {count} {what}{unit(count)}"
        for mark, count, what in (
            ("❌", side.failed, "failed"),
            ("❌", side.crashed, "crashed"),
            ("⚠️", side.errors, "errored"),
            ("⚠️", side.not_evaluated, "not evaluated"),
        )
        if count
    ]
    return ", ".join(parts) or "✅"


def metric_changes(case: CaseComparison) -> str:
    """A case's metrics worth a look (not passed, or passed with a changed score; never
    informational) as ``name baseline → head (reason)``, joined by ``<br>``."""
    shown = []
    for d in case.metrics:
        status = d.head_status
        if status is None or status == MetricStatus.INFORMATIONAL:
            continue
        if status == MetricStatus.PASSED and (d.delta is None or d.delta == 0):
            continue
        reason = f" ({md(d.reason, 120)})" if d.reason else ""
        shown.append(f"{code(d.metric_name)} {score(d.baseline)} → {score(d.head)}{reason}")
    return "<br>".join(shown)


class TableLayout(BaseModel):
    """How the comment's compact tables are laid out: ``suite`` when the rows come from
    more than one suite (each table is then one per suite, under the suite's name),
    ``interval`` when some delta has an interval with bounds, ``threshold`` when some
    gated metric has a threshold."""

    suite: bool
    interval: bool
    threshold: bool


def table_layout(comparison: Comparison) -> TableLayout:
    """The :class:`TableLayout` of ``comparison`` (metric, efficiency and rubric tables)."""
    rows: list[MetricComparison | RubricComparison] = [*comparison.metrics, *comparison.rubrics]
    suites = {r.suite for r in rows} | {c.suite for c in comparison.cases}
    sides = [m.head or m.baseline for m in comparison.metrics if not m.informational]
    return TableLayout(
        suite=len(suites) > 1,
        interval=any(r.interval is not None and r.interval.has_interval for r in rows),
        threshold=any(s is not None and s.threshold is not None for s in sides),
    )


def any_interval(rows: list[MetricComparison] | list[RubricComparison]) -> bool:
    """Whether some row has an interval with bounds: one table's Interval column (the
    metric, efficiency and rubric tables decide each for their own rows)."""
    return any(r.interval is not None and r.interval.has_interval for r in rows)


def places(row: MetricComparison | RubricComparison) -> int:
    """Decimals for a row's numbers: a thousandth of its metric's value range
    (:func:`adk_eval_action.report.format.decimals`); rubric verdicts are in [0, 1]."""
    if isinstance(row, RubricComparison):
        return decimals(0.0, 1.0)
    side = row.head or row.baseline
    return decimals(
        side.min_value if side else None,
        side.max_value if side else None,
        row.baseline.mean if row.baseline else None,
        row.head.mean if row.head else None,
    )


def direction_mark(row: MetricComparison | RubricComparison, digits: int) -> str:
    """A row's :func:`adk_eval_action.report.format.direction`: 🔴/🟢 only with a regressed/
    improved call, else ``(worse)``/``(better)`` in its metric's direction; "" when its
    delta rounds to zero at ``digits`` or there is none."""
    higher = row.higher_is_better if isinstance(row, MetricComparison) else True
    return direction(row.delta, higher, digits, row.classification)

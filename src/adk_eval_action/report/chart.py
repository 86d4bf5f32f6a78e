"""A picture of baseline vs head per metric: mermaid ``xychart-beta`` charts for the job
summary (GitHub renders mermaid code blocks in Markdown, job summaries included).

Readability rules (why the charts look the way they do):

* Metrics are split into two range groups so no chart mixes scales:

  - **scores**: metrics whose declared value range is [0, 1] (most ADK metrics) are drawn
    in their own units on a 0–1 axis;
  - **relative**: every other metric (other ranges such as [-1, 1] or 0–1000, no range,
    and informational metrics: tokens, duration, tool calls) is drawn as a percentage of
    its baseline, ``100 + 100 * (head - baseline) / |baseline|``, so the baseline is 100
    for every metric and one axis fits them all. Without a baseline (or with a baseline
    of 0) such a metric has no scale and is listed as not charted.

* Charts are horizontal (metric names are long and read better down the side) and hold at
  most ``max_per_chart`` metrics (10 by default), the metrics of a group split evenly over
  as few charts as that allows: 20 scores give two charts of 10.
* Head is drawn as bars, the baseline as a line across them. mermaid draws several bar
  series on top of each other (``BarPlot`` centres every series on the same slot) and has
  no legend, hence bar + line and a caption. A chart of a single metric draws its two
  values as two bars instead, because a one-point line is invisible.
* mermaid's xychart lexer takes numbers without exponents and quoted labels without ``"``
  (``xychart.jison``), so values are written as fixed-point decimals and labels are
  sanitised; long labels keep their start and end. With several suites a label is
  ``tag/metric``, the tag being the end of the suite's name that tells it from the others
  (``test_files/tool_trajectory_avg_score``).

Everything is a pure function of a :class:`~adk_eval_action.analysis.compare.Comparison`.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import Comparison, MetricComparison
from adk_eval_action.text import shorten

MAX_PER_CHART = 10
MAX_LABEL_CHARS = 40
_MIN_TAG_CHARS = 12
_LOWER_IS_BETTER_MARK = " ↓"


class ChartRow(BaseModel):
    """One metric in a chart: its label and the plotted values (chart units)."""

    label: str
    baseline: float | None
    head: float


class MetricChart(BaseModel):
    """One xychart: ``rows`` plotted on a ``y_min``..``y_max`` value axis."""

    group: Literal["scores", "relative"]
    title: str
    y_title: str
    y_min: float
    y_max: float
    rows: list[ChartRow] = Field(min_length=1)

    def to_mermaid(self) -> str:
        """The chart as mermaid source (no code fence)."""
        lines = ["xychart-beta horizontal", f'    title "{_sanitize(self.title)}"']
        first = self.rows[0]  # there is one at least (min_length)
        if len(self.rows) == 1 and first.baseline is not None:
            labels = [f"{first.label} baseline", f"{first.label} head"]
            series = [("bar", [first.baseline, first.head])]
        else:
            labels = [row.label for row in self.rows]
            series = [("bar", [row.head for row in self.rows])]
            if all(row.baseline is not None for row in self.rows):
                series.append(("line", [row.baseline or 0.0 for row in self.rows]))
        lines.append("    x-axis [" + ", ".join(f'"{_sanitize(x)}"' for x in labels) + "]")
        lines.append(
            f'    y-axis "{_sanitize(self.y_title)}" {_number(self.y_min)} --> '
            f"{_number(self.y_max)}"
        )
        lines += [
            f"    {kind} [{', '.join(_number(v) for v in values)}]" for kind, values in series
        ]
        return "\n".join(lines)


class ChartSet(BaseModel):
    """All charts of a comparison, and the metrics left out with why."""

    charts: list[MetricChart] = Field(default_factory=list)
    not_charted: list[str] = Field(default_factory=list)
    has_baseline: bool = True

    def to_markdown(self) -> str:
        """Caption, fenced mermaid blocks, and a note of what was left out; ``""`` when
        there is nothing to draw."""
        if not self.charts:
            return ""
        legend = "bars: head, line: baseline" if self.has_baseline else "bars: head"
        parts = [
            f"**Baseline vs head per metric** ({legend}; ↓ lower is better; relative charts "
            "show head as % of baseline, baseline = 100)\n"
        ]
        for chart in self.charts:
            parts.append(f"```mermaid\n{chart.to_mermaid()}\n```\n")
        if self.not_charted:
            parts.append(f"Not charted: {'; '.join(self.not_charted)}.\n")
        return "\n".join(parts)


def _sanitize(text: str) -> str:
    """A label mermaid's quoted-string lexer accepts and Markdown's fence cannot end."""
    cleaned = " ".join(text.replace('"', "'").replace("`", "'").replace("%%", "%").split())
    if len(cleaned) <= MAX_LABEL_CHARS:
        return cleaned
    # Metric names differ at both ends (prefix family, version suffix): keep both.
    tail = MAX_LABEL_CHARS // 3
    return cleaned[: MAX_LABEL_CHARS - tail - 1] + "…" + cleaned[-tail:]


def _number(value: float) -> str:
    """Fixed-point, at most 4 decimals, no exponent, no ``-0``."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def mermaid_label(text: str) -> str:
    """``text`` as a label of any mermaid xychart (:func:`_sanitize`)."""
    return _sanitize(text)


def mermaid_number(value: float) -> str:
    """``value`` as a number of any mermaid xychart (:func:`_number`)."""
    return _number(value)


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k that is >= ``value`` (> 0)."""
    exponent = math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        candidate = step * 10.0**exponent
        if candidate >= value * (1 - 1e-12):
            return candidate
    return 10.0 ** (exponent + 1)


def suite_tags(suites: list[str]) -> dict[str, str]:
    """Each suite name's shortest tail of segments (split after ``/`` and ``:``) that no
    other of ``suites`` ends with: ``home_automation_agent:test_files`` is ``test_files``
    beside ``home_automation_agent``, ``adk/app`` stays ``adk/app`` beside
    ``adk_a2a/app``."""
    tails = {name: re.split(r"(?<=[/:])", name) for name in suites}
    tags = {}
    for name, segments in tails.items():
        for k in range(1, len(segments) + 1):
            tag = "".join(segments[-k:])
            if not any(o != name and o.endswith(tag) and (o == tag or o[-len(tag) - 1] in "/:")
                       for o in suites):
                break
        tags[name] = tag
    return tags


def _label(row: MetricComparison, tags: dict[str, str] | None) -> str:
    """:func:`metric_label` of a comparison row."""
    return metric_label(row.suite, row.metric_name, row.higher_is_better, tags)


def metric_label(
    suite: str, metric_name: str, higher_is_better: bool, tags: dict[str, str] | None
) -> str:
    """``metric`` (``tags`` None: one suite), else ``suite tag/metric`` in
    :data:`MAX_LABEL_CHARS`: the metric's name as whole as the room allows (at most its
    start and end), the suite's tag (:func:`suite_tags`: the tail of its name no other
    suite ends with) in the rest, cut in the middle (never one cut from the right, which
    left ``tests/integration/fix…_avg_s #2``); `` ↓`` after a lower-is-better metric."""
    mark = "" if higher_is_better else _LOWER_IS_BETTER_MARK
    if tags is None:
        return metric_name + mark
    tag = tags.get(suite, suite)
    room = MAX_LABEL_CHARS - len(mark) - 1
    metric = shorten(metric_name, max(room - min(len(tag), _MIN_TAG_CHARS), 1))
    return f"{shorten(tag, room - len(metric))}/{metric}{mark}"


def unique_labels(labels: list[str]) -> list[str]:
    """``labels`` sanitised for mermaid (:func:`mermaid_label`), each distinct: a label
    seen before gets `` #2``, `` #3``… (mermaid merges equal band labels, and two charts
    of one title read as one)."""
    seen: dict[str, int] = {}
    out = []
    for text in labels:
        label = _sanitize(text)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = _sanitize(f"{label[: MAX_LABEL_CHARS - 4]} #{seen[label]}")
        out.append(label)
    return out


def _is_score(row: MetricComparison) -> bool:
    side = row.head or row.baseline
    return bool(side and not side.informational and side.min_value == 0.0 and side.max_value == 1.0)


def _split(rows: list[ChartRow], max_per_chart: int) -> list[list[ChartRow]]:
    """Even chunks of at most ``max_per_chart`` rows, as few as possible."""
    n_charts = math.ceil(len(rows) / max_per_chart)
    size, extra = divmod(len(rows), n_charts)
    chunks, start = [], 0
    for index in range(n_charts):
        end = start + size + (1 if index < extra else 0)
        chunks.append(rows[start:end])
        start = end
    return chunks


def _unique_labels(rows: list[ChartRow]) -> list[ChartRow]:
    """Labels that stay distinct after sanitising (:func:`unique_labels`)."""
    labels = unique_labels([row.label for row in rows])
    return [row.model_copy(update={"label": label})
            for row, label in zip(rows, labels, strict=True)]


def _group_rows(
    comparison: Comparison,
) -> tuple[list[ChartRow], list[ChartRow], list[str]]:
    suites = list(dict.fromkeys(m.suite for m in comparison.metrics))
    tags = suite_tags(suites) if len(suites) > 1 else None
    scores: list[ChartRow] = []
    relative: list[ChartRow] = []
    not_charted: list[str] = []
    for row in comparison.metrics:
        head = row.head.mean if row.head else None
        base = row.baseline.mean if row.baseline else None
        label = _label(row, tags)
        if head is None:
            not_charted.append(f"`{label}` (no head score)")
        elif not math.isfinite(head) or (base is not None and not math.isfinite(base)):
            not_charted.append(f"`{label}` (a mean is too large to draw)")
        elif comparison.has_baseline and base is None:
            not_charted.append(f"`{label}` (no baseline score)")
        elif _is_score(row):
            scores.append(ChartRow(label=label, baseline=base, head=head))
        elif base is None or base == 0.0:
            why = "no baseline to scale by" if base is None else "baseline is 0"
            not_charted.append(f"`{label}` ({why})")
        else:
            percent = 100.0 + 100.0 * (head - base) / abs(base)
            if math.isfinite(percent):
                relative.append(ChartRow(label=label, baseline=100.0, head=percent))
            else:  # a baseline near 0 or a huge head: no readable scale
                not_charted.append(f"`{label}` (change too large to draw)")
    return scores, relative, not_charted


def build_charts(comparison: Comparison, max_per_chart: int = MAX_PER_CHART) -> ChartSet:
    """The charts of a comparison by the module's rules.

    Args:
        comparison: The comparison to draw.
        max_per_chart: Most metrics in one chart, ``>= 1``.

    Raises:
        ValueError: If ``max_per_chart`` is below 1.
    """
    if max_per_chart < 1:
        raise ValueError(f"max_per_chart must be >= 1, got {max_per_chart}")
    scores, relative, not_charted = _group_rows(comparison)
    charts: list[MetricChart] = []
    groups: list[tuple[Literal["scores", "relative"], str, str, list[ChartRow]]] = [
        ("scores", "Scores", "score", scores),
        ("relative", "Head as % of baseline", "% of baseline", relative),
    ]
    for group, title, y_title, rows in groups:
        if not rows:
            continue
        chunks = _split(_unique_labels(rows), max_per_chart)
        for index, chunk in enumerate(chunks):
            values = [v for r in chunk for v in (r.baseline, r.head) if v is not None]
            if group == "scores":
                low, high = min(0.0, *values), max(1.0, *values)
            else:
                low = min(0.0, *values)
                high = _nice_ceiling(max(values) * 1.05)
                low = -_nice_ceiling(-low * 1.05) if low < 0 else 0.0
            suffix = f" ({index + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            charts.append(
                MetricChart(
                    group=group,
                    title=title + suffix,
                    y_title=y_title,
                    y_min=low,
                    y_max=high,
                    rows=chunk,
                )
            )
    return ChartSet(charts=charts, not_charted=not_charted, has_baseline=comparison.has_baseline)


def metric_chart_markdown(comparison: Comparison, max_per_chart: int = MAX_PER_CHART) -> str:
    """Markdown for ``CommentContext.chart``: caption and mermaid blocks, ``""`` when
    no metric can be drawn."""
    return build_charts(comparison, max_per_chart).to_markdown()


__all__ = [
    "ChartRow",
    "ChartSet",
    "MetricChart",
    "build_charts",
    "mermaid_label",
    "mermaid_number",
    "metric_chart_markdown",
]

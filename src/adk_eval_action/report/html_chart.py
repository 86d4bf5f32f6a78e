"""The HTML report's charts: small inline SVG drawings, one per metric row, made here (no
library, no script: they show with JavaScript off and print as they are).

* :func:`means_svg`: baseline and head means as two bars on the metric's own axis (its
  declared value range, else 0 to 110% of the largest value), with the threshold as a
  dashed line.
* :func:`delta_svg`: a forest-plot row: the delta as a dot, its corrected interval as a
  line (an arrow where it runs past the axis), the ±min_effect band shaded and 0 as a line.
  Every row of a table shares one axis (:func:`delta_axis`), in a unit that makes metrics of
  different ranges comparable: a share of the metric's value range when it declares one,
  else a share of its matched baseline mean (tokens, seconds).
* :func:`trend_svg`: a metric's head mean over earlier runs as a line (the history, when
  the report is given one).

Colours come from CSS classes (the report's style sheet, print included): ``regressed`` and
``improved`` only for those calls, so red always means a called regression. Every drawing
has a ``<title>`` that says its numbers in words, for screen readers and tooltips. Numbers
are written with at most 2 decimals of a pixel; no text from data enters the SVG but
through the title, which the template escapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from adk_eval_action.analysis.compare import MetricComparison, RubricComparison
from adk_eval_action.report.format import score

WIDTH = 220.0
"""Width of each drawing, in CSS pixels (its height is :data:`HEIGHT`)."""
HEIGHT = 26.0
PAD = 4.0
NICE_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
"""Axis half-widths a delta axis rounds up to (shares of range or baseline)."""


@dataclass(frozen=True, slots=True)
class Svg:
    """One drawing: ``body`` is SVG markup made here from numbers only; ``title`` is the
    plain-text description (escaped by the template)."""

    body: str
    title: str
    width: float = WIDTH
    height: float = HEIGHT


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _x(value: float, low: float, high: float) -> float:
    """``value`` on an axis from ``low`` to ``high``, in pixels inside the padding."""
    span = high - low or 1.0
    share = min(1.0, max(0.0, (value - low) / span))
    return PAD + share * (WIDTH - 2 * PAD)


def _finite(*values: float | None) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def means_axis(row: MetricComparison) -> tuple[float, float]:
    """The axis of :func:`means_svg`: the metric's value range when it declares a finite
    one, else from min(0, smallest value) to 110% of the largest (1 when all are 0)."""
    side = row.head or row.baseline
    low, high = (side.min_value, side.max_value) if side is not None else (None, None)
    if low is not None and high is not None and len(_finite(low, high)) == 2 and high > low:
        return low, high
    values = _finite(*_means(row), side.threshold if side else None)
    high = max(values, default=1.0)
    low = min(0.0, *values) if values else 0.0
    return low, (high * 1.1 if high > 0 else 1.0)


def _means(row: MetricComparison) -> tuple[float | None, float | None]:
    base = row.baseline_matched if row.baseline_matched is not None else (
        row.baseline.mean if row.baseline else None)
    head = row.head_matched if row.head_matched is not None else (
        row.head.mean if row.head else None)
    return base, head


def means_svg(row: MetricComparison) -> Svg:
    """Baseline (upper, grey) and head (lower, coloured by the call) means of ``row``."""
    low, high = means_axis(row)
    base, head = _means(row)
    zero = _x(max(low, min(high, 0.0)), low, high)
    parts = []
    bars = ((base, 3.0, "bar-base"), (head, 14.0, f"bar-head {row.classification or ''}"))
    for value, y, cls in bars:
        if value is None or not math.isfinite(value):
            continue
        x = _x(value, low, high)
        left, right = min(zero, x), max(zero, x)
        parts.append(f'<rect class="{cls.strip()}" x="{_n(left)}" y="{_n(y)}" '
                     f'width="{_n(max(1.0, right - left))}" height="9"/>')
    side = row.head or row.baseline
    if side is not None and side.threshold is not None and math.isfinite(side.threshold):
        at = _n(_x(side.threshold, low, high))
        parts.append(f'<line class="threshold" x1="{at}" x2="{at}" y1="0" y2="{_n(HEIGHT)}"/>')
    title = (f"baseline {score(base)}, head {score(head)} on an axis from {score(low)} to "
             f"{score(high)}")
    if side is not None and side.threshold is not None:
        title += f"; threshold {score(side.threshold)}"
    return Svg("".join(parts), title)


def delta_scale(row: MetricComparison | RubricComparison) -> float | None:
    """What one unit of :func:`delta_svg`'s axis is in metric units: the value range's span
    when declared (rubrics: 1), else the matched baseline mean's magnitude; None when
    neither is known (or it is 0)."""
    if isinstance(row, RubricComparison):
        return 1.0
    side = row.head or row.baseline
    if side is not None and side.min_value is not None and side.max_value is not None:
        span = side.max_value - side.min_value
        if math.isfinite(span) and span > 0:
            return span
    base = row.baseline_matched
    return abs(base) if base is not None and math.isfinite(base) and base != 0 else None


def delta_axis(rows: list[MetricComparison] | list[RubricComparison]) -> float:
    """The half-width of the delta axis every row of a table shares (shares of each row's
    :func:`delta_scale`): the largest |interval end|, |delta| or 2×min_effect among them,
    rounded up to one of :data:`NICE_STEPS` (0.1 when no row has a delta)."""
    reach = 0.0
    for row in rows:
        scale = delta_scale(row)
        if scale is None or row.delta is None:
            continue
        ends = [row.delta]
        if row.interval is not None:
            ends += _finite(row.interval.low, row.interval.high)
        if row.min_effect is not None:
            ends.append(2 * row.min_effect)
        reach = max(reach, *(abs(e) / scale for e in _finite(*ends)))
    return next((step for step in NICE_STEPS if step >= reach), NICE_STEPS[-1]) if reach else 0.1


def delta_svg(row: MetricComparison | RubricComparison, axis: float) -> Svg | None:
    """``row``'s delta on a shared axis of ±``axis`` (:func:`delta_axis`), None when it has
    no delta or no scale."""
    scale = delta_scale(row)
    if row.delta is None or scale is None:
        return None
    low, high = -axis, axis

    def x(value: float) -> float:
        return _x(value / scale, low, high)

    parts = []
    if row.min_effect:
        left, right = x(-row.min_effect), x(row.min_effect)
        parts.append(f'<rect class="band" x="{_n(left)}" y="2" width="{_n(right - left)}" '
                     f'height="{_n(HEIGHT - 4)}"/>')
    mid = _n(x(0.0))
    parts.append(f'<line class="zero" x1="{mid}" x2="{mid}" y1="0" y2="{_n(HEIGHT)}"/>')
    call = row.classification or ""
    interval = row.interval
    if interval is not None and interval.low is not None and interval.high is not None:
        parts += _whisker(x(interval.low), x(interval.high), interval.low / scale < low,
                          interval.high / scale > high, call)
    parts.append(f'<circle class="dot {call}" cx="{_n(x(row.delta))}" cy="{_n(HEIGHT / 2)}" '
                 'r="4"/>')
    return Svg("".join(parts), _delta_title(row, scale))


def _whisker(left: float, right: float, past_left: bool, past_right: bool,
             call: str) -> list[str]:
    y = _n(HEIGHT / 2)
    parts = [f'<line class="interval {call}" x1="{_n(left)}" x2="{_n(right)}" y1="{y}" '
             f'y2="{y}"/>']
    for edge, past, sign in ((left, past_left, 1), (right, past_right, -1)):
        if past:  # an arrow head: the interval runs on past the axis
            tip, back = _n(edge), _n(edge + 6 * sign)
            parts.append(f'<path class="interval {call}" d="M{back} {_n(HEIGHT / 2 - 4)} '
                         f'L{tip} {y} L{back} {_n(HEIGHT / 2 + 4)}"/>')
        else:
            parts.append(f'<line class="interval {call}" x1="{_n(edge)}" x2="{_n(edge)}" '
                         f'y1="{_n(HEIGHT / 2 - 5)}" y2="{_n(HEIGHT / 2 + 5)}"/>')
    return parts


def _delta_title(row: MetricComparison | RubricComparison, scale: float) -> str:
    text = f"delta {score(row.delta)}"
    interval = row.interval
    if interval is not None and interval.low is not None and interval.high is not None:
        text += f", interval [{score(interval.low)}, {score(interval.high)}]"
    elif interval is not None and interval.high is not None:
        text += f", interval up to {score(interval.high)}"
    elif interval is not None and interval.low is not None:
        text += f", interval from {score(interval.low)}"
    if row.min_effect is not None:
        text += f", min_effect {score(row.min_effect)}"
    if row.classification:
        text += f": {row.classification}"
    return text + f" (axis unit: {score(scale)})"


def trend_svg(values: list[float | None]) -> Svg | None:
    """``values`` (oldest first; None where a run has none) as a line with a dot per value,
    the last one larger; None with fewer than two values."""
    points = [(i, v) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    if len(points) < 2:
        return None
    low = min(v for _, v in points)
    high = max(v for _, v in points)
    if high == low:
        low, high = low - 1.0, high + 1.0
    step = (WIDTH - 2 * PAD) / max(1, len(values) - 1)

    def y(v: float) -> float:
        return PAD + (1 - (v - low) / (high - low)) * (HEIGHT - 2 * PAD)

    line = " ".join(f"{_n(PAD + i * step)},{_n(y(v))}" for i, v in points)
    dots = "".join(
        f'<circle class="trend-dot" cx="{_n(PAD + i * step)}" cy="{_n(y(v))}" '
        f'r="{3 if k == len(points) - 1 else 2}"/>' for k, (i, v) in enumerate(points))
    title = ", ".join(score(v) for v in values)
    return Svg(f'<polyline class="trend" points="{line}"/>{dots}', f"oldest to newest: {title}")

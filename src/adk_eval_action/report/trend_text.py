"""The default branch's history in the comment and the job summary: each gated metric's
trend (mermaid ``xychart-beta`` line charts in the job summary, a compact line per metric
in the comment), the known flaky eval cases among the failing and regressed ones, and the
baseline's trust line. Pure functions of the comparison and the gate (their filters are
registered by :mod:`adk_eval_action.report.render`).

Chart rules: one chart per gated metric (at most :data:`MAX_TREND_CHARTS`; the others are
named), the recorded runs oldest first with the pull request's head as the last point
(``head``), x labels the short commits; the y axis is the metric's value range when known
(0–1 for most ADK metrics), else the points' own. mermaid's xychart has no gaps in a line,
so a recorded run that did not measure the metric is no point
(:func:`adk_eval_action.analysis.trends.trends`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from adk_eval_action.analysis.comparison import CaseComparison, Comparison
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.analysis.trend_models import BaselineTrust, KnownFlaky, MetricTrend
from adk_eval_action.report.chart import (
    mermaid_label,
    mermaid_number,
    metric_label,
    suite_tags,
    unique_labels,
)
from adk_eval_action.report.format import md

#: Trend charts the job summary draws at most.
MAX_TREND_CHARTS = 20
SPARKS = "▁▂▃▄▅▆▇█"
_SHA = re.compile(r"^[0-9a-fA-F]{4,64}$")


def _range(trend: MetricTrend) -> tuple[float, float] | None:
    """The y range of a trend: the metric's value range when known and holding every
    point, else the points' own (widened when flat); None without a finite point."""
    values = [p.value for p in trend.points if p.value is not None and math.isfinite(p.value)]
    if not values:
        return None
    low, high = min(values), max(values)
    if trend.min_value is not None and trend.max_value is not None:
        low, high = min(low, trend.min_value), max(high, trend.max_value)
    if high == low:
        low, high = low - 1.0, high + 1.0
    return low, high


def trend_titles(trends: list[MetricTrend]) -> list[str]:
    """Each trend chart's title, all distinct: ``suite tag/metric`` as the metric chart
    labels its bars (:func:`~adk_eval_action.report.chart.metric_label`: the tail of the
    suite's name that no other suite ends with, so two suites of one agent are told
    apart), numbered where a cut still leaves two alike."""
    suites = list(dict.fromkeys(t.suite for t in trends))
    tags = suite_tags(suites)
    return unique_labels([metric_label(t.suite, t.metric_name, t.higher_is_better, tags)
                          for t in trends])


def trend_chart(trend: MetricTrend, title: str | None = None) -> str | None:
    """One trend as mermaid ``xychart-beta`` source (no fence), titled ``title`` (default:
    its own :func:`trend_titles`); None without two finite points."""
    points = [p for p in trend.points if p.value is not None and math.isfinite(p.value)]
    bounds = _range(trend)
    if len(points) < 2 or bounds is None:
        return None
    title = title if title is not None else trend_titles([trend])[0]
    labels = ", ".join(f'"{mermaid_label(p.label)}"' for p in points)
    values = ", ".join(mermaid_number(p.value or 0.0) for p in points)
    return "\n".join([
        "xychart-beta",
        f'    title "{mermaid_label(title)}"',
        f"    x-axis [{labels}]",
        f'    y-axis "mean" {mermaid_number(bounds[0])} --> {mermaid_number(bounds[1])}',
        f"    line [{values}]",
    ])


def trend_charts_markdown(comparison: Comparison) -> str:
    """The job summary's trend section: a caption and one fenced chart per gated metric;
    "" without a history of at least one recorded run."""
    facts = comparison.history
    if facts is None or not facts.recorded_runs or not facts.trends:
        return ""
    where = f" on {md(facts.branch, 60)}" if facts.branch else ""
    parts = [f"**Trend{where}**: each gated metric's mean over the recorded runs "
             "(oldest first), then this head (the last point)\n"]
    drawn, left = 0, []
    for trend, title in zip(facts.trends, trend_titles(facts.trends), strict=True):
        chart = trend_chart(trend, title) if drawn < MAX_TREND_CHARTS else None
        if chart is None:
            left.append(f"`{mermaid_label(trend.suite)}/{mermaid_label(trend.metric_name)}`")
            continue
        parts.append(f"```mermaid\n{chart}\n```\n")
        drawn += 1
    if left:
        parts.append(f"Not charted: {', '.join(left[:50])}.\n")
    return "\n".join(parts)


def sparkline(trend: MetricTrend) -> str:
    """The recorded runs' means as block characters (▁ low … █ high, on the chart's
    range), then `` → `` and the head's: ``▆▆▅▇▆ → ▂``. A run without a value is ``·``."""
    bounds = _range(trend)
    if bounds is None:
        return "—"
    low, high = bounds

    def spark(value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return "·"
        index = round((value - low) / (high - low) * (len(SPARKS) - 1))
        return SPARKS[min(len(SPARKS) - 1, max(0, index))]

    recorded = "".join(spark(p.value) for p in trend.points if not p.head)
    head = "".join(spark(p.value) for p in trend.points if p.head)
    return f"{recorded or '—'} → {head or '—'}"


def last_recorded(trend: MetricTrend) -> float | None:
    """The newest recorded run's mean of a trend (None: none)."""
    values = [p.value for p in trend.points if not p.head]
    return values[-1] if values else None


def flaky_mentions(gate: GateResult, comparison: Comparison
                   ) -> list[tuple[CaseComparison, KnownFlaky, bool]]:
    """The failing and regressed eval cases the history knows as flaky, failing ones first:
    ``(case, what the history says, quarantined)``."""
    facts = comparison.history
    if facts is None or not facts.flaky:
        return []
    quarantined = {c.key for c in gate.quarantined}
    seen: set[tuple[str, str, str]] = set()
    out = []
    for case in [*gate.failing_cases, *(c for c, _ in gate.dropped_cases)]:
        known = facts.flaky_case(case.key)
        if known is not None and case.key not in seen:
            seen.add(case.key)
            out.append((case, known, case.key in quarantined))
    return out


def link(text: str, url: str | None) -> str:
    """``text`` (escaped) as a markdown link to ``url`` when it is an http(s) URL without
    blanks or parentheses, else the escaped text alone."""
    shown = md(text, 120)
    if not url or not url.lower().startswith(("https://", "http://")):
        return shown
    if any(c.isspace() or c in "()<>\"'" for c in url):
        return shown
    return f"[{shown}]({url})"


def trust_line(trust: BaselineTrust) -> str:
    """The comment's line naming the baseline: its commit (short sha, linked), its run,
    its age and its distance from the merge-base, e.g. ``commit [`1f0c3a9`](…) ·
    [recorded run](…) · 2 days old · the merge-base itself``."""
    parts = []
    if trust.commit and _SHA.match(trust.commit):
        sha = f"`{trust.commit[:7]}`"
        parts.append("commit " + (f"[{sha}]({trust.commit_url})" if _safe(trust.commit_url)
                                  else sha))
    elif trust.commit:
        parts.append("commit " + md(trust.commit, 40))
    if trust.run_url and _safe(trust.run_url):
        parts.append(link("recorded run", trust.run_url))
    if trust.age_days is not None:
        parts.append(_age(trust.age_days))
    if trust.behind is not None:
        base = f" with {md(trust.base_ref, 60)}" if trust.base_ref else ""
        parts.append(f"the merge-base{base} itself" if trust.behind == 0 else
                     f"{trust.behind} commit{'s' if trust.behind != 1 else ''} behind the "
                     f"merge-base{base}")
    return " · ".join(parts)


def _safe(url: str | None) -> bool:
    return bool(url) and link("x", url) != md("x", 120)


def _age(days: float) -> str:
    if days < 1 / 24:
        return "recorded less than an hour ago"
    if days < 2:
        return f"recorded {int(days * 24)} h ago"
    return f"recorded {int(days)} days ago"


FILTERS: dict[str, Any] = {
    "sparkline": sparkline,
    "last_recorded": last_recorded,
    "flaky_mentions": flaky_mentions,
    "trust_line": trust_line,
}
"""The template filters of this module (``report.render`` registers them)."""

"""How the judging differs from the baseline's, in words, beside the deltas it moves
(:func:`adk_eval_action.analysis.comparability.judge_changes`): one line above the rubric
table of the comment, the job summary and the HTML report (below the metric table when no
rubric of those metrics is shown)::

    ⚖️ Judged differently from the baseline: `rubric_based_final_response_quality_v1`:
    judge model `gemini-2.5-flash` → `gemini-2.5-pro`, num_samples 5 → 1; its deltas
    measure the judge's change as well as the agent's.
"""

from __future__ import annotations

from collections.abc import Callable

from adk_eval_action.analysis.comparability import JudgeChange
from adk_eval_action.analysis.models import Comparison
from adk_eval_action.report.format import code

__all__ = ["judge_changes_line", "judged_rubrics"]

_WHAT = {"judge_model": "judge model", "num_samples": "num_samples", "prompt": "judge prompt"}


def _change_text(change: JudgeChange, name: Callable[[str], str]) -> str:
    old, new = change.baseline or "unset", change.head or "unset"
    if change.what == "num_samples":
        return f"num_samples {old} → {new}"
    return f"{_WHAT[change.what]} {name(old)} → {name(new)}"


def judge_changes_line(comparison: Comparison, markdown: bool = True) -> str:
    """Every judge metric judged differently from the baseline, one line (module
    docstring; plain text without ``markdown``, for the HTML report); "" when none is.
    The prompt's change names the two google-adk versions when they differ."""
    changes = comparison.judge_changes
    if not changes:
        return ""
    name: Callable[[str], str] = (lambda v: code(v, 80)) if markdown else str
    several = len({c.suite for c in changes}) > 1
    by_metric: dict[tuple[str, str], list[JudgeChange]] = {}
    for change in changes:
        by_metric.setdefault((change.suite, change.metric_name), []).append(change)
    parts = []
    for (suite, metric), found in by_metric.items():
        where = f" (suite {name(suite)})" if several else ""
        parts.append(f"{name(metric)}{where}: " + ", ".join(_change_text(c, name) for c in found))
    versions = _versions(comparison)
    prompt = any(c.what == "prompt" for c in changes) and versions
    text = "; ".join(parts) + (f" (google-adk {versions})" if prompt else "")
    lead = "⚖️ Judged differently from the baseline: " if markdown else (
        "Judged differently from the baseline: ")
    return f"{lead}{text}; its deltas measure the judge's change as well as the agent's."


def _versions(comparison: Comparison) -> str:
    base = comparison.baseline_metadata.adk_version if comparison.baseline_metadata else None
    head = comparison.head_metadata.adk_version
    return f"{base} → {head}" if base and head and base != head else ""


def judged_rubrics(comparison: Comparison) -> bool:
    """Whether a rubric row belongs to a metric judged differently: the line then goes
    above the rubric table, else below the metric table."""
    changed = {(c.suite, c.metric_name) for c in comparison.judge_changes}
    return any((r.suite, r.metric_name) in changed for r in comparison.rubrics)

"""The judge beside the deltas it moves, in words, for the comment, the job summary and the
HTML report.

How the judging differs from the baseline's
(:func:`adk_eval_action.analysis.comparability.judge_changes`): one line above the rubric
table (below the metric table when no rubric of those metrics is shown)::

    ⚖️ Judged differently from the baseline: `rubric_based_final_response_quality_v1`:
    judge model `gemini-2.5-flash` → `gemini-2.5-pro`, num_samples 5 → 1; its deltas
    measure the judge's change as well as the agent's.

Judge flips, verdicts changed on an eval case the agent answered alike on both sides
(:mod:`adk_eval_action.analysis.judgeflips`): one line below the metric table, with each
judge model's self-disagreement rate, and the label :data:`FLIP_LABEL` on each flipped case::

    ⚖️ 3 judge flips (same answer) in 2 eval cases set aside: the judge changed its verdict
    where the agent answered alike on both sides, so each call is on the other eval cases.
    Judge self-disagreement on the same answer: `gemini-2.5-flash` 3 of 12 verdicts (25%).
"""

from __future__ import annotations

from collections.abc import Callable

from adk_eval_action.analysis.comparability import JudgeChange
from adk_eval_action.analysis.comparison import Comparison, JudgeFlip
from adk_eval_action.report.format import code, score
from adk_eval_action.results.judgenoise import JudgeNoise
from adk_eval_action.results.scoretable import CaseKey

__all__ = ["FLIP_LABEL", "case_flips_text", "flip_text", "flips_by_case", "judge_changes_line",
           "judge_flips_line", "judged_rubrics"]

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


FLIP_LABEL = "judge flip (same answer)"
"""How a judge flip is labelled wherever it is shown."""


def _noise_text(noise: JudgeNoise, name: Callable[[str], str]) -> str:
    rate = f" ({noise.rate:.0%})" if noise.rate is not None else ""
    return f"{name(noise.judge_model)} {noise.disagreed} of {noise.compared} verdicts{rate}"


def judge_flips_line(comparison: Comparison, markdown: bool = True,
                     always: bool = False) -> str:
    """The judge flips of the comparison in one line (module docstring), with each judge
    model's self-disagreement rate on the same answer; without flips "" (the comment), or
    with ``always`` the rates alone when some verdicts were compared (the job summary, the
    HTML report). Plain text without ``markdown``."""
    name: Callable[[str], str] = (lambda v: code(v, 80)) if markdown else str
    noise = "; ".join(_noise_text(n, name) for n in comparison.judge_noise)
    flips = len(comparison.judge_flips)
    if not flips:
        if always and noise:
            return f"Judge self-disagreement on the same answer: {noise} (no {FLIP_LABEL})."
        return ""
    cases = len({(f.suite, f.eval_set_id, f.eval_id) for f in comparison.judge_flips})
    lead = "⚖️ " if markdown else ""
    return (f"{lead}{flips} {FLIP_LABEL if flips == 1 else 'judge flips (same answer)'} in "
            f"{cases} eval case{'s' if cases != 1 else ''} set aside: the judge changed its "
            "verdict where the agent answered alike on both sides, so each call is on the "
            f"other eval cases. Judge self-disagreement on the same answer: {noise}.")


def flips_by_case(comparison: Comparison) -> dict[CaseKey, list[JudgeFlip]]:
    """The judge flips of each eval case (for the case rows)."""
    found: dict[CaseKey, list[JudgeFlip]] = {}
    for flip in comparison.judge_flips:
        found.setdefault((flip.suite, flip.eval_set_id, flip.eval_id), []).append(flip)
    return found


def flip_text(flip: JudgeFlip, markdown: bool = True) -> str:
    """One flip: ``metric`` (rubric ``id``) baseline → head."""
    name: Callable[[str], str] = (lambda v: code(v, 80)) if markdown else str
    rubric = f" rubric {name(flip.rubric_id)}" if flip.rubric_id is not None else ""
    return f"{name(flip.metric_name)}{rubric} {score(flip.baseline)} → {score(flip.head)}"


def case_flips_text(flips: list[JudgeFlip], markdown: bool = True) -> str:
    """A case's flips after :data:`FLIP_LABEL` (its metric scores first, at most 4)."""
    shown = ", ".join(flip_text(f, markdown) for f in flips[:4])
    more = f" and {len(flips) - 4} more" if len(flips) > 4 else ""
    return f"⚖️ {FLIP_LABEL}: {shown}{more}" if markdown else f"{FLIP_LABEL}: {shown}{more}"

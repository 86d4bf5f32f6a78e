"""The changes of the gate since the baseline (:mod:`adk_eval_action.analysis.gatechanges`)
in words, one form for the comment, the job summary and the console.

A change that loosens the gate is a warning beside the verdict, because a green check
under a gate the change itself loosened says less than it seems:
``⚠️ **This change loosens the gate** (vs the baseline): it lowers the threshold of
`response_match_score` 0.2 → 0, removes `tool_trajectory_avg_score` from the criteria.``
Changes that tighten it are listed neutrally: ``Gate changes since the baseline: it raises
the threshold of `response_match_score` 0.5 → 0.8.``
"""

from __future__ import annotations

from collections.abc import Callable

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gatechanges import GateChange, Value
from adk_eval_action.report.format import code, score

__all__ = ["change_text", "gate_changes_line"]


def _value(value: Value, name: Callable[[str], str]) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return score(float(value))
    return name(str(value)) if value is not None else "unset"


def _moved(old: Value, new: Value) -> str:
    """``lowers``/``raises`` for numbers, else ``changes``."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
    if not numbers:
        return "changes"
    return "lowers" if float(new or 0.0) < float(old or 0.0) else "raises"


def change_text(change: GateChange, markdown: bool = True, suite: bool = False) -> str:
    """One change as a verb phrase: ``lowers the threshold of `m` 0.2 → 0``, ``removes `m`
    from the criteria``, ``lowers min_pass_rate 1 → 0.7``, ``changes fail_on `any` →
    `threshold```; `` in suite `s``` after a criterion's when ``suite``. Names are code
    spans when ``markdown``, plain text on the console."""
    name: Callable[[str], str] = code if markdown else str
    old, new = _value(change.baseline, name), _value(change.head, name)
    if change.kind == "threshold":
        text = f"{_moved(change.baseline, change.head)} the threshold of {name(change.name)} " \
               f"{old} → {new}"
    elif change.kind == "removed":
        text = f"removes {name(change.name)} from the criteria"
        text += f" (threshold {old})" if change.baseline is not None else ""
    elif change.kind == "added":
        text = f"adds {name(change.name)} to the criteria"
        text += f" (threshold {new})" if change.head is not None else ""
    else:
        text = f"{_moved(change.baseline, change.head)} {name(change.name)} {old} → {new}"
    if suite and change.suite is not None:
        text += f" in suite {name(change.suite)}"
    return text


def gate_changes_line(comparison: Comparison, loosened: bool = True,
                      markdown: bool = True) -> str:
    """The changes that loosen the gate (``loosened``) or the others, as one line (module
    docstring; the console's has no emphasis); "" when there is none."""
    changes = comparison.gate_loosened if loosened else comparison.gate_tightened
    if not changes:
        return ""
    several = len({c.suite for c in comparison.gate_changes if c.suite}) > 1 or len(
        {m.suite for m in comparison.metrics}) > 1
    text = ", ".join(change_text(c, markdown, several) for c in changes)
    if not loosened:
        return f"Gate changes since the baseline: it {text}."
    if markdown:
        return f"⚠️ **This change loosens the gate** (vs the baseline): it {text}."
    return f"this change loosens the gate (vs the baseline): it {text}"

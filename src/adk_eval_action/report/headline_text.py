"""The run's verdict as plain text, for the HTML report's headline: the same words as the
comment's verdict line (``templates/_macros.md.j2``, ``verdict_line``), without markdown.

* incomplete (:func:`adk_eval_action.report.headline.incomplete_headline`): ``ADK eval
  incomplete (cause)``, ``and failed`` when computed scores failed the gate too;
* else ``ADK eval report only`` (``fail_on: none``), ``passed with warnings`` (some cases
  could not be evaluated), ``passed`` or ``failed``, with the count of eval cases, the
  runs each, why some could not be evaluated and the removed cases, then the drops the
  gate did not fail on (:func:`adk_eval_action.report.headline.drops_text`, ``worse: …``,
  as the console says them); the gate's reasons.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_action.report.headline import drops_text, incomplete_headline
from adk_eval_action.report.render import CommentContext


class Verdict(BaseModel):
    """The headline: ``tone`` (the banner's colour), ``title``, ``text`` and the rules that
    failed (``reasons``), all plain text."""

    tone: Literal["pass", "fail", "warn", "info"]
    title: str
    text: str
    reasons: list[str] = Field(default_factory=list)


def verdict(context: CommentContext) -> Verdict:
    """The verdict of ``context`` (module docstring)."""
    comparison, gate = context.comparison, context.gate
    incomplete = incomplete_headline(comparison, gate)
    if incomplete is not None:
        title = f"ADK eval incomplete ({incomplete.cause})"
        if incomplete.failed:
            title += " and failed"
        text = incomplete.details
        if incomplete.errors:
            text += f" ({incomplete.errors} error{'s' if incomplete.errors > 1 else ''} below)"
        return Verdict(tone="warn", title=title, text=text,
                       reasons=gate.reasons if incomplete.failed else [])
    if gate.report_only:
        why = gate.unchecked or "fail_on: none"
        tone, title = "info", f"ADK eval report only ({why}: nothing fails the check)"
    elif gate.passed and gate.warned:
        tone, title = "warn", "ADK eval passed with warnings"
    elif gate.passed:
        tone, title = "pass", "ADK eval passed"
    else:
        tone, title = "fail", "ADK eval failed"
    parts = [gate.count_text]
    if comparison.num_runs > 1 and gate.cases_evaluated:
        parts[0] += f" ({comparison.num_runs} runs each)"
    parts += [note for note in (gate.unsure_note, gate.broken_note.replace("`", ""),
                                comparison.removed_note) if note]
    drops = drops_text(gate, comparison, markdown=False)
    parts += [f"worse: {drops}"] if drops else []
    return Verdict(tone=tone, title=title, text="; ".join(parts), reasons=gate.reasons)

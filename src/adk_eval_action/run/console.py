"""The console's report of a compared run: a per-metric table, the errors and the gate's
verdict with the drops it did not fail on (for an incomplete run, its headline in the
comment's words: :mod:`adk_eval_action.report.headline`)."""

from __future__ import annotations

import logging

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import GateResult, failed_on_scores
from adk_eval_action.outcome import annotated, with_hint
from adk_eval_action.report.gatechange_text import gate_changes_line
from adk_eval_action.report.headline import drops_text, incomplete_headline

__all__ = ["print_table"]

log = logging.getLogger(__name__)


def print_table(
    comparison: Comparison, gate: GateResult, usage_error: bool = False,
    annotating: bool = False,
) -> None:
    """A short per-metric table and the verdict on the console (the log). Suite and metric
    names are never cut: the columns are as wide as the longest. Each error once, with its
    hint; with ``annotating`` (the action, which publishes them: ``outcome.annotated``)
    the errors that get an annotation of their own are left to it."""
    log.info("")
    suite_w = max([20, *(len(m.suite) for m in comparison.metrics)])
    metric_w = max([42, *(len(m.metric_name) for m in comparison.metrics)])
    header = f"{'suite':<{suite_w}} {'metric':<{metric_w}} {'baseline':>9} {'head':>9}"
    log.info(f"{header} {'delta':>9} {'thr':>6}")
    for m in comparison.metrics:
        base = "" if not m.baseline or m.baseline.mean is None else f"{m.baseline.mean:.3f}"
        head = "" if not m.head or m.head.mean is None else f"{m.head.mean:.3f}"
        delta = "" if m.delta is None else f"{m.delta:+.3f}"
        side = m.head or m.baseline
        thr = "" if not side or side.threshold is None else f"{side.threshold:g}"
        name = f"{m.suite:<{suite_w}} {m.metric_name:<{metric_w}}"
        log.info(f"{name} {base:>9} {head:>9} {delta:>9} {thr:>6}")
    for warning in comparison.warnings:
        log.warning("%s", warning)
    for error in comparison.errors:
        if annotating and annotated(error):
            continue
        where = ", ".join(x for x in (error.file, error.eval_id) if x)
        log.info("error (%s%s): %s", error.kind, ": " + where if where else "",
                 with_hint(error))
    scored = failed_on_scores(gate)
    incomplete = incomplete_headline(comparison, gate) if usage_error else None
    if incomplete is not None:
        # The comment's headline, in the same words (report.headline).
        log.info("%s", incomplete.console())
    else:
        verdict = "PASSED" if gate.passed else "FAILED"
        if gate.report_only:
            verdict = f"REPORT ONLY ({gate.unchecked or 'fail_on: none'}, nothing fails the check)"
        elif gate.passed and gate.warned:
            verdict = "PASSED with warnings"
        notes = "".join(f"; {note}" for note in (gate.unsure_note, gate.broken_note,
                                                 comparison.removed_note) if note)
        drops = drops_text(gate, comparison, markdown=False)
        # The comment's headline names every drop the gate did not fail on; so does this.
        notes += f"; worse: {drops}" if drops else ""
        log.info("gate %s: %s%s", verdict, gate.count_text, notes)
    for reason in gate.reasons if scored or not usage_error else []:
        log.info("  - %s", reason)
    loosened = gate_changes_line(comparison, markdown=False)
    if loosened:
        log.warning("%s", loosened)
    tightened = gate_changes_line(comparison, loosened=False, markdown=False)
    if tightened:
        log.info("%s", tightened)

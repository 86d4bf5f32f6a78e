"""The headline of an incomplete run (exit 2), one form in the comment, the job summary
and the console, whatever stopped it: ``ADK eval incomplete (<cause>): <details>``.

* ``cause`` names the kinds of the errors that made the run incomplete, in the words of
  :data:`adk_eval_action.analysis.gate.UNSURE_REASONS` (``judge setup``, ``model
  unreachable``, ``configuration error``), first seen first.
* ``details`` says what could be evaluated: a run-wide model or credentials summary first
  (``4 of 4 case runs could not reach the model (503 UNAVAILABLE ×4)``), then the count
  (``0 of 5 eval cases could be evaluated``, ``3/4 evaluated eval cases passed, 1 of 5 could
  not be evaluated``); for a run stopped before evaluation started (:func:`stopped_headline`),
  that nothing was evaluated, and the error.

The comment writes it as ``⚠️ **ADK eval incomplete** (cause): details`` (with ``and
**failed**`` when computed scores failed the gate too), the console as ``gate INCOMPLETE
(cause): details (exit 2)``.

A complete run's headline is the gate's verdict, and it never hides a drop: every gated
metric or rubric that got worse than the baseline and did not fail the gate
(:attr:`adk_eval_action.analysis.gate.GateResult.ungated_drops`) follows the verdict, with
its delta and why the gate did not fail on it (:func:`drops_text`), e.g. ``✅ **ADK eval
passed**: 2/2 eval cases passed · ⚠️ `tool_trajectory_avg_score` −0.550 vs baseline (not
gated: fail_on threshold).``; so does an eval case that passed on the baseline and crashed
(``⚠️ 1 eval case newly failing (crashed: `weather_paris`; not gated: fail_on
threshold)``); the console's gate line ends the same way, and the action's ``regressed``
output lists every drop and crash (:func:`regressed_output`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.comparison import SuiteWithoutBaseline
from adk_eval_action.analysis.drops import CaseCrash, MetricDrop
from adk_eval_action.analysis.gate import UNSURE_REASONS, GateResult, failed_on_scores
from adk_eval_action.report.cells import places
from adk_eval_action.report.format import CALL_MARKS, code, md, signed
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, ErrorRecord, RunResults

__all__ = [
    "MAX_HEADLINE_DROPS",
    "IncompleteHeadline",
    "drops_text",
    "incomplete_cause",
    "incomplete_headline",
    "no_baseline_reason",
    "regressed_output",
    "stopped_headline",
]

MAX_HEADLINE_DROPS = 4
"""Drops the headline names; the others are counted (``and 2 more``)."""

#: Run-wide errors the headline states in full (once, not per case): the model could not be
#: reached, no or refused credentials, a file of the run not written (a full disk). The
#: comment's error list leaves them out.
RUN_WIDE_KINDS = ("model", "credentials", "output")


class IncompleteHeadline(BaseModel):
    """An incomplete run's headline (module docstring), as plain text: each channel
    escapes it where it lands.

    Attributes:
        cause: the incomplete error kinds in words, e.g. ``judge setup``.
        details: what was and was not evaluated, e.g. ``0 of 5 eval cases could be
            evaluated``.
        errors: the errors the comment lists below the headline (those not in ``details``).
        failed: the gate failed on scores that were computed too
            (:func:`adk_eval_action.analysis.gate.failed_on_scores`): ``… and failed``.
    """

    cause: str
    details: str
    errors: int = 0
    failed: bool = False

    def console(self, exit_code: int | str = 2) -> str:
        """The console's verdict line: ``gate INCOMPLETE (cause): details (exit 2)``, with
        ``… and FAILED: …`` when :attr:`failed`."""
        also = " and FAILED" if self.failed else ""
        return f"gate INCOMPLETE ({self.cause}){also}: {self.details} (exit {exit_code})"


def incomplete_cause(errors: Iterable[ErrorRecord]) -> str:
    """The words for the kinds of ``errors`` that make a run incomplete
    (:data:`INCOMPLETE_ERROR_KINDS`), first seen first, comma-separated; "" when none."""
    kinds = dict.fromkeys(e.kind for e in errors if e.kind in INCOMPLETE_ERROR_KINDS)
    return ", ".join(UNSURE_REASONS.get(k, k.replace("_", " ")) for k in kinds)


def no_baseline_reason(gap: SuiteWithoutBaseline) -> str:
    """Why a suite has no baseline, as plain text for one line of the comment (each
    channel escapes it): ``its baseline run was incomplete (agent setup: No module named
    'selenium')`` or ``not in the baseline run (a new suite, or its agent or eval sets
    moved)`` (:mod:`adk_eval_action.analysis.suite_baselines`)."""
    if gap.why == "absent":
        return "not in the baseline run (a new suite, or its agent or eval sets moved)"
    if gap.error is None:
        return "its baseline run was marked incomplete"
    message = " ".join(gap.error.message.split())
    cut = message if len(message) <= 160 else message[:159] + "…"
    return f"its baseline run was incomplete ({incomplete_cause([gap.error])}: {cut})"


def incomplete_headline(comparison: Comparison, gate: GateResult) -> IncompleteHeadline | None:
    """The headline of a run whose head has errors that make it incomplete, or None when
    it has none (the gate's verdict is the headline then). The errors of a suite that
    fails as it did on the baseline (:attr:`Comparison.known_broken`) do not count here:
    the gate's warnings name it."""
    broken = comparison.known_broken
    errors = [e for e in comparison.errors if e.suite is None or e.suite not in broken]
    cause = incomplete_cause(errors)
    if not cause:
        return None
    run_wide = [e for e in errors if e.kind in RUN_WIDE_KINDS and e.eval_id is None]
    listed = [e for e in errors if e.kind in INCOMPLETE_ERROR_KINDS and e not in run_wide]
    details = [e.message for e in run_wide] + [_count(gate, comparison.num_runs)]
    if comparison.removed_note:
        details.append(comparison.removed_note)
    return IncompleteHeadline(cause=cause, details="; ".join(details), errors=len(listed),
                              failed=failed_on_scores(gate))


def _count(gate: GateResult, num_runs: int) -> str:
    """What was evaluated: the cause is named beside it, so unlike ``gate.count_text`` it
    does not say why again."""
    if not gate.cases_total:
        return "no eval case was evaluated"
    cases = "eval case" if gate.cases_total == 1 else "eval cases"
    if not gate.cases_evaluated:
        return f"0 of {gate.cases_total} {cases} could be evaluated"
    runs = f" ({num_runs} runs each)" if num_runs > 1 else ""
    if not gate.cases_unsure:
        return gate.count_text + runs
    return (f"{gate.count_text}{runs}, {gate.cases_unsure} of {gate.cases_total} could not be "
            "evaluated")


def stopped_headline(results: RunResults, error: ErrorRecord) -> IncompleteHeadline:
    """The headline of a run that ``error`` stopped (before evaluation started when
    ``results`` has no suites: a config or input error; else a signal, an internal error, an
    unusable template). ``details`` is what was evaluated; the error itself is shown below
    the headline: the suites and eval cases with a finished run.
    """
    cause = incomplete_cause([error]) or error.kind.replace("_", " ")
    if not results.suites:
        details = "nothing was evaluated: the run stopped before evaluation started"
    else:
        # A case counts once a run of it finished (a stop leaves the others without runs).
        done = [sum(1 for e in s.eval_sets for c in e.eval_cases if c.runs)
                for s in results.suites]
        details = (f"evaluated before it stopped: {sum(1 for n in done if n)} suite(s), "
                   f"{sum(done)} eval case(s)")
    return IncompleteHeadline(cause=cause, details=details)


def _drop_name(
    drop: MetricDrop, name: Callable[[str], str], plain: Callable[[str], str], suites: bool
) -> str:
    text = name(drop.metric_name)
    if drop.rubric_id is not None:
        text += f" rubric {name(drop.rubric_id)}"
    return f"{text} ({plain(drop.suite)})" if suites else text


def _drop_delta(drop: MetricDrop, comparison: Comparison, markdown: bool) -> str:
    rows: list[Any] = [*comparison.metrics, *comparison.rubrics]
    row = next((r for r in rows if (r.suite, r.metric_name, getattr(r, "rubric_id", None))
                == (drop.suite, drop.metric_name, drop.rubric_id)), None)
    text = signed(drop.delta, places(row) if row is not None else 3)
    if drop.classification == "regressed":
        text += f" {CALL_MARKS['regressed']}" if markdown else " (regressed)"
    return text


def drops_text(gate: GateResult, comparison: Comparison, markdown: bool = True) -> str:
    """The drops the gate did not fail on (:attr:`GateResult.ungated_drops`), as the
    headline ends: ``⚠️ `a` −0.250, `b` +9 vs baseline (not gated: fail_on threshold)``,
    after the crashed eval cases it did not fail on (:attr:`GateResult.ungated_crashes`:
    ``1 eval case newly failing (crashed: `x`; not gated: fail_on threshold)``),
    the drops with the same note grouped (``; `` between groups), at most
    :data:`MAX_HEADLINE_DROPS` named, the suite named beside each when the run has several;
    🔴 beside a drop called regressed (``(regressed)`` on the console, where ``markdown``
    is False and names are plain, not code spans). "" when there is none."""
    drops = gate.ungated_drops
    crashes = gate.ungated_crashes
    if not drops and not crashes:
        return ""
    name: Callable[[str], str] = code if markdown else str
    plain: Callable[[str], str] = md if markdown else str
    suites = len({m.suite for m in comparison.metrics}) > 1
    groups: dict[str, list[str]] = {}
    crashed = _crashes_text(crashes, name, plain)
    for drop in drops[:MAX_HEADLINE_DROPS]:
        shown = _drop_name(drop, name, plain, suites)
        groups.setdefault(plain(drop.note), []).append(
            f"{shown} {_drop_delta(drop, comparison, markdown)}")
    more = len(drops) - MAX_HEADLINE_DROPS
    parts = crashed + [f"{', '.join(items)} vs baseline ({note})"
                       for note, items in groups.items()]
    text = "; ".join(parts) + (f"; and {more} more (see the table)" if more > 0 else "")
    return f"⚠️ {text}" if markdown else text


def _crashes_text(
    crashes: list[CaseCrash], name: Callable[[str], str], plain: Callable[[str], str]
) -> list[str]:
    """The crashed eval cases the gate did not fail on, one part per note: ``2 eval cases
    newly failing (crashed: `a`, `b`; not gated: fail_on threshold)``, at most
    :data:`MAX_HEADLINE_DROPS` named."""
    groups: dict[str, list[CaseCrash]] = {}
    for crash in crashes:
        groups.setdefault(crash.note, []).append(crash)
    parts = []
    for note, group in groups.items():
        cases = "eval case" if len(group) == 1 else "eval cases"
        named = ", ".join(name(c.eval_id) for c in group[:MAX_HEADLINE_DROPS])
        more = len(group) - MAX_HEADLINE_DROPS
        named += f" and {more} more" if more > 0 else ""
        parts.append(f"{len(group)} {cases} newly failing (crashed: {named}; {plain(note)})")
    return parts


def regressed_output(gate: GateResult) -> list[dict[str, Any]]:
    """The ``regressed`` step output: every eval case that passed on the baseline and
    crashed (:func:`adk_eval_action.analysis.drops.crashed_cases`), then every gated metric
    and rubric that got worse than the baseline (:mod:`adk_eval_action.analysis.drops`),
    failing the gate or not, as ``{"suite", "metric", "rubric" (null for a metric),
    "eval_set", "eval_case" (null for a metric or rubric), "delta", "classification",
    "gated", "note"}`` (a crash has no metric, delta or classification), the largest drop
    first; ``[]`` when nothing got worse."""
    crashes = [
        {
            "suite": c.suite,
            "metric": None,
            "rubric": None,
            "eval_set": c.eval_set_id,
            "eval_case": c.eval_id,
            "delta": None,
            "classification": None,
            "gated": c.gated,
            "note": c.note,
        }
        for c in gate.crashes
    ]
    return crashes + [
        {
            "suite": d.suite,
            "metric": d.metric_name,
            "rubric": d.rubric_id,
            "eval_set": None,
            "eval_case": None,
            "delta": d.delta,
            "classification": d.classification,
            "gated": d.gated,
            "note": d.note,
        }
        for d in gate.drops
    ]

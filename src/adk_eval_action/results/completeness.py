"""Per-suite completeness: the suite (one agent, its eval sets, its eval config) is the unit
of completeness, so one suite that did not import, install or run never costs another
suite its baseline or its history (docs/baselines.md, "Per-suite completeness").

A suite of a results file is **incomplete** when an error of
:data:`~adk_eval_action.results.model.INCOMPLETE_ERROR_KINDS` belongs to it: one of its own
``errors``, a run-wide error that names it (``suite``), or a run-wide error that names no
suite of the file (a signal, an internal error, the budget: nothing tells which suites it
spared, so it counts against all of them). A file marked ``complete: false`` without any
such error has every suite incomplete. The other suites are **complete**: their scores are
a whole record of their commit, whatever happened to the rest of the run.

Pure functions of a :class:`~adk_eval_action.results.model.RunResults`; nothing is
modified in place.
"""

from __future__ import annotations

from adk_eval_action.results.model import (
    INCOMPLETE_ERROR_KINDS,
    ErrorRecord,
    RunResults,
    SuiteRecord,
)

__all__ = ["complete_suites", "decides_incomplete", "incomplete_suites", "left_out_line",
           "with_complete_suites"]


def incomplete_suites(results: RunResults) -> dict[str, list[ErrorRecord]]:
    """The incomplete suites of ``results`` (module docstring), in file order, each with
    the errors that make it so (``[]`` for a file marked incomplete with no such error)."""
    names = {s.name for s in results.suites}
    run_wide = [e for e in results.errors
                if e.kind in INCOMPLETE_ERROR_KINDS and e.suite not in names]
    marked = results.complete is False
    found: dict[str, list[ErrorRecord]] = {}
    for suite in results.suites:
        own = [*(e for e in suite.errors if e.kind in INCOMPLETE_ERROR_KINDS),
               *(e for e in results.errors
                 if e.kind in INCOMPLETE_ERROR_KINDS and e.suite == suite.name)]
        errors = [*own, *run_wide]
        if errors or (marked and not results.incomplete_errors()):
            found[suite.name] = errors
    return found


def decides_incomplete(results: RunResults, excused: set[str] | frozenset[str] = frozenset()
                       ) -> bool:
    """Whether errors that kept scores from being computed make the run incomplete (exit
    2): a run-wide one, or one of a suite not in ``excused`` (suites that fail exactly as
    on the baseline: ``Comparison.known_broken``). The errors decide, not the recorded
    ``complete`` (the gate may have turned a judge's off-format answers into warnings)."""
    names = {s.name for s in results.suites}
    if any(e.kind in INCOMPLETE_ERROR_KINDS and e.suite not in names for e in results.errors):
        return True
    return any(e.kind in INCOMPLETE_ERROR_KINDS for s in results.suites
               if s.name not in excused for e in s.errors) or any(
        e.kind in INCOMPLETE_ERROR_KINDS and e.suite not in excused for e in results.errors)


def complete_suites(results: RunResults) -> list[str]:
    """The names of the complete suites of ``results``, in file order."""
    incomplete = incomplete_suites(results)
    return [s.name for s in results.suites if s.name not in incomplete]


def with_complete_suites(results: RunResults, keep_records: bool = True) -> RunResults:
    """``results`` as a baseline or a history may use them: every complete suite as it is;
    every incomplete one emptied (no eval set, no agent details; its errors kept, so that
    whoever reads it can say why it has no scores) when ``keep_records``, else left out.
    The run-wide errors and the ``complete`` mark are kept. ``results`` itself is returned
    when every suite is complete."""
    incomplete = incomplete_suites(results)
    if not incomplete:
        return results
    suites: list[SuiteRecord] = []
    for suite in results.suites:
        if suite.name not in incomplete:
            suites.append(suite)
        elif keep_records:
            suites.append(suite.model_copy(update={"eval_sets": [], "agent_details": {}}))
    return results.model_copy(update={"suites": suites})


def left_out_line(incomplete: dict[str, list[ErrorRecord]], limit: int = 5) -> str:
    """``suites a (agent: No module named 'x'), b (inference: ...)`` for a log line: the
    first ``limit`` suites with their first error (kind and message, cut at 120
    characters), then how many more."""
    shown = []
    for name, errors in list(incomplete.items())[:limit]:
        first = errors[0] if errors else None
        why = f"{first.kind}: {_cut(first.message, 120)}" if first else "marked incomplete"
        shown.append(f"{name} ({why})")
    more = len(incomplete) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _cut(text: str, limit: int) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"

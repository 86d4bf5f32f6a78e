"""Which of the head's suites have no baseline although the run has one, and why: the
suite is the unit of completeness (docs/baselines.md, "Per-suite completeness"), so a
baseline whose run was incomplete for some suites is the baseline of the others only, and
the comment names each suite left without one (``report``'s ``no_baseline_lines``)."""

from __future__ import annotations

from adk_eval_action.analysis.comparison import SuiteWithoutBaseline
from adk_eval_action.results.completeness import incomplete_suites
from adk_eval_action.results.model import ErrorRecord, RunResults


def suites_without_baseline(head: RunResults, baseline: RunResults | None,
                            ) -> list[SuiteWithoutBaseline]:
    """The suites of ``head`` (skeletons will do) that ``baseline`` (its suites named as
    the head's: :mod:`adk_eval_action.results.identity`) gives no scores to, in the
    head's order: ``absent`` from it, or ``incomplete`` in its run
    (:func:`adk_eval_action.results.completeness.incomplete_suites`; the baseline stage
    has emptied such suites, keeping their errors, so no partial score of theirs is
    compared); such a suite the head's run left incomplete in the same way is marked
    ``same_on_head``. None (no baseline at all: the one "No baseline" line says why): []."""
    if baseline is None:
        return []
    recorded = {s.name for s in baseline.suites}
    incomplete, on_head = incomplete_suites(baseline), incomplete_suites(head)
    gaps = []
    for suite in head.suites:
        if suite.name not in recorded:
            gaps.append(SuiteWithoutBaseline(suite=suite.name, why="absent"))
        elif suite.name in incomplete:
            errors = incomplete[suite.name]
            gaps.append(SuiteWithoutBaseline(
                suite=suite.name, why="incomplete", error=errors[0] if errors else None,
                same_on_head=_same(on_head.get(suite.name, []), errors)))
    return gaps


def _same(head: list[ErrorRecord], baseline: list[ErrorRecord]) -> bool:
    """Whether the head's errors of a suite are all the baseline's (kind and message): the
    suite fails as it did on the base branch, whatever this change did."""
    known = {(e.kind, e.message) for e in baseline}
    return bool(head) and all((e.kind, e.message) in known for e in head)

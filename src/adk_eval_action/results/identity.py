"""Baseline suites matched to the head's by identity when their names differ.

Results compare suite by suite by name. A suite renamed between the baseline's run and the
head's (suite names got shorter in a newer version of this tool, or its name in
adk-eval.yaml changed) would otherwise read as one suite removed and another added, with
no delta. :func:`baseline_renames` pairs such suites by their identity: the agent path and
the eval set folder both files record (:func:`adk_eval_action.project.names.suite_identity`),
and the baseline's suite takes the head's name (:func:`rename_suites`,
:meth:`adk_eval_action.results.scoretable.ScoreTable.renamed`). A suite whose name is on
both sides keeps it; a pairing is made only when it is the only one possible.
"""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_action.project.names import suite_identity
from adk_eval_action.results.model import RunResults, SuiteRecord

__all__ = ["baseline_renames", "record_identity", "rename_suites"]


def record_identity(suite: SuiteRecord) -> str | None:
    """A suite record's ``<agent>:<eval set folder>`` (None when its file records no agent
    or no eval set file, as ADK's eval_history does not)."""
    return suite_identity(suite.agent, [e.file for e in suite.eval_sets if e.file])


def baseline_renames(
    baseline: Iterable[SuiteRecord], head: Iterable[SuiteRecord]
) -> dict[str, str]:
    """``{baseline name: head name}`` for each head suite whose name the baseline lacks and
    whose identity exactly one unmatched baseline suite has (and no other head suite)."""
    base = list(baseline)
    heads = list(head)
    base_names = {s.name for s in base}
    head_names = {s.name for s in heads}
    orphans = [s for s in base if s.name not in head_names]
    newcomers = [s for s in heads if s.name not in base_names]
    renames: dict[str, str] = {}
    for suite in newcomers:
        identity = record_identity(suite)
        if identity is None:
            continue
        same = [b for b in orphans if record_identity(b) == identity]
        rivals = [h for h in newcomers if record_identity(h) == identity]
        if len(same) == 1 and len(rivals) == 1:
            renames[same[0].name] = suite.name
    return renames


def rename_suites(results: RunResults, renames: dict[str, str]) -> RunResults:
    """``results`` with its suites (and their errors) named by ``renames``, in place;
    returned for chaining. Nothing changes without renames."""
    if not renames:
        return results
    for suite in results.suites:
        if suite.name in renames:
            suite.name = renames[suite.name]
            for error in suite.errors:
                error.suite = suite.name
    for error in results.errors:
        if error.suite in renames:
            error.suite = renames[error.suite]
    return results

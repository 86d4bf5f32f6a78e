"""Baseline suites matched to the head's by identity when their names differ.

Results compare suite by suite by name. A suite renamed between the baseline's run and the
head's (suite names got shorter in a newer version of this tool, or its name in
adk-eval.yaml changed) would otherwise read as one suite removed and another added, with
no delta. :func:`baseline_renames` pairs such suites by their identity: the agent path and
the eval set folder both files record (:func:`adk_eval_action.project.names.suite_identity`),
and the baseline's suite takes the head's name (:func:`rename_suites`,
:meth:`adk_eval_action.results.scoretable.ScoreTable.renamed`). A suite whose name is on
both sides keeps it; a pairing is made only when it is the only one possible.

ADK's eval_history records neither: its suites are named after the app (the folder that
holds ``.adk``), which need not be the suite that evaluates the same eval set here (the
adk-python layout: one agent, a suite per folder of eval sets). So each of its eval cases
goes to the head suite that has the same eval set id and eval id, when exactly one head
suite has it, whatever the suite names (:func:`place_history_cases`).
"""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_action.project.names import suite_identity
from adk_eval_action.results.model import (
    CaseKey,
    EvalCaseRecord,
    EvalSetRecord,
    RunResults,
    SuiteRecord,
)

__all__ = [
    "baseline_renames",
    "case_keys",
    "place_history_cases",
    "record_identity",
    "rename_suites",
]


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


def case_keys(results: RunResults) -> list[CaseKey]:
    """Every (suite, eval set id, eval id) of ``results``, in order."""
    return [(s.name, e.eval_set_id, c.eval_id)
            for s in results.suites for e in s.eval_sets for c in e.eval_cases]


def _head_suites(head_cases: Iterable[CaseKey]) -> dict[tuple[str, str], str]:
    """``{(eval set id, eval id): suite}`` for the cases exactly one head suite has."""
    suites: dict[tuple[str, str], set[str]] = {}
    for suite, eval_set_id, eval_id in head_cases:
        suites.setdefault((eval_set_id, eval_id), set()).add(suite)
    return {key: next(iter(names)) for key, names in suites.items() if len(names) == 1}


def _eval_set_in(
    suites: dict[str, SuiteRecord], source: SuiteRecord, name: str, eval_set: EvalSetRecord
) -> EvalSetRecord:
    """The eval set of suite ``name`` (made from ``source``'s when new) with the id, the
    shape and the file of ``eval_set``, without its cases."""
    if name not in suites:
        moved = {} if name == source.name else {"name": name, "errors": []}
        suites[name] = source.model_copy(update={"eval_sets": [], **moved})
    suite = suites[name]
    suite.agent_details = {**source.agent_details, **suite.agent_details}
    found = next((e for e in suite.eval_sets if e.eval_set_id == eval_set.eval_set_id), None)
    if found is None:
        found = eval_set.model_copy(update={"eval_cases": []})
        suite.eval_sets.append(found)
    return found


def place_history_cases(results: RunResults, head_cases: Iterable[CaseKey]) -> RunResults:
    """ADK's eval_history (``metadata.source`` ``adk-eval-history``) with each eval case in
    the head suite that has its eval set id and eval id (module docstring; ``head_cases``:
    the head's (suite, eval set id, eval id)); a case no head suite or several have stays
    where it was, and a suite left without eval cases is dropped. Other results, and
    history that needs no move, are returned as they are; else a new object that shares
    the case records."""
    if results.metadata.source != "adk-eval-history":
        return results
    target = _head_suites(head_cases)
    moves = {
        (suite.name, e.eval_set_id, c.eval_id): target.get((e.eval_set_id, c.eval_id))
        for suite in results.suites for e in suite.eval_sets for c in e.eval_cases
    }
    if all(to in (None, key[0]) for key, to in moves.items()):
        return results
    suites: dict[str, SuiteRecord] = {}
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                name = moves[(suite.name, eval_set.eval_set_id, case.eval_id)] or suite.name
                placed: list[EvalCaseRecord] = _eval_set_in(
                    suites, suite, name, eval_set).eval_cases
                placed.append(case)
    return results.model_copy(update={"suites": list(suites.values())})

"""Suite records built from what an evaluation hands over as it goes, the way google-adk's
``LocalEvalService`` yields each result as it completes and lets its caller decide where it
goes: :class:`SuiteRecords`.

The evaluation (``adk.evaluate.scheduler``) never fills a record it was given. It hands
over each suite's record as it opens the suite (its files, eval sets and eval cases, no
runs yet: :meth:`SuiteRecords.open_suite`), each case run as it finishes
(:meth:`SuiteRecords.add_case_run`), and what it learnt of the suite once its case runs are
in (the errors and warnings summed up over them, its tokens, the metrics found
lower-is-better: :meth:`SuiteRecords.close_suite`). The run's
:class:`~adk_eval_action.results.writer.ResultsWriter` is one; an evaluation given none
collects into a :class:`SuiteRecords` of its own.

The records do not depend on the order work finishes in: a case's runs are kept in run
order and the case runs' errors in the suite's order of work (eval sets, then eval cases,
runs outermost), whatever order they arrive in.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_action.results.agentdetails import share_details
from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.model import (
    ErrorRecord,
    EvalCaseRecord,
    RunRecord,
    SuiteRecord,
)
from adk_eval_action.results.records import mark_lower_is_better
from adk_eval_action.results.usage import ModelUsage, merge_usage

__all__ = ["CaseRunDone", "SuiteClosed", "SuiteRecords", "hand_over"]


class CaseRunDone(BaseModel):
    """One finished case run: run ``run.run`` of eval case ``eval_id`` of eval set
    ``eval_set_id`` of ``suite``, at ``position`` in the suite's order of work, with the
    error that kept it from scoring (None: it scored, passing or failing)."""

    model_config = ConfigDict(frozen=True)

    suite: str
    eval_set_id: str
    eval_id: str
    position: int
    run: RunRecord
    error: ErrorRecord | None = None


class SuiteClosed(BaseModel):
    """What the evaluation learnt of a suite once its case runs were in: ``errors`` summed
    up over them (metrics that could not be scored, models that could not be reached),
    ``warnings`` (the judge's, thought parts left out), the ``usage`` of its case runs
    together, and the metrics its evaluators showed to be lower-is-better."""

    model_config = ConfigDict(frozen=True)

    suite: str
    errors: tuple[ErrorRecord, ...] = ()
    warnings: tuple[str, ...] = ()
    usage: tuple[ModelUsage, ...] = ()
    lower_is_better: frozenset[str] = Field(default_factory=frozenset)


class SuiteRecords:
    """The suite records of one evaluation, in the order their suites were opened."""

    def __init__(self) -> None:
        self._suites: list[SuiteRecord] = []
        self._cases: dict[tuple[str, str, str], EvalCaseRecord] = {}
        self._pending: dict[str, list[tuple[int, ErrorRecord]]] = {}

    def open_suite(self, record: SuiteRecord) -> None:
        """A suite as opened: its files read, its eval cases listed, no runs yet (its
        errors so far: files that did not load, an agent that did not import)."""
        self._suites.append(record)
        for eval_set in record.eval_sets:
            for case in eval_set.eval_cases:
                self._cases[(record.name, eval_set.eval_set_id, case.eval_id)] = case

    def describe_agents(self, suite: str, agents: list[AgentRecord] | None) -> None:
        """The agents of a suite's tree as imported (``results.agenttree``: models,
        generate config, sub-agents), before any of its case runs."""
        self._suite(suite).agents = agents

    def add_case_run(self, done: CaseRunDone) -> None:
        """A finished case run, placed in its eval case (runs in run order; a run of the
        same number handed over again, reclassified once the suite's runs were all in,
        replaces the earlier one); its agents' details go to the suite's table once
        (``results.agentdetails``).

        Raises:
            KeyError: no open suite holds that eval case.
        """
        case = self._cases[(done.suite, done.eval_set_id, done.eval_id)]
        suite = self._suite(done.suite)
        share_details(done.run.actual_invocations, suite.agent_details)
        case.runs[:] = sorted([*(r for r in case.runs if r.run != done.run.run), done.run],
                              key=lambda r: r.run)
        if done.error is not None:
            self._pending.setdefault(done.suite, []).append((done.position, done.error))

    def close_suite(self, closed: SuiteClosed) -> None:
        """What the evaluation learnt of a suite after its case runs (:class:`SuiteClosed`):
        the case runs' errors in the order of work, then ``closed.errors``."""
        suite = self._suite(closed.suite)
        suite.errors.extend(self._take_pending(closed.suite))
        suite.errors.extend(closed.errors)
        suite.warnings.extend(dict.fromkeys(w for w in closed.warnings
                                            if w not in suite.warnings))
        suite.usage = merge_usage(suite.usage or [], list(closed.usage)) or None
        mark_lower_is_better(suite, set(closed.lower_is_better))

    def reorder(self, names: list[str]) -> None:
        """Puts the suites in the order of ``names`` (each suite's name is there)."""
        self._suites.sort(key=lambda s: names.index(s.name))

    def suite_records(self) -> list[SuiteRecord]:
        """The suites handed over so far, in order; a case run's error that arrived before
        its suite was closed (a stop cut the run short) is in its suite's errors."""
        for name in list(self._pending):
            self._suite(name).errors.extend(self._take_pending(name))
        return list(self._suites)

    def _take_pending(self, name: str) -> Iterable[ErrorRecord]:
        return [error for _, error in sorted(self._pending.pop(name, []),
                                             key=lambda pair: pair[0])]

    def _suite(self, name: str) -> SuiteRecord:
        return next(s for s in self._suites if s.name == name)


def hand_over(sink: SuiteRecords, suite: SuiteRecord) -> None:
    """Hands ``sink`` a suite recorded whole elsewhere (a shard's part, a recorded
    evaluation replayed) as an evaluation hands over its own: the suite as opened (its
    eval sets and eval cases without runs), each case run, then its errors, warnings and
    tokens."""
    eval_sets = [
        eval_set.model_copy(update={"eval_cases": [
            case.model_copy(update={"runs": []}) for case in eval_set.eval_cases]})
        for eval_set in suite.eval_sets
    ]
    sink.open_suite(suite.model_copy(update={
        "eval_sets": eval_sets, "errors": [], "warnings": [], "usage": None,
        "agent_details": dict(suite.agent_details)}))
    for eval_set in suite.eval_sets:
        for position, case in enumerate(eval_set.eval_cases):
            for run in case.runs:
                sink.add_case_run(CaseRunDone(
                    suite=suite.name, eval_set_id=eval_set.eval_set_id, eval_id=case.eval_id,
                    position=position, run=run))
    sink.close_suite(SuiteClosed(suite=suite.name, errors=tuple(suite.errors),
                                 warnings=tuple(suite.warnings), usage=tuple(suite.usage or ())))

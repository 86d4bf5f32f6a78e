"""An agent that fails to start: the same exception, raised by the agent's own code in
every case run of a suite before the agent's first model call.

An exception of the agent's code during a case is that case's failure: it is the agent's
behaviour (:mod:`adk_eval_action.adk.runtime.case_failures`). But when every run raises the
same exception at the same place before any model answered (a ``before_agent_callback``
reading an environment variable the CI job does not set, a client built from a missing
setting), no eval case was evaluated at all: the agent could not start where the
evaluation runs. That is the suite's one ``agent`` error (incomplete, exit 2), said once,
not a red gate of every eval case failing for the same reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_action.adk.evaluate.engine import CaseRunOutcome
from adk_eval_action.results.model import CaseStatus, ErrorRecord, RunRecord

__all__ = ["START_HINT", "failed_to_start", "not_started"]

START_HINT = (
    "the agent cannot start where the evaluation runs: for a missing environment variable, "
    "set it in the workflow step's `env:` (a repository secret for a credential); otherwise "
    "fix the code that runs before the agent's first model call (a callback, a client it "
    "builds)"
)


def _agent_calls(run: RunRecord) -> int:
    return sum(u.calls for u in run.usage or [] if u.role == "agent")


def failed_to_start(outcomes: Sequence[CaseRunOutcome]) -> CaseRunOutcome | None:
    """One of ``outcomes`` (every case run of a suite) when all of them failed with the same
    exception of the agent's own code at the same place, and no agent model call answered
    in any of them; else None. Only meaningful when the runs' model calls were counted
    (``run.usage``: an evaluation with ``ModelCalls``)."""
    if not outcomes:
        return None
    first = outcomes[0]
    same = all(
        o.raised_at is not None and o.raised_at == first.raised_at
        and o.run.status == CaseStatus.FAILED and o.run.error == first.run.error
        and _agent_calls(o.run) == 0
        for o in outcomes
    )
    return first if same else None


def not_started(
    outcomes: Sequence[CaseRunOutcome], suite: str, agent: str | None,
) -> tuple[list[CaseRunOutcome], ErrorRecord] | None:
    """When the suite's agent failed to start (:func:`failed_to_start`): its outcomes with
    each run an ``agent`` error instead of a failure, and the suite's one error record
    (at the place the agent's code raised; ``agent`` names the agent folder); else None."""
    first = failed_to_start(outcomes)
    if first is None or first.raised_at is None:
        return None
    reason = first.run.error or ""
    file, line = first.raised_at
    error = ErrorRecord(
        kind="agent",
        message=f"agent {agent or suite} failed to start: every eval case run "
        f"({len(outcomes)}) raised before the agent's first model call: {reason}",
        suite=suite, file=file, line=line or None, hint=START_HINT,
    )
    changed = [
        CaseRunOutcome(
            o.item,
            o.run.model_copy(update={"status": CaseStatus.ERROR, "error_kind": "agent",
                                     "error": f"the agent did not start: {reason}"}),
            warnings=o.warnings, thoughts=o.thoughts, raised_at=o.raised_at,
        )
        for o in outcomes
    ]
    return changed, error

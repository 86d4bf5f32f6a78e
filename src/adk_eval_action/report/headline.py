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
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import UNSURE_REASONS, GateResult, failed_on_scores
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, ErrorRecord, RunResults

__all__ = ["IncompleteHeadline", "incomplete_cause", "incomplete_headline", "stopped_headline"]

#: Run-wide errors the headline states in full (once, not per case): the model could not be
#: reached, or no or refused credentials. The comment's error list leaves them out.
RUN_WIDE_KINDS = ("model", "credentials")


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


def incomplete_headline(comparison: Comparison, gate: GateResult) -> IncompleteHeadline | None:
    """The headline of a run whose head has errors that make it incomplete, or None when
    it has none (the gate's verdict is the headline then)."""
    cause = incomplete_cause(comparison.errors)
    if not cause:
        return None
    run_wide = [e for e in comparison.errors if e.kind in RUN_WIDE_KINDS and e.eval_id is None]
    listed = [e for e in comparison.errors if e.kind in INCOMPLETE_ERROR_KINDS
              and e not in run_wide]
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
    the headline."""
    cause = incomplete_cause([error]) or error.kind.replace("_", " ")
    if not results.suites:
        details = "nothing was evaluated: the run stopped before evaluation started"
    else:
        cases = sum(len(e.eval_cases) for s in results.suites for e in s.eval_sets)
        details = (f"evaluated before it stopped: {len(results.suites)} suite(s), {cases} "
                   "eval case(s)")
    return IncompleteHeadline(cause=cause, details=details)

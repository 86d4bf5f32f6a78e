"""What a run produced, as the entry points publish it: :class:`PipelineOutcome` (exit code,
files, the comment and summary text, the step outputs, the annotations), with its parts
:class:`CaseFailure` and :class:`ErrorAnnotation` and the functions that make them from
the gate, the comparison and the results.

The stage between the report and GitHub: the pipeline (``run/``) builds an outcome, and
``github.publish`` reads it, attribute by attribute; every field is here, typed, with its
default for the runs that do not have it (a shard's part, a run stopped or skipped).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.results.model import ErrorRecord, ModelCallCounts, RunResults

__all__ = [
    "CaseFailure",
    "ErrorAnnotation",
    "PipelineOutcome",
    "case_failures",
    "cost_outputs",
    "annotated",
    "error_annotations",
    "metrics_output",
    "with_hint",
]


class CaseFailure(BaseModel):
    """A failing eval case, for annotations: the eval set file relative to the working
    directory, the line of its ``eval_id`` (None: not known yet). ``severity``: larger is
    worse."""

    suite: str
    eval_set_file: str
    eval_id: str
    line: int | None
    message: str
    severity: float


class ErrorAnnotation(BaseModel):
    """An error that annotates the place that caused it rather than eval cases: an agent
    that did not import (``file``/``line`` where it raised when known), or another error
    naming a file (an eval set, an eval config, a baseline file). ``file`` is relative to
    the run's working directory, as the records' are; ``suite`` is "" for a run-wide
    error. ``message`` is redacted. Its title (``suite: kind``) is the publisher's to
    make."""

    suite: str
    kind: str = "agent"
    message: str
    file: str | None = None
    line: int | None = None


class PipelineOutcome(BaseModel):
    """What a run produced. ``exit_code``: 0 the gate passed (or the run was ``skipped``),
    1 the gate failed on computed scores, 2 incomplete (config, eval set, agent or
    internal error), 130/143 a signal stopped it (``interrupted``).

    ``comment_markdown``/``summary_markdown`` are the redacted comment and job summary
    (empty for a shard's part); ``comment_path`` the comment file the run wrote
    (``comment_out``). ``error`` is what stopped an incomplete run (redacted), for the
    action's error annotation, with ``error_file``/``error_line`` where it is (the file
    relative to the working directory, the line from 1) when its record knows;
    ``error_annotations`` say why suites have no runs (:func:`error_annotations`);
    ``failures`` are the failing eval cases, worst first (:func:`case_failures`);
    ``warnings`` are the run's warnings the action shows as annotations too (a baseline
    that was asked for by name and not used). ``skipped`` is why a run evaluated nothing
    on purpose (``on_missing_credentials: skip``); ``shard`` is ``K/N`` for one shard of
    a sharded run (no comment, no gate). ``metrics`` and ``regressed`` are those step
    outputs (:func:`metrics_output`; ``report.headline.regressed_output``); ``model_calls``
    the run's model calls and tokens, for the ``tokens`` and ``cost_usd`` outputs
    (:func:`cost_outputs`; None: no model was called). ``results_written`` is False when
    the run wrote no results file at ``results_path`` on purpose (that path is the
    baseline's: ``errors.OverwritesBaseline``), so the ``results_path`` output is empty.
    """

    exit_code: int
    passed: bool
    results_path: Path
    results_written: bool = True
    comment_markdown: str
    summary_markdown: str
    comment_path: Path | None = None
    failures: list[CaseFailure] = Field(default_factory=list)
    error_annotations: list[ErrorAnnotation] = Field(default_factory=list)
    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)
    regressed: list[dict[str, Any]] = Field(default_factory=list)
    suites: list[str] = Field(default_factory=list)
    comparison: Comparison | None = None
    gate: GateResult | None = None
    shard: str | None = None
    skipped: str | None = None
    interrupted: bool = False
    error: str | None = None
    error_file: str | None = None
    error_line: int | None = None
    warnings: list[str] = Field(default_factory=list)
    model_calls: ModelCallCounts | None = None


def cost_outputs(outcome: PipelineOutcome | None) -> dict[str, str]:
    """The ``tokens`` and ``cost_usd`` step outputs (action.yml): every token the run's
    models reported ("0" when none answered; "" when the calls that answered reported no
    usage: unknown, never zero), and their dollars at the prices of adk-eval.yaml ("" when
    no model that answered has a price)."""
    counts = outcome.model_calls if outcome is not None else None
    usd = counts.usd if counts is not None else None
    answered = sum(u.calls for u in counts.usage) if counts is not None else 0
    unknown = counts is not None and counts.unreported == answered > 0
    return {
        "tokens": "" if unknown else str(counts.tokens if counts is not None else 0),
        "cost_usd": "" if usd is None else f"{usd:.6f}",
    }


def with_hint(error: ErrorRecord) -> str:
    """An error's message with its hint in brackets, as an annotation shows it."""
    return error.message + (f" ({error.hint})" if error.hint else "")


def error_annotations(
    results: RunResults, redact: Callable[[str], str] = str,
    leave_out: ErrorRecord | None = None,
) -> list[ErrorAnnotation]:
    """One annotation per suite whose agent could not be had (error kind ``agent``): that
    is why its eval cases have no runs, so they get none of their own (:func:`case_failures`
    leaves them out); then one per other error that names a file and no eval case (an eval
    case's errors are in its own annotation), in the results' order, run-wide last.
    ``leave_out`` is an error annotated otherwise (what stopped the run:
    ``PipelineOutcome.error``)."""
    agents = [
        ErrorAnnotation(
            suite=e.suite, file=e.file, line=e.line, message=redact(with_hint(e)),
        )
        for s in results.suites for e in s.errors if e.kind == "agent" and e.suite
    ]
    placed = [
        ErrorAnnotation(
            suite=e.suite or "", kind=e.kind, file=e.file, line=e.line,
            message=redact(with_hint(e)),
        )
        for e in [*(e for s in results.suites for e in s.errors), *results.errors]
        if e.kind != "agent" and annotated(e) and e is not leave_out
    ]
    return agents + placed


def annotated(error: ErrorRecord) -> bool:
    """Whether :func:`error_annotations` gives ``error`` an annotation of its own (and the
    action's suite log group a line): an agent that could not be had, or an error that
    names a file and no eval case."""
    return (error.kind == "agent" and bool(error.suite)) or (
        bool(error.file) and error.eval_id is None)


def case_failures(gate: GateResult, without: Collection[str] = ()) -> list[CaseFailure]:
    """The gate's failing cases, worst first, for annotations and the suite log; those of
    the suites ``without`` are left out (an :class:`ErrorAnnotation` says why they have no
    runs)."""
    failures = []
    for index, case in enumerate(gate.failing_cases):
        if case.suite in without:
            continue
        failed = [
            f"{d.metric_name} {format(d.head, '.3g') if d.head is not None else 'n/a'}"
            + (f" ({d.reason})" if d.reason else "")
            for d in case.metrics
            if d.head_status and d.head_status.value in ("failed", "error", "not_evaluated")
        ]
        message = f"eval case {case.eval_id} {case.change.replace('_', ' ')}: " + (
            "; ".join(failed) or case.error or case.head_status.value if case.head_status else ""
        )
        failures.append(
            CaseFailure(
                suite=case.suite,
                eval_set_file=case.file or "",
                eval_id=case.eval_id,
                line=case.line,
                message=message,
                severity=float(len(gate.failing_cases) - index),
            )
        )
    return failures


def metrics_output(comparison: Comparison) -> dict[str, dict[str, Any]]:
    """The ``metrics`` step output: per ``suite/metric``, head, baseline, delta, threshold
    and the call."""
    return {
        f"{m.suite}/{m.metric_name}": {
            "head": m.head.mean if m.head else None,
            "baseline": m.baseline.mean if m.baseline else None,
            "delta": m.delta,
            "threshold": side.threshold if (side := m.head or m.baseline) else None,
            "classification": m.classification,
        }
        for m in comparison.metrics
    }

"""What a run produced (:class:`PipelineOutcome`), and the outcome of a run that could not
finish normally (:func:`incomplete_outcome`; :func:`stopped_outcome` for a run stopped
before evaluation started, by a config or input error): the results file, the comment and
the job summary are still written (exit 2 "incomplete", or 130/143 when a signal stopped
the run); :func:`skipped_report` for a run that evaluated nothing on purpose (exit 0).

The error that stopped a run (``PipelineOutcome.error``) and why a run was skipped
(``skipped``) are not logged here: the entry point shows each once (the CLI as a line, the
action as an annotation after the run's log window).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.errors import (
    EXIT_PASS,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
    EvalSetError,
    OutputError,
    describe_exception,
    error_kind,
)
from adk_eval_action.files import OutsideRoot, write_atomic
from adk_eval_action.github.logs import case_title
from adk_eval_action.report.fallback import incomplete_markdown, skipped_markdown
from adk_eval_action.report.headline import stopped_headline
from adk_eval_action.results.io import save_results
from adk_eval_action.results.model import (
    INCOMPLETE_ERROR_KINDS,
    CaseStatus,
    ErrorRecord,
    RunMetadata,
    RunResults,
)
from adk_eval_action.results.status import case_status
from adk_eval_action.settings import RunRequest
from adk_eval_action.text import without_surrogates

__all__ = [
    "CaseFailure",
    "ErrorAnnotation",
    "PipelineOutcome",
    "case_failures",
    "error_annotations",
    "error_record",
    "incomplete_outcome",
    "incomplete_report",
    "metrics_output",
    "part_outcome",
    "skipped_report",
    "stop_error",
    "stopped_outcome",
    "write_text",
]

log = logging.getLogger(__name__)


class CaseFailure(BaseModel):
    """A failing eval case, for annotations. ``severity``: larger is worse."""

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
    error. ``message`` is redacted."""

    suite: str
    kind: str = "agent"
    title: str
    message: str
    file: str | None = None
    line: int | None = None


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
            suite=e.suite, title=case_title(e.suite, "agent"), file=e.file, line=e.line,
            message=redact(_with_hint(e)),
        )
        for s in results.suites for e in s.errors if e.kind == "agent" and e.suite
    ]
    placed = [
        ErrorAnnotation(
            suite=e.suite or "", kind=e.kind, file=e.file, line=e.line,
            title=case_title(e.suite, e.kind) if e.suite else "adk-eval-action",
            message=redact(_with_hint(e)),
        )
        for e in [*(e for s in results.suites for e in s.errors), *results.errors]
        if e.kind != "agent" and e.file and e.eval_id is None and e is not leave_out
    ]
    return agents + placed


class PipelineOutcome(BaseModel):
    """What a run produced. ``exit_code``: 0 the gate passed, 1 the gate failed on
    computed scores, 2 incomplete (config, eval set, agent or internal error), 130/143 a
    signal stopped it (``interrupted``). ``error`` is what stopped an incomplete run
    (:func:`incomplete_outcome`; redacted), for the action's error annotation;
    ``error_annotations`` say why suites have no runs (:func:`error_annotations`);
    ``error_file``/``error_line`` say where ``error`` is (the file relative to the working
    directory, the line from 1) when its record knows; ``warnings`` are the run's warnings
    the action shows as annotations too (a baseline that was asked for by name and not
    used)."""

    exit_code: int
    passed: bool
    results_path: Path
    comment_markdown: str
    summary_markdown: str
    comment_path: Path | None = None
    failures: list[CaseFailure] = Field(default_factory=list)
    error_annotations: list[ErrorAnnotation] = Field(default_factory=list)
    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: The ``regressed`` step output (report.headline.regressed_output).
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


def write_text(path: Path | None, text: str) -> None:
    """Writes ``text`` to ``path`` (None: nothing) whole or not at all
    (``files.write_atomic``), creating parent folders; lone surrogates from agent text
    become U+FFFD rather than losing the whole file.

    Raises:
        OutputError: the file cannot be written (names it, and a full disk as such).
    """
    if path is None:
        return
    try:
        write_atomic(path, without_surrogates(text))
    except OSError as e:
        raise OutputError(path, e) from e


def incomplete_outcome(
    results: RunResults, request: RunRequest, error: ErrorRecord, exit_code: int = EXIT_USAGE,
) -> PipelineOutcome:
    """The outcome of a run that stopped after evaluation started: ``error`` is added to
    ``results``, which are saved (marked incomplete); a short comment and summary say what
    was evaluated and what stopped the run. Never raises for a file it cannot write (it
    logs it): this is the last resort of the pipeline."""
    results.errors.append(error)
    results_path = request.path(request.settings.results_path)
    try:
        save_results(results, results_path)
    except Exception as e:  # noqa: BLE001 - last resort: say it and go on with the comment
        log.error("the results file %s could not be written: %s", results_path, e)
    return incomplete_report(results, request, error, exit_code)


def incomplete_report(
    results: RunResults, request: RunRequest, error: ErrorRecord, exit_code: int = EXIT_USAGE,
) -> PipelineOutcome:
    """The comment, job summary and console of a run that ``error`` (in ``results``)
    stopped: :func:`incomplete_outcome`, and ``compare``/``render`` of the results file such
    a run wrote (:meth:`RunResults.stopped_by`), so they show what the action posted. Writes
    the comment and summary files, not the results file. Never raises for a file it cannot
    write."""
    settings = request.settings
    results_path = request.path(settings.results_path)
    redact = request.redactor
    comment, summary = (redact(incomplete_markdown(results, error, str(settings.results_path),
                                                   heading)) for heading in ("###", "##"))
    _write_reports(request, comment, summary)
    said = redact(_with_hint(error))
    for warning in results.warnings:  # an eval config's lint warnings, say
        log.warning("%s", redact(warning))
    log.info("%s", stopped_headline(results, error).console(exit_code=exit_code))
    return PipelineOutcome(
        exit_code=exit_code, passed=False, results_path=results_path,
        comment_markdown=comment, summary_markdown=summary,
        comment_path=None if settings.comment_out is None else request.path(settings.comment_out),
        error_annotations=error_annotations(results, redact, leave_out=error),
        suites=[s.name for s in results.suites], interrupted=error.kind == "interrupted",
        error=said, error_file=error.file, error_line=error.line,
    )


def skipped_report(results: RunResults, request: RunRequest) -> PipelineOutcome:
    """The comment, job summary and console of a run that evaluated nothing on purpose
    (``results.metadata.skipped``: no model credentials with ``on_missing_credentials:
    skip``): a short report that says skipped and why (no comparison, no eval case), exit
    0, neither passed nor failed. Writes the comment and summary files; never raises for
    one it cannot write."""
    assert results.metadata.skipped is not None
    settings = request.settings
    reason = request.redactor(results.metadata.skipped)
    comment, summary = (request.redactor(skipped_markdown(reason, str(settings.results_path),
                                                          heading)) for heading in ("###", "##"))
    _write_reports(request, comment, summary)
    log.info("gate SKIPPED: nothing was evaluated, so there is no verdict (exit 0)")
    return PipelineOutcome(
        exit_code=EXIT_PASS, passed=False, skipped=reason,
        results_path=request.path(settings.results_path),
        comment_markdown=comment, summary_markdown=summary,
        comment_path=None if settings.comment_out is None else request.path(settings.comment_out),
    )


def _write_reports(request: RunRequest, comment: str, summary: str) -> None:
    """The comment and summary files a stopped or skipped run writes (``comment_out``,
    ``summary_out``); a file that cannot be written is logged, never raised: these are a
    run's last resort."""
    settings = request.settings
    for path, text in ((settings.comment_out, comment), (settings.summary_out, summary)):
        try:
            write_text(None if path is None else request.path(path), text)
        except Exception as e:  # noqa: BLE001 - last resort
            log.error("%s", e)


def _with_hint(error: ErrorRecord) -> str:
    """An error's message with its hint in brackets, as an annotation shows it."""
    return error.message + (f" ({error.hint})" if error.hint else "")


def error_record(error: BaseException) -> ErrorRecord:
    """The results file's record of an error that stopped a run before evaluation started:
    kind ``eval_set`` for an EvalSetError, ``internal`` for an unexpected exception
    (naming where; "please report this as a bug"), else ``config`` (adk-eval.yaml, an
    option or input, a path). ``file`` is the file a ConfigError or EvalSetError names,
    ``line`` the line a ConfigError knows."""
    kind = error_kind(error)
    if kind == "internal":
        return _internal_record(error)
    path = getattr(error, "path", None)
    return ErrorRecord(kind=kind, message=str(error),
                       file=str(path) if path is not None and isinstance(
                           error, (ConfigError, EvalSetError)) else None,
                       line=error.line if isinstance(error, ConfigError) else None)


def stop_error(error: Exception, workdir: Path) -> ErrorRecord:
    """The error record of an exception that stopped a run after evaluation started: a
    file that could not be written as ``output``, a named error as ``config`` or
    ``internal``, anything else an "internal error" naming
    where it was raised. A ConfigError's file (a comment template, say) is named relative
    to ``workdir`` when inside it, in the message and as the record's ``file``, with its
    ``line`` when known."""
    if isinstance(error, ConfigError):
        shown = error.relative_to(workdir)
        file = _existing_file(error.path, workdir)
        return ErrorRecord(kind="config", message=str(shown), file=file,
                           line=shown.line if file else None)
    if isinstance(error, OutputError):
        return ErrorRecord(kind="output", message=str(error))
    if isinstance(error, AdkEvalActionError):
        kind = "config" if isinstance(error, OutsideRoot) else "internal"
        return ErrorRecord(kind=kind, message=str(error))
    return _internal_record(error)


def _internal_record(error: BaseException) -> ErrorRecord:
    """The record of an exception not raised on purpose: a bug, named where it was raised."""
    return ErrorRecord(kind="internal", message=f"internal error: {describe_exception(error)}",
                       hint="please report this as a bug")


def stopped_outcome(request: RunRequest, error: BaseException) -> PipelineOutcome:
    """The outcome of a run that a config, input or other error stopped before evaluation
    started (nothing was evaluated): :func:`incomplete_outcome` of an empty results file
    (the run's versions and commit, no suites) that records ``error`` (:func:`error_record`),
    so the results file, the comment and the job summary say "incomplete" and why, as
    for a run stopped later (exit 2). A shard's run stays a shard's (no comment is posted
    for it). Never raises for a file it cannot write."""
    from adk_eval_action.run.evaluation import run_metadata

    try:
        metadata = run_metadata(request.workdir)
    except Exception:  # noqa: BLE001 - the record of the error matters more than its metadata
        metadata = RunMetadata()
    record = error_record(error)
    record.message = request.redactor(record.message)
    record.file = _existing_file(record.file, request.workdir)
    record.line = record.line if record.file else None
    outcome = incomplete_outcome(RunResults(metadata=metadata), request, record)
    shard = request.settings.shard
    return outcome.model_copy(update={"shard": f"{shard.index}/{shard.count}"}) if shard \
        else outcome


def _existing_file(path: str | None, workdir: Path) -> str | None:
    """``path`` (relative to ``workdir``, or absolute) relative to the working directory
    when it is inside, else as given; None when it names no file: an error's "path" may be
    a label (``invalid input num_runs``) or a file that is missing, and an annotation's
    ``file`` must be one the check can point at."""
    if path is None:
        return None
    absolute = workdir / path
    try:
        if not absolute.is_file():
            return None
        return absolute.resolve().relative_to(workdir.resolve()).as_posix()
    except ValueError:
        return path
    except OSError:
        return None


def _part_cases(results: RunResults) -> str:
    """How many of the plan's eval cases a part holds, and how many of them have a verdict
    (a case passed or failed; results.status's rule over its runs), e.g. ``4 of the plan's
    8 eval cases, none of them could be evaluated (errors above)``."""
    assert results.shard is not None
    statuses = [case_status(r.status for r in c.runs)
                for s in results.suites for e in s.eval_sets for c in e.eval_cases]
    evaluated = sum(1 for s in statuses if s in (CaseStatus.PASSED, CaseStatus.FAILED))
    held = f"{len(results.shard.cases)} of the plan's {len(results.shard.plan)} eval cases"
    if evaluated == len(statuses):
        return f"{held}, all evaluated" if statuses else held
    if not evaluated:
        return f"{held}, none of them could be evaluated (errors above)"
    return f"{held}, {evaluated} evaluated, {len(statuses) - evaluated} could not be " \
        "(errors above)"


def part_outcome(results: RunResults, request: RunRequest) -> PipelineOutcome:
    """The outcome of one shard of a sharded run: its results file, no comparison and no
    gate (``merge`` does both); exit 2 when errors kept scores from being computed."""
    assert results.shard is not None
    shard = f"{results.shard.index}/{results.shard.count}"
    usage_error = any(e.kind in INCOMPLETE_ERROR_KINDS for e in results.all_errors())
    log.info("shard %s: %s; merge all parts with `adk-eval-action merge` to compare and "
             "gate", shard, _part_cases(results))
    return PipelineOutcome(
        exit_code=EXIT_USAGE if usage_error else EXIT_PASS,
        passed=not usage_error,
        results_path=request.path(request.settings.results_path),
        comment_markdown="",
        summary_markdown="",
        suites=[s.name for s in results.suites],
        shard=shard,
    )

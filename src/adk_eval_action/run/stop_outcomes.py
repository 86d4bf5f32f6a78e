"""The outcomes of runs that end short of a full report, and the one stop path.

:func:`stopped_run` is the outcome of every run that an error or a signal stopped: before
evaluation started (a config or input error: an empty results file that records it) or
after (what was evaluated is kept); the results file, the comment and the job summary are
still written (exit 2 "incomplete", or 130/143 when a signal stopped the run). Each entry
point catches once and calls it (the pipeline for what stops it, the CLI's ``run`` and the
action for what stops them before the pipeline). :func:`short_report` is the outcome of a
results file of a run that evaluated nothing (stopped before evaluation, or skipped on
purpose: exit 0); :func:`part_outcome` that of one shard of a sharded run.

The error that stopped a run (``PipelineOutcome.error``) and why a run was skipped
(``skipped``) are not logged here: the entry point shows each once (the CLI as a line, the
action as an annotation after the run's log window).
"""

from __future__ import annotations

import logging
from pathlib import Path

from adk_eval_action.errors import (
    EXIT_PASS,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
    EvalSetError,
    Interrupted,
    OutputError,
    OutputPathError,
    OverwritesBaseline,
    describe_exception,
    error_kind,
)
from adk_eval_action.files import OutsideRoot, write_atomic
from adk_eval_action.outcome import PipelineOutcome, error_annotations, with_hint
from adk_eval_action.report.fallback import incomplete_markdown, skipped_markdown
from adk_eval_action.report.headline import stopped_headline
from adk_eval_action.results.model import (
    INCOMPLETE_ERROR_KINDS,
    CaseStatus,
    ErrorRecord,
    RunMetadata,
    RunResults,
)
from adk_eval_action.results.status import case_status
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.settings import RunRequest
from adk_eval_action.text import without_surrogates

__all__ = [
    "part_outcome",
    "short_report",
    "skipped_report",
    "stopped_report",
    "stopped_run",
    "write_text",
]

log = logging.getLogger(__name__)


def write_text(path: Path | None, text: str, what: str = "") -> None:
    """Writes ``text`` to ``path`` (None: nothing) whole or not at all
    (``files.write_atomic``), creating parent folders; lone surrogates from agent text
    become U+FFFD rather than losing the whole file. ``what``: the option that names the
    file (``--html-out``), for the error.

    Raises:
        OutputError: the file cannot be written (names it and ``what``, and a full disk
            as such).
    """
    if path is None:
        return
    try:
        write_atomic(path, without_surrogates(text))
    except OSError as e:
        raise OutputError(path, e, what) from e


def stopped_run(
    request: RunRequest, error: BaseException, writer: ResultsWriter | None = None,
) -> PipelineOutcome:
    """The outcome of a run that ``error`` stopped: the one stop path of every entry point.

    ``writer`` is the run's results writer (run.pipeline.results_writer), which holds what
    was evaluated. Not started (or None): the run stopped before evaluation started
    (nothing was evaluated): an empty results file (the run's versions and commit, no
    suites) records the error (:func:`_before_record`: its kind, the file it names), exit
    2; a shard's run stays a shard's (no comment is posted for it). Else a signal
    (``Interrupted``, exit 130/143) is recorded with how much was done, any other error as
    :func:`_after_record` (exit 2). The writer flushes what it holds with the error
    (marked incomplete), and a short comment and summary say what was evaluated and what
    stopped the run (:func:`stopped_report`). Never raises for a file it cannot write (it
    logs it): this is the last resort of a run. An ``OverwritesBaseline`` error writes no
    results file: its path is the baseline's; an ``OutputPathError`` writes no file at all
    (its outputs are what is wrong).
    """
    path = request.settings.results_path
    writer = writer or ResultsWriter(request.path(path), request.redactor, shown=path)
    exit_code, before = EXIT_USAGE, not writer.started
    if before:
        writer.start(_metadata(request.workdir))
        record = _before_record(error, request)
    elif isinstance(error, Interrupted):
        record, exit_code = _interruption(writer.results(), error), error.exit_code
    else:
        record = _after_record(error, request.workdir)
    # The results path is the baseline, or an output path is unsafe: none written.
    written = not isinstance(error, (OverwritesBaseline, OutputPathError))
    try:
        if not written:
            writer.add_error(record)
            results = writer.results()
        else:
            results = writer.flush(record)
    except Exception as e:  # noqa: BLE001 - last resort: say it and go on with the comment
        log.error("%s", e)
        results = writer.results()
    outcome = stopped_report(results, request, record, exit_code, written,
                             reports=not isinstance(error, OutputPathError))
    shard = request.settings.shard
    if shard and before:
        return outcome.model_copy(update={"shard": f"{shard.index}/{shard.count}"})
    return outcome


def short_report(results: RunResults, request: RunRequest) -> PipelineOutcome | None:
    """The outcome of results of a run that evaluated nothing: stopped before evaluation
    started (:meth:`RunResults.stopped_by`: :func:`stopped_report`, exit 2) or skipped on
    purpose with no error that makes it incomplete (:func:`skipped_report`, exit 0); None
    for results that have something to compare. ``compare`` of such a file shows what the
    action posted."""
    stopped = results.stopped_by()
    if stopped is not None:
        return stopped_report(results, request, stopped)
    return None if results.skipped_reason() is None else skipped_report(results, request)


def stopped_report(
    results: RunResults, request: RunRequest, error: ErrorRecord, exit_code: int = EXIT_USAGE,
    written: bool = True, reports: bool = True,
) -> PipelineOutcome:
    """The comment, job summary and console of a run that ``error`` (in ``results``)
    stopped: :func:`stopped_run`, and ``compare`` of the results file such a run wrote
    (:func:`short_report`), so it shows what the action posted. Writes the comment and
    summary files (not when ``reports`` is false), not the results file (``written``:
    whether the run wrote one, which the comment then names). Never raises for a file it
    cannot write."""
    settings = request.settings
    results_path = request.path(settings.results_path)
    redact = request.redactor
    shown = str(settings.results_path) if written else None
    comment, summary = (redact(incomplete_markdown(results, error, shown, heading))
                        for heading in ("###", "##"))
    if reports:
        _write_reports(request, comment, summary)
    said = redact(with_hint(error))
    for warning in results.warnings:  # an eval config's lint warnings, say
        log.warning("%s", redact(warning))
    log.info("%s", stopped_headline(results, error).console(exit_code=exit_code))
    return PipelineOutcome(
        exit_code=exit_code, passed=False, results_path=results_path,
        results_written=written, comment_markdown=comment, summary_markdown=summary,
        comment_path=None if settings.comment_out is None else request.path(settings.comment_out),
        error_annotations=error_annotations(results, redact, leave_out=error),
        suites=[s.name for s in results.suites], interrupted=error.kind == "interrupted",
        error=said, error_file=error.file, error_line=error.line,
        model_calls=results.metadata.model_calls,
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
    for path, text, what in ((settings.comment_out, comment, "--comment-out"),
                             (settings.summary_out, summary, "--summary-out")):
        try:
            write_text(None if path is None else request.path(path), text, what)
        except Exception as e:  # noqa: BLE001 - last resort
            log.error("%s", e)


def _before_record(error: BaseException, request: RunRequest) -> ErrorRecord:
    """The results file's record of an error that stopped a run before evaluation started:
    kind ``eval_set`` for an EvalSetError, ``internal`` for an unexpected exception
    (naming where; "please report this as a bug"), else ``config`` (adk-eval.yaml, an
    option or input, a path). ``file`` is the file a ConfigError or EvalSetError names
    (when it is one, relative to the working directory), ``line`` the line a ConfigError
    knows; the message is redacted."""
    kind = error_kind(error)
    if kind == "internal":
        record = _internal_record(error)
    else:
        path = getattr(error, "path", None)
        named = path is not None and isinstance(error, (ConfigError, EvalSetError))
        record = ErrorRecord(kind=kind, message=str(error), file=str(path) if named else None,
                             line=error.line if isinstance(error, ConfigError) else None)
    record.message = request.redactor(record.message)
    record.file = _existing_file(record.file, request.workdir)
    record.line = record.line if record.file else None
    return record


def _after_record(error: BaseException, workdir: Path) -> ErrorRecord:
    """The error record of an exception that stopped a run after evaluation started: a
    file that could not be written as ``output``, a named error as ``config`` or
    ``internal``, anything else an "internal error" naming where it was raised. A
    ConfigError's file (a comment template, say) is named relative to ``workdir`` when
    inside it, in the message and as the record's ``file``, with its ``line`` when
    known."""
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


def _interruption(results: RunResults, stop: Interrupted) -> ErrorRecord:
    """The error of a run a signal stopped, saying how much of it was done."""
    cases = [c for s in results.suites for e in s.eval_sets for c in e.eval_cases]
    done = sum(1 for c in cases if c.runs)
    return ErrorRecord(kind="interrupted", message=(
        f"the run was stopped by {stop.name}: {done} of {len(cases)} eval case(s) were "
        "evaluated and are in the results file; the others were not"))


def _metadata(workdir: Path) -> RunMetadata:
    """The run's versions and commit (``run.evaluation.run_metadata``), or none: the record
    of the error matters more than its metadata."""
    from adk_eval_action.run.evaluation import run_metadata

    try:
        return run_metadata(workdir)
    except Exception:  # noqa: BLE001 - see the docstring
        return RunMetadata()


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
        model_calls=results.metadata.model_calls,
    )

"""The main job as one short pipeline: discover → evaluate → results → baseline → compare →
render → gate. The CLI's ``run`` command and the action both call :func:`run_pipeline`.

Exit codes: 0 the gate passed, 1 the gate failed, 2 a usage, config or infrastructure error
(a broken eval set or eval config, an agent that does not import, no eval sets found). On
exit 2 the results file and the comment are still written with everything that did run.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_action.analysis.comparison import AdaptiveRuns
from adk_eval_action.analysis.gate import failed_on_scores
from adk_eval_action.analysis.verdict import HistoryInput, compare_and_gate
from adk_eval_action.baseline.models import BaselineRequest, ResolvedBaseline
from adk_eval_action.baseline.request import baseline_request, refuse_overwriting_baseline
from adk_eval_action.baseline.resolve import (
    Rescore,
    file_baseline,
    find_baseline,
    resolved_baseline,
)
from adk_eval_action.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
    Interrupted,
    ResultsFileError,
)
from adk_eval_action.files import expand_glob
from adk_eval_action.github.event import EventContext, credentials_note
from adk_eval_action.github.publish import RENDER_MAX_CHARS, PublishTarget
from adk_eval_action.github.sticky import COMMENT_MAX_CHARS
from adk_eval_action.outcome import (
    PipelineOutcome,
    case_failures,
    error_annotations,
    metrics_output,
)
from adk_eval_action.project.discovery import Suite
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.headline import regressed_output
from adk_eval_action.report.render import (
    CommentContext,
    render_comment,
    render_summary,
    with_evidence,
)
from adk_eval_action.report.trend_text import trend_charts_markdown
from adk_eval_action.results.completeness import decides_incomplete
from adk_eval_action.results.identity import place_history_cases
from adk_eval_action.results.io import clean_results, gc_paused
from adk_eval_action.results.model import (
    INCOMPLETE_ERROR_KINDS,
    ErrorRecord,
    RunResults,
    ShardInfo,
)
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.run.adaptive_repeats import (
    engine_evaluate,
    no_baseline_note,
    refuse_useless_repeats,
    repeat_undecided,
)
from adk_eval_action.run.branch_history import run_history
from adk_eval_action.run.budget import budget_left, model_calls, record_budget_stop
from adk_eval_action.run.changed import select_changed
from adk_eval_action.run.console import print_table
from adk_eval_action.run.evaluation import (
    evaluate,
    find_suites,
    judge_answers_counted,
    run_metadata,
)
from adk_eval_action.run.outputs import refuse_clashes, run_files
from adk_eval_action.run.report_file import write_html_report
from adk_eval_action.run.signals import run_loop
from adk_eval_action.run.stop_outcomes import part_outcome, short_report, stopped_run, write_text
from adk_eval_action.settings import RunRequest

if TYPE_CHECKING:
    from adk_eval_action.adk.runtime.model_calls import ModelCalls

log = logging.getLogger(__name__)
USAGE_ERROR_KINDS = INCOMPLETE_ERROR_KINDS


def load_table(path: Path, whole: bool = False) -> ScoreTable | RunResults:
    """A results file (or ADK eval_history) as the table compare reads; the loaded objects
    are dropped at once, so comparing two large files holds one side's objects at a time.
    ``whole``: the loaded results instead, every eval case record kept (the HTML report's
    evidence of every case).

    Raises:
        ResultsFileError: as :func:`adk_eval_action.adk.files.eval_history.load_any_results`, or one
            shard of a sharded run (:func:`refuse_shard`).
    """
    from adk_eval_action.adk.files.eval_history import load_any_results

    # The objects are made and freed with the GC paused: enabled in between, it walked all
    # of them several times over (4 s instead of 1 at 10,000 cases x 8 metrics x 3 runs).
    with gc_paused():
        results = load_any_results(path)
        refuse_shard(path, results.shard)
        return results if whole else ScoreTable.from_results(results)


def load_head_table(path: Path, whole: bool = False) -> ScoreTable | RunResults:
    """:func:`load_table` for the head of ``compare``/``render``: a head without eval cases
    and without errors saying why (nor a skip's reason) is refused (``run`` refuses zero
    eval cases too), rather than passing a gate that checked nothing.

    Raises:
        ResultsFileError: unreadable, no eval cases and no errors, or one shard of a sharded
            run (:func:`refuse_shard`).
    """
    table = load_table(path, whole)
    if isinstance(table, ScoreTable):
        skeleton, has_cases = table.skeleton, bool(table.case_keys)
    else:
        skeleton = table
        has_cases = any(e.eval_cases for s in table.suites for e in s.eval_sets)
    if not has_cases and not skeleton.all_errors() and not skeleton.metadata.skipped:
        raise ResultsFileError(
            path,
            "holds no eval cases and no errors, so there is nothing to compare or gate; "
            "give the results file of a run that evaluated eval cases",
        )
    return table


def refuse_shard(path: Path | str, shard: ShardInfo | None) -> None:
    """Refuses one part of a sharded run (``run --shard K/N``) where a whole run is meant:
    compared alone, the other shards' eval cases would read as removed (or new) and the gate
    would check only this part's.

    Raises:
        ResultsFileError: ``shard`` is set, naming the shard and the ``merge`` to run.
    """
    if shard is not None:
        raise ResultsFileError(
            path,
            f"results of shard {shard.index}/{shard.count} ({len(shard.cases)} of the plan's "
            f"{len(shard.plan)} eval cases): merge the shards first "
            "(adk-eval-action merge PART... --results-out merged.json) and compare the merged file",
        )


def load_baseline(path: Path | None, whole: bool = False
                  ) -> tuple[ScoreTable | RunResults | None, str]:
    """The ``--baseline`` results file as a table (``whole``, or ADK's eval_history, which
    compare places in the head's suites: the results), with ``run``'s note (baseline.resolve).

    Raises:
        ConfigError: the named file cannot be read (a typo or a broken file would
            otherwise turn regression gating off without a word).
        ResultsFileError: the file holds one shard of a sharded run (:func:`refuse_shard`).
    """
    if path is None:
        return None, "none given (pass --baseline with a results file of the base branch)"
    with gc_paused():  # as in load_table
        resolved = file_baseline(Path(path))
        results = resolved.results
        refuse_shard(path, results.shard if results else None)
        if whole or results is None or results.metadata.source == "adk-eval-history":
            return results, resolved.note()
        return ScoreTable.from_results(results), resolved.note()


def score_tables(
    head: RunResults | ScoreTable, baseline: RunResults | ScoreTable | None,
) -> tuple[ScoreTable, ScoreTable | None]:
    """The two sides as the tables analysis reads: results loaded whole are tabled here;
    a baseline from ADK's eval_history (which names no suite) has its eval cases placed
    in the head's suites first (``results.identity.place_history_cases``)."""
    head_table = head if isinstance(head, ScoreTable) else ScoreTable.from_results(head)
    if isinstance(baseline, RunResults):
        baseline = ScoreTable.from_results(place_history_cases(baseline, head_table.case_keys))
    return head_table, baseline


def comment_context(
    results: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    request: RunRequest,
    adaptive: AdaptiveRuns | None = None,
    target: PublishTarget | None = None,
    history: HistoryInput | None = None,
) -> CommentContext:
    """Compares and gates (the ``gate`` setting), and returns what the comment and summary
    templates render; ``adaptive`` is what adaptive repeats spent, shown with the
    comparison. ``target`` is where the action publishes the run (the run link, whether
    the runner takes a job summary, the HTML report beside the results file); None for
    the CLI (the ``summary_out`` and ``html_out`` settings). ``history``: the default
    branch's history and the baseline's trust record
    (:func:`adk_eval_action.analysis.verdict.compare_and_gate`)."""
    gate_config = request.settings.gate
    skeleton = results.skeleton if isinstance(results, ScoreTable) else results
    head_table, base_table = score_tables(results, baseline)
    verdict = compare_and_gate(head_table, base_table, baseline_note, gate_config,
                               history=history, adaptive=adaptive)
    comparison, gate = verdict.comparison, verdict.gate
    html = html_path(request, target)
    context = CommentContext(
        comparison=comparison,
        gate=gate,
        failed_on_scores=failed_on_scores(gate),
        run_url=target.runner.event.run_url if target else None,
        results_path=str(request.settings.results_path),
        chart=metric_chart_markdown(comparison),
        trend_chart=trend_charts_markdown(comparison),
        model_calls=skeleton.metadata.model_calls,
        summary_written=request.settings.summary_out is not None if target is None
        else target.runner.summary_file is not None,
        html_report=html.name if html else None,
    )
    return with_evidence(context, results, baseline)


def _out(request: RunRequest, path: Path | None) -> Path | None:
    return None if path is None else request.path(path)


def html_path(request: RunRequest, target: PublishTarget | None = None) -> Path | None:
    """Where the HTML report goes: beside the results file for the action
    (``PublishTarget.report_path``, for upload), else the ``html_out`` setting (None: no
    report)."""
    return target.report_path if target is not None else _out(request, request.settings.html_out)


def comment_limit(target: PublishTarget | None = None) -> int:
    """The rendered comment's bound in characters: GitHub's limit
    (``github.sticky.COMMENT_MAX_CHARS``), less room for what the action adds around it
    when it publishes (``github.publish.RENDER_MAX_CHARS``)."""
    return COMMENT_MAX_CHARS if target is None else RENDER_MAX_CHARS


def finish(
    results: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    request: RunRequest,
    adaptive: AdaptiveRuns | None = None,
    target: PublishTarget | None = None,
    history: HistoryInput | None = None,
    asked: BaselineRequest | None = None,
) -> PipelineOutcome:
    """Compare, gate, render and write files for results that are already computed (or
    their tables: :func:`load_table`); ``target``, ``history``: :func:`comment_context`.
    ``asked``: the run's baseline request (None: ``compare``/``render``, which name their
    baseline file), for the warning of a baseline asked for by name and not used."""
    settings = request.settings
    skeleton = results.skeleton if isinstance(results, ScoreTable) else results
    # Nothing evaluated (stopped, or skipped on purpose): the comment the action posted
    # for this file, not a comparison of no scores.
    short = short_report(skeleton, request)
    if short is not None:
        return short
    # No cyclic GC while these allocate: it would re-scan every loaded result (gc_paused).
    with gc_paused():
        context = comment_context(results, baseline, baseline_note, request, adaptive, target,
                                  history)
        comparison, gate = context.comparison, context.gate
        template = _out(request, settings.template)
        comment = request.redactor(render_comment(context, template, comment_limit(target)))
        summary = request.redactor(render_summary(context))
    write_text(_out(request, settings.comment_out), comment, "--comment-out")
    write_text(_out(request, settings.summary_out), summary, "--summary-out")
    with gc_paused():
        write_html_report(html_path(request, target), context, results, baseline,
                          request.redactor, "--html-out" if target is None else "the HTML report")
    # schemas/comparison.schema.json describes this file (docs/gating.md).
    comparison_json = comparison.model_dump_json(indent=1) + "\n"
    write_text(_out(request, settings.comparison_out), comparison_json, "--comparison-out")
    usage_error = decides_incomplete(skeleton, comparison.known_broken)
    print_table(comparison, gate, usage_error, annotating=target is not None)
    exit_code = EXIT_USAGE if usage_error else EXIT_PASS if gate.passed else EXIT_GATE_FAILED
    annotated = error_annotations(skeleton, request.redactor)
    return PipelineOutcome(
        exit_code=exit_code,
        passed=gate.passed and not usage_error,
        results_path=request.path(settings.results_path),
        comment_markdown=comment,
        summary_markdown=summary,
        comment_path=_out(request, settings.comment_out),
        failures=case_failures(gate, without={a.suite for a in annotated if a.kind == "agent"}),
        error_annotations=annotated,
        metrics=metrics_output(comparison),
        regressed=regressed_output(gate) if not usage_error else [],
        suites=[s.name for s in skeleton.suites],
        comparison=comparison,
        gate=gate,
        warnings=[] if asked is None
        else requested_baseline_unused(asked, baseline is not None, baseline_note),
        model_calls=skeleton.metadata.model_calls,
    )


def _event(target: PublishTarget | None) -> EventContext | None:
    """The event of the GitHub run the action publishes to; None for the CLI."""
    return target.runner.event if target is not None else None


def _rescorer(suites: list[Suite], request: RunRequest, calls: ModelCalls) -> Rescore:
    """Re-scoring of the baseline under the head's suites (imported late: google-adk), its
    judge calls retried, counted and budgeted in the run's ``calls``."""
    from adk_eval_action.adk.evaluate.rescore import rescore_baseline

    async def rescore(baseline: RunResults, head: RunResults) -> list[str]:
        return await rescore_baseline(
            baseline,
            head,
            suites=suites,
            parallelism=request.settings.parallelism,
            repo_root=request.workdir,
            calls=calls,
        )

    return rescore


def results_writer(request: RunRequest) -> ResultsWriter:
    """The run's one results writer, for its ``results_path``, redacting its secrets."""
    path = request.settings.results_path
    return ResultsWriter(request.path(path), request.redactor, shown=path)


def run_pipeline(request: RunRequest, target: PublishTarget | None = None) -> PipelineOutcome:
    """Runs the whole job (module docstring) in ``request.workdir``: the entry point of
    synchronous callers (the CLI, the action), which owns the event loop
    (:func:`run_pipeline_async`). ``target`` is where the action publishes the run (its
    event: the baseline's GitHub context, the run link; its job summary); None for the CLI.

    This returns an outcome whatever happens but a signal before evaluation started: a
    signal (exit 130/143; what was evaluated is kept), an unusable template or results path
    (exit 2), an unexpected exception (exit 2, "internal error" naming where) all still
    write the results file (marked incomplete: the writer's flush), the comment and the
    summary (:func:`run.stop_outcomes.stopped_run`, the one stop path); so does an error that
    stops the run before evaluation started (invalid config, nothing to evaluate: exit 2,
    an empty results file that records the error).

    Raises:
        Interrupted: a signal arrived before evaluation started.
    """
    writer = results_writer(request)
    try:
        return run_loop(run_pipeline_async(request, writer, target))
    except (Exception, Interrupted) as e:  # noqa: BLE001 - every stop is an outcome
        if isinstance(e, Interrupted) and not writer.started:
            raise
        return stopped_run(request, e, writer)


async def run_pipeline_async(
    request: RunRequest, writer: ResultsWriter | None = None,
    target: PublishTarget | None = None,
) -> PipelineOutcome:
    """:func:`run_pipeline` on the running event loop; what the run produces is handed to
    ``writer`` (the caller's, which flushes it when the run is stopped), and the results
    file written once, at the end. With the ``merge`` setting the head is the merged parts
    of a sharded run instead of an evaluation; with ``shard`` the part is written and the
    run ends there (``merge`` compares and gates).

    Raises:
        AdkEvalActionError: invalid config or nothing to evaluate (exit 2; nothing ran), or
            parts that do not merge (results.shards.MergeError), or OverwritesBaseline,
            or an output path that is an input, another output or no file
            (``errors.OutputPathError``: :mod:`.outputs`).
    """
    settings = refuse_overwriting_baseline(request)
    writer = writer or results_writer(request)
    calls = model_calls(request)  # one retry budget, token count and budget for the run
    asked = baseline_request(request, _event(target))  # once: what the baseline stage is asked
    found: ResolvedBaseline | None = None
    if settings.merge:
        suites = _suites_for_rescoring(request)
        refuse_clashes(*run_files(request, target, suites))
        writer.take(merge_files(request.workdir, settings.merge))
    else:
        suites = find_suites(request)
        refuse_useless_repeats(suites, settings)
        refuse_clashes(*run_files(request, target, suites))
        writer.start(run_metadata(request.workdir, settings.gate))
        found = await _evaluate_head(request, asked, suites, calls, writer, target)
    results = writer.results()
    if results.shard is not None:
        return part_outcome(_saved(writer, request), request)
    if results.stopped_by() is not None or results.metadata.skipped:
        # Nothing evaluated: no baseline to find.
        return finish(_saved(writer, request), None, "", request, target=target, asked=asked)
    resolved = await _resolve(asked, results, request, suites, found, writer, calls)
    baseline = resolved.results
    if baseline is not None:
        baseline = clean_results(baseline, request.redactor)
    adaptive = None
    if settings.adaptive_runs and baseline is None:
        log.warning("%s", no_baseline_note(settings))
        writer.add_warnings([no_baseline_note(settings)])
    elif settings.adaptive_runs and baseline is not None:
        evaluate_once = engine_evaluate(settings.parallelism, request.workdir, calls,
                                        judge_answers_counted(settings.gate))
        adaptive = await repeat_undecided(
            writer, baseline, suites, settings.gate, settings.adaptive_runs, evaluate_once
        )
    # Re-scoring the baseline and adaptive repeats call models too: counted, budgeted.
    record_budget_stop(calls, writer)
    writer.set_model_calls(calls.summary())
    saved = _saved(writer, request)
    history = await run_history(saved, request, asked, resolved, target)
    return finish(saved, baseline, resolved.note(), request, adaptive, target, history, asked)


async def _resolve(
    asked: BaselineRequest, results: RunResults, request: RunRequest, suites: list[Suite],
    found: ResolvedBaseline | None, writer: ResultsWriter, calls: ModelCalls,
) -> ResolvedBaseline:
    """The head's baseline; a named baseline file that is unreadable is no baseline and
    an error of the results (exit 2, scores shown)."""
    try:
        return await resolved_baseline(asked, results, rescore=_rescorer(suites, request, calls),
                                       found=found, budget=budget_left(calls))
    except ConfigError as e:
        writer.add_error(ErrorRecord(kind="config", file=e.path, message=str(e)))
        return ResolvedBaseline(reason=str(e))


async def _evaluate_head(
    request: RunRequest, asked: BaselineRequest, suites: list[Suite], calls: ModelCalls,
    writer: ResultsWriter, target: PublishTarget | None,
) -> ResolvedBaseline | None:
    """Evaluates the head's suites into ``writer``: with ``only_changed``, those that
    changed since the baseline, which is found first and returned (the unchanged suites'
    records are taken from it); else all of them (None: no baseline found yet). What the
    event says about missing model credentials (a fork's pull request gets no secrets)
    is added to the preflight's message."""
    event = _event(target)
    note = None if event is None else credentials_note(
        event, skipping=request.settings.on_missing_credentials == "skip")
    if not request.settings.only_changed:
        await evaluate(request, suites, calls, writer, credentials_note=note)
        return None
    found = await asyncio.to_thread(find_baseline, asked)
    selection = await select_changed(request, suites, found.results)
    await evaluate(request, selection.evaluate, calls, writer, selection.reused, suites,
                   credentials_note=note)
    if selection.reused:
        return found.with_extra(f"reused for {len(selection.reused)} unchanged suite(s)")
    return found


def _saved(writer: ResultsWriter, request: RunRequest) -> RunResults:
    """The run's results, written (once: :meth:`ResultsWriter.save`), and said.

    Raises:
        OutputError: the file cannot be written (names it, and a full disk as such).
    """
    results = writer.save()
    log.info("results: %s", request.settings.results_path)
    return results


def requested_baseline_unused(baseline: BaselineRequest, found: bool, note: str) -> list[str]:
    """The warning of a baseline asked for by name (``artifact``, ``rerun``) that the run
    could not use, as the comment's line says it (``No baseline: <note>``); the action
    shows it as a warning annotation. The check's colour stays the evaluation's: a
    missing baseline never fails it (docs/baselines.md)."""
    if found or baseline.record or baseline.spec.mode not in ("artifact", "rerun"):
        return []
    return [f"No baseline: {note}"]


def _suites_for_rescoring(request: RunRequest) -> list[Suite]:
    """The suites of the checkout (the merge job), for re-scoring the baseline; none when
    the checkout has none (re-scoring is then left out)."""
    try:
        return find_suites(request)
    except AdkEvalActionError as e:
        log.info("note: no suites to re-score the baseline with: %s", e)
        return []


def merge_files(workdir: Path, patterns: list[str]) -> RunResults:
    """The results files matching ``patterns`` (paths or glob patterns relative to
    ``workdir``, sorted by name) merged into one (results.shards.merge_parts).

    Raises:
        MergeError: a pattern matches nothing, or the parts do not make one whole plan.
        ResultsFileError: a part cannot be read.
    """
    from adk_eval_action.results.io import load_results
    from adk_eval_action.results.shards import MergeError, merge_parts

    paths: list[Path] = []
    for pattern in patterns:
        # An absolute pattern ignores workdir; ** follows no link to a folder (files).
        found = [Path(p) for p in expand_glob(str(workdir / pattern))]
        if not found:
            raise MergeError(f"{pattern}: no results file matches")
        # Not deduplicated: a part given twice is refused as such (results.shards).
        paths += found
    with gc_paused():
        parts = [(_shown_path(p, workdir), load_results(p)) for p in paths]
        merged = merge_parts(parts)
    log.info("merged %d parts: %s", len(parts), ", ".join(name for name, _ in parts))
    return merged


def _shown_path(path: Path, workdir: Path) -> str:
    try:
        return str(path.relative_to(workdir))
    except ValueError:
        return str(path)


__all__ = [
    "AdkEvalActionError",
    "RunRequest",
    "results_writer",
    "run_pipeline",
    "run_pipeline_async",
    "write_text",
]

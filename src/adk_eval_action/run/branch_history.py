"""The default branch's history in a run: which history a run reads, and the history a
recording run writes (docs/baselines.md, "The default branch's history").

* A pull request's run reads the history named with ``--history``, else the one in the
  baseline artifact (``baseline.artifact``).
* A recording run (``--record``, a push to the default branch) with ``history_out`` (the
  action: ``adk-eval-history.json`` beside the results file) reads the history named with
  ``--history``, else the previous recorded artifact's (``baseline.previous_history``), adds its
  own run and writes it. A first recording run, or one whose previous artifact holds no
  usable history, starts a new one. The suites a run left incomplete are not recorded
  (their partial scores are not a record of the commit: ``results.completeness``); the
  run is recorded with its complete suites, and the log and the run's history note name
  those left out. A run without any complete suite carries the history forward
  unchanged.

Nothing about the history ever stops a run or changes its exit code: a history that
cannot be read or written is a warning, and the run goes on without it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from adk_eval_action.analysis.verdict import HistoryInput
from adk_eval_action.baseline.models import BaselineContext, BaselineRequest, ResolvedBaseline
from adk_eval_action.baseline.previous_history import previous_history
from adk_eval_action.baseline.trust import baseline_trust
from adk_eval_action.github.publish import PublishTarget
from adk_eval_action.project.inputs import folder_digest
from adk_eval_action.results.completeness import (
    complete_suites,
    incomplete_suites,
    left_out_line,
    with_complete_suites,
)
from adk_eval_action.results.history_file import (
    HISTORY_FILE_NAME,
    History,
    appended,
    inputs_hash,
    recorded_run,
)
from adk_eval_action.results.history_file_io import HistoryUnusable, load_history, save_history
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.settings import RunRequest

log = logging.getLogger(__name__)


def _repository(context: BaselineContext | None) -> str | None:
    return (context.repository or None) if context is not None else None


def given_history(request: RunRequest, context: BaselineContext | None = None
                  ) -> HistoryInput | None:
    """The history named with ``--history`` (None: none named), checked against the
    repository of the GitHub ``context`` (when there is one); one that cannot be used is
    a warning and no history, the note saying why."""
    path = request.settings.history
    if path is None:
        return None
    try:
        history = load_history(request.path(path), repository=_repository(context))
    except HistoryUnusable as e:
        log.warning("history not used: %s", e)
        return HistoryInput(note=f"not used: {e}")
    return HistoryInput(history=history, note=with_left_out(f"from {path}", history))


def with_left_out(note: str | None, history: History | None) -> str | None:
    """``note`` (where the history came from) with what reading it left out
    (:attr:`History.left_out`: runs of another branch, repeated, with impossible scores)."""
    if history is None or not history.left_out:
        return note
    said = "left out " + "; ".join(history.left_out)
    return f"{note}; {said}" if note else said


async def history_to_carry(request: RunRequest, asked: BaselineRequest) -> HistoryInput:
    """The history a recording run adds its run to: ``--history``'s, else the previous
    recorded artifact's (the GitHub context; looked up in a worker thread), else none."""
    context = asked.github
    given = given_history(request, context)
    if given is not None:
        return given
    if context is None or not context.usable:
        return HistoryInput(note="no --history given and no GitHub context: a new history "
                          "starts")
    history, note = await asyncio.to_thread(previous_history, context,
                                            request.settings.artifact_name)
    if history is None:
        log.info("history: %s", note)
    return HistoryInput(history=history, note=with_left_out(note, history))


def suite_hashes(results: RunResults, root: Path) -> dict[str, str | None]:
    """Each suite's inputs hash (:func:`adk_eval_action.results.history_file.inputs_hash`): its
    agent folder (relative to the repository ``root``) digested with its eval sets' and
    eval config's content hashes."""
    hashes: dict[str, str | None] = {}
    for suite in results.suites:
        digest = folder_digest(root / suite.agent) if suite.agent else None
        hashes[suite.name] = inputs_hash(digest, suite)
    return hashes


def record_history(results: RunResults, request: RunRequest, carried: HistoryInput,
                   out: Path, context: BaselineContext | None, run_url: str | None,
                   ) -> Path | None:
    """Writes the history of a recording run (module docstring) to ``out``: ``carried``
    with this run added (recorded by ``run_url`` in the repository and on the branch of
    the GitHub ``context``, when there is one). The path written, or None (nothing to
    write, or it failed: a warning)."""
    settings = request.settings
    history = carried.history
    if results.is_complete() or complete_suites(results):
        meta = results.metadata
        branch = (context.branch if context is not None else None) or (
            meta.git_ref if meta.git_ref and meta.git_ref != "HEAD" else None)
        recorded = with_complete_suites(results, keep_records=False)
        run = recorded_run(recorded, suite_hashes(recorded, request.repository_root),
                           run_url=run_url)
        if run.ref in (None, "HEAD"):
            run.ref = branch
        history, notes = appended(history, run, max_runs=settings.history_runs,
                                  repository=_repository(context), branch=branch)
        for note in notes:
            log.info("%s", note)
        left_out = incomplete_suites(results)
        if left_out:
            log.info("history: this run is recorded without the suites it left incomplete: %s",
                     left_out_line(left_out))
    elif history is None:
        log.info("history: not written (no suite of this run is complete and there is no "
                 "earlier history to carry forward)")
        return None
    else:
        log.info("history: carried forward without this run (no suite of it is complete)")
    try:
        save_history(history, out)
    except OSError as e:
        log.warning("history not written to %s: %s", _shown(out, request), e.strerror or e)
        return None
    log.info("history: %s (%d recorded run(s))", _shown(out, request), len(history.runs))
    return out


def _shown(path: Path, request: RunRequest) -> str:
    try:
        return str(path.relative_to(request.workdir))
    except ValueError:
        return str(path)


def history_path(request: RunRequest, target: PublishTarget | None) -> Path | None:
    """Where a recording run writes the history: the ``history_out`` setting, else, for
    the action (``target``), ``adk-eval-history.json`` beside the results file (for the
    workflow's upload step); None: not written."""
    if request.settings.history_out is not None:
        return request.path(request.settings.history_out)
    if target is None:
        return None
    return request.path(request.settings.results_path).parent / HISTORY_FILE_NAME


async def run_history(
    results: RunResults, request: RunRequest, asked: BaselineRequest,
    resolved: ResolvedBaseline, target: PublishTarget | None,
) -> HistoryInput | None:
    """The history of a run that evaluated (``results``, written): a recording run's
    (``asked.record``) is carried forward and written (:func:`recording_history`); a pull
    request's is ``--history``'s or the baseline artifact's, with the ``resolved``
    baseline's trust record (:func:`pull_request_history`)."""
    if asked.record:
        run_url = target.runner.event.run_url if target is not None else None
        return await recording_history(results, request, asked, history_path(request, target),
                                       run_url)
    return pull_request_history(request, resolved, results, asked.github)


async def recording_history(
    results: RunResults, request: RunRequest, asked: BaselineRequest, out: Path | None,
    run_url: str | None,
) -> HistoryInput | None:
    """A recording run's history: with a path to write it to (``out``), the history
    carried forward (:func:`history_to_carry`) and written with this run
    (:func:`record_history`); else ``--history``'s, for the trends of its summary."""
    if out is None:
        return given_history(request, asked.github)
    carried = await history_to_carry(request, asked)
    if record_history(results, request, carried, out, asked.github, run_url) is None:
        return carried
    left_out, recorded = incomplete_suites(results), complete_suites(results)
    if not left_out or not recorded:
        return carried
    said = f"this run recorded {len(recorded)} of {len(results.suites)} suites, without " \
        f"the incomplete {', '.join(list(left_out)[:5])}" + ("…" if len(left_out) > 5 else "")
    note = f"{carried.note}; {said}" if carried.note else said
    return carried.model_copy(update={"note": note})


def pull_request_history(request: RunRequest, resolved: ResolvedBaseline, head: RunResults,
                         context: BaselineContext | None = None) -> HistoryInput:
    """A pull request's history: ``--history``'s, else the one the baseline artifact held
    (or why it held none); with the baseline's trust record
    (:func:`adk_eval_action.baseline.trust.baseline_trust`) and re-scored suites."""
    given = given_history(request, context)
    if given is None:
        given = HistoryInput(history=resolved.history, note=_artifact_note(resolved))
    trust = baseline_trust(resolved, head, request.settings.baseline_max_age)
    return given.model_copy(update={"trust": trust, "rescored": resolved.rescored})


def _artifact_note(resolved: ResolvedBaseline) -> str | None:
    if resolved.history is not None:
        return with_left_out(f"from the baseline {resolved.label}", resolved.history)
    if resolved.history_note:
        return f"not used: {resolved.history_note}"
    if resolved.source == "artifact":
        return f"the baseline {resolved.label} holds no history (recorded before histories were)"
    return None


def file_history(request: RunRequest, baseline: RunResults | ScoreTable | None,
                 baseline_path: Path | None) -> HistoryInput | None:
    """``compare``'s and ``render``'s history: ``--history``'s, with the trust record of
    a baseline results file (its commit and age, from its own metadata)."""
    trust = None
    if baseline is not None:
        skeleton = baseline.skeleton if isinstance(baseline, ScoreTable) else baseline
        meta = skeleton.metadata
        resolved = ResolvedBaseline(
            results=skeleton, source="file",
            label=f"file {baseline_path.name}" if baseline_path else "file",
            commit=meta.git_sha, recorded_at=meta.finished_at)
        trust = baseline_trust(resolved, skeleton, request.settings.baseline_max_age)
    given = given_history(request)
    if given is None and trust is None:
        return None
    return (given or HistoryInput()).model_copy(update={"trust": trust})

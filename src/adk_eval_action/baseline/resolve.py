"""Baselines: which results a run is compared with, where they come from, and whether they
can be compared at all.

The ``baseline`` input / ``--baseline`` flag is one of (docs/baselines.md):

``auto`` (default)
    ``artifact``; else ``rerun`` when ``baseline_rerun`` is on; else none.
``artifact``
    The newest unexpired artifact named ``artifact_name`` (default ``adk-eval-results``, the
    name docs/action.md's workflow uploads) from a successful, non-pull-request run of this
    repository whose head sha is the merge-base of the base branch and the PR head, else
    of the nearest first-parent ancestor of the merge-base that has one (at most
    :data:`ANCESTOR_LIMIT` commits back). Needs the GitHub context and a token with
    ``actions: read`` (GitHub's REST "Artifacts" page,
    https://docs.github.com/en/rest/actions/artifacts).
``rerun``
    Evaluates the merge-base in a ``git worktree`` with the same suites and settings, in a
    child process so the base commit's agent code never shares ``sys.modules`` with the
    head's; then removes the worktree (https://git-scm.com/docs/git-worktree). Costs the
    LLM calls of a second evaluation.
``none``
    No baseline.
anything else
    A results file (ours, or ADK eval_history file/folder), as ``run.pipeline.load_baseline``.

``record`` (a push to the default branch, or ``run --record``) skips the search: that run's
results file *is* the next baseline, uploaded by the documented workflow as the artifact.

A baseline that cannot be found, downloaded or read becomes "no baseline" with the reason in
the note; it never fails the run. When the eval sets are unchanged and only the eval config
changed, the baseline is re-scored under the head's eval config (the ``rescore`` the
pipeline passes: :func:`adk_eval_action.adk.evaluate.rescore.rescore_baseline`).

The :class:`~adk_eval_action.baseline.models.BaselineRequest` is built from the run's
resolved settings and, in the action, its event (:func:`.request.baseline_request`): the
GitHub context is the repository, API and server URLs (GHES works), the token (needs
``actions: read`` for artifacts), the PR head (not ``GITHUB_SHA``'s merge commit) and the
PR's base branch.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from adk_eval_action.adk.files.eval_history import load_any_results
from adk_eval_action.baseline.artifact import ClientFactory, artifact_baseline
from adk_eval_action.baseline.models import (
    BaselineContext,
    BaselineRequest,
    BaselineUnavailable,
    BaselineUnreadable,
    RerunBudget,
    ResolvedBaseline,
    check_usable,
    incomplete_note,
)
from adk_eval_action.baseline.rerun import rerun_baseline
from adk_eval_action.errors import ConfigError, ResultsFileError, describe_exception
from adk_eval_action.results.completeness import (
    incomplete_suites,
    left_out_line,
    with_complete_suites,
)
from adk_eval_action.results.identity import (
    baseline_renames,
    case_keys,
    place_history_cases,
    rename_suites,
)
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.settings.run_settings import DEFAULT_ARTIFACT_NAME

log = logging.getLogger(__name__)
Rescore = Callable[[RunResults, RunResults], Awaitable[list[str]]]
"""Re-scores a baseline in place under the head's eval config; returns the suites done."""


def file_baseline(path: Path, shown: Path | str | None = None) -> ResolvedBaseline:
    """A results file (ours or ADK eval_history); ``shown`` is how messages name it (the
    path as the user gave it; default ``path``).

    Raises:
        ConfigError: the file cannot be read (``<shown>: the baseline file could not be
            read: <why>``).
    """
    try:
        results = load_any_results(path)
    except ResultsFileError as e:
        raise ConfigError(shown if shown is not None else path,
                          f"the baseline file could not be read: {e.detail}") from e
    meta = results.metadata
    label = f"file {path.name}" + (" (ADK eval_history)" if meta.source == "adk-eval-history"
                                   else "")
    return per_suite(ResolvedBaseline(
        results=results, source="file", label=label, commit=meta.git_sha,
        recorded_at=meta.finished_at,
    ))


def per_suite(resolved: ResolvedBaseline) -> ResolvedBaseline:
    """``resolved`` as the baseline of its complete suites only (docs/baselines.md,
    "Per-suite completeness"): each suite its run left incomplete is emptied, its errors
    kept, so the comparison names it without a baseline
    (:mod:`adk_eval_action.analysis.suite_baselines`) and compares none of its partial
    scores; with no complete suite (a run stopped before evaluating included) there is
    no baseline, and the reason says why. A complete run is returned as it is."""
    results = resolved.results
    if results is None or results.is_complete():
        return resolved
    incomplete = incomplete_suites(results)
    if len(incomplete) == len(results.suites):
        reason = f"{resolved.label}: {incomplete_note(results)}"
        log.warning("baseline not used: %s", reason)
        return ResolvedBaseline(reason=reason, history=resolved.history,
                                history_note=resolved.history_note)
    log.info("baseline: %s: no baseline for the suites its run left incomplete: %s",
             resolved.label, left_out_line(incomplete))
    return resolved.model_copy(update={"results": with_complete_suites(results)})


def find_baseline(
    request: BaselineRequest, client_factory: ClientFactory | None = None,
    budget: RerunBudget | None = None,
) -> ResolvedBaseline:
    """Runs the strategy ``request.spec`` names (module docstring); a re-run spends at
    most what is left of the run's ``budget``. Never raises for a
    baseline that cannot be had (whatever goes wrong in a strategy, an unexpected
    exception included): the result then has no ``results`` and a ``reason``; except for
    a baseline file named explicitly, which the user must hear about.

    Raises:
        ConfigError: the named baseline file cannot be read (exit 2; the run's own results
            are still compared and written).
    """
    mode, path = request.spec.mode, request.spec.path
    if path is not None:
        try:
            return file_baseline(path if path.is_absolute() else request.workdir / path, path)
        except ConfigError as e:
            raise e.relative_to(request.workdir) from e
    try:
        return per_suite(_strategy(request, mode, client_factory, budget or RerunBudget()))
    except Exception as e:  # noqa: BLE001 - a baseline never fails the run (docs/baselines.md)
        reason = f"the baseline lookup failed: {describe_exception(e)}"
        log.warning("baseline not used: %s", reason)
        return ResolvedBaseline(reason=reason)


def _strategy(
    request: BaselineRequest, mode: str, client_factory: ClientFactory | None,
    budget: RerunBudget,
) -> ResolvedBaseline:
    """The strategy of ``mode`` (not ``file``)."""
    context = request.github
    name = request.artifact_name or DEFAULT_ARTIFACT_NAME
    if mode == "none":
        return ResolvedBaseline(reason="baseline none requested")
    if request.record and mode != "file":
        return ResolvedBaseline(
            reason="this run records the baseline: later pull requests compare with its "
            f"results file once the workflow's upload step keeps it as artifact {name}"
        )
    try:
        if mode == "artifact":
            return artifact_baseline(context or BaselineContext(), name, request.base_ref,
                                     client_factory)
        if mode == "rerun":
            return rerun_baseline(request, budget)
    except BaselineUnavailable as e:
        # Asked for by name: the note (the comment's "No baseline: ...") says so.
        log.warning("baseline not used: %s", e)
        return ResolvedBaseline(reason=f"the {mode} baseline was requested but not used: {e}")
    return _auto(request, context, name, client_factory, budget)


def _auto(
    request: BaselineRequest, context: BaselineContext | None, name: str,
    client_factory: ClientFactory | None, budget: RerunBudget,
) -> ResolvedBaseline:
    """``auto``: artifact, else rerun when ``baseline_rerun``, else none (with both
    reasons, so the comment says what was tried)."""
    reasons = []
    if context is not None and context.usable:
        try:
            return artifact_baseline(context, name, request.base_ref, client_factory)
        except BaselineUnavailable as e:
            reasons.append(str(e))
    else:
        reasons.append("no GitHub context to look up an artifact")
    if request.baseline_rerun:
        try:
            return rerun_baseline(request, budget)
        except BaselineUnavailable as e:
            reasons.append(f"rerun: {e}")
    else:
        reasons.append("baseline_rerun is off")
    reason = "; ".join(r.rstrip(".") for r in reasons)  # each may end a sentence of its own
    if context is None or not context.usable:
        reason = (f"none given (auto: {reason}; pass --baseline rerun, --baseline-rerun or a "
                  "results file)")
    log.info("note: no baseline: %s", reason)
    return ResolvedBaseline(reason=reason)


async def resolve_baseline(
    request: BaselineRequest,
    head: RunResults,
    *,
    rescore: Rescore | None = None,
    now: dt.datetime | None = None,
    client_factory: ClientFactory | None = None,
    found: ResolvedBaseline | None = None,
    budget: RerunBudget | None = None,
) -> tuple[RunResults | None, str]:
    """The baseline for ``head`` and the note the comment shows (source, commit, run link,
    age; or why there is none): :func:`resolved_baseline`'s results and note.

    Raises:
        ConfigError: a baseline file named explicitly cannot be read (:func:`find_baseline`).
    """
    resolved = await resolved_baseline(request, head, rescore=rescore,
                                       client_factory=client_factory, found=found,
                                       budget=budget)
    return resolved.results, resolved.note(now)


async def resolved_baseline(
    request: BaselineRequest,
    head: RunResults,
    *,
    rescore: Rescore | None = None,
    client_factory: ClientFactory | None = None,
    found: ResolvedBaseline | None = None,
    budget: RerunBudget | None = None,
) -> ResolvedBaseline:
    """The baseline for ``head``, with where it came from (its note, commit, run, the
    history its artifact held), or why there is none. ``rescore`` (the pipeline passes
    :func:`adk_eval_action.adk.evaluate.rescore.rescore_baseline` bound to the head's suites)
    re-scores suites whose eval config alone changed.

    Never raises for the baseline's sake: a baseline that cannot be found or read becomes
    ``(None, reason)`` and nothing of the head's results is lost (docs/baselines.md, "When
    there is no baseline").
    The search (downloads, a re-run in a child process) runs in a worker thread, so the
    event loop stays free; ``found`` is a search already made (:func:`find_baseline`);
    ``budget``: what a re-run may spend.

    Raises:
        ConfigError: a baseline file named explicitly cannot be read (:func:`find_baseline`).
    """
    resolved = (found if found is not None
                else await asyncio.to_thread(find_baseline, request, client_factory, budget))
    if resolved.results is not None:
        # A suite renamed since the baseline is still the same suite; an eval_history's
        # cases go to the head's suites that evaluate them (results.identity).
        rename_suites(resolved.results, baseline_renames(resolved.results.suites, head.suites))
        placed = place_history_cases(resolved.results, case_keys(head))
        resolved = resolved.model_copy(update={"results": placed})
        try:
            check_usable(placed, head)
        except BaselineUnreadable as e:
            log.warning("baseline not used: %s", e)
            resolved = ResolvedBaseline(reason=f"{resolved.label} not usable: {e}",
                                        history=resolved.history,
                                        history_note=resolved.history_note)
    if resolved.results is not None and rescore is not None:
        try:
            rescored = await rescore(resolved.results, head)
        except Exception as e:  # noqa: BLE001 - a failed re-score leaves the baseline as it was
            log.warning("re-scoring the baseline failed: %s: %s", type(e).__name__, e)
            return resolved.with_extra("re-scoring failed, compared as recorded")
        resolved = resolved.model_copy(update={"rescored": tuple(rescored)})
    return resolved


def usable_baseline(
    head: ScoreTable | RunResults, baseline: ScoreTable | RunResults | None, note: str,
    path: Path | None,
) -> tuple[ScoreTable | RunResults | None, str]:
    """``compare``'s baseline under ``run``'s rule (:func:`resolve_baseline`): one of ours that
    shares no suite with the head, once renamed suites are paired (results.identity), is
    not used, with a warning and ``"file X not usable: …"`` as the note; ADK's eval_history
    (placed in the head's suites by the comparison), a baseline run that evaluated nothing
    (no suite) and a usable one are returned as given."""
    if baseline is None or path is None:
        return baseline, note
    base = baseline.skeleton if isinstance(baseline, ScoreTable) else baseline
    # A baseline run that evaluated nothing has no suite, and its comparison says why.
    if base.metadata.source == "adk-eval-history" or not base.suites:
        return baseline, note
    head_skeleton = head.skeleton if isinstance(head, ScoreTable) else head
    named = rename_suites(base.model_copy(update={"suites": [
        s.model_copy(update={"eval_sets": []}) for s in base.suites]}),
        baseline_renames(base.suites, head_skeleton.suites))
    try:
        check_usable(named, head_skeleton)
    except BaselineUnreadable as e:
        log.warning("baseline not used: %s", e)
        return None, f"file {path.name} not usable: {e}"
    return baseline, note

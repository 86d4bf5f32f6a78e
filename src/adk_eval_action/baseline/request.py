"""The baseline stage's request, built here from the run's resolved settings and the event
it runs for (:func:`baseline_request`): nothing outside this stage decides what the
baseline search is asked."""

from __future__ import annotations

import os

from adk_eval_action.baseline.models import BaselineContext, BaselineRequest
from adk_eval_action.errors import OverwritesBaseline
from adk_eval_action.github.event import EventContext
from adk_eval_action.settings import RunRequest, RunSettings

__all__ = ["baseline_request", "refuse_overwriting_baseline"]


def baseline_request(request: RunRequest, event: EventContext | None = None) -> BaselineRequest:
    """What the baseline stage needs of the run. A re-run of the base commit repeats the
    options a flag or input gave; the base commit's own adk-eval.yaml gives the rest.

    With the ``event`` of a GitHub run (the action), the search gets its GitHub context
    (docs/baselines.md): the PR head, not GITHUB_SHA's merge commit; the base branch of the
    PR unless the ``base_ref`` setting says; the token of the ``github_token`` setting.
    The run records the baseline when the ``record`` setting says so, else when the event
    is a push to the default branch (:attr:`EventContext.records_baseline`); without an
    event only when the setting says so.
    """
    settings = request.settings
    base_ref = settings.base_ref or (event.base_ref if event else None)
    record = settings.record
    if record is None:
        record = event.records_baseline if event else False
    return BaselineRequest(
        spec=settings.baseline,
        record=record,
        base_ref=base_ref,
        artifact_name=settings.artifact_name,
        baseline_rerun=settings.baseline_rerun,
        github=None if event is None else BaselineContext(
            repository=event.repository, api_url=event.api_url, server_url=event.server_url,
            token=settings.github_token, head_sha=event.head_sha, base_ref=base_ref,
            event_name=event.event_name,
            branch=event.ref.removeprefix("refs/heads/")
            if event.ref.startswith("refs/heads/") else None,
        ),
        workdir=request.workdir,
        paths=settings.paths,
        config=request.config_path if settings.config is not None else None,
        num_runs=settings.explicit("num_runs"),
        parallelism=settings.parallelism,
    )


def refuse_overwriting_baseline(request: RunRequest) -> RunSettings:
    """Refuses a run whose results path is its baseline file (``--baseline FILE`` with the
    same file as ``--results-out``, or its default ``adk-eval-results.json``; compared
    once links are resolved, ``os.path.realpath``): the run would compare against the
    file and then overwrite it, so the next run would compare the head with itself.
    Returns the request's settings.

    Raises:
        OverwritesBaseline: the two paths are the same file (nothing is evaluated, and
            :func:`run.stop_outcomes.stopped_run` writes no results file).
    """
    path = request.settings.baseline.file
    results = request.settings.results_path
    if path is None:
        return request.settings
    if os.path.realpath(request.path(path)) == os.path.realpath(request.path(results)):
        raise OverwritesBaseline(
            results, f"the results file would overwrite the baseline file it compares with "
            f"(--baseline {path}); pass another --results-out (the action: results_path), "
            "e.g. --results-out head.json, so the baseline stays for the next run")
    return request.settings

"""Evaluating the suites of a run: the preflight on all of them first, so that what cannot
work is refused before any agent runs (:mod:`adk_eval_action.adk.preflight`), then each
suite's evaluation with every model call retried and counted
(:mod:`adk_eval_action.adk.model_calls`). Imports google-adk: the pipeline imports this
module only when it evaluates.
"""

from __future__ import annotations

import asyncio
import logging
import os

from adk_eval_action.adk.engine import EngineSettings, evaluate_suite, open_suite
from adk_eval_action.adk.model_calls import ModelCalls, quiet_client_cleanup
from adk_eval_action.adk.preflight import check_suites
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.model import ErrorRecord, ModelCallCounts, RunResults

log = logging.getLogger(__name__)


async def evaluate_suites(
    suites: list[Suite], settings: EngineSettings, calls: ModelCalls, results: RunResults
) -> None:
    """Runs the preflight on every suite, then evaluates them when it found nothing that
    cannot work; its problems become the run's errors (each names its file and field) and
    no suite is evaluated, but every suite's record (files, eval cases) is kept. A suite
    that fails unexpectedly is an internal error; the other suites keep their results."""
    quiet_client_cleanup(asyncio.get_running_loop())
    report = await check_suites(suites, settings.repo_root, os.environ)
    for problem in report.problems:
        results.errors.append(
            ErrorRecord(
                kind=problem.kind,
                suite=problem.suite,
                file=problem.file,
                message=problem.message + (f" (field `{problem.field}`)" if problem.field else ""),
                hint="found before any agent ran; nothing was evaluated",
            )
        )
    for suite in suites:
        try:
            if report.problems:
                results.suites.append(open_suite(suite, settings)[0])
            else:
                results.suites.append(await evaluate_suite(suite, settings, calls))
        except Exception as e:  # noqa: BLE001 - keep the other suites' results
            results.errors.append(
                ErrorRecord(
                    kind="internal",
                    suite=suite.name,
                    message=f"{type(e).__name__}: {e}",
                    hint="please report this as a bug",
                )
            )


def model_calls_line(counts: ModelCallCounts) -> str:
    """One line on the run's model calls: how many, how many retried and why, how many
    failed for good (``model calls: 12, 3 retried (3 retries: 429 RESOURCE_EXHAUSTED ×3;
    waited 4.5s)``)."""
    line = f"model calls: {counts.calls}"
    if counts.retried_calls:
        causes = ", ".join(f"{c} ×{n}" for c, n in counts.retry_causes.items())
        line += (
            f", {counts.retried_calls} retried ({counts.retries} retries: {causes}; "
            f"waited {counts.waited_s:.1f}s)"
        )
    if counts.failed_calls:
        causes = ", ".join(f"{c} ×{n}" for c, n in counts.failure_causes.items())
        line += f", {counts.failed_calls} failed ({causes})"
    return line

"""The evaluate stage of the pipeline: which suites, with which engine settings; the
preflight on all of them first, so that what cannot work is refused before any agent runs
(:mod:`adk_eval_action.adk.evaluate.preflight`); then every suite in one work pool
(:mod:`adk_eval_action.adk.evaluate.scheduler`) with every model call retried and counted
(:mod:`adk_eval_action.adk.models.model_calls`); and the cost plan of the same suites.

google-adk is imported only inside the functions that evaluate or plan: its evaluation
modules take seconds to import, which ``compare``, ``render``, ``merge`` and refused runs
need not pay.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_action.analysis.paired import DEFAULT_ALPHA, DEFAULT_RESAMPLES, WITHIN_CASES_UP_TO
from adk_eval_action.analysis.sample import detectable
from adk_eval_action.baseline.models import parse_spec
from adk_eval_action.baseline.resolve import file_baseline
from adk_eval_action.errors import ConfigError, describe_exception
from adk_eval_action.files import inside_root
from adk_eval_action.git import Git
from adk_eval_action.project.config import GateConfig
from adk_eval_action.project.discovery import (
    Exclusion,
    Suite,
    discover_suites,
    suites_from_config,
    suites_under,
)
from adk_eval_action.results.model import (
    ErrorRecord,
    ModelCallCounts,
    RunMetadata,
    RunResults,
    SuiteRecord,
    package_version,
    utc_now,
)
from adk_eval_action.results.scoretable import CaseKey
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.settings import RunRequest

if TYPE_CHECKING:
    from adk_eval_action.adk.evaluate.engine import EngineSettings
    from adk_eval_action.adk.evaluate.plan import Plan
    from adk_eval_action.adk.evaluate.pool import ProgressSnapshot
    from adk_eval_action.adk.evaluate.preflight import PreflightProblem
    from adk_eval_action.adk.evaluate.scheduler import EngineHooks, PlanCheck
    from adk_eval_action.adk.models.model_calls import ModelCalls
    from adk_eval_action.adk.models.spend import Budget

log = logging.getLogger(__name__)


def run_metadata(root: Path, gate: GateConfig | None = None) -> RunMetadata:
    """Versions, git sha and ref, and the start time of a run in ``root``; ``gate``, the
    rules the run is judged by, recorded for the runs that compare with it."""
    sha, ref = _git_head(root)
    return RunMetadata(
        gate=gate.model_dump(mode="json") if gate is not None else None,
        tool_version=package_version("adk-eval-action"),
        adk_version=package_version("google-adk"),
        python_version=platform.python_version(),
        git_sha=sha,
        git_ref=ref,
        started_at=utc_now(),
    )


def _git_head(root: Path) -> tuple[str | None, str | None]:
    """HEAD's sha and ref name (``HEAD`` when detached) in one git call; both None outside
    a repository or before its first commit."""
    out = Git(root, timeout=10).value("rev-parse", "HEAD", "--abbrev-ref", "HEAD")
    lines = out.splitlines() if out else []
    return (lines[0], lines[1]) if len(lines) == 2 else (None, None)


def find_suites(request: RunRequest) -> list[Suite]:
    """Suites from ``adk-eval.yaml`` when it names any (``config`` or found in the working
    directory: those the ``paths`` setting selects, :func:`_selected`), else discovered
    under the ``paths`` setting. A ``num_runs`` given as a flag
    or input wins over each suite's own.

    Raises:
        ConfigError: invalid config, missing path, or no eval set found.
        OutsideRoot: an agent, eval set or eval config lies outside the repository root.
    """
    root, paths, project = request.workdir, request.settings.paths, request.project
    missing = [str(p) for p in paths if not request.path(p).exists()]
    if missing:
        raise ConfigError(", ".join(missing), "no such file or folder")
    suites: list[Suite] = []
    exclude = Exclusion(project.exclude, project.root)
    if request.config_path is not None:
        log.info("config: %s", _shown(request.config_path, root))
        try:
            suites = (suites_from_config(project, request.config_path, exclude)
                      if project.suites else [])
        except ConfigError as e:
            raise e.relative_to(request.repository_root) from e
        suites = _selected(suites, request)
    if not suites:
        suites = discover_suites([request.path(p) for p in paths], root, exclude)
    for pattern in exclude.unused():
        log.warning("`exclude` pattern %r of %s matches no eval set (relative to its folder): "
                    "fix it or remove it", pattern, _shown(request.config_path or root, root))
    if not suites:
        raise ConfigError(
            ", ".join(str(p) for p in paths),
            "no eval sets found (*.evalset.json or *.test.json); pass the folder that holds "
            "them, or name suites in adk-eval.yaml",
        )
    check_inside(suites, request.repository_root)
    explicit_runs = request.settings.explicit("num_runs")
    for suite in suites:
        if explicit_runs is not None:
            suite.num_runs = explicit_runs
    return suites


def _selected(suites: list[Suite], request: RunRequest) -> list[Suite]:
    """The suites of adk-eval.yaml that the ``paths`` setting selects (``suites_under``),
    said when it leaves some out."""
    paths, config = request.settings.paths, request.config_path or request.workdir
    chosen = suites_under(suites, [request.path(p) for p in paths], request.workdir, config)
    if len(chosen) < len(suites):
        log.info("suites under %s: %s (of %d in %s)", ", ".join(str(p) for p in paths),
                 ", ".join(s.name for s in chosen), len(suites), _shown(config, request.workdir))
    return chosen


def check_inside(suites: list[Suite], root: Path) -> None:
    """Every agent, eval set and eval config of ``suites`` lies inside the repository root
    (symlinks followed), so a pull request cannot make the run read runner files or
    import code from outside the repository.

    Raises:
        OutsideRoot: names the first path outside.
    """
    for suite in suites:
        named = [("agent", suite.agent_dir), ("eval config", suite.eval_config_path)]
        named += [("eval set", p) for p in suite.eval_set_paths]
        for what, path in named:
            if path is not None:
                inside_root(path, root, f"suite {suite.name}: {what}")


def _shown(path: Path, root: Path) -> str:
    """``path`` as the user named it: relative to the working directory when inside."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def engine_settings(request: RunRequest) -> EngineSettings:
    """What the engine needs of the run's settings."""
    from adk_eval_action.adk.evaluate.engine import EngineSettings

    settings = request.settings
    return EngineSettings(
        num_runs=settings.num_runs,
        parallelism=settings.parallelism,
        repo_root=request.workdir,
        model_limits={name: model.max_concurrency for name, model in settings.models.items()
                      if model.max_concurrency is not None},
        shard=settings.shard,
        latency_s=settings.latency,
    )


def run_budget(request: RunRequest) -> Budget:
    """The run's budget (``budget:`` in adk-eval.yaml, ``--max-*``; adk.models.spend)."""
    from adk_eval_action.adk.models.spend import Budget

    settings = request.settings
    return Budget(settings.max_model_calls, settings.max_tokens, settings.max_usd)


def model_calls(request: RunRequest) -> ModelCalls:
    """The run's model calls: one retry budget, the tokens counted and priced at the
    ``models:`` prices, and the run's budget (adk.models.spend)."""
    from adk_eval_action.adk.models.model_calls import ModelCalls
    from adk_eval_action.adk.models.spend import Spend

    spend = Spend(run_budget(request), request.settings.models)
    return ModelCalls(request.settings.model_retries, spend=spend)


def cost_baseline(request: RunRequest, always: bool = False) -> RunResults | None:
    """The baseline results file whose recorded usage estimates the plan's tokens and
    dollars (adk.evaluate.estimate): when ``--baseline`` names a file, and a token or dollar budget
    is set (``always``: the ``plan`` command). None otherwise, or when it cannot be read
    (``run`` reports that with the comparison; ``plan`` says it cannot estimate).
    """
    settings = request.settings
    mode, path = parse_spec(settings.baseline)
    wanted = always or settings.max_tokens is not None or settings.max_usd is not None
    if mode != "file" or path is None or not wanted:
        return None
    try:
        return file_baseline(request.path(path), path).results
    except ConfigError as e:
        log.info("note: no estimate of tokens and dollars: %s", e)
        return None


def budget_check(request: RunRequest, baseline: RunResults | None) -> PlanCheck | None:
    """The check of the plan against the run's budget (adk.evaluate.estimate.refusal; with
    ``baseline``, its estimated tokens and dollars too); None without a budget."""
    from adk_eval_action.adk.evaluate.estimate import estimate, refusal

    budget = run_budget(request)
    if not budget.active:
        return None
    prices = request.settings.models

    def check(plan: Plan, cases: set[CaseKey] | None) -> str | None:
        estimated = estimate(plan, baseline, prices, cases) if baseline is not None else None
        return refusal(plan, budget, estimated, cases)

    return check


def budget_left(calls: ModelCalls) -> dict[str, float | int]:
    """What is left of each limit of the run's budget (``max_model_calls``, ``max_tokens``,
    ``max_usd``: only those set), for a re-run of the base commit
    (``BaselineRequest``)."""
    spend = calls.spend
    budget = spend.budget
    left: dict[str, float | int] = {}
    if budget.model_calls is not None:
        left["max_model_calls"] = budget.model_calls - spend.requests
    if budget.tokens is not None:
        left["max_tokens"] = budget.tokens - spend.tokens
    if budget.usd is not None:
        left["max_usd"] = budget.usd - (spend.usd or 0.0)
    return left


def record_budget_stop(calls: ModelCalls, writer: ResultsWriter) -> None:
    """Adds the run's budget error (:func:`budget_error`) to ``writer`` once, when the
    budget stopped model calls (evaluating, re-scoring the baseline or adaptive repeats)."""
    stopped = budget_error(calls)
    said = any(e.kind == "budget" and e.suite is None for e in writer.errors())
    if stopped is not None and not said:
        writer.add_error(stopped)
    passed = budget_passed(calls)
    if stopped is None and passed is not None:
        writer.add_warnings([passed])


def budget_passed(calls: ModelCalls) -> str | None:
    """The warning of a run that finished past its ``max_tokens`` or ``max_usd`` without
    being stopped: the calls in flight when the limit was reached were the last ones, and
    their answers carried the total past it (adk.models.spend); None otherwise."""
    spend, budget = calls.spend, calls.spend.budget
    over = []
    if budget.tokens is not None and spend.tokens > budget.tokens:
        over.append(f"max_tokens {budget.tokens:,}")
    if budget.usd is not None and spend.usd is not None and spend.usd > budget.usd:
        over.append(f"max_usd ${budget.usd:g}")
    if not over:
        return None
    return (f"the budget's {' and '.join(over)} was passed by calls already in flight when "
            f"it was reached ({spend.spent()} spent); no call started after it (lower "
            "--parallelism to keep closer to it)")


def budget_error(calls: ModelCalls) -> ErrorRecord | None:
    """The run's error when its budget stopped model calls: which limit, and what was
    spent; None when it did not."""
    spend = calls.spend
    if spend.stopped_by is None:
        return None
    return ErrorRecord(
        kind="budget",
        message=f"the budget's {spend.stopped_by} was reached ({spend.spent()} spent); "
        f"{spend.refused} model call(s) were not made, so the eval cases they belonged to "
        "have no scores",
        hint="every score computed before is kept; raise the budget (budget: in "
        "adk-eval.yaml, --max-model-calls/--max-tokens/--max-usd) or evaluate fewer eval cases",
    )


def _progress(snapshot: ProgressSnapshot) -> None:
    log.info("%s", snapshot.line())


def engine_hooks(request: RunRequest) -> EngineHooks:
    """Progress lines unless ``quiet``. Each suite's lines start with its name; they are
    not a group of the runner's log: the action runs the evaluation inside one group with
    workflow commands stopped (agent output is untrusted), and groups do not nest. The
    action's one group per suite comes with the results (github.publish.log_suites)."""
    from adk_eval_action.adk.evaluate.scheduler import EngineHooks

    return EngineHooks(on_progress=None if request.settings.quiet else _progress)


async def _preflight(
    request: RunRequest, suites: list[Suite], writer: ResultsWriter, note: str | None,
) -> bool:
    """The preflight on every suite; its problems become the run's errors (each names its
    file and field). Missing model credentials with ``on_missing_credentials: skip`` are no
    error: the run is marked skipped (``RunMetadata.skipped``). ``note`` (what the event
    says about credentials: a fork's pull request) is added to their message. True when
    it found nothing that cannot work."""
    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.adk.models.model_calls import quiet_client_cleanup

    quiet_client_cleanup(asyncio.get_running_loop())
    report = await check_suites(suites, request.workdir, os.environ)
    problems = [
        p.model_copy(update={"message": f"{p.message}. {note}"})
        if p.kind == "credentials" and note
        else p
        for p in report.problems
    ]
    if request.settings.on_missing_credentials == "skip" and report.missing_credentials:
        writer.skip("; ".join(p.message for p in problems if p.kind == "credentials"))
        problems = [p for p in problems if p.kind != "credentials"]
    for problem in problems:
        writer.add_error(
            ErrorRecord(
                kind=problem.kind,
                suite=problem.suite,
                file=problem.file,
                message=problem.message + (f" (field `{problem.field}`)" if problem.field else ""),
                hint="found before any agent ran; nothing was evaluated",
            )
        )
    return not report.problems


async def _evaluate_all(
    request: RunRequest, suites: list[Suite], calls: ModelCalls, writer: ResultsWriter,
    note: str | None,
) -> bool:
    """The preflight, then every suite in one pool when it found nothing that cannot work;
    else no suite is evaluated nor recorded: the run stopped before evaluation started
    (``RunResults.stopped_by``: its errors are the preflight's; what was found is still
    said, and the eval configs' lint warnings kept in the results' ``warnings``), or was
    skipped on purpose (``RunMetadata.skipped``, quietly). False when the preflight
    refused the run."""
    from adk_eval_action.adk.evaluate.engine import open_suite
    from adk_eval_action.adk.evaluate.scheduler import PlanRefused, evaluate_suites

    settings = engine_settings(request)
    if not await _preflight(request, suites, writer, note):
        if writer.errors():
            found = [open_suite(suite, settings)[0] for suite in suites]
            writer.add_warnings(w for record in found for w in record.warnings)
        return False
    hooks = replace(engine_hooks(request),
                    check_plan=budget_check(request, cost_baseline(request)))
    try:
        # The writer holds each suite's record from the moment it is opened, with each
        # case run placed in it as it finishes: a signal keeps what was done.
        evaluation = await evaluate_suites(suites, settings, hooks, calls,
                                           records=writer.suites)
    except PlanRefused as refused:
        writer.add_warnings(w for record in writer.suites for w in record.warnings)
        writer.suites[:] = []
        writer.add_error(ErrorRecord(
            kind="budget", message=f"refused before any model call: {refused}",
            hint="raise the budget (budget: in adk-eval.yaml, --max-model-calls, "
            "--max-tokens, --max-usd) or evaluate fewer eval cases (--shard, "
            "--changed-only, fewer num_runs); `adk-eval-action plan` shows the counts",
        ))
        return False
    writer.set_shard(evaluation.shard)
    return True


async def evaluate(
    request: RunRequest,
    suites: list[Suite],
    calls: ModelCalls,
    writer: ResultsWriter,
    reused: list[SuiteRecord] | None = None,
    order: list[Suite] | None = None,
    credentials_note: str | None = None,
) -> None:
    """Evaluates ``suites`` in one work pool on the running event loop, every model call
    retried and counted in ``calls``, handing the suites' records, the run's errors and
    warnings to ``writer`` (started: :meth:`ResultsWriter.start`); never loses a suite's
    results to another's error. ``reused`` records (taken from the baseline, run.changed)
    join the evaluated ones in the order of ``order``. ``credentials_note`` is what the
    event says about missing model credentials, added to the preflight's message.
    """
    start = time.monotonic()
    refused = False
    try:
        if suites:
            refused = not await _evaluate_all(request, suites, calls, writer, credentials_note)
    except Exception as e:  # noqa: BLE001 - a bug of ours: say so, keep the run's files
        writer.add_error(
            ErrorRecord(
                kind="internal",
                message=f"internal error: {describe_exception(e)}",
                hint="please report this as a bug",
            )
        )
    if reused and not refused:
        writer.add_reused(reused, [s.name for s in order or suites])
    record_budget_stop(calls, writer)
    counts = calls.summary()
    writer.set_model_calls(counts)
    if counts.calls:
        log.info("%s", model_calls_line(counts))
    writer.add_warnings(w for s in writer.suites for w in s.warnings)
    writer.finished(utc_now(), round(time.monotonic() - start, 3))
    cases = sum(len(e.eval_cases) for s in writer.suites for e in s.eval_sets)
    if cases == 0 and not writer.errors() and writer.shard is None and not refused:
        writer.add_error(
            ErrorRecord(
                kind="config",
                message="the eval sets found hold no eval cases, so nothing was evaluated",
                hint="add eval cases, or point PATHS or adk-eval.yaml at eval sets that have them",
            )
        )


async def plan(request: RunRequest) -> tuple[Plan, list[SuiteRecord], list[PreflightProblem]]:
    """The cost plan of the run's suites, without calling any model; also the suites'
    records, whose errors (config, eval sets, agents) make ``plan`` exit 2 as ``run`` would,
    and the problems ``run``'s preflight would refuse the run for (an unknown metric, a
    judge or custom metric that cannot be set up, missing credentials:
    :func:`adk_eval_action.adk.evaluate.preflight.check_suites`).

    Raises:
        AdkEvalActionError: the config is invalid or nothing was found.
    """
    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.adk.evaluate.scheduler import plan_suites

    suites = find_suites(request)
    found, records = await plan_suites(suites, engine_settings(request), engine_hooks(request))
    report = await check_suites(suites, request.workdir, os.environ)
    return found, records, report.problems


def detection_notes(found: Plan) -> dict[str, list[str]]:
    """Per suite, what its planned eval cases x runs can call on each gated metric before
    any model is called (:func:`adk_eval_action.analysis.sample.detectable`), in a family
    of every suite's gated metrics, as compare tests them."""
    tests = sum(len(s.gated_metrics) for s in found.suites)
    notes = {}
    for suite in found.suites:
        if not suite.gated_metrics:
            continue
        can = detectable(
            len(suite.cases),
            suite.num_runs,
            tests,
            alpha=DEFAULT_ALPHA,
            n_resamples=DEFAULT_RESAMPLES,
            within_cases_up_to=WITHIN_CASES_UP_TO,
        )
        count = len(suite.gated_metrics)
        notes[suite.name] = [
            f"can call (each of its {count} gated metric{'s' if count != 1 else ''}, "
            f"against its baseline): {can.line}"
        ]
    return notes
def plan_cost(request: RunRequest, found: Plan) -> tuple[str, str | None]:
    """What ``plan`` adds to the plan: the estimated tokens and dollars from a baseline
    file (``--baseline FILE``; else why there is no estimate), and why the run's budget
    would refuse the plan (None: it would not)."""
    from adk_eval_action.adk.evaluate.estimate import estimate, refusal

    baseline = cost_baseline(request, always=True)
    estimated = None
    if baseline is None:
        line = ("estimated cost: not estimated (tokens and dollars are estimated from a "
                "baseline's recorded usage: pass --baseline with a results file of the base "
                "branch)")
    else:
        estimated = estimate(found, baseline, request.settings.models)
        line = estimated.line()
        planned = {suite.name for suite in found.suites}
        recorded = {suite.name for suite in baseline.suites}
        if estimated.from_case + estimated.from_suite == 0 and not planned & recorded:
            line = ("estimated cost: not estimated (the baseline file's suites ("
                    + (", ".join(sorted(recorded)) or "none") + ") are not these ("
                    + ", ".join(sorted(planned)) + "): pass the results file of this "
                    "project's base branch)")
        elif estimated.from_case + estimated.from_suite == 0:
            line = ("estimated cost: not estimated (the baseline file recorded no usage of "
                    "these suites: it was written before tokens were recorded, or by ADK)")
    budget = run_budget(request)
    reason = refusal(found, budget, estimated) if budget.active else None
    return line, reason


def model_calls_line(counts: ModelCallCounts) -> str:
    """One line on the run's model calls: how many, how many retried and why, how many
    failed for good, how many the budget refused, and the tokens and dollars (``model
    calls: 12, 3 retried (3 retries: 429 RESOURCE_EXHAUSTED ×3; waited 4.5s); 48,210
    tokens, $0.0142``)."""
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
    if counts.refused_calls:
        line += f", {counts.refused_calls} not made (budget spent)"
    if counts.usage:
        line += f"; {counts.tokens:,} tokens"
        if counts.usd is not None:
            line += f", ${counts.usd:.4f}"
        if counts.unpriced:
            line += f" (no price: {', '.join(counts.unpriced)})"
    return line

"""The evaluate stage of the pipeline: which suites, with which engine settings; the
preflight on all of them first, so that what cannot work is refused (in the suites it is
found in) before any agent runs
(:mod:`adk_eval_action.adk.evaluate.preflight`); then every suite in one work pool
(:mod:`adk_eval_action.adk.evaluate.scheduler`) with every model call retried and counted
(:mod:`adk_eval_action.adk.runtime.model_calls`); and the cost plan of the same suites.

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
from typing import TYPE_CHECKING, NamedTuple

from adk_eval_action.analysis.paired import DEFAULT_ALPHA, DEFAULT_RESAMPLES, WITHIN_CASES_UP_TO
from adk_eval_action.analysis.sample import SuiteSample, suites_detectable
from adk_eval_action.errors import ConfigError, describe_exception
from adk_eval_action.files import inside_root
from adk_eval_action.git import Git
from adk_eval_action.project.config import GateConfig
from adk_eval_action.project.dependencies import DependencyConflict
from adk_eval_action.project.discovery import (
    Exclusion,
    Suite,
    discover,
    suites_from_config,
    suites_under,
)
from adk_eval_action.results.model import (
    ErrorRecord,
    RunMetadata,
    SuiteRecord,
    package_version,
    utc_now,
)
from adk_eval_action.results.writer import ResultsWriter
from adk_eval_action.run.budget import (
    budget_check,
    cost_baseline,
    model_calls_line,
    record_budget_stop,
)
from adk_eval_action.run.requirements import suite_conflicts
from adk_eval_action.settings import RunRequest

if TYPE_CHECKING:
    from adk_eval_action.adk.evaluate.engine import EngineSettings
    from adk_eval_action.adk.evaluate.plan import Plan
    from adk_eval_action.adk.evaluate.pool import ProgressSnapshot
    from adk_eval_action.adk.evaluate.preflight import PreflightProblem
    from adk_eval_action.adk.evaluate.scheduler import EngineHooks
    from adk_eval_action.adk.runtime.model_calls import ModelCalls

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
    or input wins over each suite's own. A suite whose own dependencies did not install
    (``RunRequest.dependency_failures``) gets that as its ``agent_error``: it is recorded
    as incomplete, naming the file, and never imported.

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
    unplaced: list[Path] = []
    if not suites:
        found = discover([request.path(p) for p in paths], root, exclude)
        suites, unplaced = found.suites, found.unplaced
    for pattern in exclude.unused():
        log.warning("`exclude` pattern %r of %s matches no eval set (relative to its folder): "
                    "fix it or remove it", pattern, _shown(request.config_path or root, root))
    if not suites:
        raise ConfigError(", ".join(str(p) for p in paths), _nothing_found(unplaced, root))
    check_inside(suites, request.repository_root)
    _check_pins(suites, request)
    explicit_runs = request.settings.explicit("num_runs")
    for suite in suites:
        if explicit_runs is not None:
            suite.num_runs = explicit_runs
        failed = request.dependency_failures.get(suite.name)
        if failed is not None:  # not imported: its dependencies are not there
            suite.agent_error, suite.agent_error_file = failed.message, root / failed.file
    return suites


def _check_pins(suites: list[Suite], request: RunRequest) -> None:
    """Refuses a suite pinned to a shard (adk-eval.yaml's ``shard``) beyond the run's
    shard count: its eval cases would be in no part, and ``merge`` would refuse them all.

    Raises:
        ConfigError: naming adk-eval.yaml, the suite's field and the run's shards.
    """
    shard = request.settings.shard
    for suite in suites:
        if shard is not None and suite.shard is not None and suite.shard > shard.count:
            raise ConfigError(
                suite.declared_in or "adk-eval.yaml",
                f"suite {suite.name} is evaluated by shard {suite.shard}, but this run is "
                f"shard {shard} of {shard.count}: use as many shards as the suites name "
                "(the matrix of the workflow `init` writes), or change the suite's `shard`",
                f"{suite.declared_field}.shard" if suite.declared_field else None,
            ).relative_to(request.repository_root)


def _selected(suites: list[Suite], request: RunRequest) -> list[Suite]:
    """The suites of adk-eval.yaml that the ``paths`` setting selects (``suites_under``),
    said when it leaves some out."""
    paths, config = request.settings.paths, request.config_path or request.workdir
    chosen = suites_under(suites, [request.path(p) for p in paths], request.workdir, config)
    if len(chosen) < len(suites):
        log.info("suites under %s: %s (of %d in %s)", ", ".join(str(p) for p in paths),
                 ", ".join(s.name for s in chosen), len(suites), _shown(config, request.workdir))
    return chosen


def _nothing_found(unplaced: list[Path], root: Path) -> str:
    """Why no suite was found: no eval set at all, or only eval sets of other names than
    ADK's with no agent near them (named, up to three)."""
    if not unplaced:
        return ("no eval sets found (*.evalset.json, *.test.json, a JSON file holding an eval "
                "set, or what the repository's `adk eval` commands and AgentEvaluator tests "
                "name); pass the folder that holds them, or name suites in adk-eval.yaml")
    shown = ", ".join(_shown(p, root) for p in unplaced[:3])
    more = f" and {len(unplaced) - 3} more" if len(unplaced) > 3 else ""
    return (f"eval sets found without an agent: {shown}{more} (no agent folder at or beside "
            "them, and no `adk eval` command or AgentEvaluator test naming them); name their "
            "agent in adk-eval.yaml (`adk-eval-action init --agent PATH` writes it)")


def check_inside(suites: list[Suite], root: Path) -> None:
    """Every agent, eval set and eval config of ``suites`` lies inside the repository root
    (symlinks followed), so a pull request cannot make the run read runner files or
    import code from outside the repository.

    Raises:
        OutsideRoot: names the first path outside.
    """
    checked: set[Path] = set()  # a path many suites name is checked once
    for suite in suites:
        named = [("agent", suite.agent_dir), ("eval config", suite.eval_config_path)]
        named += [("eval set", p) for p in suite.eval_set_paths]
        for what, path in named:
            if path is not None and path not in checked:
                inside_root(path, root, f"suite {suite.name}: {what}")
                checked.add(path)


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
        judge_answers_counted=judge_answers_counted(settings.gate),
    )


def judge_answers_counted(gate: GateConfig) -> bool:
    """Whether the run's gate sets ``not_evaluated`` (fail or warn), which then decides the
    metrics whose judge model answered off-format (``EngineSettings.judge_answers_counted``);
    left unset, such a metric makes the run incomplete."""
    return "not_evaluated" in gate.model_fields_set


def _progress(snapshot: ProgressSnapshot) -> None:
    log.info("%s", snapshot.line())


def engine_hooks(request: RunRequest) -> EngineHooks:
    """Progress lines unless ``quiet``. Each suite's lines start with its name; they are
    not a group of the runner's log: the action runs the evaluation inside one group with
    workflow commands stopped (agent output is untrusted), and groups do not nest. The
    action's one group per suite comes with the results (github.publish.log_suites)."""
    from adk_eval_action.adk.evaluate.scheduler import EngineHooks

    return EngineHooks(on_progress=None if request.settings.quiet else _progress)


class Preflight(NamedTuple):
    """What the preflight decided (:func:`_preflight`): whether the run goes on, and the
    errors of each suite it found one in, which then is recorded with them and not run."""

    proceed: bool
    refused: dict[str, list[ErrorRecord]]


async def _preflight(
    request: RunRequest, suites: list[Suite], writer: ResultsWriter, note: str | None,
) -> Preflight:
    """The preflight on every suite. What it finds in one suite (an unknown metric, a judge
    that cannot be set up, the missing key of the models that suite calls) refuses that
    suite alone while another suite can run: one team's typo in a repository of many
    agents costs no other suite its check. A problem of no one suite, or of every suite,
    stops the run before evaluation: its problems become the run's errors (each names its
    file and field). Missing model credentials with ``on_missing_credentials: skip`` are
    no error: the run is marked skipped (``RunMetadata.skipped``). ``note`` (what the
    event says about credentials: a fork's pull request) is added to their message."""
    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.adk.runtime.model_calls import quiet_client_cleanup

    quiet_client_cleanup(asyncio.get_running_loop())
    report = await check_suites(suites, request.workdir, os.environ)
    problems = [
        p.model_copy(update={"message": f"{p.message}. {note}"})
        if p.kind == "credentials" and note
        else p
        for p in report.problems
    ]
    skipped = request.settings.on_missing_credentials == "skip" and report.missing_credentials
    if skipped:
        writer.skip("; ".join(p.message for p in problems if p.kind == "credentials"))
        problems = [p for p in problems if p.kind != "credentials"]
    names = {s.name for s in suites}
    if not skipped and problems and all(p.suite in names for p in problems) and (
            {p.suite for p in problems} != names):
        refused: dict[str, list[ErrorRecord]] = {}
        for problem in problems:
            refused.setdefault(problem.suite or "", []).append(_preflight_error(
                problem, "found before any agent ran; this suite was not evaluated, the "
                "other suites were"))
        return Preflight(True, refused)
    for problem in problems:
        writer.add_error(_preflight_error(problem, "found before any agent ran; nothing was "
                                          "evaluated"))
    return Preflight(not report.problems, {})


def _preflight_error(problem: PreflightProblem, hint: str) -> ErrorRecord:
    """The error record of one preflight problem (its message names the field)."""
    return ErrorRecord(
        kind=problem.kind,
        suite=problem.suite,
        file=problem.file,
        message=problem.message + (f" (field `{problem.field}`)" if problem.field else ""),
        hint=hint,
    )


async def _evaluate_all(
    request: RunRequest, suites: list[Suite], calls: ModelCalls, writer: ResultsWriter,
    note: str | None,
) -> bool:
    """The preflight, then every suite in one pool when it found nothing that cannot work,
    or found it in some suites only (those are recorded with their errors and not run);
    else no suite is evaluated nor recorded: the run stopped before evaluation started
    (``RunResults.stopped_by``: its errors are the preflight's; what was found is still
    said, and the eval configs' lint warnings kept in the results' ``warnings``), or was
    skipped on purpose (``RunMetadata.skipped``, quietly). False when the preflight
    refused the run."""
    from adk_eval_action.adk.evaluate.engine import open_suite
    from adk_eval_action.adk.evaluate.scheduler import PlanRefused, evaluate_suites

    settings = engine_settings(request)
    preflight = await _preflight(request, suites, writer, note)
    if not preflight.proceed:
        if writer.errors():
            found = [open_suite(suite, settings)[0] for suite in suites]
            writer.add_warnings(w for record in found for w in record.warnings)
        return False
    hooks = replace(engine_hooks(request),
                    check_plan=budget_check(request, cost_baseline(request), calls.spend))
    try:
        # The evaluation hands the writer each suite's record as it opens it and each
        # case run as it finishes: a signal keeps what was done.
        evaluation = await evaluate_suites(suites, settings, hooks, calls, sink=writer,
                                           refused=preflight.refused)
    except PlanRefused as refused:
        writer.add_warnings(refused.warnings)
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
    writer.add_warnings(w for s in writer.suite_records() for w in s.warnings)
    writer.finished(utc_now(), round(time.monotonic() - start, 3))
    cases = sum(len(e.eval_cases) for s in writer.suite_records() for e in s.eval_sets)
    if cases == 0 and not writer.errors() and writer.shard is None and not refused:
        writer.add_error(
            ErrorRecord(
                kind="config",
                message="the eval sets found hold no eval cases, so nothing was evaluated",
                hint="add eval cases, or point PATHS or adk-eval.yaml at eval sets that have them",
            )
        )


class PlanReport(NamedTuple):
    """What ``plan`` says (:func:`plan`)."""

    plan: Plan
    records: list[SuiteRecord]
    problems: list[PreflightProblem]
    #: Each suite with own dependencies: its files (relative to the working directory).
    dependencies: dict[str, list[str]]
    conflicts: list[DependencyConflict]


async def plan(request: RunRequest) -> PlanReport:
    """The cost plan of the run's suites, without calling any model; also the suites'
    records, whose errors (config, eval sets, agents) make ``plan`` exit 2 as ``run`` would,
    the problems ``run``'s preflight would refuse the run for (an unknown metric, a
    judge or custom metric that cannot be set up, missing credentials:
    :func:`adk_eval_action.adk.evaluate.preflight.check_suites`), and the suites' own
    dependencies with those that cannot live together in one job
    (:func:`adk_eval_action.run.requirements.suite_conflicts`).

    Raises:
        AdkEvalActionError: the config is invalid or nothing was found.
    """
    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.adk.evaluate.scheduler import plan_suites

    suites = find_suites(request)
    found, records = await plan_suites(suites, engine_settings(request), engine_hooks(request))
    report = await check_suites(suites, request.workdir, os.environ)
    dependencies = {s.name: [_shown(p, request.workdir) for p in s.requirements]
                    for s in suites if s.requirements}
    return PlanReport(found, records, report.problems, dependencies,
                      suite_conflicts(suites, request.workdir))


def detection_notes(found: Plan) -> dict[str, list[str]]:
    """Per suite, what its planned eval cases x runs can call on each gated metric before
    any model is called (:func:`adk_eval_action.analysis.sample.suites_detectable`, what
    ``init`` writes beside ``num_runs`` too), in a family of every suite's gated metrics,
    as compare tests them."""
    found_by_name = {s.name: s for s in found.suites}
    can = suites_detectable(
        plan_samples(found),
        alpha=DEFAULT_ALPHA,
        n_resamples=DEFAULT_RESAMPLES,
        within_cases_up_to=WITHIN_CASES_UP_TO,
    )
    notes = {}
    for name, detected in can.items():
        count = len(found_by_name[name].gated_metrics)
        notes[name] = [
            f"can call (each of its {count} gated metric{'s' if count != 1 else ''}, "
            f"against its baseline): {detected.line}"
        ]
    return notes


def plan_samples(found: Plan) -> list[SuiteSample]:
    """Each planned suite's sample: its eval cases, runs and gated metrics."""
    return [SuiteSample(s.name, len(s.cases), s.num_runs, len(s.gated_metrics))
            for s in found.suites]



"""One scheduler for a whole evaluation: every (suite, eval set, eval case, run) is one job
of one work pool (:mod:`.pool`), and ``parallelism`` bounds the model calls in flight.

1. Each suite's files are loaded (:func:`~.engine.open_suite`; its log lines in one section,
   a ``::group::`` in GitHub Actions) and the cost plan is made and logged in one line
   (:mod:`.plan`). With a shard (``--shard K/N``) only that shard's eval cases are kept
   (:mod:`adk_eval_action.results.shards`).
2. The agents are imported, all in one import scope, except that agents whose packages share
   a name cannot be imported at once: such suites go to a later phase (one pool, phases one
   after another).
3. All case runs of a phase go to the pool at once, the longest first (the plan's chain of
   calls one after another), so eval sets, repeats and suites interleave and the last jobs
   are short. A case's metrics (judge calls included) are evaluated as soon as its
   inference ends. At most ``parallelism`` model calls (agent and judge) are in flight, and
   per-model ``max_concurrency`` limits bound the calls of a model, across all of it
   (:mod:`.model_limits`). The pool runs up to :data:`CASE_RUNS_PER_SLOT` times
   ``parallelism`` case runs at once: a case run spends part of its time between calls
   (ADK's flow, tools, sessions, metrics), and another case's call takes the slot then, so
   the calls in flight stay at ``parallelism`` (the limit docs/scaling.md derives: model
   calls x latency / parallelism) instead of dipping at every gap.
4. Each suite's record is handed to the caller's :class:`~adk_eval_action.results.stream
   .SuiteRecords` (the run's results writer) as it is opened, each case run as it
   finishes, and what its case runs sum up to once they are in (as google-adk's eval
   service yields each result to its caller): the records depend on nothing but what was
   evaluated, not the order jobs finished in, and a stop keeps every finished case run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from adk_eval_action.adk.evaluate.engine import (
    CaseRun,
    CaseRunOutcome,
    EngineSettings,
    agent_error,
    agent_error_record,
    case_run_done,
    case_runs,
    open_suite,
    run_case,
    suite_closed,
)
from adk_eval_action.adk.evaluate.harness import SuiteHarness, evaluation_scope
from adk_eval_action.adk.evaluate.plan import Plan, SuitePlan, plan_suite
from adk_eval_action.adk.evaluate.pool import Job, ProgressSink, ProgressSnapshot, WorkPool
from adk_eval_action.adk.evaluate.startup import not_started
from adk_eval_action.adk.files.prepare import SharedInputs, SuiteInputs
from adk_eval_action.adk.runtime.agent import (
    AgentLoadError,
    LoadedAgent,
    agent_phases,
    agent_records,
    load_agent,
)
from adk_eval_action.adk.runtime.model_calls import ModelCalls, wrap_agent_models
from adk_eval_action.adk.runtime.model_limits import ModelGate
from adk_eval_action.adk.runtime.user_exits import exits_as_errors_in_tasks
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.model import (
    CaseKey,
    CaseStatus,
    ErrorRecord,
    RunRecord,
    ShardInfo,
    SuiteRecord,
)
from adk_eval_action.results.shards import assign_shards, plan_id
from adk_eval_action.results.stream import SuiteClosed, SuiteRecords
from adk_eval_action.text import shorten

log = logging.getLogger(__name__)

PlanCheck = Callable[[Plan, set[CaseKey] | None], str | None]
"""Why a plan may not be evaluated (None: it may), given the plan and the shard's cases."""


class PlanRefused(Exception):
    """The evaluation was refused before any model call: ``EngineHooks.check_plan`` gave
    this reason (the message). ``warnings``: what loading the suites' files found (the
    eval configs' lint), which the run still reports."""

    def __init__(self, reason: str, warnings: list[str] | None = None) -> None:
        super().__init__(reason)
        self.warnings = warnings or []


CASE_RUNS_PER_SLOT = 2
"""Case runs in progress per slot of ``parallelism`` (module docstring)."""


@contextmanager
def _plain_section(title: str) -> Iterator[None]:
    # The suite's first line names it (engine.open_suite); a plain log needs no title.
    yield


def _log_progress(snapshot: ProgressSnapshot) -> None:
    log.info("%s", snapshot.line())


@dataclass(frozen=True)
class EngineHooks:
    """How an evaluation talks to its caller: ``section(title)`` wraps each suite's log
    lines (the caller makes it a ``::group::`` in GitHub Actions); ``on_progress`` gets a
    snapshot every ``progress_interval_s`` seconds (None: no progress lines);
    ``check_plan`` is asked about the plan (and the eval cases of the shard, None: all)
    before any agent is imported, and its reason refuses the evaluation
    (:class:`PlanRefused`; the run's budget: :mod:`.estimate`)."""

    section: Callable[[str], AbstractContextManager[None]] = _plain_section
    on_progress: ProgressSink | None = _log_progress
    progress_interval_s: float = 10.0
    check_plan: PlanCheck | None = None


@dataclass
class OpenSuite:
    """A suite whose files are loaded: its record so far, its inputs, the case runs it
    will do (``items``), and its harness once the agent is imported."""

    suite: Suite
    record: SuiteRecord
    inputs: SuiteInputs
    items: list[CaseRun] = field(default_factory=list)
    harness: SuiteHarness | None = None
    agent: LoadedAgent | None = None

    @property
    def runnable(self) -> bool:
        """Its eval config loaded and it has an agent folder."""
        return (
            self.inputs.config is not None
            and self.suite.agent_dir is not None
            and not (self.suite.agent_error)
        )


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate_suites` produced: the suites' records (in the given order), the
    plan, and which shard of it was evaluated (None: all of it)."""

    suites: list[SuiteRecord]
    plan: Plan
    shard: ShardInfo | None = None


def _no_agent(record: SuiteRecord, suite: Suite, repo_root: Path) -> None:
    """Records why the suite has no agent to run: its ``agent_error``, at the file it is
    about when that is not the agent's (its dependencies that did not install)."""
    why = suite.agent_error or "no agent"
    agent_error(record, AgentLoadError(
        why, suite.agent_error_file, hint="fix the file so that it installs (the installer's "
        "output is in the log); the other suites still ran")
        if suite.agent_error_file else why, repo_root)


def open_suites(
    suites: list[Suite], settings: EngineSettings, hooks: EngineHooks,
    shared: SharedInputs | None = None,
    refused: Mapping[str, Sequence[ErrorRecord]] | None = None,
) -> list[OpenSuite]:
    """Loads every suite's files (each suite's log lines in a section of its own);
    through ``shared`` when given (:func:`~.engine.open_suite`): then a suite alike an
    earlier one (the same agent, files, overrides, runs and warnings) takes the earlier
    one's record and inputs under its own name, which only readers may share. A suite
    named in ``refused`` (the preflight's errors of it) is recorded with those errors
    and has no case runs."""
    opened = []
    alike: dict[tuple[object, ...], tuple[SuiteRecord, SuiteInputs]] = {}
    refused = refused or {}
    for suite in suites:
        with hooks.section(f"suite {suite.name}"):
            key = (shared.key(suite), suite.agent_dir, suite.agent_error, suite.agent_error_file,
                   suite.num_runs, tuple(suite.warnings)) if (
                shared is not None and suite.name not in refused) else None
            if key is not None and key in alike:
                record, inputs = _renamed(*alike[key], suite)
            else:
                record, inputs = open_suite(suite, settings, shared)
                if inputs.config is not None and (suite.agent_dir is None or suite.agent_error):
                    _no_agent(record, suite, settings.repo_root)
                if key is not None:
                    alike[key] = (record, inputs)
            record.errors.extend(refused.get(suite.name, ()))
        opened.append(OpenSuite(suite, record, inputs))
        opened[-1].items = case_runs(record, record.num_runs) if (
            opened[-1].runnable and suite.name not in refused) else []
    return opened


def _renamed(
    record: SuiteRecord, inputs: SuiteInputs, suite: Suite,
) -> tuple[SuiteRecord, SuiteInputs]:
    """``record`` and ``inputs`` of another suite alike ``suite``, named after it (a
    shallow copy: the eval sets are shared)."""
    agent = record.agent
    log.info("suite %s: agent %s", suite.name, agent)
    errors = [e.model_copy(update={"suite": suite.name}) for e in record.errors]
    mine = [e.model_copy(update={"suite": suite.name}) for e in inputs.errors]
    return (record.model_copy(update={"name": suite.name, "errors": errors}),
            inputs.model_copy(update={"errors": mine}))


def make_plan(
    opened: list[OpenSuite], settings: EngineSettings,
    trees: dict[str, list[AgentRecord]] | None = None,
) -> Plan:
    """The cost plan of the opened suites (``trees``: each suite's agent tree, which
    names its models and splits its calls among them); a suite whose inputs are an
    earlier one's (:func:`open_suites`, ``shared``) takes its plan under its own name."""
    plans = []
    made: dict[tuple[object, ...], SuitePlan] = {}
    for o in opened:
        if o.inputs.config is None:
            continue
        tree = (trees or {}).get(o.suite.name)
        # The objects themselves: alike suites share them, and they live while this runs.
        key = (id(o.inputs.config), *map(id, o.inputs.eval_sets), o.record.num_runs,
               id(tree))
        if key in made:
            plans.append(made[key].renamed(o.suite.name))
            continue
        made[key] = plan_suite(o.suite.name, o.record.num_runs, o.inputs.config,
                               [s.eval_set for s in o.inputs.eval_sets], tree)
        plans.append(made[key])
    return Plan(
        suites=plans,
        parallelism=settings.parallelism,
        latency_s=settings.latency_s,
        model_limits=settings.model_limits,
    )


def select_shard(opened: list[OpenSuite], plan: Plan, settings: EngineSettings) -> ShardInfo:
    """Keeps only the eval cases of ``settings.shard`` in the records and work items
    (:mod:`adk_eval_action.results.shards`; a suite with a ``shard`` of its own goes whole
    to that shard); returns what the part's results say."""
    assert settings.shard is not None
    cases: list[CaseKey] = [
        (c.suite, c.eval_set_id, c.eval_id) for s in plan.suites for c in s.cases
    ]
    runs = {s.name: s.num_runs for s in plan.suites}
    weights = [max(1, c.turns) * runs[c.suite] for s in plan.suites for c in s.cases]
    pins = {o.suite.name: o.suite.shard for o in opened}
    owner = assign_shards(weights, settings.shard.count, [pins.get(c[0]) for c in cases])
    mine = {key for key, shard in zip(cases, owner, strict=True) if shard == settings.shard.index}
    fingerprints = [
        f"{o.suite.name}:{o.record.eval_config_hash}:{o.record.num_runs}:{o.suite.shard}:"
        + ",".join(str(s.content_hash) for s in o.record.eval_sets)
        for o in opened
    ]
    for o in opened:
        for eval_set in o.record.eval_sets:
            eval_set.eval_cases = [
                c
                for c in eval_set.eval_cases
                if (o.suite.name, eval_set.eval_set_id, c.eval_id) in mine
            ]
        o.items = [
            i for i in o.items if (o.suite.name, i.eval_set.eval_set_id, i.case.eval_id) in mine
        ]
    return ShardInfo(
        index=settings.shard.index,
        count=settings.shard.count,
        plan_id=plan_id(list(zip(cases, weights, strict=True)), fingerprints),
        plan=cases,
        cases=[k for k in cases if k in mine],
    )


def import_phases(opened: list[OpenSuite]) -> list[list[OpenSuite]]:
    """Runnable suites in phases: in each, no two agent packages share a name (module
    docstring); the suites' order is kept."""
    phases: list[list[OpenSuite]] = []
    for o in (o for o in opened if o.runnable and o.items):
        assert o.suite.agent_dir is not None
        name = o.suite.agent_dir.name
        target = next(
            (p for p in phases if all(x.suite.agent_dir.name != name for x in p)),  # type: ignore[union-attr]
            None,
        )
        if target is None:
            phases.append(target := [])
        target.append(o)
    return phases


async def _start(
    o: OpenSuite, gate: ModelGate, calls: ModelCalls | None, repo_root: Path,
    sink: SuiteRecords,
) -> bool:
    """Imports the suite's agent (inside the phase's scope) and makes its harness: its
    models behind their concurrency limits, then retried and counted in ``calls``
    (adk.runtime.model_calls), so each retry waits for a slot again. An agent that does not
    import is the suite's error, handed to ``sink``."""
    assert o.suite.agent_dir is not None and o.inputs.config is not None
    try:
        agent = await load_agent(o.suite.agent_dir, repo_root)
    except AgentLoadError as e:
        error = agent_error_record(o.record, e, repo_root)
        sink.close_suite(SuiteClosed(suite=o.suite.name, errors=(error,)))
        o.items = []
        return False
    sink.describe_agents(o.suite.name, agent_records(agent.root_agent))  # before wrapping
    gate.wrap_agent(agent.root_agent)
    if calls is not None:
        wrap_agent_models(agent.root_agent, calls)
    o.agent = agent
    o.harness = SuiteHarness(
        agent.app_name,
        o.inputs.config.eval_config,
        [s.eval_set for s in o.inputs.eval_sets],
        agent,
        calls,
        on_evaluator=gate.wrap_evaluator,
        repo_root=repo_root,
    )
    return True


async def _guarded(o: OpenSuite, item: CaseRun, repo_root: Path) -> CaseRunOutcome:
    """:func:`run_case`, with anything unexpected kept as the case run's internal error."""
    assert o.harness is not None and o.inputs.config is not None
    meta = o.inputs.config.metric_meta
    try:
        return await run_case(o.harness, item, o.suite.name, meta, repo_root)
    except Exception as e:  # noqa: BLE001 - one case run's bug must not lose the others
        message = f"{type(e).__name__}: {e}"
        error = ErrorRecord(
            kind="internal",
            message=message,
            suite=o.suite.name,
            file=item.eval_set.file,
            eval_set_id=item.eval_set.eval_set_id,
            eval_id=item.case.eval_id,
            hint="please report this as a bug",
        )
        return CaseRunOutcome(
            item, RunRecord(run=item.run, status=CaseStatus.ERROR, error=message), error
        )


def _failed(outcome: CaseRunOutcome) -> bool:
    """Whether a case run counts as one "with errors" in the progress line: it has an error
    record, or its run has no scores for a reason (a model fault summed up per suite, the
    agent's own code raising)."""
    return outcome.error is not None or outcome.run.error is not None


def _job_name(o: OpenSuite, item: CaseRun) -> str:
    """How a progress line names a case run that runs long: ``suite/eval set/eval case run
    N`` (the eval id cut where it says least, :func:`adk_eval_action.text.shorten`)."""
    return (f"{o.suite.name}/{item.eval_set.eval_set_id}/{shorten(item.case.eval_id, 60)} "
            f"run {item.run}")


@dataclass(frozen=True)
class _Run:
    """What every phase of one evaluation shares."""

    settings: EngineSettings
    gate: ModelGate
    pool: WorkPool
    chains: dict[CaseKey, int]
    calls: ModelCalls | None
    sink: SuiteRecords


async def _run_phase(phase: list[OpenSuite], run: _Run) -> None:
    dirs = [o.suite.agent_dir for o in phase if o.suite.agent_dir is not None]
    root = run.settings.repo_root
    # An exit raised by the agent's code fails its case run, as any exception of it does.
    with evaluation_scope(dirs, root), exits_as_errors_in_tasks():
        started = [o for o in phase if await _start(o, run.gate, run.calls, root, run.sink)]
        work = [(o, item) for o in started for item in o.items]
        work.sort(
            key=lambda pair: (
                -run.chains.get(
                    (pair[0].suite.name, pair[1].eval_set.eval_set_id, pair[1].case.eval_id), 0
                )
            )
        )
        by_suite: dict[str, list[CaseRunOutcome]] = {}

        async def handed_over(o: OpenSuite, item: CaseRun) -> CaseRunOutcome:
            outcome = await _guarded(o, item, root)
            run.sink.add_case_run(case_run_done(o.suite.name, outcome))
            by_suite.setdefault(o.suite.name, []).append(outcome)
            return outcome

        jobs = [Job(partial(handed_over, o, item), _failed, _job_name(o, item))
                for o, item in work]
        try:
            await run.pool.run(jobs)
        finally:  # cancelled too (a signal): what finished is summed up
            for o in started:
                _close_suite(o, by_suite.get(o.suite.name, []), run.sink,
                             counted=run.calls is not None,
                             judge_answers_counted=run.settings.judge_answers_counted)
            for o in started:
                if o.agent is not None:
                    await o.agent.close()


def _close_suite(o: OpenSuite, outcomes: list[CaseRunOutcome], sink: SuiteRecords,
                 counted: bool, judge_answers_counted: bool = False) -> None:
    """Hands ``sink`` what a suite's finished case runs sum up to (in the order of its plan);
    when every one of its case runs ran and its agent failed to start in each (``counted``:
    the runs' model calls were counted, :mod:`.startup`), its runs reclassified and the
    suite's one agent error."""
    ordered = sorted(outcomes, key=lambda x: x.item.position)
    stopped = not_started(ordered, o.suite.name, o.record.agent) if (
        counted and len(ordered) == len(o.items)) else None
    started: tuple[ErrorRecord, ...] = ()
    if stopped is not None:
        ordered, error = stopped
        started = (error,)
        for outcome in ordered:  # the same runs, now the agent's error: handed over again
            sink.add_case_run(case_run_done(o.suite.name, outcome))
    closed = suite_closed(o.record, ordered, set(o.suite.higher_is_better),
                          judge_answers_counted)
    sink.close_suite(closed.model_copy(update={"errors": (*started, *closed.errors)}))


async def evaluate_suites(
    suites: list[Suite],
    settings: EngineSettings,
    hooks: EngineHooks | None = None,
    calls: ModelCalls | None = None,
    sink: SuiteRecords | None = None,
    refused: Mapping[str, Sequence[ErrorRecord]] | None = None,
) -> Evaluation:
    """Evaluates the suites with google-adk on the running event loop (module docstring);
    with ``calls``, every model call (agent, judge, user simulator) is retried and counted
    there (:mod:`adk_eval_action.adk.runtime.model_calls`). Each suite's record, each
    finished case run and each suite's summary are handed to ``sink`` as they come (the
    run's results writer; None: a collector of its own), even when the evaluation is
    cancelled (a signal), so the caller keeps what was evaluated. The suites named in
    ``refused`` (what the preflight found in each) are recorded with those errors and not
    run; the others run as usual.

    Never raises for a problem in the user's files: config, eval set, agent, inference,
    model and metric failures become error records and every other result is kept.

    Raises:
        PlanRefused: ``hooks.check_plan`` refused the plan (no model was called).
    ``sys.path``, ``sys.modules`` and the judge logger are as before when it returns.
    """
    hooks = hooks or EngineHooks()
    sink = sink if sink is not None else SuiteRecords()
    opened = open_suites(suites, settings, hooks, refused=refused)
    plan = make_plan(opened, settings)
    log.info("%s", plan.summary())
    shard = select_shard(opened, plan, settings) if settings.shard else None
    if hooks.check_plan is not None:
        reason = hooks.check_plan(plan, set(shard.cases) if shard else None)
        if reason is not None:
            raise PlanRefused(reason, [w for o in opened for w in o.record.warnings])
    for o in opened:  # handed over as opened (and cut to the shard): no runs yet
        sink.open_suite(o.record)
    chains = {(c.suite, c.eval_set_id, c.eval_id): c.chain for s in plan.suites for c in s.cases}
    pool = WorkPool(
        settings.parallelism * CASE_RUNS_PER_SLOT,
        total=sum(len(o.items) for o in opened),
        on_progress=hooks.on_progress,
        interval_s=hooks.progress_interval_s,
    )
    gate = ModelGate(settings.model_limits, settings.parallelism)
    run = _Run(settings, gate, pool, chains, calls, sink)
    for phase in import_phases(opened):
        await _run_phase(phase, run)
    return Evaluation(sink.suite_records(), plan, shard)


async def plan_suites(
    suites: list[Suite], settings: EngineSettings, hooks: EngineHooks | None = None
) -> tuple[Plan, list[SuiteRecord]]:
    """The cost plan of the suites without calling any model: their files are loaded and
    their agents imported (for their model names), as :func:`evaluate_suites` would.
    Returns the plan and the suites' records (errors of files and agents in them)."""
    hooks = hooks or EngineHooks()
    opened = open_suites(suites, settings, hooks, SharedInputs(settings.repo_root))
    wanted = [o for o in opened if o.runnable and o.items]
    # Each agent folder imported once, however many suites evaluate it.
    found = await agents_trees([o.suite for o in wanted], settings.repo_root)
    trees: dict[str, list[AgentRecord]] = {}
    for o in wanted:
        assert o.suite.agent_dir is not None
        got = found[o.suite.agent_dir]
        if isinstance(got, AgentLoadError):
            agent_error(o.record, got, settings.repo_root)
        elif got:
            trees[o.suite.name] = got
    return make_plan(opened, settings, trees), [o.record for o in opened]


async def agents_trees(
    suites: list[Suite], repo_root: Path,
) -> dict[Path, list[AgentRecord] | None | AgentLoadError]:
    """The agent tree of each agent folder of ``suites`` (imported once each, no model
    called; None when an agent of it cannot be read), or why it did not import."""
    found: dict[Path, list[AgentRecord] | None | AgentLoadError] = {}
    for phase in agent_phases(s.agent_dir for s in suites if s.agent_dir is not None):
        with evaluation_scope(phase, repo_root):
            for folder in phase:
                try:
                    agent = await load_agent(folder, repo_root)
                except AgentLoadError as e:
                    found[folder] = e
                    continue
                found[folder] = agent_records(agent.root_agent)
                await agent.close()
    return found


async def evaluate_suite(
    suite: Suite, settings: EngineSettings, calls: ModelCalls | None = None
) -> SuiteRecord:
    """One suite's record (:func:`evaluate_suites` of that suite alone, no progress)."""
    evaluation = await evaluate_suites([suite], settings, EngineHooks(on_progress=None), calls)
    return evaluation.suites[0]

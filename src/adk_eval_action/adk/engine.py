"""Driving google-adk's own evaluation: LocalEvalService inference + metric evaluation.

The flow per suite mirrors ``adk eval`` (google.adk.cli.cli_tools_click.cli_eval): load the
agent module, put the eval sets in an ``InMemoryEvalSetsManager``, register the eval config's
custom metrics in a fresh ``MetricEvaluatorRegistry``, run ``LocalEvalService.perform_inference``
and ``LocalEvalService.evaluate`` with ``get_eval_metrics_from_config``. What is added:

* ``num_runs`` repeats inference and evaluation of every case and keeps every run.
* The repository root and the agent's parent folder are importable, so a custom metric path
  such as ``my_agent.metrics.fn`` resolves without PYTHONPATH.
* Why a metric was not evaluated is kept (ADK only logs it): the registry handed to ADK wraps
  each evaluator and records the exception, and judge sample failures that ADK logs are
  caught by a log handler bound to the case being evaluated.
* Rubric handling from :mod:`adk_eval_action.adk.rubrics`: untyped rubrics typed, final-only
  rubrics on the last turn, duplicates refused, a rubric metric without rubrics reported
  before any judge call, and turns without rubrics skipped instead of failing the metric.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import inspect
import logging
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.adk.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.eval_rubrics import Rubric
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.evaluator import EvaluationResult, Evaluator, PerInvocationResult
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.evaluation.metric_evaluator_registry import (
    MetricEvaluatorRegistry,
    register_custom_metrics_from_config,
)
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from pydantic import BaseModel

from adk_eval_action.adk.convert import judge_model, run_record_from_adk
from adk_eval_action.adk.evalconfig import LoadedEvalConfig, adk_metrics, load_eval_config
from adk_eval_action.adk.evalsets import LoadedEvalSet, load_eval_set
from adk_eval_action.adk.rubrics import RUBRIC_METRIC_TYPES, assign_default_type, duplicate_ids
from adk_eval_action.errors import AdkEvalActionError, EvalSetError
from adk_eval_action.project.discovery import Suite, relative_path
from adk_eval_action.results.model import (
    CaseStatus,
    ErrorRecord,
    EvalCaseRecord,
    EvalSetRecord,
    RunRecord,
    SuiteRecord,
)

Console = Callable[[str], None]

NO_RUBRICS_HINT = (
    "add rubrics to its criterion in the eval config, to the eval case, or to an expected "
    "invocation (untyped case and invocation rubrics get this metric's rubric type)"
)


class EngineSettings(BaseModel):
    """Settings of one evaluation. ``parallelism`` bounds concurrent inferences (and
    evaluations); ``repo_root`` is put on sys.path."""

    num_runs: int = 1
    parallelism: int = 4
    repo_root: Path = Path(".")


class AgentLoadError(AdkEvalActionError):
    """The agent module failed to import or exposes no agent."""


# The recorder of the eval case being evaluated; tasks ADK spawns inherit it.
_CURRENT_RECORDER: contextvars.ContextVar[MetricRecorder | None] = contextvars.ContextVar(
    "adk_eval_action_recorder", default=None
)
_CURRENT_METRIC: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "adk_eval_action_metric", default=None
)


class MetricRecorder:
    """Why each metric of one eval case run was not evaluated: metric name -> reason."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def record(self, metric_name: str, reason: str) -> None:
        """Keeps the first reason given for a metric."""
        self.reasons.setdefault(metric_name, reason)


class _JudgeFailureHandler(logging.Handler):
    """Catches the judge-sample failures that ADK's LlmAsJudge only logs."""

    def emit(self, record: logging.LogRecord) -> None:
        recorder, metric = _CURRENT_RECORDER.get(), _CURRENT_METRIC.get()
        if recorder is None or metric is None:
            return
        error = record.exc_info[1] if record.exc_info else None
        detail = f"{type(error).__name__}: {error}" if error else record.getMessage()
        recorder.record(metric, f"judge call failed: {detail}")


def _exception_reason(error: BaseException) -> str:
    if isinstance(error, ImportError):
        cause = error.__cause__
        return (
            f"{error}{f' ({cause})' if cause else ''}: check the custom metric's code_config.name"
        )
    text = (str(error) or type(error).__name__).rstrip(".")
    if "not found in registry" in text:
        return f"{text}: not a google-adk metric and not in custom_metrics"
    return f"{type(error).__name__}: {text}"


class _RecordingEvaluator(Evaluator):
    """Delegates to ADK's evaluator; records failures; scopes rubric metrics to the turns
    that have rubrics."""

    def __init__(self, inner: Evaluator, eval_metric: EvalMetric, recorder: MetricRecorder):
        self._inner = inner
        self._metric = eval_metric
        self._recorder = recorder

    async def evaluate_invocations(
        self,
        actual_invocations: list[Any],
        expected_invocations: list[Any] | None = None,
        conversation_scenario: Any = None,
    ) -> EvaluationResult:
        name = self._metric.metric_name
        _CURRENT_RECORDER.set(self._recorder)
        _CURRENT_METRIC.set(name)
        try:
            if name in RUBRIC_METRIC_TYPES:
                return await self._evaluate_rubric_metric(
                    actual_invocations, expected_invocations, conversation_scenario
                )
            return await self._call(actual_invocations, expected_invocations, conversation_scenario)
        except Exception as e:
            self._recorder.record(name, _exception_reason(e))
            raise

    async def _call(self, actual: list[Any], expected: list[Any] | None, scenario: Any) -> Any:
        result = self._inner.evaluate_invocations(
            actual_invocations=actual,
            expected_invocations=expected,
            conversation_scenario=scenario,
        )
        if inspect.isawaitable(result):
            result = await result
        if result.overall_eval_status == EvalStatus.NOT_EVALUATED and (
            self._metric.metric_name not in self._recorder.reasons
        ):
            self._recorder.record(
                self._metric.metric_name,
                "the judge gave no parsable verdict"
                if judge_model(self._metric)
                else "the metric returned NOT_EVALUATED",
            )
        return result

    async def _evaluate_rubric_metric(
        self, actual: list[Any], expected: list[Any] | None, scenario: Any
    ) -> EvaluationResult:
        rubric_type = RUBRIC_METRIC_TYPES[self._metric.metric_name]
        criterion = self._metric.criterion.model_dump() if self._metric.criterion else {}
        has_config_rubrics = bool(criterion.get("rubrics"))
        judged = [
            i
            for i, inv in enumerate(actual)
            if has_config_rubrics or any(r.type == rubric_type for r in inv.rubrics or [])
        ]
        if not judged:
            raise ValueError(f"no rubrics for `{self._metric.metric_name}`: {NO_RUBRICS_HINT}")
        if len(judged) == len(actual):
            return await self._call(actual, expected, scenario)
        inner = await self._call(
            [actual[i] for i in judged],
            [expected[i] for i in judged] if expected is not None else None,
            scenario,
        )
        by_index = dict(zip(judged, inner.per_invocation_results, strict=False))
        per_invocation = [
            by_index.get(i)
            or PerInvocationResult(actual_invocation=inv, eval_status=EvalStatus.NOT_EVALUATED)
            for i, inv in enumerate(actual)
        ]
        return inner.model_copy(update={"per_invocation_results": per_invocation})


class _RecordingRegistry:
    """The registry LocalEvalService sees: ADK's registry, with evaluators wrapped."""

    def __init__(self, inner: MetricEvaluatorRegistry, recorder: MetricRecorder):
        self._inner = inner
        self._recorder = recorder

    def get_evaluator(self, eval_metric: EvalMetric) -> Evaluator:
        try:
            evaluator = self._inner.get_evaluator(eval_metric)
        except Exception as e:
            self._recorder.record(eval_metric.metric_name, _exception_reason(e))
            raise
        return _RecordingEvaluator(evaluator, eval_metric, self._recorder)


def _import_agent(agent_dir: Path, repo_root: Path) -> tuple[Any, Any]:
    """Imports the agent package as ADK's agent loader does and returns ``(app, root_agent)``.

    Raises:
        AgentLoadError: the import raised, or the module has no root_agent/app/get_agent_async.
    """
    for folder in (str(agent_dir.parent), str(repo_root.resolve())):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    name = agent_dir.name
    # A same-named package from another suite must not shadow this one.
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        module_file = getattr(sys.modules[key], "__file__", None) or ""
        if not module_file.startswith(str(agent_dir)):
            del sys.modules[key]
    try:
        from google.adk.cli.utils import envs

        envs.load_dotenv_for_agent(name, str(agent_dir.parent))
    except Exception:  # noqa: BLE001 - a .env problem must not hide the import result
        pass
    try:
        module = importlib.import_module(name)
        agent_module = getattr(module, "agent", None) or importlib.import_module(f"{name}.agent")
    except Exception as e:
        raise AgentLoadError(
            f"agent {agent_dir.name} failed to import: {type(e).__name__}: {e}"
            f"{_where_raised(e, agent_dir)}"
        ) from e
    from google.adk.apps.app import App

    app = getattr(agent_module, "app", None)
    if isinstance(app, App):
        return app, app.root_agent
    if hasattr(agent_module, "root_agent"):
        return None, agent_module.root_agent
    if hasattr(agent_module, "get_agent_async"):
        root_agent, _ = asyncio.run(agent_module.get_agent_async())
        return None, root_agent
    raise AgentLoadError(
        f"agent {agent_dir}: module `{name}.agent` has no `root_agent`, `app` or `get_agent_async`"
    )


def _where_raised(error: BaseException, agent_dir: Path) -> str:
    """`` (at agent.py:3)``: the innermost traceback frame inside the agent folder, if any."""
    frames = traceback.extract_tb(error.__traceback__)
    if isinstance(error, SyntaxError) and error.filename:
        frames.append(traceback.FrameSummary(error.filename, error.lineno or 0, ""))
    inside = [f for f in frames if f.filename.startswith(str(agent_dir))]
    if not inside:
        return ""
    frame = inside[-1]
    return f" (at {Path(frame.filename).relative_to(agent_dir.parent)}:{frame.lineno})"


def prepare_eval_set(loaded: LoadedEvalSet, config: LoadedEvalConfig) -> list[str]:
    """Applies the suite's rubric rules to an eval set in place; returns console notes.

    Raises:
        EvalSetError: duplicate rubric ids across config, case and invocation (names the
            case and id).
    """
    notes: list[str] = []
    rubric_metrics = config.rubric_types()
    if not rubric_metrics:
        return notes
    default_metric, default_type = rubric_metrics[0]
    typed = 0
    for case in loaded.eval_set.eval_cases:
        typed += assign_default_type(case.rubrics, default_type)
        for invocation in case.conversation or []:
            typed += assign_default_type(invocation.rubrics, default_type)
        for metric, rubrics in config.final_rubrics.items():
            copies = [r.model_copy(update={"type": RUBRIC_METRIC_TYPES[metric]}) for r in rubrics]
            if case.conversation:
                last = case.conversation[-1]
                last.rubrics = [*(last.rubrics or []), *copies]
            else:
                case.rubrics = [*(case.rubrics or []), *copies]
        _check_duplicates(loaded, case, config)
    if typed:
        notes.append(
            f"{loaded.path}: {typed} untyped case/invocation rubric(s) given type "
            f"{default_type} so `{default_metric}` judges them (google-adk drops untyped ones)"
        )
    return notes


def _refuse_repeated_id(
    loaded: LoadedEvalSet, earlier: list[LoadedEvalSet], rel: Callable[[Path], str | None]
) -> None:
    """Raises EvalSetError when an earlier eval set of the suite has the same eval_set_id:
    results key cases by (suite, eval set id, eval id), and ADK refuses it too."""
    for other in earlier:
        if other.eval_set.eval_set_id == loaded.eval_set.eval_set_id:
            raise EvalSetError(
                loaded.path,
                f"eval_set_id `{loaded.eval_set.eval_set_id}` is also the id of "
                f"{rel(other.path)}; give each eval set of a suite its own eval_set_id",
            )


def _config_rubrics(criterion: Any) -> list[Rubric]:
    """Criterion rubrics; ADK keeps them as raw dicts on a BaseCriterion (extra="allow")."""
    raw = getattr(criterion, "rubrics", None) or []
    return [r if isinstance(r, Rubric) else Rubric.model_validate(r) for r in raw]


def _check_duplicates(loaded: LoadedEvalSet, case: Any, config: LoadedEvalConfig) -> None:
    for metric, _ in config.rubric_types():
        config_rubrics = _config_rubrics(config.eval_config.criteria[metric])
        for invocation in case.conversation or [None]:
            inv_rubrics = invocation.rubrics if invocation is not None else None
            dupes = duplicate_ids(config_rubrics, case.rubrics, inv_rubrics)
            if dupes:
                raise EvalSetError(
                    loaded.path,
                    f"eval case `{case.eval_id}`: rubric id(s) {', '.join(dupes)} defined more "
                    "than once across the eval config, the case and its invocations; give "
                    "each rubric a unique id",
                )


def _error(kind: str, message: str, suite: str, **where: Any) -> ErrorRecord:
    return ErrorRecord(kind=kind, message=message, suite=suite, **where)  # type: ignore[arg-type]


async def _evaluate_one(
    service_args: dict[str, Any],
    registry: MetricEvaluatorRegistry,
    inference: InferenceResult,
    eval_metrics: list[EvalMetric],
) -> tuple[Any | None, MetricRecorder, str | None]:
    """Evaluates one inference result with its own recorder, so reasons stay per case."""
    recorder = MetricRecorder()
    service = LocalEvalService(
        **service_args,
        metric_evaluator_registry=_RecordingRegistry(registry, recorder),  # type: ignore[arg-type]
    )
    request = EvaluateRequest(
        inference_results=[inference],
        evaluate_config=EvaluateConfig(eval_metrics=eval_metrics, parallelism=1),
    )
    try:
        async for case_result in service.evaluate(request):
            return case_result, recorder, None
    except Exception as e:  # noqa: BLE001 - one case's failure must not lose the others
        return None, recorder, f"{type(e).__name__}: {e}"
    return None, recorder, "evaluation produced no result"


class _SuiteRun:
    """State of one suite's evaluation; :meth:`run` fills a :class:`SuiteRecord`."""

    def __init__(self, suite: Suite, settings: EngineSettings, console: Console):
        self.suite = suite
        self.settings = settings
        self.console = console
        self.record = SuiteRecord(name=suite.name)

    def _rel(self, path: Path | None) -> str | None:
        return None if path is None else relative_path(path, self.settings.repo_root)

    def load(self) -> tuple[LoadedEvalConfig, list[LoadedEvalSet]] | None:
        suite, record = self.suite, self.record
        record.agent = self._rel(suite.agent_dir)
        record.eval_config_file = self._rel(suite.eval_config_path)
        try:
            config = load_eval_config(
                suite.eval_config_path,
                suite.thresholds,
                suite.higher_is_better,
                display_path=self._rel(suite.eval_config_path),
            )
        except AdkEvalActionError as e:
            record.errors.append(_error("config", str(e), suite.name, file=record.eval_config_file))
            return None
        for warning in config.warnings:
            self.console(f"warning: {warning}")
        record.warnings.extend(config.warnings)
        record.eval_config_hash = config.content_hash
        record.eval_config = config.eval_config.model_dump(mode="json", exclude_none=True)
        record.judge_models = {
            name: judge
            for name, judge in (
                (m.metric_name, judge_model(m))
                for m in get_eval_metrics_from_config(config.eval_config)
            )
            if judge
        }
        loaded_sets: list[LoadedEvalSet] = []
        for path in suite.eval_set_paths:
            try:
                loaded = load_eval_set(path)
                _refuse_repeated_id(loaded, loaded_sets, self._rel)
                notes = [*loaded.notes, *prepare_eval_set(loaded, config)]
            except EvalSetError as e:
                record.errors.append(
                    _error(
                        "eval_set",
                        str(e).replace(str(path), self._rel(path) or str(path)),
                        suite.name,
                        file=self._rel(path),
                        hint="fix the file; the other eval sets still ran",
                    )
                )
                continue
            for note in notes:
                self.console(f"note: {note.replace(str(path), self._rel(path) or str(path))}")
            loaded_sets.append(loaded)
        return config, loaded_sets

    def run(self) -> SuiteRecord:
        self.console(f"suite {self.suite.name}: agent {self._rel(self.suite.agent_dir)}")
        for note in self.suite.notes:
            self.console(f"note: {note}")
        loaded = self.load()
        if loaded is None:
            return self.record
        config, eval_sets = loaded
        num_runs = self.suite.num_runs or self.settings.num_runs
        self.record.num_runs = num_runs
        eval_set_records = self._eval_set_records(eval_sets)
        if self.suite.agent_dir is None or self.suite.agent_error:
            self._fail_all(eval_set_records, "agent", self.suite.agent_error or "no agent")
            return self.record
        try:
            app, root_agent = _import_agent(self.suite.agent_dir, self.settings.repo_root)
        except AgentLoadError as e:
            self._fail_all(eval_set_records, "agent", str(e))
            return self.record
        asyncio.run(self._run_all(config, eval_sets, eval_set_records, app, root_agent, num_runs))
        infer_directions(self.record, set(self.suite.higher_is_better))
        self._metric_errors()
        return self.record

    def _metric_errors(self) -> None:
        """One error record per (metric, reason): a metric that could not be evaluated is
        shown with its reason, never passed over. The record names the first case."""
        counts: Counter[tuple[str, str]] = Counter()
        first_case: dict[tuple[str, str], tuple[EvalSetRecord, str]] = {}
        for eval_set in self.record.eval_sets:
            for case in eval_set.eval_cases:
                for metric in (m for r in case.runs for m in r.metrics):
                    if metric.informational or metric.status.value not in (
                        "error",
                        "not_evaluated",
                    ):
                        continue
                    key = (metric.metric_name, metric.reason or "the metric returned NOT_EVALUATED")
                    counts[key] += 1
                    first_case.setdefault(key, (eval_set, case.eval_id))
        for (metric_name, reason), count in counts.items():
            eval_set, eval_id = first_case[(metric_name, reason)]
            self.record.errors.append(
                _error(
                    "metric",
                    f"`{metric_name}` not evaluated in {count} run(s): {reason}",
                    self.suite.name,
                    file=eval_set.file,
                    eval_set_id=eval_set.eval_set_id,
                    eval_id=eval_id,
                    metric=metric_name,
                    hint="counts as a failure of its eval case (not_evaluated: fail)",
                )
            )

    def _eval_set_records(self, eval_sets: list[LoadedEvalSet]) -> dict[str, EvalSetRecord]:
        records = {}
        for loaded in eval_sets:
            record = EvalSetRecord(
                eval_set_id=loaded.eval_set.eval_set_id,
                file=self._rel(loaded.path),
                shape=loaded.shape,
                content_hash=loaded.content_hash,
                eval_cases=[
                    EvalCaseRecord(eval_id=c.eval_id, line=loaded.eval_id_lines.get(c.eval_id))
                    for c in loaded.eval_set.eval_cases
                ],
            )
            records[loaded.eval_set.eval_set_id] = record
            self.record.eval_sets.append(record)
        return records

    def _fail_all(self, records: dict[str, EvalSetRecord], kind: str, message: str) -> None:
        self.record.errors.append(
            _error(
                kind,
                message,
                self.suite.name,
                file=self._rel(self.suite.agent_dir),
                hint="fix the agent module so that adk eval could load it",
            )
        )
        self.console(f"error: {message}")

    async def _run_all(
        self,
        config: LoadedEvalConfig,
        eval_sets: list[LoadedEvalSet],
        records: dict[str, EvalSetRecord],
        app: Any,
        root_agent: Any,
        num_runs: int,
    ) -> None:
        manager = InMemoryEvalSetsManager()
        app_name = self.suite.agent_dir.name if self.suite.agent_dir else self.suite.name
        for loaded in eval_sets:
            _add_eval_set(manager, app_name, loaded.eval_set)
        registry = register_custom_metrics_from_config(
            config.eval_config, MetricEvaluatorRegistry()
        )
        eval_metrics = get_eval_metrics_from_config(config.eval_config)
        session_service = InMemorySessionService()
        handler = _JudgeFailureHandler(level=logging.WARNING)
        judge_logger = logging.getLogger("google_adk.google.adk.evaluation.llm_as_judge")
        judge_logger.addHandler(handler)
        # ADK logs judge failures at WARNING; keep them for the reasons, not the console.
        saved = (judge_logger.level, judge_logger.propagate)
        judge_logger.setLevel(logging.WARNING)
        judge_logger.propagate = False
        try:
            for run in range(1, num_runs + 1):
                await self._one_run(
                    run,
                    manager,
                    app_name,
                    app,
                    root_agent,
                    registry,
                    eval_metrics,
                    session_service,
                    eval_sets,
                    records,
                    config,
                )
        finally:
            judge_logger.removeHandler(handler)
            judge_logger.setLevel(saved[0])
            judge_logger.propagate = saved[1]

    async def _one_run(
        self,
        run: int,
        manager: InMemoryEvalSetsManager,
        app_name: str,
        app: Any,
        root_agent: Any,
        registry: MetricEvaluatorRegistry,
        eval_metrics: list[EvalMetric],
        session_service: InMemorySessionService,
        eval_sets: list[LoadedEvalSet],
        records: dict[str, EvalSetRecord],
        config: LoadedEvalConfig,
    ) -> None:
        service = LocalEvalService(
            root_agent=root_agent,
            eval_sets_manager=manager,
            session_service=session_service,
            metric_evaluator_registry=registry,
            app=app,
        )
        inference_config = InferenceConfig(parallelism=self.settings.parallelism)
        inferences: list[InferenceResult] = []
        for loaded in eval_sets:
            request = InferenceRequest(
                app_name=app_name,
                eval_set_id=loaded.eval_set.eval_set_id,
                inference_config=inference_config,
            )
            async for result in service.perform_inference(request):
                inferences.append(result)
        semaphore = asyncio.Semaphore(self.settings.parallelism)

        async def evaluate(inference: InferenceResult) -> None:
            async with semaphore:
                await self._evaluate_inference(
                    run,
                    inference,
                    root_agent,
                    app,
                    manager,
                    registry,
                    session_service,
                    eval_metrics,
                    records,
                    config,
                )

        await asyncio.gather(*(evaluate(i) for i in inferences))

    async def _evaluate_inference(
        self,
        run: int,
        inference: InferenceResult,
        root_agent: Any,
        app: Any,
        manager: InMemoryEvalSetsManager,
        registry: MetricEvaluatorRegistry,
        session_service: InMemorySessionService,
        eval_metrics: list[EvalMetric],
        records: dict[str, EvalSetRecord],
        config: LoadedEvalConfig,
    ) -> None:
        eval_set_record = records[inference.eval_set_id]
        case = next(c for c in eval_set_record.eval_cases if c.eval_id == inference.eval_case_id)
        if inference.status == InferenceStatus.FAILURE:
            message = f"inference failed: {inference.error_message}"
            case.runs.append(RunRecord(run=run, status=CaseStatus.ERROR, error=message))
            self.record.errors.append(
                _error(
                    "inference",
                    message,
                    self.suite.name,
                    file=eval_set_record.file,
                    eval_set_id=inference.eval_set_id,
                    eval_id=inference.eval_case_id,
                )
            )
            return
        args = {
            "root_agent": root_agent,
            "eval_sets_manager": manager,
            "session_service": session_service,
            "app": app,
        }
        result, recorder, error = await _evaluate_one(args, registry, inference, eval_metrics)
        if result is None:
            case.runs.append(RunRecord(run=run, status=CaseStatus.ERROR, error=error))
            self.record.errors.append(
                _error(
                    "metric",
                    f"evaluation failed: {error}",
                    self.suite.name,
                    file=eval_set_record.file,
                    eval_set_id=inference.eval_set_id,
                    eval_id=inference.eval_case_id,
                )
            )
            return
        case.runs.append(run_record_from_adk(result, run, config.metric_meta, recorder.reasons))
        case.runs.sort(key=lambda r: r.run)


def infer_directions(record: SuiteRecord, explicit: set[str]) -> None:
    """Marks a custom metric lower-is-better when its evaluator's statuses say so.

    ADK's MetricInfo has no direction, but a custom metric decides pass/fail itself: a run
    that passed with a score below its threshold (or failed above it) is evidence of a
    lower-is-better metric. Metrics named in ``higher_is_better`` of adk-eval.yaml and
    prebuilt metrics keep their direction.
    """
    runs = [r for s in record.eval_sets for c in s.eval_cases for r in c.runs]
    evidence: dict[str, int] = {}
    for metric in (m for r in runs for m in r.metrics):
        if metric.metric_name in explicit or metric.metric_name in _prebuilt_metrics():
            continue
        if metric.score is None or metric.threshold is None or metric.score == metric.threshold:
            continue
        above = metric.score > metric.threshold
        if metric.status.value in ("passed", "failed"):
            lower = above == (metric.status.value == "failed")
            evidence[metric.metric_name] = evidence.get(metric.metric_name, 0) + (
                1 if lower else -1
            )
    for metric in (m for r in runs for m in r.metrics):
        if evidence.get(metric.metric_name, 0) > 0:
            metric.higher_is_better = False


def _prebuilt_metrics() -> frozenset[str]:
    """Names of the metrics google-adk ships."""
    return frozenset(m.metric_name for m in adk_metrics())


def _add_eval_set(manager: InMemoryEvalSetsManager, app_name: str, eval_set: EvalSet) -> None:
    manager.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        manager.add_eval_case(app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case)


def evaluate_suite(suite: Suite, settings: EngineSettings, console: Console = print) -> SuiteRecord:
    """Evaluates one suite with google-adk and returns its record.

    Never raises for a problem in the user's files: config, eval set, agent, inference and
    metric failures become :class:`ErrorRecord` entries and every other result is kept.
    """
    return _SuiteRun(suite, settings, console).run()

"""The pieces of a suite's evaluation with google-adk: loading it, one eval case run
(inference, then its metrics at once), and recording the outcomes. :mod:`.scheduler` puts
them together for all suites in one work pool.

The flow per suite mirrors ``adk eval`` (google.adk.cli.cli_tools_click.cli_eval) through
the one harness (:mod:`adk_eval_action.adk.evaluate.harness`): load the eval config and eval sets
(:mod:`.prepare`), import the agent (:mod:`.agent`), then run each eval case and evaluate
its metrics as soon as its inference ends. What is added:

* ``num_runs`` repeats inference and evaluation of every case and keeps every run.
* Why a metric was not evaluated is kept (:mod:`.recording`), and one error record per
  (metric, reason) says so.
* A custom metric's direction is inferred from its own pass/fail decisions
  (:func:`infer_directions`).

Results are placed in the eval sets' and cases' order, whatever order the runs finish in.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from google.adk.evaluation.base_eval_service import InferenceStatus
from pydantic import BaseModel, Field

from adk_eval_action.adk.compat import judge_prompt_text
from adk_eval_action.adk.evaluate.harness import CaseEvaluation, SuiteHarness
from adk_eval_action.adk.evaluate.thoughts import adk_scores_thoughts, thoughts_note
from adk_eval_action.adk.files.convert import (
    MetricMeta,
    case_record,
    judge_model,
)
from adk_eval_action.adk.files.criteria import judge_options
from adk_eval_action.adk.files.evalconfig import LoadedEvalConfig, adk_metrics
from adk_eval_action.adk.files.evalsets import LoadedEvalSet, only_cases
from adk_eval_action.adk.files.prepare import SharedInputs, SuiteInputs, load_suite_inputs
from adk_eval_action.adk.runtime.agent import AgentLoadError
from adk_eval_action.adk.runtime.case_failures import classify_inference_failure, failure_slot
from adk_eval_action.adk.runtime.model_faults import (
    REFRESH_HINT,
    UNKNOWN_MODEL_HINT,
    is_refresh_failure,
    is_unknown_model,
)
from adk_eval_action.adk.runtime.spend import case_usage
from adk_eval_action.errors import describe_exception
from adk_eval_action.project.discovery import Suite, relative_path
from adk_eval_action.results.agentdetails import share_suite
from adk_eval_action.results.judgesetup import JudgeSetup
from adk_eval_action.results.model import (
    CaseStatus,
    ErrorRecord,
    EvalCaseRecord,
    EvalSetRecord,
    RunRecord,
    SuiteRecord,
)
from adk_eval_action.results.records import (
    lower_is_better_votes,
    mark_lower_is_better,
    metric_errors,
)
from adk_eval_action.results.shards import ShardSpec
from adk_eval_action.results.stream import CaseRunDone, SuiteClosed
from adk_eval_action.results.usage import merge_usage

log = logging.getLogger(__name__)


class EngineSettings(BaseModel):
    """Settings of one evaluation: ``num_runs`` (repeats of every case unless the suite
    says otherwise), ``parallelism`` (eval case runs in flight at once, each one inference
    then its metrics), ``repo_root`` (importable, and what record paths are relative to),
    ``model_limits`` (``max_concurrency`` by model name), ``shard`` (evaluate only that
    shard of the plan) and ``latency_s`` (seconds per model call the plan's estimate
    assumes); ``eval_case_ids``, when given, limits the run to those eval ids per eval set
    id (eval sets not named are left out): adaptive repeats run only the cases they pick."""

    num_runs: int = 1
    parallelism: int = 4
    repo_root: Path = Path(".")
    eval_case_ids: dict[str, list[str]] | None = None
    model_limits: dict[str, int] = Field(default_factory=dict)
    shard: ShardSpec | None = None
    latency_s: float = 1.0
    #: The run's gate sets ``not_evaluated``, which then decides the metrics whose judge
    #: model answered off-format (error kind ``metric``, not ``judge_answer``), decided
    #: here, once, where the errors are recorded (``results.records.metric_errors``).
    judge_answers_counted: bool = False


@dataclass(frozen=True)
class CaseRun:
    """One unit of work: run number ``run`` (from 1) of eval case ``case`` of
    ``eval_set``. The records are where the outcome goes; ``position`` is its place in the
    suite's order (runs outermost, then eval sets, then cases)."""

    eval_set: EvalSetRecord
    case: EvalCaseRecord
    run: int
    position: int = 0


@dataclass(frozen=True)
class CaseRunOutcome:
    """What one :class:`CaseRun` produced: its run record, an error record when the
    inference or the whole evaluation failed, ``fault`` (error kind, cause) when a model
    could not be reached (summed up per suite by :func:`model_errors`), ADK's judge warnings
    worth showing, and how many thought parts were left out of what its metrics saw
    (:mod:`.thoughts`), and where the agent's own code raised."""

    item: CaseRun
    run: RunRecord
    error: ErrorRecord | None = None
    fault: tuple[str, str] | None = None
    warnings: list[str] = field(default_factory=list)
    thoughts: int = 0
    #: Where the agent's own code raised, when it did (repository-relative path, line).
    raised_at: tuple[str, int] | None = None


class ErrorPlace(TypedDict):
    """Where the error record of an eval case run points: its suite, eval set file, eval
    set and eval case (the fields of :class:`ErrorRecord` of the same names)."""

    suite: str
    file: str | None
    eval_set_id: str
    eval_id: str


def suite_record(suite: Suite, inputs: SuiteInputs, repo_root: Path) -> SuiteRecord:
    """The record of a suite before any case ran: files, eval config (as ADK parsed it),
    judge models, the eval sets with their cases (no runs yet), load errors, warnings."""

    def rel(path: Path | None) -> str | None:
        return None if path is None else relative_path(path, repo_root)

    record = SuiteRecord(
        name=suite.name,
        agent=rel(suite.agent_dir),
        eval_config_file=rel(suite.eval_config_path),
        errors=list(inputs.errors),
        warnings=list(suite.warnings),
    )
    config = inputs.config
    if config is None:
        return record
    record.warnings.extend(config.warnings)
    record.warnings.extend(w for loaded in inputs.eval_sets for w in loaded.warnings)
    record.eval_config_hash = config.content_hash
    record.eval_config = config.recorded()
    record.judge_models = _judge_models(config)
    record.judge_setup = judge_setup(config)
    record.eval_sets = [_eval_set_record(loaded, rel) for loaded in inputs.eval_sets]
    share_suite(record)  # an eval set's expected invocations may carry app_details too
    return record


def _judge_models(config: LoadedEvalConfig) -> dict[str, str]:
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config

    metrics = get_eval_metrics_from_config(config.eval_config)
    return {m.metric_name: judge for m in metrics if (judge := judge_model(m))}


def judge_setup(config: LoadedEvalConfig) -> dict[str, JudgeSetup]:
    """Each judge metric's samples (its criterion's ``judge_model_options``, ADK's default
    filled in) and prompt version (the first 12 hex digits of the SHA-256 of the prompt
    templates of google-adk's evaluator: :func:`~adk_eval_action.adk.compat.judge_prompt_text`;
    None for a metric without them)."""
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config

    found = {}
    for metric in get_eval_metrics_from_config(config.eval_config):
        options = judge_options(metric)
        if options is None:
            continue
        text = judge_prompt_text(metric.metric_name)
        prompt = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12] if text else None
        found[metric.metric_name] = JudgeSetup(num_samples=options.num_samples, prompt=prompt)
    return found


def _eval_set_record(
    loaded: LoadedEvalSet, rel: Callable[[Path | None], str | None]
) -> EvalSetRecord:
    return EvalSetRecord(
        eval_set_id=loaded.eval_set.eval_set_id,
        file=rel(loaded.path),
        shape=loaded.shape,
        content_hash=loaded.content_hash,
        eval_cases=[
            case_record(c, loaded.eval_id_lines.get(c.eval_id))
            for c in loaded.eval_set.eval_cases
        ],
    )


def case_runs(record: SuiteRecord, num_runs: int) -> list[CaseRun]:
    """Every (eval set, eval case, run) of a suite, runs outermost: the order work starts
    in and results are placed in."""
    pairs = [(s, c) for s in record.eval_sets for c in s.eval_cases]
    return [
        CaseRun(eval_set, case, run, (run - 1) * len(pairs) + index)
        for run in range(1, num_runs + 1)
        for index, (eval_set, case) in enumerate(pairs)
    ]


async def run_case(
    harness: SuiteHarness,
    item: CaseRun,
    suite: str,
    metric_meta: dict[str, MetricMeta],
    repo_root: Path = Path("."),
) -> CaseRunOutcome:
    """Runs one eval case once (inference, then its metrics at once) and converts the
    outcome, with what its model calls used (:func:`~.spend.case_usage`). Never raises for
    the agent's or a metric's sake."""
    where: ErrorPlace = {
        "suite": suite,
        "file": item.eval_set.file,
        "eval_set_id": item.eval_set.eval_set_id,
        "eval_id": item.case.eval_id,
    }
    with case_usage() as usage:
        with failure_slot() as slot:
            inference = await harness.infer(item.eval_set.eval_set_id, item.case.eval_id)
        if inference.status == InferenceStatus.FAILURE:
            outcome = _failed_inference(
                item, slot.error, inference.error_message or "", repo_root, where
            )
        else:
            outcome = evaluation_outcome(
                item, await harness.evaluate(inference), metric_meta, where
            )
    prices = harness.calls.spend.prices if harness.calls is not None else {}
    outcome.run.usage = usage.records(prices) or None
    return outcome


def evaluation_outcome(
    item: CaseRun,
    evaluation: CaseEvaluation,
    metric_meta: dict[str, MetricMeta],
    where: ErrorPlace,
) -> CaseRunOutcome:
    """The outcome of one eval case run's evaluation: its run record, or an ``inference``
    error when ADK refused to evaluate the case at all (``where``: the error's suite, file,
    eval set and eval id), an ``internal`` one when the result cannot be recorded, and the
    model fault of a judge that could not be reached."""
    if evaluation.result is None:
        # ADK raised for the whole eval case (a metric's own fault is caught per metric,
        # adk.evaluate.recording): no metric was scored, so the run is incomplete, never a verdict.
        message = f"ADK could not evaluate the eval case's metrics: {evaluation.error}"
        error = ErrorRecord(kind="inference", message=message, **where)
        run = RunRecord(
            run=item.run, status=CaseStatus.ERROR, error=message, error_kind="inference"
        )
        return CaseRunOutcome(item, run, error)
    try:
        run = evaluation.run_record(item.run, metric_meta)
    except Exception as e:  # noqa: BLE001 - a bug of ours on one case (agent output too deep
        # to store, ...): that case is an internal error with its file and id, not the suite
        message = f"internal error: {describe_exception(e)}"
        error = ErrorRecord(kind="internal", message=message, hint="please report this as a "
                            "bug", **where)
        return CaseRunOutcome(
            item, RunRecord(run=item.run, status=CaseStatus.ERROR, error=message), error)
    warnings, thoughts = evaluation.recorder.warnings, evaluation.recorder.thoughts
    if evaluation.model_error is None:
        return CaseRunOutcome(item, run, warnings=warnings, thoughts=thoughts)
    # A judge could not be reached: the scores it gave stay, the run is incomplete. The
    # metric's error names the judge, the metric and the cases (results.records
    # .metric_errors); only a budget that stopped the call is the suite's summary's.
    fault = evaluation.model_error
    run.status, run.error_kind = CaseStatus.ERROR, fault.error_kind
    run.error = str(fault)
    summed = (fault.error_kind, fault.cause) if fault.error_kind == "budget" else None
    return CaseRunOutcome(item, run, fault=summed, warnings=warnings, thoughts=thoughts)


def _failed_inference(
    item: CaseRun,
    error: BaseException | None,
    message: str,
    repo_root: Path,
    where: ErrorPlace,
) -> CaseRunOutcome:
    """A failed inference's outcome (adk.runtime.case_failures): a model or credentials error
    (summed up per suite), an inference error, or a failure of the agent's own code."""
    failure = classify_inference_failure(error, message, repo_root)
    run = RunRecord(
        run=item.run, status=failure.status, error=failure.message, error_kind=failure.kind
    )
    if failure.kind is not None and failure.cause is not None:
        return CaseRunOutcome(item, run, fault=(failure.kind, failure.cause))
    if failure.kind is not None:
        record = ErrorRecord(kind=failure.kind, message=failure.message, **where)
        return CaseRunOutcome(item, run, record)
    return CaseRunOutcome(item, run, raised_at=failure.raised_at)


def case_run_done(suite: str, outcome: CaseRunOutcome) -> CaseRunDone:
    """A finished case run as the evaluation hands it over (:mod:`adk_eval_action.results
    .stream`)."""
    item = outcome.item
    return CaseRunDone(suite=suite, eval_set_id=item.eval_set.eval_set_id,
                       eval_id=item.case.eval_id, position=item.position, run=outcome.run,
                       error=outcome.error)


def suite_closed(record: SuiteRecord, outcomes: Iterable[CaseRunOutcome],
                 explicit_directions: set[str] | None = None,
                 judge_answers_counted: bool = False) -> SuiteClosed:
    """What a suite's finished ``outcomes`` (in the suite's order of work; their runs
    already in ``record``) sum up to: the metric and model error records
    (:func:`metric_errors`, :func:`model_errors`), their tokens, the suite's warnings
    (ADK's judge warnings, with the case; the note on thought parts left out:
    :func:`~.thoughts.thoughts_note`), and, with ``explicit_directions`` (the metrics whose
    direction adk-eval.yaml gives), the custom metrics found lower-is-better
    (:func:`lower_is_better`); ``judge_answers_counted``: :class:`EngineSettings`."""
    outcomes = list(outcomes)
    found = [f"eval case `{o.item.case.eval_id}`: {w}" for o in outcomes for w in o.warnings]
    thoughts = [o.thoughts for o in outcomes if o.thoughts]
    if thoughts and adk_scores_thoughts():
        found.append(thoughts_note(sum(thoughts), len(thoughts)))
    return SuiteClosed(
        suite=record.name,
        errors=(*metric_errors(record, judge_answers_counted), *model_errors(record, outcomes)),
        # Said on the console with the results' other warnings (run.pipeline).
        warnings=tuple(dict.fromkeys(found)),
        usage=tuple(merge_usage(*(o.run.usage or [] for o in outcomes))),
        lower_is_better=frozenset(lower_is_better(record, explicit_directions))
        if explicit_directions is not None else frozenset(),
    )


_FAULT_TEXT = {
    "model": ("could not reach the model",
              "no score was recorded for them; see model_retries in docs/action.md"),
    "credentials": ("had no usable credentials",
                    "no score was recorded for them; see Model credentials in docs/action.md"),
    "budget": ("were stopped by the run's budget",
               "their calls were not made; raise the budget or evaluate fewer eval cases "
               "(docs/scaling.md, \"Cost and budgets\")"),
}
"""What a suite's summary of case runs without scores says per kind, and its hint."""


def model_errors(record: SuiteRecord, outcomes: Iterable[CaseRunOutcome]) -> list[ErrorRecord]:
    """One error record per kind (``model``, ``credentials``) saying how many case runs
    could not reach the model and why, e.g. "4 of 4 case runs could not reach the model
    (503 UNAVAILABLE ×4)", instead of one per case run. A model the API answered 404
    NOT_FOUND for (kind ``agent``, ``judge`` or ``config``: :attr:`ModelCallError.error_kind`)
    is named instead: "4 of 4 case runs named a model the API does not know (404 NOT_FOUND:
    agent model `gemini-2.5-flsh` is unknown to the API ×4)", with what to check."""
    causes: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        if outcome.fault is not None:
            causes.setdefault(outcome.fault[0], Counter())[outcome.fault[1]] += 1
    runs = sum(len(c.runs) for s in record.eval_sets for c in s.eval_cases)
    errors = []
    for kind, counted in causes.items():
        what, hint = _FAULT_TEXT.get(kind, _FAULT_TEXT["model"])
        if all(map(is_unknown_model, counted)):
            # Not an outage: the name is wrong or not offered; no retry would have helped.
            what, hint = "named a model the API does not know", UNKNOWN_MODEL_HINT
        listed = ", ".join(f"{cause} ×{n}" if n > 1 else cause for cause, n in counted.items())
        if any(map(is_refresh_failure, counted)):
            listed += f"; {REFRESH_HINT}"
        errors.append(
            ErrorRecord(
                kind=kind,
                message=f"{sum(counted.values())} of {runs} case runs {what} ({listed})",
                suite=record.name,
                hint=hint,
            )
        )
    return errors


def agent_error(
    record: SuiteRecord, error: AgentLoadError | str, repo_root: Path = Path(".")
) -> SuiteRecord:
    """Records in ``record`` (not yet handed over) that the suite's agent could not be had
    (:func:`agent_error_record`)."""
    record.errors.append(agent_error_record(record, error, repo_root))
    return record


def agent_error_record(
    record: SuiteRecord, error: AgentLoadError | str, repo_root: Path = Path(".")
) -> ErrorRecord:
    """The error of a suite whose agent could not be had (its cases get no runs): an import
    error's file and line inside the agent folder (``repo_root`` relative; else the agent
    folder), for an annotation on that line; a str is a reason without a place."""
    message = str(error)
    if isinstance(error, str):
        error = AgentLoadError(message)
    made = ErrorRecord(
        kind="agent",
        message=message,
        suite=record.name,
        file=record.agent if error.path is None else relative_path(error.path, repo_root),
        line=error.line,
        hint=error.hint,
    )
    # Said once, with the run's other errors (run.console, the action's annotations).
    return made


def open_suite(
    suite: Suite, settings: EngineSettings, shared: SharedInputs | None = None,
) -> tuple[SuiteRecord, SuiteInputs]:
    """Loads a suite's files and makes its record (runs: the suite's ``num_runs``, else
    the settings', once its eval config loaded), logging what it found. ``shared``: the
    files are read through it (``plan``: suites of the same files share what they load,
    and its notes are said once)."""
    agent = relative_path(suite.agent_dir, settings.repo_root) if suite.agent_dir else None
    # Where a discovered suite came from: the repository's own command or test.
    log.info("suite %s: agent %s%s", suite.name, agent,
             f" ({suite.source})" if suite.source else "")
    inputs, new = (shared(suite) if shared is not None
                   else (load_suite_inputs(suite, settings.repo_root), True))
    if settings.eval_case_ids is not None:
        chosen = only_cases(inputs.eval_sets, settings.eval_case_ids)
        inputs = inputs.model_copy(update={"eval_sets": chosen})
    # The config's lint warnings are printed once, with the results (run.pipeline).
    for note in inputs.notes if new else ():
        log.info("note: %s", note)
    record = suite_record(suite, inputs, settings.repo_root)
    if inputs.config is not None:
        record.num_runs = suite.num_runs or settings.num_runs
    return record, inputs


def infer_directions(record: SuiteRecord, explicit: set[str]) -> None:
    """Marks the metrics :func:`lower_is_better` finds in ``record`` (in place: a record
    re-scoring made for itself, ``adk.evaluate.rescore``)."""
    mark_lower_is_better(record, lower_is_better(record, explicit))


def lower_is_better(record: SuiteRecord, explicit: set[str]) -> set[str]:
    """The custom metrics whose evaluators' statuses say lower is better
    (:func:`~adk_eval_action.results.records.lower_is_better_votes`). Metrics named in
    ``higher_is_better`` of adk-eval.yaml (``explicit``) and ADK's prebuilt metrics keep
    their direction."""
    prebuilt = frozenset(m.metric_name for m in adk_metrics())
    votes = lower_is_better_votes(record)
    return {n for n, v in votes.items() if v > 0 and n not in explicit | prebuilt}

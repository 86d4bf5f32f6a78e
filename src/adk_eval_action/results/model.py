"""The results file: a versioned, self-describing record of one evaluation run.

Shape (``schema_version`` 2)::

    RunResults
      complete            false when errors kept scores from being computed (exit 2)
      metadata            git sha/ref, google-adk and tool versions, timestamps
      suites[]            one per (agent, eval config)
        agent_details     each agent's details (instructions, tool declarations) once, by
                          key; the invocations' app_details refer to them
        agents            the agent tree as loaded: models, generate configs, sub-agents
        eval_sets[]       file, eval_set_id, content hash, shape it was loaded from
          eval_cases[]    eval_id, line of the eval_id in the file, expected invocations
            runs[]        one per repeat (--num-runs); status, error, actual invocations
              metrics[]   score, status, threshold, value range, per-invocation scores,
                          per-rubric id/text/score/rationale
        errors[]          config, eval set, agent, inference and metric errors
      errors[]            errors that belong to no suite
      shard               set in one part of a sharded run (run --shard K/N): which shard
                          of which plan; absent in a whole run and in merged results

Version 2 keeps each agent's details once per suite (:mod:`.agentdetails`); version 1
repeated them in every invocation, and its files are still read (their details are then
shared as they load).

Scores are in the metric's own range (``min_value``..``max_value``). Every number shown in
the PR comment can be recomputed from this file. ADK's own
``.adk/eval_history/*.evalset_result.json`` files load into the same model
(:func:`adk_eval_action.results.io.load_results`), so they can serve as a baseline.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import math
from enum import Enum
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.judgenoise import JudgeNoise
from adk_eval_action.results.judgesetup import JudgeSetup
from adk_eval_action.results.usage import (
    ModelUsage,
    by_model,
    total_tokens,
    total_usd,
    unpriced_models,
)

SCHEMA_VERSION = 2
#: The results file's name when none is given (the ``results_path`` setting), and the
#: member a baseline artifact holds.
RESULTS_FILE_NAME = "adk-eval-results.json"
#: The versions a file may have; older ones are brought to :data:`SCHEMA_VERSION` as they
#: load (results.io).
READABLE_SCHEMA_VERSIONS = (1, 2)


class _Status(str, Enum):
    """A status whose text is its value: Python 3.11 prints a ``(str, Enum)`` member as
    ``CaseStatus.FAILED``, which a user's comment template showed (``{{ c.head_status }}``)."""

    def __str__(self) -> str:
        return str(self.value)


class MetricStatus(_Status):
    """Status of one metric for one run of one eval case.

    ``passed``/``failed``/``informational`` are the statuses ADK's evaluator gave
    (google.adk.evaluation.evaluator.EvalStatus). ``not_evaluated`` is ADK's NOT_EVALUATED
    (a judge that failed or gave no usable verdict, a rubric left without one), with the
    reason when known; ``error`` is a metric that raised (judge not found, import error, no
    rubrics) or gave a non-finite score. Neither of the last two is ever a pass nor averaged
    in as 0.
    """

    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"
    INFORMATIONAL = "informational"
    ERROR = "error"


class CaseStatus(_Status):
    """Status of one run of an eval case (or of a case over its runs), by the one rule of
    :mod:`adk_eval_action.results.status`."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"
    ERROR = "error"


class RubricScoreRecord(BaseModel):
    """One rubric's verdict. ``score`` is 1.0 (yes) or 0.0 (no) per judge sample in ADK, a
    mean when aggregated over invocations; None when the judge gave no verdict, and then
    ``reason`` says why (the judge left it out, answered neither yes nor no, failed, …):
    the rubric is not evaluated and its metric cannot pass on it."""

    rubric_id: str
    text: str | None = None
    type: str | None = None
    score: float | None = None
    rationale: str | None = None
    reason: str | None = None


AVERAGED_STATUSES = (MetricStatus.PASSED, MetricStatus.FAILED, MetricStatus.INFORMATIONAL)
"""Statuses whose score goes into means (compare's rules)."""


def finite_score(
    score: float | None, status: MetricStatus, reason: str | None
) -> tuple[float | None, MetricStatus, str | None]:
    """``(score, status, reason)`` with a non-finite score (NaN, infinity: a custom metric's
    bug, or a hand-edited file) dealt with: where it would be averaged the result becomes an
    ``error`` with a reason saying so; on a result already not evaluated or an error it is
    just no score. Finite scores pass unchanged. Applied when results are recorded (so the
    results file says it) and when they are compared (so a hand-edited file cannot crash
    compare or poison a mean)."""
    if score is None or math.isfinite(score):
        return score, status, reason
    if status in AVERAGED_STATUSES:
        return None, MetricStatus.ERROR, f"non-finite score {score!r}: fix the metric's code"
    return None, status, reason


RANGE_TOLERANCE = 1e-9
"""How far (relative to the range's span, at least 1) a score may lie outside its metric's
value range and still count as in it: float rounding, never a real excess."""


def out_of_range(
    score: float | None, min_value: float | None, max_value: float | None
) -> str | None:
    """Why a finite ``score`` lies outside its metric's value range (ADK's
    ``MetricValueInfo.interval``, recorded as ``min_value``/``max_value``), or None when it
    does not, has no score or no recorded range."""
    if score is None or not math.isfinite(score):
        return None
    span = (max_value - min_value) if min_value is not None and max_value is not None else 1.0
    slack = RANGE_TOLERANCE * max(1.0, abs(span))
    if (min_value is not None and score < min_value - slack) or (
        max_value is not None and score > max_value + slack
    ):
        return f"score {score!r} is outside its value range [{min_value}, {max_value}]"
    return None


def usable_score(
    score: float | None,
    status: MetricStatus,
    reason: str | None,
    min_value: float | None,
    max_value: float | None,
) -> tuple[float | None, MetricStatus, str | None]:
    """:func:`finite_score`, and a score outside the metric's value range (a custom metric
    returning 5.0 where it declared ``[0, 1]``) dealt with the same way: where it would be
    averaged the result becomes an ``error`` (the metric's code failed). Applied when a run
    records results, so a results file never holds a scored result outside its range (and
    :mod:`adk_eval_action.results.input_checks` refuses one that does)."""
    score, status, reason = finite_score(score, status, reason)
    beyond = out_of_range(score, min_value, max_value)
    if beyond and status in AVERAGED_STATUSES:
        return None, MetricStatus.ERROR, f"{beyond}: fix the metric's code"
    return score, status, reason


class InvocationScore(BaseModel):
    """A metric's score for one invocation (turn) of an eval case."""

    index: int
    invocation_id: str = ""
    score: float | None = None
    status: MetricStatus
    rubrics: list[RubricScoreRecord] = Field(default_factory=list)


class MetricResult(BaseModel):
    """One metric's result for one run of one eval case."""

    metric_name: str
    score: float | None = None
    status: MetricStatus
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    informational: bool = False
    reason: str | None = None
    judge_model: str | None = None
    rubrics: list[RubricScoreRecord] = Field(default_factory=list)
    invocations: list[InvocationScore] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class RunRecord(BaseModel):
    """One run (repeat) of one eval case. ``run`` counts from 1.

    ``error`` says why the run has no (or not all) scores; ``error_kind`` is the kind of that
    error (an :class:`ErrorRecord` kind: ``model`` when the model could not be reached after
    the retries, ``credentials``, ``inference``), None for a run that failed on its own
    behaviour (an exception in the agent's code is a failure of the case, not an error).
    """

    run: int = 1
    status: CaseStatus
    error: str | None = None
    error_kind: str | None = None
    metrics: list[MetricResult] = Field(default_factory=list)
    session_id: str | None = None
    #: The invocations ADK's evaluators received, each an ADK ``Invocation`` as JSON whose
    #: ``app_details.agent_details`` name keys of the suite's ``agent_details``.
    actual_invocations: list[dict[str, Any]] | None = None
    #: What this run's model calls used, per (model, role): the agent's, its judges' and the
    #: user simulator's (:mod:`adk_eval_action.results.usage`); absent in files written
    #: before tokens were recorded.
    usage: list[ModelUsage] | None = None

    def agent_tokens(self) -> int | None:
        """The agent's own tokens in this run, or None when unknown (not recorded, or a
        call of the agent reported no usage)."""
        agent = self._agent_usage()
        return None if agent is None else total_tokens(agent)

    def agent_usd(self) -> float | None:
        """The dollars of the agent's own tokens in this run, or None when unknown (as
        :meth:`agent_tokens`, or a model of the agent has no price)."""
        agent = self._agent_usage()
        if agent is None or any(u.usd is None for u in agent):
            return None
        return total_usd(agent)

    def _agent_usage(self) -> list[ModelUsage] | None:
        agent = [u for u in self.usage or [] if u.role == "agent"]
        return None if not agent or any(u.unreported for u in agent) else agent


class EvalCaseRecord(BaseModel):
    """All runs of one eval case.

    ``expected_invocations`` are the eval case's conversation as ADK's evaluators received
    it (``expected_invocations`` of ``Evaluator.evaluate_invocations``: the eval set's
    turns, after rubric defaults), each an ADK ``Invocation`` as JSON; None for a
    ``conversation_scenario`` case (nothing is expected) and in files written before they
    were recorded. With the runs' ``actual_invocations`` they are what the comment's
    evidence (expected vs actual tool calls and responses) is computed from."""

    eval_id: str
    line: int | None = None
    expected_invocations: list[dict[str, Any]] | None = None
    runs: list[RunRecord] = Field(default_factory=list)


class EvalSetRecord(BaseModel):
    """One eval set file and its cases. ``file`` is relative to the repository root."""

    eval_set_id: str
    file: str | None = None
    shape: str | None = None
    content_hash: str | None = None
    eval_cases: list[EvalCaseRecord] = Field(default_factory=list)


ErrorKind = Literal[
    "config",
    "eval_set",
    "agent",
    "credentials",
    "model",
    "judge",
    "custom_metric",
    "inference",
    "metric",
    "metric_code",
    "judge_answer",
    "baseline",
    "internal",
    "interrupted",
    "output",
    "budget",
]

INCOMPLETE_ERROR_KINDS = frozenset(get_args(ErrorKind)) - {"metric", "baseline"}
"""Error kinds that kept scores from being computed: a run with any of them is incomplete
(exit 2), whatever the gate says of the scores that were computed. ``metric`` (a metric not
evaluated, counted by the gate's ``not_evaluated`` rule) and ``baseline`` are not."""


class ErrorRecord(BaseModel):
    """An error, with where it happened and what to do about it.

    Kinds: ``config`` (adk-eval.yaml, an eval config), ``eval_set``, ``agent`` (does not
    import, or names a model no registry knows), ``credentials`` (no or refused model
    credentials), ``model`` (the model service could not be reached after the retries),
    ``judge`` (a judge model that cannot be set up), ``custom_metric`` (a custom metric
    function that does not import), ``inference`` (ADK could not run a case, or evaluate
    its metrics, for another reason), ``metric`` (a metric ADK's evaluator left NOT_EVALUATED),
    ``metric_code`` (a metric that raised while scoring, gave a non-finite score or no
    per-invocation result per invocation: its code failed, not the agent),
    ``judge_answer`` (a rubric metric left NOT_EVALUATED because the judge model's answer
    gave no usable verdict: the judge's fault, not the agent's), ``baseline``,
    ``internal`` (a bug here), ``interrupted`` (a signal), ``budget`` (the run's budget
    was spent, or the plan needed more than it: calls were not made). ``file`` is relative
    to the repository root; ``line`` (from 1) is set when the place in it is known (an
    agent's import error), for the annotation.
    """

    kind: ErrorKind
    message: str
    file: str | None = None
    line: int | None = None
    suite: str | None = None
    eval_set_id: str | None = None
    eval_id: str | None = None
    metric: str | None = None
    hint: str | None = None


class SuiteRecord(BaseModel):
    """One suite: an agent evaluated on some eval sets under one eval config."""

    name: str
    agent: str | None = None
    eval_config_file: str | None = None
    eval_config_hash: str | None = None
    eval_config: dict[str, Any] | None = None
    #: Set on a baseline suite re-scored under the head's eval config
    #: (:mod:`adk_eval_action.adk.evaluate.rescore`; ``eval_config`` is then the head's): the eval
    #: config its runs were recorded under, whose thresholds the comparison sets beside
    #: the head's (:mod:`adk_eval_action.analysis.gatechanges`).
    recorded_eval_config: dict[str, Any] | None = None
    judge_models: dict[str, str] = Field(default_factory=dict)
    #: Each judge metric's samples and prompt version (:mod:`.judgesetup`); None in older files.
    judge_setup: dict[str, JudgeSetup] | None = None
    num_runs: int = 1
    #: Each distinct ADK ``AgentDetails`` (an agent's name, instructions and tool
    #: declarations, as JSON) of the suite's invocations, once, by the key their
    #: ``app_details.agent_details`` give (:mod:`adk_eval_action.results.agentdetails`).
    agent_details: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: The agent tree as imported (models, generate configs: :mod:`.agenttree`); None in
    #: files written before it was recorded, and when the agent did not import.
    agents: list[AgentRecord] | None = None
    #: Set when this suite was not evaluated but taken from the baseline (``--changed-only``:
    #: nothing it depends on changed): the commit the baseline was recorded at.
    reused_from: str | None = None
    eval_sets: list[EvalSetRecord] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    #: What the suite's case runs' model calls used in this run, per (model, role): the sum
    #: of its runs' ``usage`` (None in files written before tokens were recorded, and for a
    #: suite reused from the baseline, whose runs keep what the baseline's run used).
    usage: list[ModelUsage] | None = None


class ModelCallCounts(BaseModel):
    """The model calls of a run (agents, judges, user simulators), as retried by the run.

    Attributes:
        calls: Model calls made (a call with retries counts once).
        retried_calls: Calls that needed at least one retry.
        retries: Extra attempts, all calls together.
        failed_calls: Calls that failed for good (retries used up, or not retryable).
        retry_causes: Retries by cause (``{"429 RESOURCE_EXHAUSTED": 3}``).
        failure_causes: Failed calls by cause.
        waited_s: Seconds spent waiting between attempts (of the run's retry budget).
        refused_calls: Requests the run's budget refused (never sent).
        usage: Tokens (and dollars, for models with prices) per (model, role), of every
            answered call of the run (:mod:`adk_eval_action.results.usage`).
    """

    calls: int = 0
    retried_calls: int = 0
    retries: int = 0
    failed_calls: int = 0
    retry_causes: dict[str, int] = Field(default_factory=dict)
    failure_causes: dict[str, int] = Field(default_factory=dict)
    waited_s: float = 0.0
    refused_calls: int = 0
    usage: list[ModelUsage] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        """All tokens the run's models reported (a floor when :attr:`unreported`)."""
        return total_tokens(self.usage)

    @property
    def unreported(self) -> int:
        """Answered calls that reported no usage (their tokens are unknown)."""
        return sum(u.unreported for u in self.usage)

    @property
    def usd(self) -> float | None:
        """The dollars of the models with prices (None: none has one)."""
        return total_usd(self.usage)

    @property
    def unpriced(self) -> list[str]:
        """The models that answered without a price (tokens only)."""
        return unpriced_models(self.usage)

    @property
    def models(self) -> list[ModelUsage]:
        """:attr:`usage` per model, its roles summed."""
        return by_model(self.usage)


class RunMetadata(BaseModel):
    """Where and how the results were produced. Times are ISO 8601 UTC; durations seconds."""

    source: Literal["adk-eval-action", "adk-eval-history"] = "adk-eval-action"
    tool_version: str | None = None
    adk_version: str | None = None
    python_version: str | None = None
    git_sha: str | None = None
    git_ref: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_seconds: float | None = None
    model_calls: ModelCallCounts | None = None
    #: The gate rules the run was judged by (``adk-eval.yaml``'s ``gate`` with inputs and
    #: flags applied: :class:`adk_eval_action.project.config.GateConfig` as JSON); None in
    #: files written before it was recorded, and in ADK's eval_history.
    gate: dict[str, Any] | None = None
    #: Why nothing was evaluated on purpose (no model credentials with
    #: ``on_missing_credentials: skip``); None for a run that evaluated.
    skipped: str | None = None


CaseKey = tuple[str, str, str]
"""An eval case of a plan: (suite, eval set id, eval id)."""


class ShardInfo(BaseModel):
    """Which part of which plan a results file holds (``run --shard K/N``;
    :mod:`adk_eval_action.results.shards`): shard ``index`` of ``count``, ``plan_id`` (a
    hash of the plan), every case of the plan in order (``plan``), and the cases this part
    evaluated (``cases``, in plan order)."""

    index: int
    count: int
    plan_id: str
    plan: list[CaseKey] = Field(default_factory=list)
    cases: list[CaseKey] = Field(default_factory=list)


class RunResults(BaseModel):
    """The whole results file. See the module docstring for the shape.

    ``complete`` is written with the file (:func:`adk_eval_action.results.io.save_results`):
    False when an error of :data:`INCOMPLETE_ERROR_KINDS` kept scores from being computed
    (or whoever wrote it marked it so). Whether the gate passed does not enter: a run whose
    gate failed is a complete record of its commit, and a usable baseline. A run stopped
    before evaluation started (a config or input error) writes no suites and the error in
    ``errors`` (``run.stop_outcomes.stopped_run``).
    """

    schema_version: int = SCHEMA_VERSION
    complete: bool | None = None
    metadata: RunMetadata = Field(default_factory=RunMetadata)
    suites: list[SuiteRecord] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    shard: ShardInfo | None = None
    #: Per judge model, how often it disagreed with itself across the runs of an eval case
    #: that answered alike (:mod:`.judgenoise`); written with the file, None in older ones.
    judge_noise: list[JudgeNoise] | None = None

    def all_errors(self) -> list[ErrorRecord]:
        """Top-level and per-suite errors, in that order."""
        return [*self.errors, *(e for s in self.suites for e in s.errors)]

    def incomplete_errors(self) -> list[ErrorRecord]:
        """The errors that make the run incomplete (:data:`INCOMPLETE_ERROR_KINDS`)."""
        return [e for e in self.all_errors() if e.kind in INCOMPLETE_ERROR_KINDS]

    def stopped_by(self) -> ErrorRecord | None:
        """The error that stopped the run before evaluation started (a config or input
        error: ``run.stop_outcomes.stopped_run`` writes no suites), or None when the run got to
        evaluate: the file holds no suites and an error of :data:`INCOMPLETE_ERROR_KINDS`."""
        errors = self.incomplete_errors()
        return errors[0] if errors and not self.suites else None

    def skipped_reason(self) -> str | None:
        """Why the run evaluated nothing on purpose (``metadata.skipped``: no model
        credentials with ``on_missing_credentials: skip``), or None: it was not skipped, or
        an error of :data:`INCOMPLETE_ERROR_KINDS` makes it incomplete anyway."""
        return None if self.incomplete_errors() else self.metadata.skipped

    def is_complete(self) -> bool:
        """Whether every score could be computed: the recorded ``complete`` when the file
        has it, else no error of :data:`INCOMPLETE_ERROR_KINDS` (files written before the
        field, and ADK's eval_history)."""
        if self.complete is not None:
            return self.complete and not self.incomplete_errors()
        return not self.incomplete_errors()


def utc_now() -> str:
    """Current time as ISO 8601 UTC with seconds precision."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (``importlib.metadata``; e.g.
    ``google-adk``), or None when it is not installed. The one lookup of versions, for a
    results file's metadata and the action's google-adk range check."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None

"""The comparison's typed values: per metric, per rubric, per eval case, and the whole
:class:`Comparison` that the comment, the summary, the gate and ``--json-out`` read
(rules: :mod:`adk_eval_action.analysis.compare`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from adk_eval_action.analysis.agentchanges import AgentChanges
from adk_eval_action.analysis.comparability import JudgeChange
from adk_eval_action.analysis.cost import CostComparison
from adk_eval_action.analysis.gatechanges import GateChange
from adk_eval_action.analysis.noise import Classification, DeltaInterval
from adk_eval_action.analysis.paired import TestMethod
from adk_eval_action.analysis.trend_models import BaselineTrust, HistoryFacts
from adk_eval_action.results.judgenoise import JudgeNoise
from adk_eval_action.results.model import CaseStatus, ErrorRecord, MetricStatus, RunMetadata
from adk_eval_action.results.scoretable import CaseKey

NO_RUNS_ERROR = "no runs were recorded for this eval case (the run was cut short?)"
CHANGE_ORDER = (
    "errored",
    "newly_failing",
    "newly_passing",
    "still_failing",
    "failing",
    "new",
    "removed",
)
"""How the comment orders changed eval cases: what needs a look first."""
DEFAULT_CONFIDENCE = 0.95


class MetricSide(BaseModel):
    """One metric on one side (baseline or head) of the comparison.

    ``mean`` is over every scored case run (metric units); ``scored`` counts those runs;
    ``passed``/``failed``/``not_evaluated``/``errors`` count case runs by status;
    ``crashed`` counts the case runs of the suite that raised before this metric got a
    result (the agent's own code: a failed run; ADK, the model or the credentials:
    counted in ``errors``). Informational metrics count none.
    """

    mean: float | None = None
    scored: int = 0
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    errors: int = 0
    crashed: int = 0
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    informational: bool = False
    reasons: list[str] = Field(default_factory=list)

    @property
    def pass_rate(self) -> float | None:
        """The share of case runs that passed: passed over every run that should have
        had a verdict (passed, failed, crashed, errored or not evaluated: a run without
        a score never passes); None when there is none (an informational metric)."""
        total = self.passed + self.failed + self.crashed + self.errors + self.not_evaluated
        return self.passed / total if total else None


class MetricComparison(BaseModel):
    """A metric of a suite, baseline vs head, over matched eval cases (module docstring).

    ``delta`` is the mean per-case change ``head − baseline`` over the matched cases (None
    without any), ``baseline_matched``/``head_matched`` the sides' means over them;
    ``baseline``/``head`` describe each side over all its cases. ``interval`` is the
    corrected paired test of the change (None without a baseline; without bounds, its
    ``reason`` says why); ``classification`` is None without a baseline; ``min_effect``
    is the one it was called with (metric units).
    """

    suite: str
    metric_name: str
    baseline: MetricSide | None = None
    head: MetricSide | None = None
    delta: float | None = None
    baseline_matched: float | None = None
    head_matched: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None
    min_effect: float | None = None
    #: The head has no result of this baseline metric although its suite still asks for
    #: it (its eval config names it, or errors kept the suite from being scored): the
    #: status says "not evaluated", never "removed".
    head_not_evaluated: bool = False
    #: Matched eval cases set aside from delta, interval and call: judge flips on the same
    #: answer (:mod:`adk_eval_action.analysis.judgeflips`).
    judge_flips: int = 0

    @property
    def informational(self) -> bool:
        """True for efficiency metrics (tokens, duration, tool calls): shown, never gated."""
        side = self.head or self.baseline
        return bool(side and side.informational)

    @property
    def higher_is_better(self) -> bool:
        """The metric's direction (head's when known)."""
        side = self.head or self.baseline
        return side.higher_is_better if side else True

    @property
    def only_in(self) -> Literal["head", "baseline"] | None:
        """Which side alone has the metric, or None when both have it."""
        if self.head is None:
            return "baseline"
        return "head" if self.baseline is None else None


class RubricComparison(BaseModel):
    """A rubric (by id) of a rubric metric, baseline vs head; scores are in [0, 1].

    ``*_mean`` are over every scored verdict of a side, ``*_n`` count them; ``delta``,
    ``*_matched``, ``interval`` and ``classification`` as for :class:`MetricComparison`,
    over per-case rubric means of matched cases.
    """

    suite: str
    metric_name: str
    rubric_id: str
    text: str | None = None
    baseline_mean: float | None = None
    head_mean: float | None = None
    baseline_n: int = 0
    head_n: int = 0
    delta: float | None = None
    baseline_matched: float | None = None
    head_matched: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None
    min_effect: float | None = None
    #: Matched eval cases set aside: judge flips on the same answer (as for a metric).
    judge_flips: int = 0


class MetricDelta(NamedTuple):
    """One metric of one eval case: mean over scored runs on each side (metric units).

    A named tuple, not a pydantic model or dataclass: compare makes one per metric per case
    (80,000 at 10,000 cases x 8 metrics), and building them was the largest part of
    compare's time (validation ~7 us each, a dataclass ~2 us, a named tuple ~0.8 us here)."""

    metric_name: str
    baseline: float | None = None
    head: float | None = None
    delta: float | None = None
    head_status: MetricStatus | None = None
    reason: str | None = None


def _rows_as_dicts(rows: Sequence[MetricDelta]) -> list[dict[str, Any]]:
    return [row._asdict() for row in rows]


_MetricRows = Annotated[
    Sequence[MetricDelta], PlainSerializer(_rows_as_dicts, return_type=list[dict[str, Any]])
]
"""A case's metric rows; written as a list of objects by ``model_dump``/``model_dump_json``
(they may be a lazy :class:`~adk_eval_action.analysis.cases.CaseMetrics`, which pydantic
cannot serialise itself)."""

ChangeKind = Literal[
    "newly_failing",
    "newly_passing",
    "new",
    "removed",
    "errored",
    "still_failing",
    "failing",
    "unchanged",
]


@dataclass(slots=True)
class CaseComparison:
    """One eval case, baseline vs head (a dataclass: 10,000 of them are made at 10,000 cases,
    and pydantic validation of each cost more than the rest of compare).

    ``metrics`` are the case's metric deltas (head's metrics in the case's order, then those
    only the baseline has); ``largest_drop`` is the largest worsening among its gated
    metrics, in each metric's direction and as a fraction of its value range when known
    (else in metric units), 0 when none got worse: what orders failing cases.
    ``flaky_head`` / ``flaky_baseline`` map ``"overall"`` or a metric name to ``(passing
    runs, runs with a verdict)`` where runs disagree, e.g. ``{"response_match_score": (2,
    3)}``.
    """

    suite: str
    eval_set_id: str
    eval_id: str
    change: ChangeKind
    file: str | None = None
    line: int | None = None
    baseline_status: CaseStatus | None = None
    head_status: CaseStatus | None = None
    metrics: _MetricRows = field(default_factory=list)
    error: str | None = None
    largest_drop: float = 0.0
    head_passes: int = 0
    head_runs: int = 0
    flaky_head: dict[str, tuple[int, int]] = field(default_factory=dict)
    flaky_baseline: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def key(self) -> CaseKey:
        """(suite, eval set id, eval id)."""
        return (self.suite, self.eval_set_id, self.eval_id)

    @property
    def flaky(self) -> bool:
        """Flaky on either side."""
        return bool(self.flaky_head or self.flaky_baseline)


class AdaptiveRuns(BaseModel):
    """What adaptive repeats spent: ``extra_runs`` head case runs beyond the planned ones,
    over ``rounds`` rounds, for ``cases`` distinct eval cases; ``max_runs`` and ``budget``
    (the most extra case runs allowed) as configured; ``stopped`` says why it ended."""

    max_runs: int = Field(ge=1)
    budget: int = Field(ge=0)
    extra_runs: int = 0
    rounds: int = 0
    cases: int = 0
    stopped: str = ""


class SuiteWithoutBaseline(BaseModel):
    """A suite of the head that has no baseline although the run has one
    (:mod:`adk_eval_action.analysis.suite_baselines`): ``incomplete`` when the baseline's
    run recorded errors that kept the suite's scores from being computed (``error`` is the
    first of them), ``absent`` when the baseline's run has no such suite (a new suite, or
    one whose agent or eval sets moved). Its metrics and eval cases are shown with head
    scores only, and it is gated on thresholds alone. ``same_on_head``: the head's run of
    an ``incomplete`` suite failed the same way (its errors, kind and message, are the
    baseline's): the base branch's own breakage, which does not decide this run's check
    (its cases are left out of the gate, its errors of the exit code:
    :attr:`Comparison.known_broken`)."""

    suite: str
    why: Literal["incomplete", "absent"]
    error: ErrorRecord | None = None
    same_on_head: bool = False


class JudgeFlip(BaseModel):
    """One judge flip, a verdict changed on the same answer
    (:mod:`adk_eval_action.analysis.judgeflips`): eval case (``suite``, ``eval_set_id``,
    ``eval_id``), the metric and, for a rubric's verdict, the rubric id (None: the metric's
    score), its judge model and the per-case value on each side (metric units; a verdict in
    [0, 1])."""

    suite: str
    eval_set_id: str
    eval_id: str
    metric_name: str
    rubric_id: str | None = None
    judge_model: str
    baseline: float
    head: float


class Comparison(BaseModel):
    """Everything the comment, summary and gate need. ``baseline_note`` says which
    baseline was used or why there is none; ``no_interval_reason`` says why no delta has an
    interval (e.g. one matched case), None when some do or there is no baseline; ``tests``
    records how the calls were made (None without a baseline); ``adaptive`` what adaptive
    repeats spent (None when they were off); ``cost`` the run's tokens and dollars and the
    agent's cost per eval case against the baseline (:mod:`adk_eval_action.analysis.cost`;
    None when the head recorded no usage); ``history`` what the default branch's history
    says (trends, known flaky eval cases, pooled baseline runs:
    :mod:`adk_eval_action.analysis.trends`; None without one); ``baseline_trust`` the
    baseline's commit, run, age and distance from the merge-base, with what to doubt;
    ``gate_changes`` every change of the gate since the baseline (thresholds, criteria,
    gate rules: :mod:`adk_eval_action.analysis.gatechanges`; [] without a baseline);
    ``agent_changes`` what changed in each suite's agent since the baseline (instructions,
    tools, models, generate config, agents: :mod:`adk_eval_action.analysis.agentchanges`;
    only suites with a change); ``judge_changes`` each judge metric judged differently from
    the baseline (judge model, samples, prompt version:
    :mod:`adk_eval_action.analysis.comparability`); ``judge_flips`` each judge verdict that
    changed on an eval case answered alike on both sides, set aside from its metric's or
    rubric's call, and ``judge_noise`` each judge model's self-disagreement rate on those
    cases (:mod:`adk_eval_action.analysis.judgeflips`).
    ``confidence`` is the nominal one-sided level of each interval end (1 − the
    per-direction error rate). Frozen: made once, by :func:`adk_eval_action.analysis.compare
    .compare` and finished by :func:`adk_eval_action.analysis.verdict.compare_and_gate` as
    new values, never assigned to."""

    model_config = ConfigDict(frozen=True)

    has_baseline: bool
    baseline_note: str
    head_metadata: RunMetadata
    baseline_metadata: RunMetadata | None = None
    metrics: list[MetricComparison] = Field(default_factory=list)
    rubrics: list[RubricComparison] = Field(default_factory=list)
    cases: list[CaseComparison] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    num_runs: int = 1
    comparability: list[str] = Field(default_factory=list)
    confidence: float = DEFAULT_CONFIDENCE
    no_interval_reason: str | None = None
    tests: TestMethod | None = None
    adaptive: AdaptiveRuns | None = None
    history: HistoryFacts | None = None
    baseline_trust: BaselineTrust | None = None
    #: Baseline scores pooled from earlier recorded runs (0: none; ``compare``'s ``pool``).
    pooled_scores: int = 0
    cost: CostComparison | None = None
    gate_changes: list[GateChange] = Field(default_factory=list)
    #: The head's suites that have no baseline although the run has one, and why.
    suites_without_baseline: list[SuiteWithoutBaseline] = Field(default_factory=list)
    agent_changes: list[AgentChanges] = Field(default_factory=list)
    judge_changes: list[JudgeChange] = Field(default_factory=list)
    judge_flips: list[JudgeFlip] = Field(default_factory=list)
    judge_noise: list[JudgeNoise] = Field(default_factory=list)

    @property
    def known_broken(self) -> set[str]:
        """The suites that could not be evaluated on the head exactly as on the baseline
        (:attr:`SuiteWithoutBaseline.same_on_head`): the base branch's own breakage."""
        return {g.suite for g in self.suites_without_baseline if g.same_on_head}

    @property
    def gate_loosened(self) -> list[GateChange]:
        """The changes of the gate since the baseline that let a worse head pass (a
        threshold lowered, a metric removed from the criteria, a rule relaxed)."""
        return [c for c in self.gate_changes if c.loosens]

    @property
    def gate_tightened(self) -> list[GateChange]:
        """The other changes of the gate since the baseline."""
        return [c for c in self.gate_changes if not c.loosens]

    @property
    def undecided(self) -> list[MetricComparison | RubricComparison]:
        """Metrics, then rubrics, whose change the test left ❔ undecided, each with what
        sample would decide it (``interval.to_decide``)."""
        rows: list[MetricComparison | RubricComparison] = [*self.metrics, *self.rubrics]
        return [r for r in rows if r.interval is not None and r.interval.to_decide]

    @property
    def called_by_cases(self) -> list[MetricComparison | RubricComparison]:
        """The metrics and rubrics called 🔴 regressed by an eval case's own runs
        (``interval.case_calls``: :mod:`adk_eval_action.analysis.case_calls`)."""
        rows: list[MetricComparison | RubricComparison] = [*self.metrics, *self.rubrics]
        return [r for r in rows if r.interval is not None and r.interval.case_calls]

    @property
    def flaky_cases(self) -> list[CaseComparison]:
        """Cases flaky on either side, in case order."""
        return [c for c in self.cases if c.flaky_head or c.flaky_baseline]

    @property
    def new_cases(self) -> list[CaseComparison]:
        """Cases only the head has: listed, never in a delta."""
        return [c for c in self.cases if c.change == "new"]

    @property
    def removed_cases(self) -> list[CaseComparison]:
        """Cases only the baseline has: listed, never in a delta."""
        return [c for c in self.cases if c.change == "removed"]

    @property
    def removed_note(self) -> str:
        """For the headline and the console's gate line: ``4 eval cases of the baseline are
        not in this run (removed)``, "" when none is. A pass counts only the cases the head
        has, so a change that deletes failing eval cases must say so where the verdict is
        read, not only in the collapsed case list."""
        count = len(self.removed_cases)
        if not count:
            return ""
        cases = "eval case" if count == 1 else "eval cases"
        verb = "is" if count == 1 else "are"
        return f"{count} {cases} of the baseline {verb} not in this run (removed)"

    @property
    def changed_cases(self) -> list[CaseComparison]:
        """Cases that are not ``unchanged``, worst change first (``CHANGE_ORDER``), then in
        case order. A property rather than a template filter chain: selecting among
        10,000 cases in the sandboxed template took most of the render time."""
        rank = {change: index for index, change in enumerate(CHANGE_ORDER)}
        changed = [c for c in self.cases if c.change != "unchanged"]
        return sorted(changed, key=lambda c: rank[c.change])

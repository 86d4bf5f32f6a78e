"""Evidence for failing eval cases: what the agent did next to what the eval case expected.

Computed from a case's record in the results file alone (:class:`EvalCaseRecord`: its
``expected_invocations``, each run's ``actual_invocations``, metric results with their
per-invocation statuses, rubric verdicts with the judge's rationale, and reasons), so every
line of it can be recomputed from results.json. Strings are cut here (with ``…``, at the
lengths below) but not escaped: the templates escape them (:mod:`.format`). The evidence of
the eval cases that got worse than the baseline uses the same models
(:mod:`adk_eval_action.report.regressions`).

Rules:

* **Cases**: the gate's failing cases, worst first (errored, newly failing, then by the
  largest worsening: :attr:`adk_eval_action.analysis.gate.GateResult.failing_cases`), whose
  record the results keep, at most ``limit`` of them.
* **Run**: the first run that did not pass (``run 2 of 3``).
* **Turn**: the first invocation where a gated metric failed for that invocation (ADK's
  per-invocation status), else the first whose tool calls differ from the expected ones,
  else the last.
* **Tool calls**: expected and actual compared as :mod:`.invocations` reads and aligns
  them; at most :data:`MAX_TOOL_CHANGES` changes. An expected call missing from the
  trajectory whose tool only an agent used as a tool (``AgentTool``) has, one called on
  that turn, is said to be outside the recorded trajectory, not "not called"
  (:func:`adk_eval_action.results.agenttree.tools_inside_agent_tools`, from the suite's
  recorded agent tree). A case that expects no tool call on any
  turn and is not judged by :data:`TRAJECTORY_METRIC` (rubrics or custom metrics judge it)
  has nothing to compare them with: the calls made are listed instead.
* **Final response**: as :func:`adk_eval_action.report.invocations.excerpt_pair` cuts it.
* **Rubrics**: every verdict below 1 (a "no") or without a verdict in the run, per
  invocation with the judge's own rationale (overall verdicts only when there are none per
  invocation: ADK's overall rationale is a placeholder). At most :data:`MAX_RUBRICS`. They
  lead the evidence when the turn expects nothing to diff against
  (:attr:`CaseEvidence.rubrics_first`).
* **Metrics**: the run's gated metrics that did not pass, with score, threshold and reason
  (a custom metric's explanation, or why it could not be evaluated).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import CaseComparison
from adk_eval_action.report.format import cut, one_line
from adk_eval_action.report.invocations import (
    CONTEXT_CHARS,
    TEXT_CHARS,
    VALUE_CHARS,
    ToolCall,
    ToolCallChange,
    args_text,
    call_text,
    content_text,
    excerpt_pair,
    response_text,
    tool_call_changes,
    tool_calls,
)
from adk_eval_action.results.agenttree import tools_inside_agent_tools
from adk_eval_action.results.model import (
    EvalCaseRecord,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunRecord,
    RunResults,
)
from adk_eval_action.results.scoretable import CaseKey, ScoreTable, run_passed

RATIONALE_CHARS = 300
"""Judge rationales and metric reasons are cut to this many characters."""
RUBRIC_TEXT_CHARS = 200
"""Rubric texts are cut to this many characters."""
TRAJECTORY_METRIC = "tool_trajectory_avg_score"
"""ADK's metric that compares a case's tool calls with its expected ones
(google.adk.evaluation.trajectory_evaluator): with it, no expected call means "call none"."""
MAX_TOOL_CHANGES = 5
MAX_RUBRICS = 6


class TurnEvidence(BaseModel):
    """The turn (invocation) shown for a case: ``turn`` of ``turns``, counting from 1.

    ``user`` is the user's message; ``expected_response`` / ``actual_response`` the final
    responses (None when there is none on that side), cut at :data:`TEXT_CHARS`;
    ``tool_changes`` the tool-call differences (``more_tool_changes`` left out);
    ``expected_calls`` / ``actual_calls`` how many tool calls each side has (None: nothing
    to compare with, a ``conversation_scenario`` case or one judged by rubrics or custom
    metrics only: the module's rules); ``calls_made`` then the turn's calls as
    ``name(arg=JSON, …)``, at most :data:`MAX_TOOL_CHANGES`; ``failed_metrics`` the gated
    metrics that failed on this turn (or, against the baseline, scored worse on it).
    ``reference`` says what the ``expected_*`` side is: the eval case's expected
    invocation, or the baseline run's own invocation (the evidence of a case that got
    worse than the baseline: :mod:`adk_eval_action.report.regressions`); ``other_turns``
    then the other turns (from 1) that scored worse than the baseline's too.
    """

    turn: int
    reference: Literal["expected", "baseline"] = "expected"
    other_turns: list[int] = Field(default_factory=list)
    turns: int
    user: str | None = None
    expected_response: str | None = None
    actual_response: str | None = None
    expected_calls: int | None = None
    actual_calls: int = 0
    tool_changes: list[ToolCallChange] = Field(default_factory=list)
    more_tool_changes: int = 0
    calls_made: list[str] = Field(default_factory=list)
    failed_metrics: list[str] = Field(default_factory=list)

    @property
    def nothing_expected(self) -> bool:
        """Nothing to diff this turn against: no expected tool calls to compare and no
        expected final response (the turn is shown as it happened)."""
        return self.expected_calls is None and self.expected_response is None


class RubricEvidence(BaseModel):
    """A rubric the judge said "no" to (``score`` < 1) or gave no verdict (None), with the
    rubric's text and the judge's rationale; ``turn`` counts from 1 (None: overall)."""

    metric_name: str
    rubric_id: str
    text: str | None = None
    turn: int | None = None
    score: float | None = None
    rationale: str | None = None


class MetricEvidence(BaseModel):
    """A gated metric that did not pass in the run shown: score and threshold in metric
    units, its range and direction, and its reason (cut at :data:`RATIONALE_CHARS`)."""

    metric_name: str
    status: MetricStatus
    score: float | None = None
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    reason: str | None = None


class DropEvidence(BaseModel):
    """A metric that got worse than the baseline in one eval case: the case's mean over
    its runs on each side (metric units), the threshold, range and direction of the head
    run shown, and that run's reason (cut at :data:`RATIONALE_CHARS`)."""

    metric_name: str
    baseline: float
    head: float
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    reason: str | None = None


class CaseEvidence(BaseModel):
    """Why one eval case failed (the module's rules), or (``kind`` ``dropped``) why it got
    worse than the baseline (:mod:`adk_eval_action.report.regressions`). ``change`` is the
    case's change kind (``newly_failing``, ``still_failing``, …); ``run`` of ``runs`` is
    the head run shown, ``baseline_run`` of ``baseline_runs`` the baseline run it is
    compared with (None: no baseline run to show); ``error`` the head run's error;
    ``drops`` the metrics that got worse; ``more_rubrics`` how many rubric lines were left
    out."""

    kind: Literal["failing", "dropped"] = "failing"

    suite: str
    eval_set_id: str
    eval_id: str
    change: str
    file: str | None = None
    line: int | None = None
    run: int = 1
    runs: int = 1
    error: str | None = None
    turn: TurnEvidence | None = None
    metrics: list[MetricEvidence] = Field(default_factory=list)
    rubrics: list[RubricEvidence] = Field(default_factory=list)
    more_rubrics: int = 0
    baseline_run: int | None = None
    baseline_runs: int | None = None
    drops: list[DropEvidence] = Field(default_factory=list)

    @property
    def rubrics_first(self) -> bool:
        """The rubrics lead the evidence: there are failed ones and the turn shown expects
        nothing to diff against (a case judged by rubrics only), so the judge's "no" is the
        reason to read first."""
        return bool(self.rubrics) and self.turn is not None and self.turn.nothing_expected


def collect_evidence(
    results: RunResults | ScoreTable, cases: Sequence[CaseComparison], limit: int = 50
) -> list[CaseEvidence]:
    """Evidence for the first ``limit`` of ``cases`` (the gate's failing cases, worst
    first) whose records ``results`` holds (a :class:`ScoreTable` keeps those of its first
    failing cases: :data:`adk_eval_action.results.scoretable.MAX_KEPT_RECORDS`).

    Raises nothing for odd records (hand-edited files): what cannot be read is left out.
    """
    wanted = {c.key: c for c in cases if c.head_status is not None}
    records = case_records(results, set(wanted))
    suites = results.skeleton.suites if isinstance(results, ScoreTable) else results.suites
    inside = {s.name: tools_inside_agent_tools(s.agents) for s in suites}
    out = []
    for key, case in wanted.items():
        record = records.get(key)
        if record is None or not record.runs:
            continue
        out.append(case_evidence(case, record, inside.get(case.suite)))
        if len(out) >= limit:
            break
    return out


def case_records(
    results: RunResults | ScoreTable, keys: set[CaseKey]
) -> dict[CaseKey, EvalCaseRecord]:
    """The records of ``keys`` that ``results`` holds (a :class:`ScoreTable` keeps only
    some: :attr:`ScoreTable.kept_records`), the first one of a key written twice."""
    if isinstance(results, ScoreTable):
        return {k: r for k, r in results.kept_records.items() if k in keys}
    found: dict[CaseKey, EvalCaseRecord] = {}
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                key = (suite.name, eval_set.eval_set_id, case.eval_id)
                if key in keys and key not in found:
                    found[key] = case
    return found


def case_evidence(
    case: CaseComparison, record: EvalCaseRecord,
    inside: Mapping[str, list[str]] | None = None,
) -> CaseEvidence:
    """The evidence of one case from its record (the module's rules); ``inside``: the
    suite's tools that only agents used as tools have (tool -> those agents)."""
    run = next((r for r in record.runs if not run_passed(r)), record.runs[0])
    gated = [m for m in run.metrics if not m.informational]
    rubrics = list(failed_rubrics(gated))
    return CaseEvidence(
        suite=case.suite,
        eval_set_id=case.eval_set_id,
        eval_id=case.eval_id,
        change=case.change,
        file=case.file,
        line=case.line,
        run=run.run,
        runs=len(record.runs),
        error=cut(one_line(run.error), RATIONALE_CHARS) if run.error else None,
        turn=expected_turn(record.expected_invocations, run, gated, inside),
        metrics=[_metric(m) for m in gated if m.status != MetricStatus.PASSED],
        rubrics=rubrics[:MAX_RUBRICS],
        more_rubrics=max(0, len(rubrics) - MAX_RUBRICS),
    )


def _metric(metric: MetricResult) -> MetricEvidence:
    return MetricEvidence(
        metric_name=metric.metric_name,
        status=metric.status,
        score=metric.score,
        threshold=metric.threshold,
        min_value=metric.min_value,
        max_value=metric.max_value,
        higher_is_better=metric.higher_is_better,
        reason=cut(one_line(metric.reason), RATIONALE_CHARS) if metric.reason else None,
    )


def failed_rubrics(metrics: Iterable[MetricResult]) -> Iterable[RubricEvidence]:
    """The rubric verdicts of ``metrics`` below 1 or without a verdict (the module's
    rules), per invocation when there are any, else overall."""
    for metric in metrics:
        per_turn: list[tuple[int | None, RubricScoreRecord]] = [
            (inv.index + 1, r) for inv in metric.invocations for r in inv.rubrics]
        verdicts = per_turn or [(None, r) for r in metric.rubrics]
        for turn, rubric in verdicts:
            if rubric.score is not None and rubric.score >= 1.0:
                continue
            yield RubricEvidence(
                metric_name=metric.metric_name,
                rubric_id=rubric.rubric_id,
                text=cut(one_line(rubric.text), RUBRIC_TEXT_CHARS) if rubric.text else None,
                turn=turn,
                score=rubric.score,
                rationale=cut(one_line(rubric.rationale), RATIONALE_CHARS)
                if rubric.rationale
                else None,
            )


def expected_turn(
    expected: list[dict[str, Any]] | None, run: RunRecord, gated: list[MetricResult],
    inside: Mapping[str, list[str]] | None = None,
) -> TurnEvidence | None:
    """The turn of ``run`` shown against the ``expected`` invocations (the module's
    rules), judged by the ``gated`` metrics; None when the run recorded no invocation.
    ``inside`` as :func:`case_evidence` has it."""
    actual = run.actual_invocations or []
    if not actual:
        return None
    failing: dict[int, list[str]] = {}
    for metric in gated:
        for inv in metric.invocations:
            if inv.status in (MetricStatus.FAILED, MetricStatus.ERROR):
                failing.setdefault(inv.index, []).append(metric.metric_name)

    def expected_at(i: int) -> dict[str, Any] | None:
        return expected[i] if expected is not None and i < len(expected) else None

    compare_calls = expected is not None and (
        any(tool_calls(e) for e in expected) or any(m.metric_name == TRAJECTORY_METRIC
                                                    for m in gated)
    )

    differing = (
        i
        for i in range(len(actual))
        if compare_calls and tool_calls(expected_at(i)) != tool_calls(actual[i])
    )
    index = min(failing, default=None)
    if index is None or index >= len(actual):
        index = next(differing, len(actual) - 1)
    turn = turn_at(index, expected_at(index), actual, compare_calls, failing.get(index, []))
    return marked_inside_agent_tools(turn, tool_calls(actual[index]), inside or {})


def marked_inside_agent_tools(
    turn: TurnEvidence, made: list[ToolCall], inside: Mapping[str, list[str]]
) -> TurnEvidence:
    """``turn`` with each missing call whose tool only agents used as tools have, one of
    them called on the turn, marked with those agents (the module's rules)."""
    called = {name for name, _ in made}
    changes = [
        change.model_copy(update={"inside": [a for a in inside[change.name] if a in called]})
        if change.change == "missing" and change.name in inside else change
        for change in turn.tool_changes
    ]
    return turn.model_copy(update={"tool_changes": changes})


def turn_at(
    index: int,
    expected: dict[str, Any] | None,
    actual: list[dict[str, Any]],
    compare_calls: bool,
    failed: list[str],
) -> TurnEvidence:
    """Turn ``index`` of the ``actual`` invocations next to ``expected`` (an expected
    invocation, or the baseline's own), tool calls compared when ``compare_calls``."""
    invocation = actual[index]
    expected_text, actual_text = excerpt_pair(
        response_text(expected), response_text(invocation), TEXT_CHARS
    )
    made = tool_calls(invocation)
    changes = tool_call_changes(tool_calls(expected), made) if compare_calls else []
    user = content_text(invocation.get("user_content")) or content_text(
        (expected or {}).get("user_content")
    )
    return TurnEvidence(
        turn=index + 1,
        turns=len(actual),
        user=cut(one_line(user), TEXT_CHARS) if user else None,
        expected_response=expected_text,
        actual_response=actual_text,
        expected_calls=len(tool_calls(expected)) if compare_calls else None,
        actual_calls=len(made),
        tool_changes=changes[:MAX_TOOL_CHANGES],
        more_tool_changes=max(0, len(changes) - MAX_TOOL_CHANGES),
        calls_made=[] if compare_calls else [
            call_text(name, args_text(args)) for name, args in made[:MAX_TOOL_CHANGES]
        ],
        failed_metrics=failed,
    )


__all__ = [
    "CONTEXT_CHARS",
    "TEXT_CHARS",
    "VALUE_CHARS",
    "CaseEvidence",
    "DropEvidence",
    "MetricEvidence",
    "RubricEvidence",
    "ToolCallChange",
    "TurnEvidence",
    "collect_evidence",
    "marked_inside_agent_tools",
    "content_text",
    "excerpt_pair",
    "response_text",
    "tool_call_changes",
    "tool_calls",
]

"""Evidence for failing eval cases: what the agent did next to what the eval case expected.

Computed from a case's record in the results file alone (:class:`EvalCaseRecord`: its
``expected_invocations``, each run's ``actual_invocations``, metric results with their
per-invocation statuses, rubric verdicts with the judge's rationale, and reasons), so every
line of it can be recomputed from results.json. Strings are cut here (with ``…``, at the
lengths below) but not escaped: the templates escape them (:mod:`.format`).

Rules:

* **Cases**: the gate's failing cases, worst first (errored, newly failing, then by the
  largest worsening: :attr:`adk_eval_action.analysis.gate.GateResult.failing_cases`), whose
  record the results keep, at most ``limit`` of them.
* **Run**: the first run that did not pass (``run 2 of 3``).
* **Turn**: the first invocation where a gated metric failed for that invocation (ADK's
  per-invocation status), else the first whose tool calls differ from the expected ones,
  else the last.
* **Tool calls** are read as ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads
  them (``tool_uses``, or the ``function_call`` parts of ``invocation_events``); expected and
  actual are aligned by tool name (``difflib``), and a pair with the same name shows only the
  arguments that differ. At most :data:`MAX_TOOL_CHANGES` changes. A case that expects no
  tool call on any turn and is not judged by :data:`TRAJECTORY_METRIC` (rubrics or custom
  metrics judge it) has nothing to compare them with: the calls made are listed instead.
* **Final response**: the text parts that are not thoughts; when expected and actual share
  a long beginning, the excerpt starts shortly before the first difference.
* **Rubrics**: every verdict below 1 (a "no") or without a verdict in the run, per
  invocation with the judge's own rationale (overall verdicts only when there are none per
  invocation: ADK's overall rationale is a placeholder). At most :data:`MAX_RUBRICS`. They
  lead the evidence when the turn expects nothing to diff against
  (:attr:`CaseEvidence.rubrics_first`).
* **Metrics**: the run's gated metrics that did not pass, with score, threshold and reason
  (a custom metric's explanation, or why it could not be evaluated).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import CaseComparison
from adk_eval_action.report.format import cut, one_line
from adk_eval_action.results.model import (
    EvalCaseRecord,
    MetricResult,
    MetricStatus,
    RunRecord,
    RunResults,
)
from adk_eval_action.results.scoretable import CaseKey, ScoreTable, run_passed

TEXT_CHARS = 300
"""User messages and final responses are cut to this many characters."""
RATIONALE_CHARS = 300
"""Judge rationales and metric reasons are cut to this many characters."""
RUBRIC_TEXT_CHARS = 200
"""Rubric texts are cut to this many characters."""
VALUE_CHARS = 60
"""Each tool argument value, as JSON, is cut to this many characters."""
TRAJECTORY_METRIC = "tool_trajectory_avg_score"
"""ADK's metric that compares a case's tool calls with its expected ones
(google.adk.evaluation.trajectory_evaluator): with it, no expected call means "call none"."""
MAX_TOOL_CHANGES = 5
MAX_RUBRICS = 6
CONTEXT_CHARS = 40
"""Characters kept before the first difference of two long responses."""


class ToolCallChange(BaseModel):
    """One difference between expected and actual tool calls of a turn.

    ``changed``: same tool name, some arguments differ (only those are in the two maps;
    ``same_args`` counts the equal ones left out); ``missing``: expected, not called;
    ``unexpected``: called, not expected. Argument values are JSON text, cut at
    :data:`VALUE_CHARS`; None means the argument was not given on that side.
    """

    change: Literal["changed", "missing", "unexpected"]
    name: str
    expected_args: dict[str, str | None] = Field(default_factory=dict)
    actual_args: dict[str, str | None] = Field(default_factory=dict)
    same_args: int = 0


class TurnEvidence(BaseModel):
    """The turn (invocation) shown for a case: ``turn`` of ``turns``, counting from 1.

    ``user`` is the user's message; ``expected_response`` / ``actual_response`` the final
    responses (None when there is none on that side), cut at :data:`TEXT_CHARS`;
    ``tool_changes`` the tool-call differences (``more_tool_changes`` left out);
    ``expected_calls`` / ``actual_calls`` how many tool calls each side has (None: nothing
    to compare with, a ``conversation_scenario`` case or one judged by rubrics or custom
    metrics only: the module's rules); ``calls_made`` then the turn's calls as
    ``name(arg=JSON, …)``, at most :data:`MAX_TOOL_CHANGES`; ``failed_metrics`` the gated
    metrics that failed on this turn.
    """

    turn: int
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


class CaseEvidence(BaseModel):
    """Why one eval case failed (the module's rules). ``change`` is the case's change kind
    (``newly_failing``, ``still_failing``, …); ``run`` of ``runs`` is the run shown;
    ``error`` that run's error; ``more_rubrics`` how many rubric lines were left out."""

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
    failing cases only: :data:`adk_eval_action.results.scoretable.MAX_KEPT_RECORDS`).

    Raises nothing for odd records (hand-edited files): what cannot be read is left out.
    """
    wanted = {c.key: c for c in cases if c.head_status is not None}
    records = _records(results, set(wanted))
    out = []
    for key, case in wanted.items():
        record = records.get(key)
        if record is None or not record.runs:
            continue
        out.append(case_evidence(case, record))
        if len(out) >= limit:
            break
    return out


def _records(results: RunResults | ScoreTable, keys: set[CaseKey]) -> dict[CaseKey, EvalCaseRecord]:
    if isinstance(results, ScoreTable):
        return {k: r for k, r in results.failing_records.items() if k in keys}
    found: dict[CaseKey, EvalCaseRecord] = {}
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                key = (suite.name, eval_set.eval_set_id, case.eval_id)
                if key in keys and key not in found:
                    found[key] = case
    return found


def case_evidence(case: CaseComparison, record: EvalCaseRecord) -> CaseEvidence:
    """The evidence of one case from its record (the module's rules)."""
    run = next((r for r in record.runs if not run_passed(r)), record.runs[0])
    gated = [m for m in run.metrics if not m.informational]
    rubrics = list(_failed_rubrics(gated))
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
        turn=_turn(record.expected_invocations, run, gated),
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


def _failed_rubrics(metrics: Iterable[MetricResult]) -> Iterable[RubricEvidence]:
    for metric in metrics:
        per_turn = [(inv.index + 1, r) for inv in metric.invocations for r in inv.rubrics]
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


def _turn(
    expected: list[dict[str, Any]] | None, run: RunRecord, gated: list[MetricResult]
) -> TurnEvidence | None:
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
    return _turn_at(index, expected_at(index), actual, compare_calls, failing.get(index, []))


def _turn_at(
    index: int,
    expected: dict[str, Any] | None,
    actual: list[dict[str, Any]],
    compare_calls: bool,
    failed: list[str],
) -> TurnEvidence:
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
            call_text(name, _args(args)) for name, args in made[:MAX_TOOL_CHANGES]
        ],
        failed_metrics=failed,
    )


# --- reading ADK invocations (as JSON) ------------------------------------------------

ToolCall = tuple[str, dict[str, Any]]


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def tool_calls(invocation: Mapping[str, Any] | None) -> list[ToolCall]:
    """``(name, args)`` of every tool call of an ADK ``Invocation`` (as JSON), read as
    ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads them: ``tool_uses`` of
    ``IntermediateData``, or the ``function_call`` parts of ``InvocationEvents``."""
    data = (invocation or {}).get("intermediate_data")
    if not isinstance(data, dict):
        return []
    if "invocation_events" in data:
        calls = [
            part["function_call"]
            for event in _dicts(data["invocation_events"])
            for part in _dicts((event.get("content") or {}).get("parts"))
            if isinstance(part.get("function_call"), dict)
        ]
    else:
        calls = _dicts(data.get("tool_uses"))
    return [
        (cut(one_line(c.get("name")), 80), c["args"] if isinstance(c.get("args"), dict) else {})
        for c in calls
    ]


def content_text(content: Any) -> str | None:
    """The text of a genai ``Content`` (as JSON): its text parts that are not thoughts,
    joined by newlines; None when it has none."""
    if not isinstance(content, dict):
        return None
    texts = [
        p["text"]
        for p in _dicts(content.get("parts"))
        if isinstance(p.get("text"), str) and not p.get("thought")
    ]
    return "\n".join(texts) if texts else None


def response_text(invocation: Mapping[str, Any] | None) -> str | None:
    """The final response text of an ADK ``Invocation`` (as JSON), or None."""
    return content_text((invocation or {}).get("final_response"))


def _json(value: Any) -> str:
    return cut(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), VALUE_CHARS)


def tool_call_changes(expected: list[ToolCall], actual: list[ToolCall]) -> list[ToolCallChange]:
    """The differences between two tool-call sequences (the module's rules)."""
    matcher = difflib.SequenceMatcher(
        a=[n for n, _ in expected], b=[n for n, _ in actual], autojunk=False
    )
    changes: list[ToolCallChange] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            for (name, e_args), (_, a_args) in zip(expected[a0:a1], actual[b0:b1], strict=True):
                if e_args != a_args:
                    changes.append(_changed(name, e_args, a_args))
            continue
        changes.extend(
            ToolCallChange(change="missing", name=n, expected_args=_args(a))
            for n, a in expected[a0:a1]
        )
        changes.extend(
            ToolCallChange(change="unexpected", name=n, actual_args=_args(a))
            for n, a in actual[b0:b1]
        )
    return changes


def call_text(name: str, args: Mapping[str, str | None], same: int = 0) -> str:
    """A tool call as one line, ``name(key=JSON, …)``: ``args`` as :func:`tool_call_changes`
    gives them (None: not given on that side, left out); ``same`` equal arguments left out
    are shown as ``…``."""
    shown = [f"{key}={value}" for key, value in args.items() if value is not None]
    if same:
        shown.append("…")
    return f"{name}({', '.join(shown)})"


def _key(name: Any) -> str:
    return cut(one_line(name), 40)


def _args(args: dict[str, Any]) -> dict[str, str | None]:
    return {_key(k): _json(v) for k, v in args.items()}


def _changed(name: str, expected: dict[str, Any], actual: dict[str, Any]) -> ToolCallChange:
    keys = list(dict.fromkeys([*expected, *actual]))
    differ = [k for k in keys if k not in expected or k not in actual or expected[k] != actual[k]]
    return ToolCallChange(
        change="changed",
        name=name,
        expected_args={_key(k): _json(expected[k]) if k in expected else None for k in differ},
        actual_args={_key(k): _json(actual[k]) if k in actual else None for k in differ},
        same_args=len(keys) - len(differ),
    )


def excerpt_pair(
    expected: str | None, actual: str | None, limit: int
) -> tuple[str | None, str | None]:
    """Both texts on one line and cut to ``limit``; when they share a beginning longer than
    half of ``limit``, both start :data:`CONTEXT_CHARS` before their first difference
    (with a leading ``…``), so the excerpt shows where they differ."""
    e = one_line(expected) if expected is not None else None
    a = one_line(actual) if actual is not None else None
    start = 0
    if e is not None and a is not None:
        common = len(_common_prefix(e, a))
        if common > limit // 2:
            start = common - CONTEXT_CHARS

    def excerpt(text: str | None) -> str | None:
        if text is None:
            return None
        return cut("…" + text[start:] if start else text, limit)

    return excerpt(e), excerpt(a)


def _common_prefix(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return a[:i]
    return a[: min(len(a), len(b))]


__all__ = [
    "CaseEvidence",
    "MetricEvidence",
    "RubricEvidence",
    "ToolCallChange",
    "TurnEvidence",
    "collect_evidence",
]

"""One side's eval cases as the HTML report shows them: every run, every turn, every call.

Read from a case's record in the results file alone (:class:`EvalCaseRecord`), as
:mod:`.evidence` reads it, but whole rather than the one failing turn: for each run of a
side, each turn's user message, tool calls (expected vs actual, with the differing
arguments marked), tool responses, intermediate responses and final response; each
metric's score, status, threshold and reason; each rubric's verdict with the judge's
rationale, per turn.

Rules:

* **Tool calls** are read as ``google.adk.evaluation.eval_case.get_all_tool_calls`` reads
  them (:func:`.invocations.tool_calls`); **tool responses** likewise from ``tool_responses``
  of ``IntermediateData`` or the ``function_response`` parts of ``InvocationEvents``;
  **intermediate responses** are ``intermediate_responses`` (author, parts) or the text
  parts of the events (thoughts left out, as ADK's evaluators leave them out).
* **Marks**: a run's calls of a turn are aligned with that side's expected calls of the
  same turn by tool name (``difflib``, as :func:`.evidence.tool_call_changes`); an aligned
  call marks each argument that differs (``diff``), is not expected (``extra``) or was not
  given (``missing``, with the expected value); a call not aligned is ``unexpected``; an
  expected call no aligned call made is listed as ``missing``. Calls are compared only
  where :mod:`.evidence` compares them (a case with expected calls, or one judged by
  ``tool_trajectory_avg_score``); elsewhere they are listed unmarked. A final response
  that is not the expected one, character for character, is marked ``diff``.
* **Text** keeps its lines; control and bidi characters are written as visible escapes
  (:func:`adk_eval_action.text.visible`); each text is cut at :data:`TEXT_CHARS` (tool
  responses :data:`RESPONSE_CHARS`, argument values :data:`VALUE_CHARS`); at most
  :data:`MAX_TURNS` turns per run and :data:`MAX_CALLS` calls per turn, with the number
  left out.

Values are small slotted dataclasses (10,000 cases x 3 runs make hundreds of thousands of
them: pydantic validation of each cost more than the rest), written to JSON for the
report's script (:func:`adk_eval_action.report.html.body_json`) and read as attributes by its
template.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adk_eval_action.report.evidence import TRAJECTORY_METRIC
from adk_eval_action.report.format import score as _score
from adk_eval_action.report.invocations import content_text, tool_calls
from adk_eval_action.results.model import (
    EvalCaseRecord,
    MetricResult,
    RubricScoreRecord,
    RunRecord,
    RunResults,
)
from adk_eval_action.results.scoretable import CaseKey, ScoreTable
from adk_eval_action.text import visible

TEXT_CHARS = 4000
"""User messages, final and intermediate responses, reasons and rationales are cut here."""
RESPONSE_CHARS = 2000
"""A tool response, as JSON, is cut here."""
VALUE_CHARS = 500
"""Each tool argument value, as JSON, is cut here."""
MAX_TURNS = 50
"""Turns shown per run (the rest counted)."""
MAX_CALLS = 50
"""Tool calls, tool responses and intermediate responses shown per turn (the rest counted)."""


@functools.lru_cache(maxsize=1 << 12)
def score(value: float | None) -> str:
    """:func:`adk_eval_action.report.format.score`, cached: scores repeat (0, 1, a
    threshold) across hundreds of thousands of results."""
    return _score(value)


def clip(value: Any, limit: int = TEXT_CHARS) -> str:
    """``value`` as text with control and bidi characters visible (newlines and tabs
    kept), cut to ``limit`` characters (the last one ``…`` when cut)."""
    if isinstance(value, str) and len(value) <= SHORT:
        return _short(value, limit)
    text = visible(str(value if value is not None else ""))
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


_ZERO_WIDTH = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")
"""Characters that show as nothing: written as escapes in names (:func:`ident`), where two
ids that look the same must be told apart; kept in prose (emoji sequences need U+200D)."""


def ident(value: Any, limit: int = 200) -> str:
    """An identifier (eval id, suite, eval set, metric, rubric, tool, argument) as
    :func:`clip` shows it, with zero-width characters escaped too (``\u200b``)."""
    if isinstance(value, str) and len(value) <= SHORT:
        return _ident(value, limit)
    return _zero_width_shown(clip(value, limit))


def _zero_width_shown(text: str) -> str:
    return _ZERO_WIDTH.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@functools.lru_cache(maxsize=1 << 14)
def _ident(value: str, limit: int) -> str:
    return _zero_width_shown(_short(value, limit))


SHORT = 200
"""Texts up to this long are :func:`clip` ped through a cache: names, rubric texts and
user messages repeat across runs and cases (a third of the views' time was spent
escaping the same strings again)."""


@functools.lru_cache(maxsize=1 << 16)
def _short(value: str, limit: int) -> str:
    text = visible(value)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
"""One encoder for every value (``json.dumps`` with options makes a new one per call)."""


def as_json(value: Any, limit: int = VALUE_CHARS) -> str:
    """``value`` as JSON text (non-ASCII kept, keys sorted), :func:`clip` ped; what JSON
    cannot hold (nested past the parser's depth) as its ``str``."""
    try:
        text = _JSON.encode(value)
    except (ValueError, RecursionError):
        text = "(not shown: nested too deeply for JSON)"
    return clip(text, limit)


@dataclass(slots=True)
class ArgView:
    """One argument of a tool call: ``value`` as JSON (None: not given), its ``mark``
    (``""`` as expected or nothing to compare, ``diff``, ``extra``, ``missing``) and the
    ``expected`` value (JSON) when it differs or is missing."""

    key: str
    value: str | None = None
    mark: str = ""
    expected: str | None = None


@dataclass(slots=True)
class CallView:
    """A tool call: ``mark`` is ``""`` (aligned with an expected call, or nothing to
    compare), ``unexpected`` or ``missing`` (expected, not made: ``args`` are the expected
    ones)."""

    name: str
    args: list[ArgView] = field(default_factory=list)
    mark: str = ""


@dataclass(slots=True)
class NamedText:
    """A tool response (``name`` the tool's) or an intermediate response (``name`` its
    author), ``text`` as shown."""

    name: str
    text: str


@dataclass(slots=True)
class RubricView:
    """A rubric's verdict: ``verdict`` is ``yes`` (score 1), ``no`` (0), the mean score
    over judge samples in between, or ``no verdict`` (``reason`` says why); ``ok`` is
    ``yes``, ``no`` or ``none`` (no verdict); ``rationale`` is the judge's own."""

    metric: str
    rubric_id: str
    verdict: str
    ok: str
    text: str | None = None
    rationale: str | None = None
    reason: str | None = None


@dataclass(slots=True)
class ScoreView:
    """A metric's score for one turn, as shown (``status`` as ADK's evaluator gave it)."""

    metric: str
    score: str
    status: str


@dataclass(slots=True)
class TurnView:
    """One turn (invocation), ``turn`` counting from 1. ``final_mark`` is ``diff`` when the
    final response is not the expected one; ``more`` counts the calls, responses and
    intermediate responses left out (:data:`MAX_CALLS`)."""

    turn: int
    user: str | None = None
    calls: list[CallView] = field(default_factory=list)
    responses: list[NamedText] = field(default_factory=list)
    steps: list[NamedText] = field(default_factory=list)
    final: str | None = None
    final_mark: str = ""
    scores: list[ScoreView] = field(default_factory=list)
    rubrics: list[RubricView] = field(default_factory=list)
    more: int = 0


@dataclass(slots=True)
class MetricView:
    """A metric's result in one run, as shown: score, status, threshold (``≥ 0.8``, or
    ``≤ 20`` when lower is better), its judge model and reason."""

    metric: str
    status: str
    score: str
    threshold: str | None = None
    informational: bool = False
    reason: str | None = None
    judge: str | None = None


@dataclass(slots=True)
class RunView:
    """One run (repeat), ``run`` counting from 1: status, error, turns (``more_turns``
    left out), metrics, and the overall rubric verdicts of metrics without per-turn ones."""

    run: int
    status: str
    error: str | None = None
    error_kind: str | None = None
    turns: list[TurnView] = field(default_factory=list)
    more_turns: int = 0
    metrics: list[MetricView] = field(default_factory=list)
    rubrics: list[RubricView] = field(default_factory=list)


@dataclass(slots=True)
class SideCase:
    """One side's view of an eval case: its ``expected`` turns (None when nothing is
    expected: a ``conversation_scenario`` case) and its ``runs``."""

    expected: list[TurnView] | None
    runs: list[RunView]


# --- reading ADK invocations (as JSON) ------------------------------------------------


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _parts(content: Any) -> list[dict[str, Any]]:
    return _dicts(content.get("parts")) if isinstance(content, dict) else []


def _responses(data: Mapping[str, Any]) -> list[NamedText]:
    if "invocation_events" in data:
        found = [
            part["function_response"]
            for event in _dicts(data["invocation_events"])
            for part in _parts(event.get("content"))
            if isinstance(part.get("function_response"), dict)
        ]
    else:
        found = _dicts(data.get("tool_responses"))
    return [NamedText(ident(r.get("name"), 80), as_json(r.get("response"), RESPONSE_CHARS))
            for r in found]


def _steps(data: Mapping[str, Any]) -> list[NamedText]:
    if "invocation_events" in data:
        pairs = [(e.get("author"), e.get("content")) for e in _dicts(data["invocation_events"])]
    else:
        pairs = [
            (item[0], {"parts": item[1]})
            for item in data.get("intermediate_responses") or []
            if isinstance(item, (list, tuple)) and len(item) == 2
        ]
    steps = []
    for author, content in pairs:
        text = content_text(content)
        if text:
            steps.append(NamedText(ident(author, 80), clip(text)))
    return steps


def _args(args: Mapping[str, Any]) -> list[ArgView]:
    return [ArgView(ident(k, 80), as_json(v)) for k, v in args.items()]


def _aligned(tool: str, expected: Mapping[str, Any], actual: Mapping[str, Any]) -> CallView:
    args = []
    for key in dict.fromkeys([*actual, *expected]):
        shown = ident(key, 80)
        if key not in expected:
            args.append(ArgView(shown, as_json(actual[key]), "extra"))
        elif key not in actual:
            args.append(ArgView(shown, None, "missing", as_json(expected[key])))
        elif actual[key] != expected[key]:
            args.append(ArgView(shown, as_json(actual[key]), "diff", as_json(expected[key])))
        else:
            args.append(ArgView(shown, as_json(actual[key])))
    return CallView(ident(tool, 80), args)


ToolCall = tuple[str, dict[str, Any]]


def marked_calls(expected: list[ToolCall] | None, actual: list[ToolCall]) -> list[CallView]:
    """``actual`` calls marked against ``expected`` (the module's rules); unmarked when
    ``expected`` is None (nothing to compare with)."""
    if expected is None:
        return [CallView(ident(n, 80), _args(args)) for n, args in actual]
    if [n for n, _ in expected] == [n for n, _ in actual]:  # the usual case: no difflib
        return [_aligned(n, e, a) for (n, e), (_, a) in zip(expected, actual, strict=True)]
    matcher = difflib.SequenceMatcher(
        a=[n for n, _ in expected], b=[n for n, _ in actual], autojunk=False
    )
    out: list[CallView] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out += [_aligned(n, e, a) for (n, e), (_, a) in
                    zip(expected[a0:a1], actual[b0:b1], strict=True)]
            continue
        out += [CallView(ident(n, 80), _args(a), "unexpected") for n, a in actual[b0:b1]]
        out += [CallView(ident(n, 80), _args(e), "missing") for n, e in expected[a0:a1]]
    return out


def _final(invocation: Mapping[str, Any] | None) -> str | None:
    text = content_text((invocation or {}).get("final_response"))
    return clip(text) if text is not None else None


def turn_view(
    index: int, invocation: Mapping[str, Any], expected: Mapping[str, Any] | None = None,
    compare: bool = False,
) -> TurnView:
    """Turn ``index`` (from 0) of a run, or of the expected conversation when ``expected``
    is None and ``compare`` False; with ``compare`` its calls and final response are
    marked against ``expected`` (the module's rules)."""
    data = invocation.get("intermediate_data")
    data = data if isinstance(data, dict) else {}
    calls = marked_calls(tool_calls(expected) if compare else None, tool_calls(invocation))
    responses, steps = _responses(data), _steps(data)
    final = _final(invocation)
    expected_final = _final(expected) if expected is not None else None
    more = max(0, len(calls) - MAX_CALLS) + max(0, len(responses) - MAX_CALLS) + max(
        0, len(steps) - MAX_CALLS)
    user = content_text(invocation.get("user_content"))
    return TurnView(
        turn=index + 1,
        user=clip(user) if user is not None else None,
        calls=calls[:MAX_CALLS],
        responses=responses[:MAX_CALLS],
        steps=steps[:MAX_CALLS],
        final=final,
        final_mark="diff" if expected_final is not None and final != expected_final else "",
        more=more,
    )


def verdict(value: float | None) -> tuple[str, str]:
    """A rubric score as ``(verdict, ok)`` (:class:`RubricView`)."""
    if value is None:
        return "no verdict", "none"
    if value >= 1.0:
        return "yes", "yes"
    return ("no" if value <= 0.0 else score(value)), "no"


def _rubric(metric: str, rubric: RubricScoreRecord) -> RubricView:
    said, ok = verdict(rubric.score)
    return RubricView(
        metric=metric, rubric_id=ident(rubric.rubric_id), verdict=said, ok=ok,
        text=clip(rubric.text) if rubric.text else None,
        rationale=clip(rubric.rationale) if rubric.rationale else None,
        reason=clip(rubric.reason) if rubric.reason else None,
    )


def threshold_text(value: float | None, higher_is_better: bool = True) -> str | None:
    """``≥ 0.8`` (``≤ 20`` when lower is better), None without a threshold."""
    return None if value is None else f"{'≥' if higher_is_better else '≤'} {score(value)}"


def _metric(m: MetricResult) -> MetricView:
    return MetricView(
        metric=ident(m.metric_name), status=str(m.status), score=score(m.score),
        threshold=threshold_text(m.threshold, m.higher_is_better),
        informational=m.informational,
        reason=clip(m.reason) if m.reason else None,
        judge=clip(m.judge_model, 200) if m.judge_model else None,
    )


def _compares_calls(expected: list[dict[str, Any]] | None, run: RunRecord) -> bool:
    """:mod:`.evidence`'s rule: calls are compared when the case expects some, or when
    ``tool_trajectory_avg_score`` judges it (then no expected call means "call none")."""
    return expected is not None and (
        any(tool_calls(e) for e in expected)
        or any(m.metric_name == TRAJECTORY_METRIC for m in run.metrics))


def run_view(run: RunRecord, expected: list[dict[str, Any]] | None) -> RunView:
    """One run of a case, marked against the case's ``expected`` invocations."""
    compare = _compares_calls(expected, run)
    actual = run.actual_invocations or []
    turns = []
    for i, invocation in enumerate(actual[:MAX_TURNS]):
        if not isinstance(invocation, dict):
            continue
        want = expected[i] if expected is not None and i < len(expected) else None
        turns.append(turn_view(i, invocation, want, compare and want is not None))
    by_turn = {t.turn: t for t in turns}
    overall: list[RubricView] = []
    for m in run.metrics:
        metric = ident(m.metric_name)
        for inv in m.invocations:
            turn = by_turn.get(inv.index + 1)
            if turn is None:
                continue
            if not m.informational:
                turn.scores.append(ScoreView(metric, score(inv.score), str(inv.status)))
            turn.rubrics += [_rubric(metric, r) for r in inv.rubrics]
        if not any(inv.rubrics for inv in m.invocations):
            overall += [_rubric(metric, r) for r in m.rubrics]
    return RunView(
        run=run.run, status=str(run.status),
        error=clip(run.error) if run.error else None, error_kind=run.error_kind,
        turns=turns, more_turns=max(0, len(actual) - MAX_TURNS),
        metrics=[_metric(m) for m in run.metrics], rubrics=overall,
    )


def side_case(record: EvalCaseRecord) -> SideCase:
    """One side's view of a case (the module's rules)."""
    expected = record.expected_invocations
    shown = None
    if expected is not None:
        shown = [turn_view(i, e) for i, e in enumerate(expected[:MAX_TURNS])
                 if isinstance(e, dict)]
    return SideCase(expected=shown, runs=[run_view(r, expected) for r in record.runs])


def case_records(results: RunResults | ScoreTable | None) -> dict[CaseKey, EvalCaseRecord]:
    """Every eval case record of ``results`` by (suite, eval set id, eval id), the first of
    a key seen twice (as compare keeps it); empty for None; of a table, the records it kept
    (:attr:`ScoreTable.kept_records`: load the whole results for every case's evidence).
    The report builds each case's view (:func:`side_case`) only when it shows that case's
    evidence."""
    if isinstance(results, ScoreTable):
        return dict(results.kept_records)
    out: dict[CaseKey, EvalCaseRecord] = {}
    for suite in results.suites if results is not None else ():
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                out.setdefault((suite.name, eval_set.eval_set_id, case.eval_id), case)
    return out

"""The evidence rules (report/evidence.py) on hand-built invocations, each expectation
written out by hand; the custom metric's reason through google-adk's own result models."""

from __future__ import annotations

from typing import Any

from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import (
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
)
from google.adk.evaluation.eval_result import EvalCaseResult
from google.adk.evaluation.eval_rubrics import RubricScore
from google.genai import types

from adk_eval_action.adk.files.convert import MetricMeta, metric_result_from_adk
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.diffblock import evidence_diff
from adk_eval_action.report.evidence import (
    CONTEXT_CHARS,
    TEXT_CHARS,
    ToolCallChange,
    collect_evidence,
    excerpt_pair,
    response_text,
    tool_call_changes,
    tool_calls,
)
from adk_eval_action.report.render import CommentContext, with_evidence
from adk_eval_action.results.model import RunResults
from adk_eval_action.results.scoretable import (
    MAX_KEPT_OTHER_RECORDS,
    MAX_KEPT_RECORDS,
    ScoreTable,
)
from support.evidence_fixtures import actual_turn, evidence_sides, expected_turn, per_turn
from support.results_builder import metric, results
from support.tables import compare


def test_tool_calls_are_read_from_both_adk_shapes() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_weather", {"city": "Paris"}), ("add", {"a": 1})]
    assert tool_calls(expected_turn("q", "r", calls)) == calls
    assert tool_calls(actual_turn("q", "r", calls)) == calls
    assert tool_calls(None) == [] and tool_calls({"intermediate_data": "odd"}) == []


def test_thought_parts_are_not_the_response() -> None:
    assert response_text(actual_turn("q", "the answer")) == "the answer"


def test_tool_call_diff_shows_only_what_differs() -> None:
    expected: list[tuple[str, dict[str, Any]]] = [
        ("add", {"a": 20, "b": 22}), ("log", {"msg": "x"}), ("ask", {})]
    actual: list[tuple[str, dict[str, Any]]] = [
        ("add", {"a": 20, "b": 23}), ("ask", {}), ("shout", {"msg": "X"})]
    assert tool_call_changes(expected, actual) == [
        ToolCallChange(
            change="changed",
            name="add",
            expected_args={"b": "22"},
            actual_args={"b": "23"},
            same_args=1,
        ),
        ToolCallChange(change="missing", name="log", expected_args={"msg": '"x"'}),
        ToolCallChange(change="unexpected", name="shout", actual_args={"msg": '"X"'}),
    ]
    assert tool_call_changes(expected, expected) == []
    (given_only_once,) = tool_call_changes([("f", {"a": 1})], [("f", {"a": 1, "b": 2})])
    assert given_only_once.expected_args == {"b": None}
    assert given_only_once.actual_args == {"b": "2"}


def test_long_responses_are_cut_around_the_first_difference() -> None:
    same = "word " * 100
    expected, actual = excerpt_pair(same + "in Celsius.", same + "in Kelvin.", TEXT_CHARS)
    assert expected is not None and actual is not None
    assert expected.startswith("…") and actual.startswith("…")
    assert expected.endswith("in Celsius.") and actual.endswith("in Kelvin.")
    # They differ from "C"/"K" on: the excerpt keeps CONTEXT_CHARS before that.
    assert len(expected) == 1 + CONTEXT_CHARS + len("Celsius.")
    short, long = excerpt_pair("a", "x\n" * 1000, TEXT_CHARS)
    assert short == "a" and long is not None
    assert len(long) == TEXT_CHARS and long.endswith("…") and "\n" not in long


def _context(head: RunResults | ScoreTable, base: RunResults) -> list:
    comparison = compare(head, base, "b")
    gate = decide(comparison, GateConfig())
    return collect_evidence(head, gate.failing_cases)


def _drops(head: RunResults | ScoreTable, base: RunResults | ScoreTable) -> list:
    comparison = compare(head, base, "b")
    context = CommentContext(comparison=comparison, gate=decide(comparison, GateConfig()))
    return with_evidence(context, head, base).dropped_evidence


def test_first_differing_turn_of_a_multi_turn_case() -> None:
    head, base = evidence_sides()
    trip = next(e for e in _context(head, base) if e.eval_id == "trip")
    assert trip.turn is not None and (trip.turn.turn, trip.turn.turns) == (2, 3)
    assert trip.turn.failed_metrics == [
        "tool_trajectory_avg_score",
        "rubric_based_final_response_quality_v1",
    ]
    # Without per-invocation statuses, the first turn whose tool calls differ.
    for metric_result in head.suites[0].eval_sets[0].eval_cases[1].runs[0].metrics:
        metric_result.invocations = []
    trip = next(e for e in _context(head, base) if e.eval_id == "trip")
    assert trip.turn is not None and trip.turn.turn == 2 and trip.turn.failed_metrics == []


def test_evidence_order_and_what_is_left_out() -> None:
    head, base = evidence_sides()
    evidence = _context(head, base)
    # Newly failing before still failing; the passing case has none.
    assert [e.eval_id for e in evidence] == ["paris", "trip", "rude"]
    assert [e.change for e in evidence] == ["newly_failing", "newly_failing", "still_failing"]
    assert evidence[0].metrics[0].metric_name == "tool_trajectory_avg_score"
    assert [m.metric_name for m in evidence[1].metrics] == [
        "tool_trajectory_avg_score",
        "rubric_based_final_response_quality_v1",
    ]


def test_the_compare_path_keeps_the_records_it_needs() -> None:
    head, base = evidence_sides()
    table = ScoreTable.from_results(head)
    # A small run keeps every record: the failing cases' and the passing one's (a passing
    # case can still be worse than the baseline and needs its evidence).
    assert set(table.kept_records) == {
        ("travel", "trips", "paris"),
        ("travel", "trips", "trip"),
        ("travel", "trips", "rude"),
        ("travel", "trips", "fine"),
        ("travel", "trips", "tokyo"),
    }
    assert _context(table, base) == _context(head, base)
    # The evidence of the case worse than the baseline, from both sides' tables (what
    # `compare` reads) and from the loaded results (what `run` has), is the same.
    tables = _drops(table, ScoreTable.from_results(base))
    assert tables == _drops(head, base)
    assert [e.eval_id for e in tables] == ["tokyo"]
    many = results(
        {f"c{i}": [[metric("m", 0.0)]] for i in range(MAX_KEPT_RECORDS + 50)}
        | {f"ok{i}": [[metric("m", 1.0)]] for i in range(MAX_KEPT_OTHER_RECORDS + 5)}
    )
    kept = ScoreTable.from_results(many).kept_records
    failing = [k for k in kept if k[2].startswith("c")]
    passing = [k for k in kept if k[2].startswith("ok")]
    assert len(failing) == MAX_KEPT_RECORDS
    assert len(passing) == MAX_KEPT_OTHER_RECORDS
    assert ("travel", "smoke", "ok0") in kept
    assert ("travel", "smoke", f"ok{MAX_KEPT_OTHER_RECORDS}") not in kept


def _adk_case(metric_result: EvalMetricResult, per_turn: list[RubricScore]) -> EvalCaseResult:
    invocation = Invocation(user_content=types.Content(parts=[types.Part(text="q")]))
    turn_result = metric_result.model_copy(deep=True)
    turn_result.details.rubric_scores = per_turn
    return EvalCaseResult(
        eval_set_id="s",
        eval_id="c",
        final_eval_status=EvalStatus.FAILED,
        overall_eval_metric_results=[metric_result],
        eval_metric_result_per_invocation=[
            EvalMetricResultPerInvocation(
                actual_invocation=invocation, eval_metric_results=[turn_result]
            )
        ],
        session_id="x",
    )


def test_a_custom_metric_explains_itself_with_a_rubric_score_rationale() -> None:
    custom = EvalMetricResult(metric_name="politeness", score=-1.0, threshold=0.0,
                              eval_status=EvalStatus.FAILED)  # 1.23 requires the threshold
    custom.details.rubric_scores = [RubricScore(rubric_id="why", rationale="says 'duh'")]
    result = metric_result_from_adk(custom, _adk_case(custom, []), MetricMeta(), {})
    assert result.reason == "says 'duh'" and result.rubrics == []
    # Only per-invocation explanations: each prefixed with its turn.
    custom.details.rubric_scores = None
    case = _adk_case(custom, [RubricScore(rubric_id="why", rationale="rude")])
    result = metric_result_from_adk(custom, case, MetricMeta(), {})
    assert result.reason == "turn 1: rude" and result.invocations[0].rubrics == []
    # A rubric metric's verdicts stay verdicts, whatever their id.
    judged = EvalMetricResult(
        metric_name="rubric_based_final_response_quality_v1",
        score=0.0,
        eval_status=EvalStatus.FAILED,
    )
    judged.details.rubric_scores = [RubricScore(rubric_id="r1", score=0.0, rationale="no")]
    result = metric_result_from_adk(judged, _adk_case(judged, []), MetricMeta(), {})
    assert result.reason is None and [r.rubric_id for r in result.rubrics] == ["r1"]


def _rubric_only_case(*metric_names: str) -> list:
    """One case expecting no tool call and no final response, judged by a per-turn rubric
    the judge said "no" to (and by ``metric_names`` too, each failing)."""
    expected = expected_turn("create folder Q3", "")
    del expected["final_response"]
    rubric = per_turn(
        metric("rubric_based_tool_use_quality_v1", 0.0, threshold=0.8), ["failed"],
        [{"t1_deletes": ('Calls "delete_folder".', 0.0, "missing 'delete_folder'")}],
    )
    others = [metric(name, 0.0, threshold=1.0) for name in metric_names]
    head = results({"folder": [[rubric, *others]]})
    case = head.suites[0].eval_sets[0].eval_cases[0]
    case.expected_invocations = [expected]
    case.runs[0].actual_invocations = [
        actual_turn("create folder Q3", "Folder Q3 created.", [("create_folder", {"name": "Q3"})])
    ]
    return collect_evidence(head, decide(compare(head, None, "none"), GateConfig()).failing_cases)


def test_a_case_judged_by_rubrics_only_lists_the_calls_made_and_leads_with_its_rubrics():
    (evidence,) = _rubric_only_case()
    turn = evidence.turn
    assert turn is not None and turn.nothing_expected and evidence.rubrics_first
    assert (turn.expected_calls, turn.tool_changes) == (None, [])
    assert turn.calls_made == ['create_folder(name="Q3")']
    assert evidence_diff(evidence).splitlines()[1:-1] == [
        "@@ turn 1 of 1 @@",
        "  user: create folder Q3",
        '  tool calls made: create_folder(name="Q3") (no expected calls to compare with)',
        "  final response: Folder Q3 created.",
    ]


def test_with_the_trajectory_metric_no_expected_call_means_call_none():
    (evidence,) = _rubric_only_case("tool_trajectory_avg_score")
    turn = evidence.turn
    assert turn is not None and not evidence.rubrics_first
    assert turn.expected_calls == 0
    assert turn.tool_changes == [
        ToolCallChange(change="unexpected", name="create_folder", actual_args={"name": '"Q3"'})
    ]
    assert '+ create_folder(name="Q3")    (not expected)' in evidence_diff(evidence)

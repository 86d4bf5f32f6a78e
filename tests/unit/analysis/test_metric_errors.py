"""One error record per metric and reason without a score, naming every eval set and eval
case it hit (bounded), and a metric's code failure as an incomplete run, not the agent's."""

from __future__ import annotations

from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, MetricStatus, SuiteRecord
from adk_eval_action.results.records import (
    JUDGE_ANSWER_COUNTED_HINT,
    JUDGE_ANSWER_HINT,
    JUDGE_CALL_FAILED,
    JUDGE_FAULT_HINT,
    JUDGE_OUTAGE_HINT,
    MAX_LISTED_CASES,
    MAX_LISTED_EVAL_SETS,
    NO_PARSABLE_VERDICT,
    UNPARSABLE_ANSWER,
    is_metric_error,
    metric_errors,
    recomputed_metric_errors,
)
from support.results_builder import metric, results


def _suite(eval_sets: dict[str, dict[str, int]], status: MetricStatus, reason: str) -> SuiteRecord:
    """One suite; ``eval_sets``: eval set id -> {eval id: runs}, each run scoring ``ok`` and a
    ``mine`` metric without a score (``status``, ``reason``)."""
    suite = None
    for set_id, cases in eval_sets.items():
        side = results(
            {eval_id: [[metric("ok", 0.9), metric("mine", None, status=status)]] * runs
             for eval_id, runs in cases.items()},
            eval_set=set_id,
        )
        for case in side.suites[0].eval_sets[0].eval_cases:
            for run in case.runs:
                run.metrics[1].reason = reason
        if suite is None:
            suite = side.suites[0]
        else:
            suite.eval_sets += side.suites[0].eval_sets
    assert suite is not None
    return suite


def test_a_metric_whose_code_failed_names_every_eval_set_and_case_and_is_incomplete() -> None:
    suite = _suite({"legacy": {"legacy": 1}, "travel": {"a": 2, "b": 1, "c": 1}},
                   MetricStatus.ERROR, "ValueError: metric bug")
    [error] = metric_errors(suite)
    # By hand: 1 + 2 + 1 + 1 = 5 runs of 4 cases in 2 eval sets.
    assert error.message == (
        "the code of `mine` failed in 5 runs of 4 eval cases across 2 eval sets: "
        "legacy.evalset.json (legacy), travel.evalset.json (a, b, c): ValueError: metric bug"
    )
    assert error.kind == "metric_code" and error.kind in INCOMPLETE_ERROR_KINDS
    assert (error.file, error.eval_set_id, error.eval_id) == (None, None, None)
    assert is_metric_error(error)  # recomputed on merge, never merged twice


def test_a_metric_not_evaluated_in_one_case_names_it_and_is_the_gates_to_count() -> None:
    suite = _suite({"trip": {"t": 3}}, MetricStatus.NOT_EVALUATED, "no verdict")
    [error] = metric_errors(suite)
    assert error.message == "`mine` not evaluated in 3 runs of 1 eval case in " \
        "trip.evalset.json (t): no verdict"
    assert error.kind == "metric" and error.kind not in INCOMPLETE_ERROR_KINDS
    where = (error.file, error.eval_set_id, error.eval_id)
    assert where == ("evals/trip.evalset.json", "trip", "t")
    assert is_metric_error(error)


def test_a_huge_suite_keeps_the_message_bounded() -> None:
    sets = {f"s{i}": {f"s{i}_c{j}": 1 for j in range(20)} for i in range(10)}
    [error] = metric_errors(_suite(sets, MetricStatus.ERROR, "ValueError: x"))
    listed = [f"s0_c{j}" for j in range(MAX_LISTED_CASES)]
    assert error.message.startswith(
        "the code of `mine` failed in 200 runs of 200 eval cases across 10 eval sets: "
        f"s0.evalset.json ({', '.join(listed)}, … and {20 - MAX_LISTED_CASES} more), "
    )
    assert error.message.endswith(f", … and {10 - MAX_LISTED_EVAL_SETS} more: ValueError: x")
    assert error.message.count(".evalset.json") == MAX_LISTED_EVAL_SETS
    assert len(error.message) < 600  # the comment's limit for an error (md(600))


def _judged(suite: SuiteRecord, judge: str = "my-judge") -> SuiteRecord:
    """``suite`` with its ``mine`` metric judged by ``judge``."""
    for case in suite.eval_sets[0].eval_cases:
        for run in case.runs:
            run.metrics[1].judge_model = judge
    return suite


def test_one_rule_for_judge_faults_whatever_the_metric() -> None:
    """By hand, for a metric with a judge model: an answer google-adk cannot read as a
    verdict is ``judge_answer``, a judge call that raised ``judge``, a judge not reached
    ``model``: each the judge's fault (incomplete), each naming the judge, the metric and the
    case; the same reasons without a judge model are the metric's own."""
    cases = {
        NO_PARSABLE_VERDICT: ("judge_answer", "answered off-format", JUDGE_ANSWER_HINT),
        f"{JUDGE_CALL_FAILED}RuntimeError: down": ("judge", "could not be used",
                                                   JUDGE_FAULT_HINT),
        "model: judge model my-judge: 429 RESOURCE_EXHAUSTED after 5 attempts": (
            "model", "could not be reached", JUDGE_OUTAGE_HINT),
    }
    for reason, (kind, what, hint) in cases.items():
        [error] = metric_errors(_judged(_suite({"trip": {"t": 1}},
                                               MetricStatus.NOT_EVALUATED, reason)))
        assert (error.kind, error.hint) == (kind, hint)
        assert kind in INCOMPLETE_ERROR_KINDS
        assert error.message.startswith(
            f"the judge model `my-judge` of `mine` {what}: no verdict in 1 run of 1 eval case "
            "in trip.evalset.json (t): ")
        assert is_metric_error(error)
    [own] = metric_errors(_suite({"trip": {"t": 1}}, MetricStatus.NOT_EVALUATED,
                                 NO_PARSABLE_VERDICT))
    assert own.kind == "metric"


def test_a_counted_judge_answer_is_decided_once_and_recomputed_alike() -> None:
    """With the gate's ``not_evaluated`` set, an off-format answer is kind ``metric``; a
    record recomputed from the saved errors (a merge, a results file's check) keeps that
    decision, and one recomputed from errors that did not count it keeps that."""
    suite = _judged(_suite({"trip": {"t": 1}}, MetricStatus.NOT_EVALUATED, UNPARSABLE_ANSWER))
    [counted] = metric_errors(suite, judge_answers_counted=True)
    assert (counted.kind, counted.hint) == ("metric", JUDGE_ANSWER_COUNTED_HINT)
    assert counted.message.startswith("the judge model `my-judge` of `mine` answered off-format")
    saved = [counted.model_copy()]
    assert recomputed_metric_errors(suite, saved) == [counted]
    assert saved == [counted]  # nothing in the saved errors is changed
    [incomplete] = metric_errors(suite)
    assert recomputed_metric_errors(suite, [incomplete]) == [incomplete]
    assert incomplete.kind == "judge_answer"

"""One error record per metric and reason without a score, naming every eval set and eval
case it hit (bounded), and a metric's code failure as an incomplete run, not the agent's."""

from __future__ import annotations

from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, MetricStatus, SuiteRecord
from adk_eval_action.results.records import (
    MAX_LISTED_CASES,
    MAX_LISTED_EVAL_SETS,
    is_metric_error,
    metric_errors,
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

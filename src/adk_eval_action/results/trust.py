"""A results file is input: the checks every file of ours passes when it is read
(:func:`adk_eval_action.results.io.load_results`, so ``compare``, ``render``, ``merge`` and a
baseline alike), so a hand-edited or corrupted file cannot say more than a run would have.

The rules (``docs/baselines.md``, "What a results file may hold"):

* a **non-finite score** (NaN, infinity) is treated exactly as the run treats one
  (:func:`adk_eval_action.results.model.finite_score`): where it would be averaged the
  metric becomes an ``error``, the suite gets a ``metric_code`` error naming the eval set
  file, the eval case and the metric (:func:`adk_eval_action.results.records.metric_errors`),
  and the results are incomplete (exit 2);
* a **score outside the metric's recorded value range** (``min_value``..``max_value``) is
  refused: a run records no such score (:func:`adk_eval_action.results.model.usable_score`);
* a **status that contradicts score versus threshold** is refused, for the metrics whose
  status follows the threshold (google-adk's built-in evaluators: ``score >= threshold``
  passes, ``EvaluatorUtils``/``_get_eval_status`` in ``google.adk.evaluation``; ``<=`` for
  a lower-is-better metric). A custom metric decides pass or fail itself (its
  ``custom_metrics`` entry in the suite's recorded eval config), so its status is what
  the file says.

Refusals raise :class:`~adk_eval_action.errors.ResultsFileError` naming the file and the
place (suite, eval set file, eval case, run, metric): exit 2, never a silent green.
"""

from __future__ import annotations

import math
from pathlib import Path

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.results.model import (
    AVERAGED_STATUSES,
    EvalCaseRecord,
    EvalSetRecord,
    MetricResult,
    MetricStatus,
    RunRecord,
    RunResults,
    SuiteRecord,
    finite_score,
    out_of_range,
)
from adk_eval_action.results.records import is_metric_error, metric_errors
from adk_eval_action.results.status import run_status


def _custom_metrics(suite: SuiteRecord) -> set[str]:
    """The metrics the suite's recorded eval config names under ``custom_metrics``."""
    custom = (suite.eval_config or {}).get("custom_metrics") or {}
    return set(custom) if isinstance(custom, dict) else set()


def _contradicts(metric: MetricResult) -> str | None:
    """Why ``metric``'s status contradicts its score versus its threshold, or None."""
    if metric.informational or metric.status not in (MetricStatus.PASSED, MetricStatus.FAILED):
        return None
    if metric.score is None or metric.threshold is None or not math.isfinite(metric.score):
        return None
    if metric.higher_is_better:
        passes, rule = metric.score >= metric.threshold, ">="
    else:
        passes, rule = metric.score <= metric.threshold, "<="
    if passes == (metric.status == MetricStatus.PASSED):
        return None
    return (
        f"status {metric.status.value!r} contradicts score {metric.score!r} against "
        f"threshold {metric.threshold!r} (passes when score {rule} threshold)"
    )


def _place(
    suite: SuiteRecord, eval_set: EvalSetRecord, case: EvalCaseRecord, run: RunRecord,
    metric: MetricResult,
) -> str:
    return (
        f"suite {suite.name}, eval set {eval_set.file or eval_set.eval_set_id}, eval case "
        f"{case.eval_id}, run {run.run}, metric `{metric.metric_name}`"
    )


def _check_metric(
    path: Path, suite: str, place: str, metric: MetricResult, custom: set[str]
) -> bool:
    """Refuses a malformed metric result; makes a non-finite score an ``error`` in place.
    Returns whether the metric was changed.

    Raises:
        ResultsFileError: a score outside the value range, a contradicting status.
    """
    if metric.score is not None and not math.isfinite(metric.score):
        score, status, _ = finite_score(metric.score, metric.status, metric.reason)
        if status != metric.status:
            # One reason per file and suite, so metric_errors names every case it hit at once.
            metric.reason = (
                f"non-finite score {metric.score!r} in the results file {path} (suite "
                f"{suite}): a run records none"
            )
        metric.score, metric.status = score, status
        return True
    if metric.status in AVERAGED_STATUSES:
        beyond = out_of_range(metric.score, metric.min_value, metric.max_value)
        if beyond:
            raise ResultsFileError(path, f"malformed results file: {place}: {beyond}")
    contradiction = None if metric.metric_name in custom else _contradicts(metric)
    if contradiction:
        raise ResultsFileError(path, f"malformed results file: {place}: {contradiction}")
    return False


def check_results(results: RunResults, path: Path) -> RunResults:
    """Applies the module's rules to ``results`` read from ``path``, in place; returns it.

    Raises:
        ResultsFileError: a score outside its metric's value range, or a status that
            contradicts score versus threshold (the message names the file and the place).
    """
    for suite in results.suites:
        custom = _custom_metrics(suite)
        changed = False
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    touched = False
                    for metric in run.metrics:
                        place = _place(suite, eval_set, case, run, metric)
                        touched |= _check_metric(path, suite.name, place, metric, custom)
                    if touched and not run.error:
                        run.status = run_status(run.metrics)
                    changed |= touched
        if changed:
            suite.errors = [e for e in suite.errors if not is_metric_error(e)]
            suite.errors += metric_errors(suite)
    return results

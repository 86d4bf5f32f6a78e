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
  status follows the threshold: google-adk's built-in evaluators pass a score
  ``>= threshold`` (``llm_as_judge_utils.get_eval_status``, ``_get_eval_status`` of
  ``trajectory_evaluator``, ``final_response_match_v1`` and ``vertex_ai_eval_facade`` in
  ``google.adk.evaluation``; a rubric gap settled FAILED in
  :mod:`adk_eval_action.adk.evaluate.verdicts`
  has a score below the threshold too). A custom metric decides pass or fail itself (its
  ``custom_metrics`` entry in the suite's recorded eval config), and a lower-is-better
  metric is either one (its direction inferred from its own statuses) or a built-in one
  that ``higher_is_better`` of adk-eval.yaml turned round, which ADK still passes at
  ``>=``: the status of either is what the file says.

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
from adk_eval_action.results.records import recomputed_metric_errors
from adk_eval_action.results.status import run_status


def _custom_metrics(suite: SuiteRecord) -> set[str]:
    """The metrics the suite's recorded eval config names under ``custom_metrics``."""
    custom = (suite.eval_config or {}).get("custom_metrics") or {}
    return set(custom) if isinstance(custom, dict) else set()


def _contradicts(metric: MetricResult) -> str | None:
    """Why ``metric``'s status contradicts google-adk's rule for a higher-is-better metric
    (passed exactly when ``score >= threshold``), or None; None for a lower-is-better or
    informational metric, and without a finite score or a threshold (module docstring)."""
    if metric.informational or not metric.higher_is_better:
        return None
    if metric.status not in (MetricStatus.PASSED, MetricStatus.FAILED):
        return None
    if metric.score is None or metric.threshold is None or not math.isfinite(metric.score):
        return None
    if (metric.score >= metric.threshold) == (metric.status == MetricStatus.PASSED):
        return None
    return (
        f"status {metric.status.value!r} contradicts score {metric.score!r} against "
        f"threshold {metric.threshold!r} (passes when score >= threshold)"
    )


def _place(
    suite: SuiteRecord, eval_set: EvalSetRecord, case: EvalCaseRecord, run: RunRecord,
    metric: MetricResult,
) -> str:
    return (
        f"suite {suite.name}, eval set {eval_set.file or eval_set.eval_set_id}, eval case "
        f"{case.eval_id}, run {run.run}, metric `{metric.metric_name}`"
    )


def _make_finite(metric: MetricResult, path: Path, suite: str) -> None:
    """A non-finite score dealt with in place as the run deals with one (``finite_score``).
    The reason names the file by its name only: it reaches the PR comment, where the
    runner's absolute path means nothing; one reason per file and suite, so
    ``metric_errors`` names every eval case it hit in one error."""
    score, status, _ = finite_score(metric.score, metric.status, metric.reason)
    if status != metric.status:
        metric.reason = (
            f"non-finite score {metric.score!r} in the results file {path.name} (suite "
            f"{suite}): a run records none"
        )
    metric.score, metric.status = score, status


def _malformed(metric: MetricResult, custom: set[str]) -> str | None:
    """Why ``metric`` (with a finite score or none) is one no run records, or None."""
    if metric.status in AVERAGED_STATUSES:
        beyond = out_of_range(metric.score, metric.min_value, metric.max_value)
        if beyond:
            return beyond
    return None if metric.metric_name in custom else _contradicts(metric)


def check_results(results: RunResults, path: Path) -> RunResults:
    """Applies the module's rules to ``results`` read from ``path``, in place; returns it.

    Raises:
        ResultsFileError: a score outside its metric's value range, or a status that
            contradicts score versus threshold (the message names the file and the place:
            suite, eval set file, eval case, run, metric).
    """
    for suite in results.suites:
        custom = _custom_metrics(suite)
        changed = False
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    touched = False
                    for metric in run.metrics:
                        if metric.score is not None and not math.isfinite(metric.score):
                            _make_finite(metric, path, suite.name)
                            touched = True
                        elif why := _malformed(metric, custom):
                            place = _place(suite, eval_set, case, run, metric)
                            raise ResultsFileError(path, f"malformed results file: {place}: {why}")
                    if touched and not run.error:
                        run.status = run_status(run.metrics)
                    changed |= touched
        if changed:
            suite.errors = recomputed_metric_errors(suite, suite.errors)
    return results

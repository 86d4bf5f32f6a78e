"""Comparing head results with a baseline: per metric, per rubric, per eval case.

Rules (all scores in the metric's own range):

* A metric's value on one side is the mean of its score over every eval case and run that
  has a score; NOT_EVALUATED and errored runs are counted separately, never averaged as 0.
* Its pass rate is passed / (passed + failed) over case runs, by the status ADK's evaluator
  gave the metric.
* A rubric's value is the mean, by rubric id, of its per-case (overall) score.
* Eval cases match by (suite, eval set id, eval id). A case passes when every run passed;
  it is ``error`` when a run errored, ``not_evaluated`` when no metric gave a verdict.
* With ``num_runs`` ≥ 2 on both sides each delta gets a paired-bootstrap interval over eval
  cases (:mod:`adk_eval_action.noise`) and a classification.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from .noise import DeltaInterval, bootstrap_counts, classify, flaky_cases, paired_bootstrap
from .results import (
    CaseStatus,
    ErrorRecord,
    MetricResult,
    MetricStatus,
    RunMetadata,
    RunResults,
)

CaseKey = tuple[str, str, str]
Classification = Literal["regressed", "improved", "unchanged", "inconclusive"]


class MetricSide(BaseModel):
    """One metric on one side (baseline or head) of the comparison."""

    mean: float | None = None
    scored: int = 0
    passed: int = 0
    failed: int = 0
    not_evaluated: int = 0
    errors: int = 0
    threshold: float | None = None
    min_value: float | None = None
    max_value: float | None = None
    higher_is_better: bool = True
    informational: bool = False
    reasons: list[str] = Field(default_factory=list)

    @property
    def pass_rate(self) -> float | None:
        """passed / (passed + failed), or None when no run had a verdict."""
        total = self.passed + self.failed
        return self.passed / total if total else None


class MetricComparison(BaseModel):
    """A metric of a suite, baseline vs head. ``delta`` = head mean − baseline mean."""

    suite: str
    metric_name: str
    baseline: MetricSide | None = None
    head: MetricSide | None = None
    delta: float | None = None
    interval: DeltaInterval | None = None
    classification: Classification | None = None

    @property
    def informational(self) -> bool:
        side = self.head or self.baseline
        return bool(side and side.informational)

    @property
    def only_in(self) -> Literal["head", "baseline"] | None:
        if self.head is None:
            return "baseline"
        return "head" if self.baseline is None else None


class RubricComparison(BaseModel):
    """A rubric (by id) of a rubric metric, baseline vs head; scores are in [0, 1]."""

    suite: str
    metric_name: str
    rubric_id: str
    text: str | None = None
    baseline_mean: float | None = None
    head_mean: float | None = None
    baseline_n: int = 0
    head_n: int = 0
    delta: float | None = None
    classification: Classification | None = None


class MetricDelta(BaseModel):
    """One metric of one eval case: mean over runs on each side."""

    metric_name: str
    baseline: float | None = None
    head: float | None = None
    delta: float | None = None
    head_status: MetricStatus | None = None
    reason: str | None = None


class CaseComparison(BaseModel):
    """One eval case, baseline vs head."""

    suite: str
    eval_set_id: str
    eval_id: str
    file: str | None = None
    line: int | None = None
    baseline_status: CaseStatus | None = None
    head_status: CaseStatus | None = None
    change: Literal[
        "newly_failing", "newly_passing", "new", "removed", "errored", "still_failing",
        "unchanged",
    ]
    metrics: list[MetricDelta] = Field(default_factory=list)
    error: str | None = None
    head_passes: int = 0
    head_runs: int = 0
    flaky_head: dict[str, tuple[int, int]] = Field(default_factory=dict)
    flaky_baseline: dict[str, tuple[int, int]] = Field(default_factory=dict)

    @property
    def key(self) -> CaseKey:
        return (self.suite, self.eval_set_id, self.eval_id)


class Comparison(BaseModel):
    """Everything the comment, summary and gate need. ``baseline_note`` says which
    baseline was used or why there is none."""

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


def _case_status(runs: list) -> CaseStatus:
    """A case fails when any run failed; otherwise a run error, or a metric that errored
    or was not evaluated (ADK skips those when it derives a case's status), makes it
    ``error`` / ``not_evaluated``, never ``passed``."""
    statuses = [r.status for r in runs]
    if not statuses or CaseStatus.ERROR in statuses:
        return CaseStatus.ERROR
    if CaseStatus.FAILED in statuses:
        return CaseStatus.FAILED
    metric_statuses = {m.status for r in runs for m in r.metrics if not m.informational}
    if MetricStatus.ERROR in metric_statuses:
        return CaseStatus.ERROR
    if CaseStatus.NOT_EVALUATED in statuses or MetricStatus.NOT_EVALUATED in metric_statuses:
        return CaseStatus.NOT_EVALUATED
    return CaseStatus.PASSED


def _index(results: RunResults) -> dict[CaseKey, tuple[str | None, int | None, list]]:
    index = {}
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                key = (suite.name, eval_set.eval_set_id, case.eval_id)
                index[key] = (eval_set.file, case.line, case.runs)
    return index


def _metric_sides(results: RunResults) -> dict[tuple[str, str], MetricSide]:
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    sides: dict[tuple[str, str], MetricSide] = {}
    for suite, metric in _iter_metrics(results):
        key = (suite, metric.metric_name)
        side = sides.setdefault(key, MetricSide(
            threshold=metric.threshold, min_value=metric.min_value, max_value=metric.max_value,
            higher_is_better=metric.higher_is_better, informational=metric.informational,
        ))
        if metric.status == MetricStatus.ERROR:
            side.errors += 1
        elif metric.status == MetricStatus.NOT_EVALUATED:
            side.not_evaluated += 1
        elif metric.status == MetricStatus.PASSED:
            side.passed += 1
        elif metric.status == MetricStatus.FAILED:
            side.failed += 1
        if metric.reason and metric.reason not in side.reasons:
            side.reasons.append(metric.reason)
        if metric.score is not None and metric.status not in (
            MetricStatus.ERROR, MetricStatus.NOT_EVALUATED
        ):
            sums[key].append(metric.score)
    for key, side in sides.items():
        side.scored = len(sums[key])
        side.mean = sum(sums[key]) / len(sums[key]) if sums[key] else None
    return sides


def _iter_metrics(results: RunResults) -> Iterable[tuple[str, MetricResult]]:
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    for metric in run.metrics:
                        yield suite.name, metric


def _per_case_scores(results: RunResults, suite: str, metric: str) -> dict[CaseKey, list[float]]:
    scores: dict[CaseKey, list[float]] = {}
    for s in results.suites:
        if s.name != suite:
            continue
        for eval_set in s.eval_sets:
            for case in eval_set.eval_cases:
                values = [
                    m.score for r in case.runs for m in r.metrics
                    if m.metric_name == metric and m.score is not None
                    and m.status not in (MetricStatus.ERROR, MetricStatus.NOT_EVALUATED)
                ]
                if values:
                    scores[(s.name, eval_set.eval_set_id, case.eval_id)] = values
    return scores


def _rubric_means(results: RunResults) -> dict[tuple[str, str, str], tuple[list[float], str | None]]:
    means: dict[tuple[str, str, str], tuple[list[float], str | None]] = {}
    for suite, metric in _iter_metrics(results):
        for rubric in metric.rubrics:
            key = (suite, metric.metric_name, rubric.rubric_id)
            values, text = means.get(key, ([], None))
            if rubric.score is not None:
                values.append(rubric.score)
            means[key] = (values, text or rubric.text)
    return means


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _delta(head: float | None, baseline: float | None) -> float | None:
    return None if head is None or baseline is None else head - baseline


def _metric_deltas(head_runs: list, base_runs: list) -> list[MetricDelta]:
    names: list[str] = []
    for run in [*head_runs, *base_runs]:
        for metric in run.metrics:
            if metric.metric_name not in names:
                names.append(metric.metric_name)
    deltas = []
    for name in names:
        head = [m for r in head_runs for m in r.metrics if m.metric_name == name]
        base = [m for r in base_runs for m in r.metrics if m.metric_name == name]
        head_mean = _mean([m.score for m in head if m.score is not None])
        base_mean = _mean([m.score for m in base if m.score is not None])
        status = next((m.status for m in head if m.status in (
            MetricStatus.ERROR, MetricStatus.NOT_EVALUATED, MetricStatus.FAILED)), None)
        status = status or (head[0].status if head else None)
        reason = next((m.reason for m in head if m.reason), None)
        deltas.append(MetricDelta(
            metric_name=name, baseline=base_mean, head=head_mean,
            delta=_delta(head_mean, base_mean), head_status=status, reason=reason,
        ))
    return deltas


def _metric_flakiness(runs: list) -> dict[str, tuple[int, int]]:
    statuses: dict[str, list[bool]] = defaultdict(list)
    for run in runs:
        statuses["overall"].append(run.status == CaseStatus.PASSED)
        for metric in run.metrics:
            if metric.status in (MetricStatus.PASSED, MetricStatus.FAILED):
                statuses[metric.metric_name].append(metric.status == MetricStatus.PASSED)
    return {str(k): v for k, v in flaky_cases(statuses).items()}


def _case_change(head: CaseStatus | None, base: CaseStatus | None) -> str:
    if base is None:
        return "new"
    if head is None:
        return "removed"
    if head in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED):
        return "errored"
    failing = head == CaseStatus.FAILED
    was_failing = base != CaseStatus.PASSED
    if failing and not was_failing:
        return "newly_failing"
    if not failing and was_failing:
        return "newly_passing"
    return "still_failing" if failing else "unchanged"


def _compare_cases(head: RunResults, baseline: RunResults | None) -> list[CaseComparison]:
    head_index = _index(head)
    base_index = _index(baseline) if baseline else {}
    cases = []
    for key in [*head_index, *(k for k in base_index if k not in head_index)]:
        file, line, head_runs = head_index.get(key, (None, None, []))
        base_file, base_line, base_runs = base_index.get(key, (None, None, []))
        head_status = _case_status(head_runs) if key in head_index else None
        base_status = _case_status(base_runs) if key in base_index else None
        change = _case_change(head_status, base_status) if baseline else (
            "errored" if head_status in (CaseStatus.ERROR, CaseStatus.NOT_EVALUATED)
            else "still_failing" if head_status == CaseStatus.FAILED else "unchanged"
        )
        flaky_head = _metric_flakiness(head_runs)
        cases.append(CaseComparison(
            suite=key[0], eval_set_id=key[1], eval_id=key[2], file=file or base_file,
            line=line or base_line, baseline_status=base_status, head_status=head_status,
            change=change, metrics=_metric_deltas(head_runs, base_runs),
            error=next((r.error for r in head_runs if r.error), None),
            head_passes=sum(r.status == CaseStatus.PASSED for r in head_runs),
            head_runs=len(head_runs), flaky_head=flaky_head,
            flaky_baseline=_metric_flakiness(base_runs),
        ))
    return cases


def _comparability(head: RunResults, baseline: RunResults) -> list[str]:
    notes = []
    if head.metadata.adk_version != baseline.metadata.adk_version and baseline.metadata.adk_version:
        notes.append(
            f"google-adk {baseline.metadata.adk_version} (baseline) vs "
            f"{head.metadata.adk_version} (head)"
        )
    base_suites = {s.name: s for s in baseline.suites}
    for suite in head.suites:
        other = base_suites.get(suite.name)
        if other is None:
            notes.append(f"suite `{suite.name}` has no baseline")
            continue
        if other.eval_config_hash and other.eval_config_hash != suite.eval_config_hash:
            notes.append(f"suite `{suite.name}`: the eval config changed")
        if other.judge_models and other.judge_models != suite.judge_models:
            notes.append(f"suite `{suite.name}`: judge models differ")
        if other.num_runs != suite.num_runs:
            notes.append(
                f"suite `{suite.name}`: num_runs {other.num_runs} (baseline) vs {suite.num_runs}"
            )
        base_sets = {e.eval_set_id: e for e in other.eval_sets}
        for eval_set in suite.eval_sets:
            base_set = base_sets.get(eval_set.eval_set_id)
            if base_set and base_set.content_hash and base_set.content_hash != eval_set.content_hash:
                notes.append(f"suite `{suite.name}`: eval set `{eval_set.eval_set_id}` changed")
    return notes


def compare(
    head: RunResults,
    baseline: RunResults | None,
    baseline_note: str,
    *,
    min_effect: float = 0.0,
    seed: int = 0,
) -> Comparison:
    """Compares ``head`` with ``baseline`` (None: head scores only).

    ``min_effect`` is the smallest delta (metric units) worth calling regressed or improved.
    """
    head_sides = _metric_sides(head)
    base_sides = _metric_sides(baseline) if baseline else {}
    num_runs = max((s.num_runs for s in head.suites), default=1)
    metrics = []
    counts_cache: dict[int, Any] = {}
    for key in [*head_sides, *(k for k in base_sides if k not in head_sides)]:
        head_side, base_side = head_sides.get(key), base_sides.get(key)
        row = MetricComparison(
            suite=key[0], metric_name=key[1], baseline=base_side, head=head_side,
            delta=_delta(head_side.mean if head_side else None,
                         base_side.mean if base_side else None),
        )
        if baseline and row.delta is not None:
            side = head_side or base_side
            higher = side.higher_is_better if side else True
            repeats = num_runs >= 2 and min((s.num_runs for s in baseline.suites), default=1) >= 2
            if repeats:
                base_scores = _per_case_scores(baseline, *key)
                head_scores = _per_case_scores(head, *key)
                n_paired = len(base_scores.keys() & head_scores.keys())
                # One resampling draw per paired-case count, shared by the metrics
                # (noise.bootstrap_counts): the same numbers, a fraction of the time.
                if n_paired >= 2 and n_paired not in counts_cache:
                    counts_cache[n_paired] = bootstrap_counts(n_paired, seed=seed)
                row.interval = paired_bootstrap(
                    base_scores, head_scores, seed=seed, counts=counts_cache.get(n_paired)
                )
            row.classification = classify(
                row.interval, row.delta, min_effect=min_effect, higher_is_better=higher
            )
        metrics.append(row)
    head_rubrics = _rubric_means(head)
    base_rubrics = _rubric_means(baseline) if baseline else {}
    rubrics = []
    for key in [*head_rubrics, *(k for k in base_rubrics if k not in head_rubrics)]:
        head_values, head_text = head_rubrics.get(key, ([], None))
        base_values, base_text = base_rubrics.get(key, ([], None))
        row = RubricComparison(
            suite=key[0], metric_name=key[1], rubric_id=key[2], text=head_text or base_text,
            head_mean=_mean(head_values), baseline_mean=_mean(base_values),
            head_n=len(head_values), baseline_n=len(base_values),
        )
        row.delta = _delta(row.head_mean, row.baseline_mean)
        if row.delta is not None:
            row.classification = classify(None, row.delta, min_effect=min_effect)
        rubrics.append(row)
    return Comparison(
        has_baseline=baseline is not None,
        baseline_note=baseline_note,
        head_metadata=head.metadata,
        baseline_metadata=baseline.metadata if baseline else None,
        metrics=metrics,
        rubrics=rubrics,
        cases=_compare_cases(head, baseline),
        errors=head.all_errors(),
        warnings=head.warnings,
        num_runs=num_runs,
        comparability=_comparability(head, baseline) if baseline else [],
    )

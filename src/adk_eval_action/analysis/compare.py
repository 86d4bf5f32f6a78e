"""Comparing head results with a baseline: per metric, per rubric, per eval case.

Rules (all scores in the metric's own range):

* A metric's value on one side is the mean of its score over every eval case and run that
  has a score; NOT_EVALUATED and errored runs are counted separately, never averaged as 0.
* Its pass rate is the share of case runs that passed it, a run without a score never
  passing (:attr:`~adk_eval_action.analysis.comparison.MetricSide.pass_rate`).
* A rubric's value is the mean, by rubric id, of its per-case (overall) score over cases and
  runs.
* Eval cases match by (suite, eval set id, eval id); a baseline suite of another name but
  the same agent and eval set folder as a head suite takes the head's name first
  (:mod:`adk_eval_action.results.identity`). A case passes when every run passed;
  it is ``error`` when a run errored, ``not_evaluated`` when no metric gave a verdict.
* Deltas use *matched* eval cases only, those scored on both sides: ``delta`` is the mean
  over them of each case's ``head − baseline`` (runs averaged first), and
  ``baseline_matched``/``head_matched`` are the sides' means over the same cases. New and
  removed cases are listed (``change``) and never move a delta; ``head.mean`` and
  ``baseline.mean`` stay the all-case means.
* Every metric and rubric delta gets the paired permutation test of
  :mod:`adk_eval_action.analysis.paired` (each case's runs exchanged within the case up to
  100 matched cases, whole cases beyond; exact with few cases, 2000 seeded patterns
  otherwise), corrected per direction across all of them, and an interval that is the
  inverted corrected test; each delta is then classified regressed / improved / unchanged
  / inconclusive against ``min_effect`` (:func:`adk_eval_action.analysis.noise.classify`),
  and an undecided one says what sample would decide it (``interval.to_decide``). The
  seed, pattern count and levels are recorded in ``Comparison.tests``. Informational
  metrics (durations, tokens) use at least ``informational_min_effect`` of their matched
  baseline mean as min_effect.
* The agent's own tokens per eval case get the same paired test, apart
  (:mod:`adk_eval_action.analysis.cost`).
* A suite of the head that the baseline has no scores for (absent from it, or incomplete in
  its run) is listed with why (:mod:`adk_eval_action.analysis.suite_baselines`).
* A case is flaky on a side when its pass/fail status, overall or for one metric, differs
  across runs (:func:`adk_eval_action.analysis.noise.flaky_cases`).

Cost: each side is read as a :class:`~adk_eval_action.results.scoretable.ScoreTable`
(numpy columns; a loaded :class:`RunResults` is turned into one first, ~0.9 s per side at
the size below), and every aggregate is a group-by over its columns
(:mod:`adk_eval_action.analysis.sides`); then one draw of patterns per distinct shape of
matched cases (and runs, for the test within cases), shared by all metrics and rubrics,
and one matrix product per block for all of them. Per-case metric rows are built when
first read (:class:`~adk_eval_action.analysis.cases.CaseMetrics`). For 10,000 cases x 8
metrics x 3 runs from tables (``benchmarks/bench_compare.py``) compare takes ~0.45-0.6 s
on a 2-core EPYC VM (~0.15 s of it drawing the sign patterns), and compare + gate +
render ~0.7 s with a process peak of ~200 MB.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from adk_eval_action.analysis.cases import compare_cases
from adk_eval_action.analysis.comparison import (
    CHANGE_ORDER,
    DEFAULT_CONFIDENCE,
    NO_RUNS_ERROR,
    CaseComparison,
    ChangeKind,
    Comparison,
    MetricComparison,
    MetricDelta,
    MetricSide,
    RubricComparison,
)
from adk_eval_action.analysis.cost import AGENT_TOKENS, compare_cost
from adk_eval_action.analysis.judgeflips import JudgeFlips, judge_flips
from adk_eval_action.analysis.noise import CaseCall, classify
from adk_eval_action.analysis.paired import (
    DEFAULT_RESAMPLES,
    PairedInput,
    PairedResult,
    RunScores,
    TestMethod,
    paired_tests,
)
from adk_eval_action.analysis.pooling import PoolKey, pooled_dense
from adk_eval_action.analysis.sides import (
    Dense,
    Side,
    dense_metrics,
    dense_rubrics,
    index_side,
    metric_sides,
    rubric_totals,
)
from adk_eval_action.analysis.suitefacts import suite_facts
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.identity import baseline_renames
from adk_eval_action.results.io import gc_paused
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, RunResults
from adk_eval_action.results.scoretable import CaseKey, ScoreTable

__all__ = [
    "CHANGE_ORDER",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_INFORMATIONAL_MIN_EFFECT",
    "NO_RUNS_ERROR",
    "CaseComparison",
    "ChangeKind",
    "Comparison",
    "MetricComparison",
    "MetricDelta",
    "MetricSide",
    "MinEffect",
    "RubricComparison",
    "compare",
]

MinEffect = float | Callable[[str, str], float]
"""The smallest delta worth calling, in metric units: one value, or a function of
(suite, metric name) such as :meth:`adk_eval_action.project.config.GateConfig.min_effect_for`."""

DEFAULT_INFORMATIONAL_MIN_EFFECT = 0.1
"""Informational metrics' min_effect as a share of their matched baseline mean (10%): wall
clock and token counts move by more than that on noise alone."""


K = TypeVar("K")


def _ordered(head: Mapping[K, object], baseline: Mapping[K, object]) -> list[K]:
    """Head's keys in head order, then baseline-only keys."""
    return [*head, *(k for k in baseline if k not in head)]


def _compare_metrics(head: Side, baseline: Side | None) -> list[MetricComparison]:
    head_sides = metric_sides(head.table)
    base_sides = metric_sides(baseline.table) if baseline else []
    base_rows = baseline.metric_rows if baseline else {}
    rows = []
    for key in _ordered(head.metric_rows, base_rows):
        head_side = head_sides[head.metric_rows[key]] if key in head.metric_rows else None
        base_side = base_sides[base_rows[key]] if key in base_rows else None
        rows.append(
            MetricComparison(
                suite=key[0],
                metric_name=key[1],
                baseline=base_side,
                head=head_side,
                head_not_evaluated=head_side is None and base_side is not None
                and _still_asked(head.table.skeleton, key, base_side.informational),
            )
        )
    return rows


def _still_asked(head: RunResults, key: tuple[str, str], informational: bool) -> bool:
    """Whether the head's suite ``key[0]`` still asks for metric ``key[1]``, which it has no
    result of: its eval config names the metric; or (an efficiency metric, which ADK adds
    itself, or an eval config not recorded) errors that make the run incomplete kept the
    suite from being scored. Else the metric was removed (from the eval config, or the
    suite with it)."""
    suite = next((s for s in head.suites if s.name == key[0]), None)
    if suite is None:
        return False
    criteria = (suite.eval_config or {}).get("criteria")
    if isinstance(criteria, dict) and key[1] in criteria:
        return True
    if isinstance(criteria, dict) and not informational:
        return False
    return any(e.kind in INCOMPLETE_ERROR_KINDS for e in suite.errors)


def _compare_rubrics(head: Side, baseline: Side | None) -> list[RubricComparison]:
    head_means, head_n = rubric_totals(head.table)
    base_means, base_n = rubric_totals(baseline.table) if baseline else ([], [])
    base_rows = baseline.rubric_rows if baseline else {}
    rows = []
    for key in _ordered(head.rubric_rows, base_rows):
        h, b = head.rubric_rows.get(key), base_rows.get(key)
        text = head.table.rubric_text[h] if h is not None else None
        if not text and b is not None and baseline is not None:
            text = baseline.table.rubric_text[b]
        rows.append(RubricComparison(
            suite=key[0],
            metric_name=key[1],
            rubric_id=key[2],
            text=text,
            head_mean=head_means[h] if h is not None else None,
            baseline_mean=base_means[b] if b is not None else None,
            head_n=head_n[h] if h is not None else 0,
            baseline_n=base_n[b] if b is not None else 0,
        ))
    return rows


@dataclass(frozen=True, slots=True)
class _TestOptions:
    """What the paired tests are run with (see :func:`compare`)."""

    min_effect: Callable[[str, str], float]
    informational_min_effect: Callable[[str, str], float]
    seed: int
    n_resamples: int
    alpha: float
    pool: Mapping[PoolKey, list[float]] | None = None
    gate: GateConfig | None = None


def _rubrics_on_both_sides(
    rubrics: list[RubricComparison], head: Side, baseline: Side
) -> list[RubricComparison]:
    """The rubrics with rows on both sides, in their order."""
    keyed = ((r, (r.suite, r.metric_name, r.rubric_id)) for r in rubrics)
    return [r for r, key in keyed if key in baseline.rubric_rows and key in head.rubric_rows]


def _attach_intervals(
    head: Side,
    baseline: Side,
    metrics: list[MetricComparison],
    rubrics: list[RubricComparison],
    order: np.ndarray,
    options: _TestOptions,
    case_ids: Mapping[CaseKey, int],
    flips: JudgeFlips,
) -> tuple[TestMethod, int]:
    """Sets the delta, matched means, interval and call of every metric and rubric both
    sides have, gated ones as one family and informational ones as another
    (:func:`.paired.paired_tests`), with pooled runs (:func:`_metric_dense`, counted), each
    on its matched cases but its judge flips (:mod:`.judgeflips`: set aside)."""
    n_ids = order.size
    both_metrics = [m for m in metrics if m.head is not None and m.baseline is not None]
    metric_dense, pooled = _metric_dense(head, baseline, both_metrics, n_ids, options, case_ids)
    rubric_dense = dense_rubrics(baseline, n_ids), dense_rubrics(head, n_ids)
    both_rubrics = _rubrics_on_both_sides(rubrics, head, baseline)
    inputs = [
        _input(
            metric_dense,
            baseline.metric_rows[(m.suite, m.metric_name)],
            head.metric_rows[(m.suite, m.metric_name)],
            min_effect=options.min_effect(m.suite, m.metric_name),
            relative=options.informational_min_effect(m.suite, m.metric_name)
            if m.informational
            else 0.0,
            higher=m.higher_is_better,
            informational=m.informational,
            aside=_aside(m, flips),
        )
        for m in both_metrics
    ] + [
        # A rubric is a yes/no verdict on its metric's scale: the metric's min_effect.
        _input(
            rubric_dense,
            baseline.rubric_rows[(r.suite, r.metric_name, r.rubric_id)],
            head.rubric_rows[(r.suite, r.metric_name, r.rubric_id)],
            min_effect=options.min_effect(r.suite, r.metric_name),
            aside=_aside(r, flips),
        )
        for r in both_rubrics
    ]
    results, method = paired_tests(
        inputs, order, seed=options.seed, n_resamples=options.n_resamples, alpha=options.alpha
    )
    rows: list[MetricComparison | RubricComparison] = [*both_metrics, *both_rubrics]
    keys = list(case_ids)
    results = [_with_case_calls(result, keys) for result in results]
    _set_calls(rows, results, inputs, flips)
    return method, pooled


def _with_case_calls(result: PairedResult, keys: list[CaseKey]) -> PairedResult:
    """``result`` with its case drops on its interval, each named by its eval case."""
    if not result.case_drops:
        return result
    calls = [
        CaseCall(
            eval_set_id=str(keys[d.case][1]),
            eval_id=str(keys[d.case][2]),
            baseline=d.baseline,
            head=d.head,
            delta=d.delta,
            p_worse=d.p_worse,
            level=d.level,
            bound=d.bound,
        )
        for d in result.case_drops
    ]
    interval = result.interval.model_copy(update={"case_calls": calls})
    return dataclasses.replace(result, interval=interval)


def _set_calls(rows: list[MetricComparison | RubricComparison],
               results: list[PairedResult], inputs: list[PairedInput], flips: JudgeFlips) -> None:
    """Each row's interval, delta, matched means, call, and judge flips set aside."""
    for row, result, one in zip(rows, results, inputs, strict=True):
        aside = _aside(row, flips)
        row.judge_flips = 0 if aside is None else int(aside.size)
        row.interval = interval = result.interval
        row.min_effect = result.min_effect
        if interval.n_cases == 0:
            continue
        row.delta = interval.delta
        row.baseline_matched, row.head_matched = result.baseline_mean, result.head_mean
        row.classification = classify(
            interval,
            interval.delta,
            min_effect=result.min_effect,
            higher_is_better=one.higher_is_better,
        )


def _aside(row: MetricComparison | RubricComparison, flips: JudgeFlips) -> np.ndarray | None:
    """The case ids of ``row``'s judge flips, set aside from its test; None: none."""
    if isinstance(row, RubricComparison):
        return flips.rubric_cases.get((row.suite, row.metric_name, row.rubric_id))
    return flips.metric_cases.get((row.suite, row.metric_name))


def _metric_dense(
    head: Side, baseline: Side, both: list[MetricComparison], n_ids: int,
    options: _TestOptions, case_ids: Mapping[CaseKey, int],
) -> tuple[tuple[Dense, Dense], int]:
    """Each side's per-metric, per-case runs (baseline, head), the baseline's gated
    metrics with ``options.pool``'s runs added; and how many were added."""
    base = dense_metrics(baseline, n_ids)
    pooled = 0
    if options.pool:
        gated = {(m.suite, m.metric_name) for m in both if not m.informational}
        base, pooled = pooled_dense(base, options.pool, baseline.metric_rows, case_ids, gated)
    return (base, dense_metrics(head, n_ids)), pooled


def _input(
    dense: tuple[Dense, Dense],
    base_row: int,
    head_row: int,
    *,
    min_effect: float,
    relative: float = 0.0,
    higher: bool = True,
    informational: bool = False,
    aside: np.ndarray | None = None,
) -> PairedInput:
    """One test's input; the case ids ``aside`` (judge flips) count as unscored."""
    base, head = dense
    base_runs, head_runs = base.runs[base_row], head.runs[head_row]
    if aside is not None:
        base_runs, head_runs = base_runs.copy(), head_runs.copy()
        base_runs[aside] = head_runs[aside] = 0
    return PairedInput(
        baseline_mean=base.mean[base_row],
        baseline_runs=base_runs,
        head_mean=head.mean[head_row],
        head_runs=head_runs,
        baseline_scores=_scores(base, base_row),
        head_scores=_scores(head, head_row),
        min_effect=min_effect,
        relative_min_effect=relative,
        higher_is_better=higher,
        informational=informational,
    )


def _scores(dense: Dense, row: int) -> RunScores:
    """Key ``row``'s scores run by run (sorted when a test first reads them)."""
    return RunScores(dense.run_values, row * dense.mean.shape[1])


def _no_interval_reason(metrics: list[MetricComparison]) -> str | None:
    """The reason no delta has an interval, when none has; None when one has or none
    was attempted."""
    intervals = [m.interval for m in metrics if m.interval is not None]
    if not intervals or any(i.has_interval for i in intervals):
        return None
    return intervals[0].reason


def compare(
    head: ScoreTable,
    baseline: ScoreTable | None,
    baseline_note: str,
    *,
    min_effect: MinEffect = 0.0,
    informational_min_effect: MinEffect = DEFAULT_INFORMATIONAL_MIN_EFFECT,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    pool: Mapping[PoolKey, list[float]] | None = None,
    gate: GateConfig | None = None,
) -> Comparison:
    """Compares ``head`` with ``baseline`` (None: head scores only) by the module's rules.

    Args:
        head: The PR head's :class:`ScoreTable` (loaded results are tabled, an eval_history's
            cases placed, by :func:`adk_eval_action.run.pipeline.score_tables`).
        baseline: Results of the base branch, likewise, or None.
        baseline_note: Which baseline this is, or why there is none (shown in the comment).
        min_effect: Smallest delta worth calling regressed or improved (metric units), one
            value or a function of (suite, metric name).
        informational_min_effect: For informational metrics, the min_effect is at least
            this share of the matched baseline mean (``>= 0``; 0 turns it off), one value
            or a function of (suite, metric name) such as
            :meth:`adk_eval_action.project.config.GateConfig.informational_min_effect_for`.
        seed: Seed of the random patterns; the same inputs and seed give the same
            intervals.
        n_resamples: Random patterns per test, ``>= 1`` (fewer matched cases than
            ``log2(n_resamples)`` are counted exactly where they can be).
        confidence: ``1 −`` the per-direction error rate the calls are corrected to, in
            ``(0, 1)``; each interval end is a one-sided bound at that level before
            correction.
        pool: Extra baseline runs by (suite, eval set id, eval id, metric): the runs of
            earlier recorded runs with the baseline's inputs
            (:func:`adk_eval_action.analysis.trends.pooled_runs`), added to the baseline's
            runs of each matched case and gated metric before the test
            (:mod:`adk_eval_action.analysis.pooling`); ``pooled_scores`` counts them.
        gate: The head's gate rules (``Comparison.gate_changes``; None: as recorded).

    Raises:
        ValueError: A ``min_effect`` below 0, or a bad ``confidence``, ``n_resamples`` or
            ``informational_min_effect``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    relative = _as_function(informational_min_effect)
    options = _TestOptions(
        min_effect=_as_function(min_effect),
        informational_min_effect=relative,
        seed=seed,
        n_resamples=n_resamples,
        alpha=round(1.0 - confidence, 12),
        pool=pool,
        gate=gate,
    )
    with gc_paused():
        return _compare(head, baseline, baseline_note, options, confidence)


def _as_function(value: MinEffect) -> Callable[[str, str], float]:
    """``value`` as a function of (suite, metric name), checked to be a number >= 0.

    Raises:
        ValueError: a constant below 0 or not finite.
    """
    if callable(value):
        return value
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"a min_effect must be a number >= 0, got {value}")
    number = float(value)
    return lambda _suite, _metric: number


def _compare(
    head_table: ScoreTable,
    base_table: ScoreTable | None,
    baseline_note: str,
    options: _TestOptions,
    confidence: float,
) -> Comparison:
    if base_table is not None:
        # A suite renamed since the baseline is still the same suite (results.identity).
        base_table = base_table.renamed(
            baseline_renames(base_table.skeleton.suites, head_table.skeleton.suites))
    case_ids: dict[CaseKey, int] = {}
    head_side = index_side(head_table, case_ids)
    base_side = index_side(base_table, case_ids) if base_table is not None else None
    metrics = _compare_metrics(head_side, base_side)
    rubrics = _compare_rubrics(head_side, base_side)
    tests, pooled, flips = None, 0, JudgeFlips()
    if base_side is not None:
        # Case ids by sorted key: the patterns fall alike whatever order the files have.
        keys = list(case_ids)
        order = np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.intp)
        flips = judge_flips(head_side, base_side, len(keys))
        tests, pooled = _attach_intervals(head_side, base_side, metrics, rubrics, order,
                                          options, case_ids, flips)
    head_skeleton = head_table.skeleton
    base_skeleton = base_table.skeleton if base_table is not None else None
    facts = suite_facts(head_skeleton, base_skeleton, options.gate,
                        {(m.suite, m.metric_name): m.higher_is_better for m in metrics})
    incomplete = {w.suite for w in facts["suites_without_baseline"] if w.why == "incomplete"}
    return Comparison(
        has_baseline=base_skeleton is not None,
        baseline_note=baseline_note,
        head_metadata=head_skeleton.metadata,
        baseline_metadata=base_skeleton.metadata if base_skeleton else None,
        metrics=metrics,
        rubrics=rubrics,
        cases=compare_cases(head_side, base_side, incomplete),
        errors=head_skeleton.all_errors(),
        warnings=[
            *head_skeleton.warnings,
            *head_table.repeated_warnings("head"),
            *(base_table.repeated_warnings("baseline") if base_table is not None else []),
        ],
        num_runs=head_table.num_runs,
        **facts,
        confidence=confidence,
        no_interval_reason=_no_interval_reason(metrics),
        tests=tests,
        pooled_scores=pooled,
        judge_flips=flips.flips,
        judge_noise=flips.noise,
        cost=compare_cost(
            head_table, base_table,
            lambda suite: options.informational_min_effect(suite, AGENT_TOKENS),
            seed=options.seed, alpha=options.alpha,
        ),
    )


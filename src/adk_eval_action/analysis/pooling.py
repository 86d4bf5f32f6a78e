"""Pooled baseline runs: the runs of earlier recorded runs of the default branch, with the
baseline's own suite inputs, google-adk version and judge models
(:func:`adk_eval_action.analysis.trends.pooled_runs`), added to the baseline's runs of
each matched eval case and metric before the test.

The stratified permutation test (:mod:`adk_eval_action.analysis.stratified`) takes any
number of baseline runs per case, so a pooled case is one stratum with ``m`` head runs and
``n + k`` baseline runs: more labellings, a baseline mean with less noise. The delta and the
matched baseline mean are then over the pooled runs too (the comment says so). Only metric
scores are pooled (the history keeps no rubric verdicts), only into cases the baseline
scored itself (a case new since the baseline stays new), and never for informational
metrics (durations and tokens drift with load, not with the agent).

What pooling assumes, beyond the test's own assumption: the recorded runs are draws of the
same agent on the same cases as the baseline's, so the model behind it did not change
between them. ``benchmarks/bench_pooling.py`` measures what it buys and what drift
between evaluations costs (docs/baselines.md).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from adk_eval_action.analysis.sides import Dense
from adk_eval_action.results.scoretable import CaseKey, MetricKey

PoolKey = tuple[str, str, str, str]
"""(suite, eval set id, eval id, metric name)."""


def pooled_dense(
    dense: Dense,
    extra: Mapping[PoolKey, list[float]],
    metric_rows: Mapping[MetricKey, int],
    case_ids: Mapping[CaseKey, int],
    gated: set[MetricKey],
) -> tuple[Dense, int]:
    """``dense`` (the baseline's per-metric, per-case runs) with ``extra``'s scores added
    after each case's own runs, for the metrics in ``gated`` that the baseline scored on
    that case; and how many scores were added."""
    n_ids = dense.mean.shape[1]
    added: dict[int, np.ndarray] = {}
    for (suite, set_id, eval_id, metric), scores in extra.items():
        row, case = metric_rows.get((suite, metric)), case_ids.get((suite, set_id, eval_id))
        if row is None or case is None or (suite, metric) not in gated:
            continue
        if case >= n_ids or dense.runs[row, case] == 0:
            continue
        values = np.asarray(scores, dtype=np.float64)
        values = values[np.isfinite(values)]
        if values.size:
            added[row * n_ids + case] = values
    if not added:
        return dense, 0
    return _with_runs(dense, added), sum(v.size for v in added.values())


def _with_runs(dense: Dense, added: dict[int, np.ndarray]) -> Dense:
    """``dense`` with ``added[slot]`` appended to slot ``slot``'s runs (a slot is ``key *
    n_ids + case id``; after its own runs, as the runs are sorted stably), means and run
    counts updated."""
    n_ids = dense.mean.shape[1]
    mean, runs = dense.mean.copy(), dense.runs.copy()
    keys, ids, scores = [dense.source[0]], [dense.source[1]], [dense.source[2]]
    for slot, more in added.items():
        key, case = divmod(slot, n_ids)
        own = int(runs[key, case])
        mean[key, case] = (mean[key, case] * own + float(np.sum(more))) / (own + more.size)
        runs[key, case] = own + more.size
        keys.append(np.full(more.size, key, dtype=dense.source[0].dtype))
        ids.append(np.full(more.size, case, dtype=dense.source[1].dtype))
        scores.append(more)
    source = (np.concatenate(keys), np.concatenate(ids), np.concatenate(scores))
    return Dense(mean=mean, runs=runs, source=source)

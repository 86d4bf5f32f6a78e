"""Benchmark the paired sign-flip test of :mod:`adk_eval_action.analysis.signflip` (a script, not a
test).

Builds ``--cases`` cases x ``--metrics`` metrics x ``--runs`` runs of random scores for a
baseline and a head, then times the test + correction + ``classify`` for every metric in two
ways:

* shared: one draw of sign patterns, all metrics in one matrix product per block (what
  ``compare`` does);
* per-call: each metric draws its own patterns from ``seed`` and is tested alone.

Memory is reported as the tracemalloc peak of the timed section (a separate, untimed pass,
because tracing slows allocation) and as the process's ``ru_maxrss`` high-water mark
(Linux: KiB) after each stage. A naive pure-Python sign-flip test (``random.choice``
per case and pattern) runs on ``--naive-cases`` cases, and the per-case throughput
(cases x metrics x resamples / second) of each path is compared.

Target (brief): under 1 s and 500 MB for 10,000 cases x 8 metrics on a 2-core machine.

Usage: ``.venv/bin/python benchmarks/bench_noise.py [--cases 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence

import numpy as np
from _measure import maxrss_mb, timed, traced_peak_mb

from adk_eval_action.analysis.noise import DeltaInterval, classify
from adk_eval_action.analysis.signflip import (
    FlipDistribution,
    flip_distributions,
    sign_flips,
    two_stage_level,
)

Key = tuple[str, str, str]
Scores = dict[Key, list[float]]
Metric = tuple[str, Scores, Scores, bool]  # name, baseline, head, higher_is_better
ALPHA = 0.05
MIN_EFFECT = 0.02


def build_metrics(n_cases: int, n_metrics: int, n_runs: int, seed: int) -> list[Metric]:
    """Random scores in [0, 1]; head = baseline + a per-metric shift + run noise."""
    rng = np.random.default_rng(seed)
    keys = [("suite", f"set{i % 7}", f"case{i:05d}") for i in range(n_cases)]
    metrics: list[Metric] = []
    for m in range(n_metrics):
        level = rng.uniform(0.2, 0.8, n_cases)
        shift = (-0.05, 0.0, 0.03, -0.01)[m % 4]
        base = np.clip(level[:, None] + rng.normal(0, 0.05, (n_cases, n_runs)), 0, 1)
        head = np.clip(level[:, None] + shift + rng.normal(0, 0.05, (n_cases, n_runs)), 0, 1)
        metrics.append(
            (
                f"metric_{m}",
                dict(zip(keys, base.tolist(), strict=True)),
                dict(zip(keys, head.tolist(), strict=True)),
                m % 3 != 2,  # some lower-is-better metrics
            )
        )
    return metrics


def _diffs(baseline: Scores, head: Scores) -> np.ndarray:
    keys = sorted(baseline)
    return np.array(
        [
            math.fsum(head[k]) / len(head[k]) - math.fsum(baseline[k]) / len(baseline[k])
            for k in keys
        ]
    )


def run_numpy(
    metrics: Sequence[Metric], n_resamples: int, seed: int, shared: bool
) -> list[tuple[str, DeltaInterval, str]]:
    """Test + correction + classify for every metric; ``shared``: one draw of sign
    patterns and one matrix product per block for all metrics."""
    diffs = [_diffs(baseline, head) for _, baseline, head, _ in metrics]
    if shared:
        flips = sign_flips(diffs[0].size, n_resamples=n_resamples, seed=seed)
        dists = flip_distributions(np.column_stack(diffs), flips)
    else:
        dists = [
            flip_distributions(d[:, None], sign_flips(d.size, n_resamples=n_resamples, seed=seed))[
                0
            ]
            for d in diffs
        ]
    return _calls(metrics, dists)


def _calls(
    metrics: Sequence[Metric], dists: Sequence[FlipDistribution]
) -> list[tuple[str, DeltaInterval, str]]:
    higher = [m[3] for m in metrics]
    worse = [
        d.p_less(-MIN_EFFECT) if h else d.p_greater(MIN_EFFECT)
        for d, h in zip(dists, higher, strict=True)
    ]
    better = [
        d.p_greater(MIN_EFFECT) if h else d.p_less(-MIN_EFFECT)
        for d, h in zip(dists, higher, strict=True)
    ]
    level_worse, level_better = two_stage_level(worse, ALPHA), two_stage_level(better, ALPHA)
    out = []
    for (name, *_), dist, h in zip(metrics, dists, higher, strict=True):
        level_low, level_high = (level_better, level_worse) if h else (level_worse, level_better)
        low, high = dist.lower(level_low), dist.upper(level_high)
        interval = DeltaInterval(
            delta=dist.delta,
            low=low if high is not None else None,
            high=high if low is not None else None,
            n_cases=dist.high.size,
            n_resamples=dist.total,
            confidence=1 - ALPHA,
            reason=None if low is not None and high is not None else "too few cases",
        )
        out.append(
            (
                name,
                interval,
                classify(interval, dist.delta, min_effect=MIN_EFFECT, higher_is_better=h),
            )
        )
    return out


def naive_sign_flip(baseline: Scores, head: Scores, n_resamples: int, seed: int) -> float:
    """Pure-Python one-sided sign-flip p-value of the mean difference."""
    rnd = random.Random(seed)
    diffs = _diffs(baseline, head).tolist()
    observed = sum(diffs) / len(diffs)
    hits = sum(
        sum(d if rnd.random() < 0.5 else -d for d in diffs) / len(diffs) <= observed
        for _ in range(n_resamples)
    )
    return (1 + hits) / (1 + n_resamples)


def run_naive(metrics: Sequence[Metric], n_resamples: int, seed: int) -> None:
    """naive_sign_flip for every metric (results discarded; only timing matters)."""
    for _, baseline, head, _ in metrics:
        naive_sign_flip(baseline, head, n_resamples, seed)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run the benchmark and print a report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--naive-cases", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"rss after imports: {maxrss_mb():.0f} MB")
    start = time.perf_counter()
    metrics = build_metrics(args.cases, args.metrics, args.runs, args.seed)
    print(
        f"built {args.cases} cases x {args.metrics} metrics x {args.runs} runs "
        f"in {time.perf_counter() - start:.2f} s; rss {maxrss_mb():.0f} MB"
    )

    work = args.cases * args.metrics * args.resamples
    throughput: dict[str, float] = {}
    for label, shared in (("numpy shared patterns", True), ("numpy per-call draw", False)):
        times = timed(
            lambda s=shared: run_numpy(metrics, args.resamples, args.seed, s), args.repeat
        )
        peak = traced_peak_mb(lambda s=shared: run_numpy(metrics, args.resamples, args.seed, s))
        best = min(times)
        throughput[label] = work / best
        print(
            f"{label:>22}: best {best:.3f} s, median {statistics.median(times):.3f} s "
            f"over {args.repeat}; tracemalloc peak {peak:.1f} MB; rss {maxrss_mb():.0f} MB; "
            f"{work / best / 1e6:.1f} M case-resamples/s"
        )

    results = run_numpy(metrics, args.resamples, args.seed, shared=True)
    # Same seed and case count, so sharing one draw must not change any result.
    alone = run_numpy(metrics, args.resamples, args.seed, shared=False)
    # One matrix product for all metrics sums in another order than one per metric.
    same = all(
        a[2] == b[2] and math.isclose(a[1].high or 0, b[1].high or 0, abs_tol=1e-12)
        for a, b in zip(results, alone, strict=True)
    )
    print(f"    shared and per-call calls equal, bounds within 1e-12: {same}")
    for name, interval, verdict in results:
        print(
            f"    {name}: delta {interval.delta:+.4f} "
            f"[{interval.low:+.4f}, {interval.high:+.4f}] -> {verdict}"
        )

    naive_metrics = build_metrics(args.naive_cases, args.metrics, args.runs, args.seed)
    naive_time = min(timed(lambda: run_naive(naive_metrics, args.resamples, args.seed), 1))
    naive_work = args.naive_cases * args.metrics * args.resamples
    naive_rate = naive_work / naive_time
    print(
        f"{'pure-Python naive':>22}: {naive_time:.3f} s for {args.naive_cases} cases x "
        f"{args.metrics} metrics; {naive_rate / 1e6:.2f} M case-resamples/s"
    )
    for label, rate in throughput.items():
        print(f"    per-case throughput ratio, {label} / naive: {rate / naive_rate:.0f}x")
    target = min(timed(lambda: run_numpy(metrics, args.resamples, args.seed, True), 1))
    verdict = "met" if target < 1.0 and maxrss_mb() < 500 else "NOT met"
    print(
        f"target (<1 s, <500 MB rss) with shared patterns: {verdict}; "
        f"final rss {maxrss_mb():.0f} MB"
    )


if __name__ == "__main__":
    main()

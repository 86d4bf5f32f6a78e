"""Benchmark the paired bootstrap in :mod:`adk_eval_action.analysis.noise` (a script, not a test).

Builds ``--cases`` cases x ``--metrics`` metrics x ``--runs`` runs of random scores for a
baseline and a head, then times ``paired_bootstrap`` + ``classify`` for every metric in two
ways:

* shared: one ``bootstrap_counts`` draw reused by all metrics (they share the case set);
* per-call: each ``paired_bootstrap`` call draws its own resamples from ``seed``.

Memory is reported as the tracemalloc peak of the timed section (a separate, untimed pass,
because tracing slows allocation) and as the process's ``ru_maxrss`` high-water mark
(Linux: KiB) after each stage. A naive pure-Python bootstrap (``random.choices`` per
resample) runs on ``--naive-cases`` cases, and the per-case throughput
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

from adk_eval_action.analysis.noise import (
    DeltaInterval,
    bootstrap_counts,
    classify,
    paired_bootstrap,
)

Key = tuple[str, str, str]
Scores = dict[Key, list[float]]
Metric = tuple[str, Scores, Scores, bool]  # name, baseline, head, higher_is_better


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


def run_numpy(
    metrics: Sequence[Metric], n_resamples: int, seed: int, shared: bool
) -> list[tuple[str, DeltaInterval, str]]:
    """paired_bootstrap + classify for every metric; ``shared`` reuses one counts draw."""
    counts = None
    if shared:
        counts = bootstrap_counts(len(metrics[0][1]), n_resamples=n_resamples, seed=seed)
    out = []
    for name, baseline, head, higher in metrics:
        interval = paired_bootstrap(
            baseline, head, n_resamples=n_resamples, seed=seed, counts=counts
        )
        verdict = classify(interval, interval.delta, min_effect=0.02, higher_is_better=higher)
        out.append((name, interval, verdict))
    return out


def naive_bootstrap(
    baseline: Scores, head: Scores, n_resamples: int, confidence: float, seed: int
) -> tuple[float, float, float]:
    """Pure-Python paired percentile bootstrap: (delta, low, high)."""
    rnd = random.Random(seed)
    diffs = [sum(head[k]) / len(head[k]) - sum(baseline[k]) / len(baseline[k]) for k in baseline]
    n = len(diffs)
    means = sorted(sum(rnd.choices(diffs, k=n)) / n for _ in range(n_resamples))
    alpha = 1.0 - confidence

    def percentile(q: float) -> float:
        # Same "linear" interpolation as numpy.quantile's default.
        pos = q * (len(means) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(means) - 1)
        return means[lo] + (means[hi] - means[lo]) * (pos - lo)

    return sum(diffs) / n, percentile(alpha / 2), percentile(1 - alpha / 2)


def run_naive(metrics: Sequence[Metric], n_resamples: int, seed: int) -> None:
    """naive_bootstrap for every metric (results discarded; only timing matters)."""
    for _, baseline, head, _ in metrics:
        naive_bootstrap(baseline, head, n_resamples, 0.95, seed)


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
    for label, shared in (("numpy shared counts", True), ("numpy per-call draw", False)):
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
    same = results == run_numpy(metrics, args.resamples, args.seed, shared=False)
    print(f"    shared and per-call results identical: {same}")
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
        f"target (<1 s, <500 MB rss) with shared counts: {verdict}; final rss {maxrss_mb():.0f} MB"
    )


if __name__ == "__main__":
    main()

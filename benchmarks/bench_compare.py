"""Benchmark compare + gate + render on a large run (a script, not a test).

Builds a baseline and a head :class:`~adk_eval_action.results.RunResults` of ``--cases``
eval cases x ``--metrics`` metrics x ``--runs`` runs (one metric carries three rubrics, one
is the informational ``token_usage_v1``; pass/fail comes from a threshold, so noisy cases
are flaky), then times, on already-loaded results:

* ``compare`` (per-metric and per-rubric paired bootstrap, per-case deltas, flaky cases);
* ``decide`` (the gate);
* ``render_comment`` + ``render_summary`` (with the mermaid chart).

Memory is reported as the tracemalloc peak of one compare + gate + render pass (a separate,
untimed pass, because tracing slows allocation; this is what the stages allocate on top of
the loaded results) and as the process's ``ru_maxrss`` high-water mark (Linux: KiB), which
also counts the two results objects themselves.

Target (issue): under 1 s and 500 MB for 10,000 cases x 8 metrics x 3 runs.

Usage: ``.venv/bin/python benchmarks/bench_compare.py [--cases 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
from _measure import maxrss_mb, timed, traced_peak_mb

from adk_eval_action.chart import metric_chart_markdown
from adk_eval_action.compare import Comparison, compare, gc_paused
from adk_eval_action.config import GateConfig
from adk_eval_action.gate import GateResult, decide
from adk_eval_action.render import CommentContext, render_comment, render_summary
from adk_eval_action.results import (
    CaseStatus,
    EvalCaseRecord,
    EvalSetRecord,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunRecord,
    RunResults,
    SuiteRecord,
)

RUBRIC_METRIC = "rubric_based_final_response_quality_v1"
RUBRIC_IDS = ("friendly", "concise", "cites_source")


def _metric_names(n_metrics: int) -> list[str]:
    """``n_metrics`` names: one rubric metric, one informational, the rest scored."""
    names = [RUBRIC_METRIC, "token_usage_v1"]
    names += [f"custom_metric_{i}" for i in range(max(0, n_metrics - 2))]
    return names[:n_metrics]


def build_results(
    n_cases: int, n_metrics: int, n_runs: int, *, shift: float, seed: int
) -> RunResults:
    """Random per-run scores: a per-case level plus ``shift`` plus run noise, clipped to
    [0, 1]; a run passes a metric at score >= 0.5. ``token_usage_v1`` is ~100 tokens."""
    rng = np.random.default_rng(seed)
    names = _metric_names(n_metrics)
    level = np.random.default_rng(1234).uniform(0.3, 0.9, (n_cases, n_metrics))
    noise = rng.normal(0.0, 0.08, (n_cases, n_runs, n_metrics))
    scores = np.clip(level[:, None, :] + shift + noise, 0.0, 1.0).tolist()
    tokens = (100 + 40 * rng.random((n_cases, n_runs)) + 200 * shift).tolist()
    rubric_scores = (rng.random((n_cases, n_runs, len(RUBRIC_IDS))) < 0.8 + shift).tolist()
    cases = []
    for c in range(n_cases):
        runs = []
        for r in range(n_runs):
            metrics = []
            for m, name in enumerate(names):
                if name == "token_usage_v1":
                    metrics.append(
                        MetricResult(
                            metric_name=name,
                            score=tokens[c][r],
                            status=MetricStatus.INFORMATIONAL,
                            higher_is_better=False,
                            informational=True,
                        )
                    )
                    continue
                value = scores[c][r][m]
                rubrics = (
                    [
                        RubricScoreRecord(
                            rubric_id=rid, text=f"The answer is {rid}.", score=float(ok)
                        )
                        for rid, ok in zip(RUBRIC_IDS, rubric_scores[c][r], strict=True)
                    ]
                    if name == RUBRIC_METRIC
                    else []
                )
                metrics.append(
                    MetricResult(
                        metric_name=name,
                        score=value,
                        threshold=0.5,
                        min_value=0.0,
                        max_value=1.0,
                        status=MetricStatus.PASSED if value >= 0.5 else MetricStatus.FAILED,
                        rubrics=rubrics,
                    )
                )
            failed = any(m.status == MetricStatus.FAILED for m in metrics)
            runs.append(
                RunRecord(
                    run=r + 1,
                    status=CaseStatus.FAILED if failed else CaseStatus.PASSED,
                    metrics=metrics,
                )
            )
        cases.append(EvalCaseRecord(eval_id=f"case_{c:05d}", line=c + 1, runs=runs))
    eval_sets = [
        EvalSetRecord(
            eval_set_id=f"set_{s}", file=f"evals/set_{s}.evalset.json", eval_cases=cases[s::10]
        )
        for s in range(10)
    ]
    suite = SuiteRecord(name="bench", num_runs=n_runs, eval_sets=eval_sets)
    return RunResults(suites=[suite])


def compare_gate_render(head: RunResults, baseline: RunResults) -> tuple[Comparison, str, str]:
    """The measured work: what ``pipeline.finish`` does between loading and writing (with
    the cyclic GC paused, as there)."""
    config = GateConfig(fail_on="any", min_effect=0.01, max_regression=0.02)
    with gc_paused():
        comparison = compare(head, baseline, "bench baseline", min_effect=config.min_effect_for)
        context = _context(comparison, decide(comparison, config))
        return comparison, render_comment(context), render_summary(context)


def _context(comparison: Comparison, gate: GateResult) -> CommentContext:
    """The render input, as ``pipeline.finish`` builds it."""
    return CommentContext(
        comparison=comparison,
        gate=gate,
        results_path="results.json",
        chart=metric_chart_markdown(comparison),
    )


def paused(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` run with the cyclic GC paused, as pipeline.finish runs each stage."""

    def run() -> object:
        with gc_paused():
            return fn()

    return run


def read_floor(results: RunResults) -> int:
    """Only read what compare must read of every metric result and rubric verdict: the
    floor under any pure-Python compare of these objects (mostly memory latency: the
    objects are scattered over ~1 GB)."""
    seen = 0
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    for m in run.metrics:
                        _ = (m.metric_name, m.status, m.score, m.reason, m.informational)
                        for rubric in m.rubrics:
                            _ = (rubric.rubric_id, rubric.score, rubric.text)
                        seen += 1
    return seen


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run the benchmark and print a report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile one pass, top 25")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    baseline = build_results(args.cases, args.metrics, args.runs, shift=0.0, seed=1)
    head = build_results(args.cases, args.metrics, args.runs, shift=-0.02, seed=2)
    build_s = time.perf_counter() - start
    rss_inputs = maxrss_mb()
    print(
        f"inputs: {args.cases} cases x {args.metrics} metrics x {args.runs} runs, two sides; "
        f"built in {build_s:.1f} s; ru_maxrss {rss_inputs:.0f} MB"
    )

    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(compare_gate_render, head, baseline)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)

    stages: dict[str, Callable[[], object]] = {}
    comparison, comment, summary = compare_gate_render(head, baseline)  # warm-up (imports, jit)
    config = GateConfig(fail_on="any", min_effect=0.01, max_regression=0.02)
    stages["compare"] = lambda: compare(
        head, baseline, "bench baseline", min_effect=config.min_effect_for
    )
    stages["gate"] = lambda: decide(comparison, config)
    context = _context(comparison, decide(comparison, config))
    stages["floor: read both sides' fields"] = lambda: read_floor(head) + read_floor(baseline)
    stages["chart"] = lambda: metric_chart_markdown(comparison)
    stages["render comment"] = lambda: render_comment(context)
    stages["render summary"] = lambda: render_summary(context)
    stages["total (compare+gate+chart+render)"] = lambda: compare_gate_render(head, baseline)
    for name, fn in stages.items():
        times = timed(paused(fn), args.repeat)
        print(
            f"{name:<36} median {statistics.median(times):.3f} s  "
            f"(min {min(times):.3f}, max {max(times):.3f}, n={args.repeat})"
        )
    peak = traced_peak_mb(lambda: compare_gate_render(head, baseline))
    print(f"tracemalloc peak of one compare+gate+chart+render pass: {peak:.0f} MB")
    print(f"process ru_maxrss (inputs included): {maxrss_mb():.0f} MB")
    regressed = sum(m.classification == "regressed" for m in comparison.metrics)
    flaky = sum(bool(c.flaky_head) for c in comparison.cases)
    print(
        f"sanity: {len(comparison.metrics)} metrics ({regressed} regressed), "
        f"{len(comparison.rubrics)} rubrics, {flaky} flaky head cases, "
        f"comment {len(comment):,} chars, summary {len(summary.encode()):,} bytes"
    )


if __name__ == "__main__":
    main()

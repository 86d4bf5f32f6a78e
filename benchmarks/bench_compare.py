"""Benchmark compare + gate + render on a large run (a script, not a test).

A baseline and a head of ``--cases`` eval cases x ``--metrics`` metrics x ``--runs`` runs
(one metric carries three rubrics, one is the informational ``token_usage_v1``; pass/fail
comes from a threshold, so noisy cases are flaky) are compared, gated and rendered:

* ``compare`` (per-metric and per-rubric paired bootstrap, per-case deltas, flaky cases);
* ``decide`` (the gate);
* ``render_comment`` + ``render_summary`` (with the mermaid chart).

Two ways of holding the inputs, each measured in its own child process so that each
``ru_maxrss`` (the process's resident high-water mark, which counts the inputs too) is its
own, side by side with ratios:

* ``table``: each side as a :class:`~adk_eval_action.results.scoretable.ScoreTable`, built one eval
  case at a time (the cases are never all held as objects);
* ``results``: each side as a loaded :class:`~adk_eval_action.results.model.RunResults` (~1.4
  million pydantic objects per side), which compare turns into a table itself; this is what
  ``adk-eval-action compare`` holds after reading two results files.

The tracemalloc peak of one (untimed) pass is what the stages allocate on top of the
inputs. Reading the results files is not measured: parsing the 148 MB results.json of one
side takes ~1 s with any JSON parser on this machine.

Target (issue 5): under 1 s and 500 MB for 10,000 cases x 8 metrics x 3 runs.

Usage: ``.venv/bin/python benchmarks/bench_compare.py [--cases 10000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

import numpy as np
from _measure import maxrss_mb, timed, traced_peak_mb

from adk_eval_action.analysis.compare import Comparison, compare
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.io import gc_paused
from adk_eval_action.results.model import (
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
from adk_eval_action.results.scoretable import ScoreTable, TableBuilder
from adk_eval_action.run.pipeline import score_tables

RUBRIC_METRIC = "rubric_based_final_response_quality_v1"
RUBRIC_IDS = ("friendly", "concise", "cites_source")
N_EVAL_SETS = 10
GATE = GateConfig(fail_on="any", min_effect=0.01, max_regression=0.02)
Inputs = Literal["table", "results"]


def _metric_names(n_metrics: int) -> list[str]:
    """``n_metrics`` names: one rubric metric, one informational, the rest scored."""
    names = [RUBRIC_METRIC, "token_usage_v1"]
    names += [f"custom_metric_{i}" for i in range(max(0, n_metrics - 2))]
    return names[:n_metrics]


def _skeleton(n_runs: int) -> RunResults:
    """One suite of ``N_EVAL_SETS`` eval sets, without cases."""
    eval_sets = [
        EvalSetRecord(eval_set_id=f"set_{s}", file=f"evals/set_{s}.evalset.json")
        for s in range(N_EVAL_SETS)
    ]
    return RunResults(suites=[SuiteRecord(name="bench", num_runs=n_runs, eval_sets=eval_sets)])


def generate_cases(
    n_cases: int, n_metrics: int, n_runs: int, *, shift: float, seed: int
) -> Iterator[tuple[int, EvalCaseRecord]]:
    """``(eval set index, case)`` in results-file order (eval set by eval set).

    Random per-run scores: a per-case level plus ``shift`` plus run noise, clipped to
    [0, 1]; a run passes a metric at score >= 0.5. ``token_usage_v1`` is ~100 tokens."""
    rng = np.random.default_rng(seed)
    names = _metric_names(n_metrics)
    level = np.random.default_rng(1234).uniform(0.3, 0.9, (n_cases, n_metrics))
    noise = rng.normal(0.0, 0.08, (n_cases, n_runs, n_metrics))
    scores = np.clip(level[:, None, :] + shift + noise, 0.0, 1.0)
    tokens = 100 + 40 * rng.random((n_cases, n_runs)) + 200 * shift
    verdicts = rng.random((n_cases, n_runs, len(RUBRIC_IDS))) < 0.8 + shift
    for s in range(N_EVAL_SETS):
        for c in range(s, n_cases, N_EVAL_SETS):
            runs = [
                _run(r, names, scores[c, r].tolist(), float(tokens[c, r]), verdicts[c, r].tolist())
                for r in range(n_runs)
            ]
            yield s, EvalCaseRecord(eval_id=f"case_{c:05d}", line=c + 1, runs=runs)


def _run(
    r: int, names: list[str], scores: list[float], tokens: float, verdicts: list[bool]
) -> RunRecord:
    metrics = []
    for name, value in zip(names, scores, strict=True):
        if name == "token_usage_v1":
            metrics.append(
                MetricResult(
                    metric_name=name,
                    score=tokens,
                    status=MetricStatus.INFORMATIONAL,
                    higher_is_better=False,
                    informational=True,
                )
            )
            continue
        rubrics = []
        if name == RUBRIC_METRIC:
            rubrics = [
                RubricScoreRecord(rubric_id=rid, text=f"The answer is {rid}.", score=float(ok))
                for rid, ok in zip(RUBRIC_IDS, verdicts, strict=True)
            ]
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
    status = CaseStatus.FAILED if failed else CaseStatus.PASSED
    return RunRecord(run=r + 1, status=status, metrics=metrics)


def build_side(
    inputs: Inputs, n_cases: int, n_metrics: int, n_runs: int, *, shift: float, seed: int
) -> RunResults | ScoreTable:
    """One side, held as ``inputs`` says (see the module docstring)."""
    skeleton = _skeleton(n_runs)
    cases = generate_cases(n_cases, n_metrics, n_runs, shift=shift, seed=seed)
    if inputs == "results":
        for s, case in cases:
            skeleton.suites[0].eval_sets[s].eval_cases.append(case)
        return skeleton
    builder = TableBuilder()
    for s, case in cases:
        eval_set = skeleton.suites[0].eval_sets[s]
        builder.add_case("bench", eval_set.eval_set_id, eval_set.file, case)
    return builder.build(skeleton)


def compare_gate_render(
    head: RunResults | ScoreTable, baseline: RunResults | ScoreTable
) -> tuple[Comparison, str, str]:
    """The measured work: what ``pipeline.finish`` does between loading and writing (with
    the cyclic GC paused, as there)."""
    with gc_paused():
        comparison = compare(*score_tables(head, baseline), "bench baseline",
                             min_effect=GATE.min_effect_for)
        context = CommentContext(
            comparison=comparison,
            gate=decide(comparison, GATE),
            results_path="results.json",
            chart=metric_chart_markdown(comparison),
        )
        return comparison, render_comment(context), render_summary(context)


def measure(inputs: Inputs, args: argparse.Namespace) -> dict[str, object]:
    """Builds both sides as ``inputs`` and measures; returns the numbers as a dict."""
    shape = (args.cases, args.metrics, args.runs)
    start = time.perf_counter()
    baseline = build_side(inputs, *shape, shift=0.0, seed=1)
    head = build_side(inputs, *shape, shift=-0.02, seed=2)
    out: dict[str, object] = {
        "build_s": time.perf_counter() - start,
        "inputs_rss_mb": maxrss_mb(),
    }
    if isinstance(head, ScoreTable) and isinstance(baseline, ScoreTable):
        out["tables_mb"] = (head.nbytes + baseline.nbytes) / 1e6
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(compare_gate_render, head, baseline)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    comparison, comment, summary = compare_gate_render(head, baseline)  # warm-up
    context = CommentContext(
        comparison=comparison,
        gate=decide(comparison, GATE),
        results_path="results.json",
        chart=metric_chart_markdown(comparison),
    )
    stages: dict[str, Callable[[], object]] = {
        "compare": lambda: compare(*score_tables(head, baseline), "b",
                                   min_effect=GATE.min_effect_for),
        "gate": lambda: decide(comparison, GATE),
        "chart": lambda: metric_chart_markdown(comparison),
        "render comment": lambda: render_comment(context),
        "render summary": lambda: render_summary(context),
        "total": lambda: compare_gate_render(head, baseline),
    }
    for name, fn in stages.items():
        out[name] = statistics.median(timed(_paused(fn), args.repeat))
    out["traced_peak_mb"] = traced_peak_mb(lambda: compare_gate_render(head, baseline))
    out["rss_mb"] = maxrss_mb()
    regressed = sum(m.classification == "regressed" for m in comparison.metrics)
    out["sanity"] = (
        f"{len(comparison.metrics)} metrics ({regressed} regressed), "
        f"{len(comparison.rubrics)} rubrics, {len(comparison.cases)} cases, "
        f"{len(comparison.flaky_cases)} flaky, {len(comparison.changed_cases)} changed; "
        f"comment {len(comment):,} chars, summary {len(summary.encode()):,} bytes"
    )
    return out


def _paused(fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with gc_paused():
            return fn()

    return run


def _child(inputs: Inputs, argv: Sequence[str]) -> dict[str, object]:
    """Runs this script for ``inputs`` in a fresh process; its JSON report."""
    done = subprocess.run(
        [sys.executable, __file__, *argv, "--inputs", inputs],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(table: dict[str, object], results: dict[str, object], args: argparse.Namespace) -> None:
    """Prints both measurements side by side, with results/table ratios."""
    print(
        f"{args.cases} cases x {args.metrics} metrics x {args.runs} runs, two sides; "
        f"median of {args.repeat}; seconds unless stated"
    )
    print(f"{'':<34}{'table':>10}{'results':>10}{'ratio':>8}")
    rows = ["compare", "gate", "chart", "render comment", "render summary", "total"]
    for name in rows:
        t, r = float(table[name]), float(results[name])
        print(f"{name:<34}{t:>10.3f}{r:>10.3f}{r / t:>7.1f}x")
    for name, label in (
        ("traced_peak_mb", "allocated by one pass (MB)"),
        ("inputs_rss_mb", "process RSS, inputs built (MB)"),
        ("rss_mb", "process peak RSS (MB)"),
    ):
        t, r = float(table[name]), float(results[name])
        print(f"{label:<34}{t:>10.0f}{r:>10.0f}{r / t:>7.1f}x")
    print(f"table columns of both sides: {float(table['tables_mb']):.1f} MB")
    total, peak = float(table["total"]), float(table["rss_mb"])
    verdict = "met" if total < 1.0 and peak < 500.0 else "NOT met"
    print(f"target (< 1 s, < 500 MB) with table inputs: {verdict} ({total:.3f} s, {peak:.0f} MB)")
    print(f"sanity: {table['sanity']}")
    if table["sanity"] != results["sanity"]:
        raise SystemExit(f"the two input forms disagree: {results['sanity']}")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run both measurements and print the report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=_positive, default=10_000)
    parser.add_argument("--metrics", type=_positive, default=8)
    parser.add_argument("--runs", type=_positive, default=3)
    parser.add_argument("--repeat", type=_positive, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile one pass (stderr)")
    parser.add_argument("--inputs", choices=["table", "results"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inputs:
        print(json.dumps(measure(args.inputs, args)))
        return
    passed = [a for a in (argv if argv is not None else sys.argv[1:])]
    report(_child("table", passed), _child("results", passed), args)


if __name__ == "__main__":
    main()

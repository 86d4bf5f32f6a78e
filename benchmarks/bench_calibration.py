"""Calibration of the regressed / improved calls: false alarms and power (a script, not a test).

Simulates pull requests as pairs of results (baseline, head) drawn from known score
distributions, runs the package's own ``compare`` on each pair, and counts the calls:

* **false alarms**: both sides drawn from the *same* distribution (an unchanged agent); a
  metric or rubric called 🔴 regressed is a false alarm, and a PR with any such call is a
  false-alarm PR. The target is at most 5% of PRs (issue 16);
* **power**: the head's pass probability (or mean score) lowered by ``--effect`` on every
  metric (``--degrade all``) or on the first (``--degrade one``); or ``--collapse K`` eval
  cases of the first metric collapsing from all-pass to all-fail (pass probability 1 on
  the baseline, 0 on the head), its other cases ``--others steady`` (passing every run) or
  drawn from the mix; the share of degraded metrics called regressed, and of PRs with at
  least one such call.

Each rate is printed with its Monte-Carlo 95% margin (1.96 binomial standard errors), for
the package's test (``compare`` as it is: runs exchanged within eval cases up to 100
matched cases) and, side by side on the same simulated PRs, for the test over whole cases
(the paired sign flip over per-case means, what ``compare`` did before it used the runs:
``compare`` on tables holding each case's mean as its only run), with the ratio of the
two.

The generator: every eval case gets, per metric, a pass probability drawn from a difficulty
mix (``easy``: 1.0 / 0.9 / 0.7 / 0.5, the issue's; ``hard``: 0.5 / 0.3 / 0.1 / 0.0; ``wide``:
uniform on [0, 1]); binary metrics score 1 (passed) or 0 (failed) per run, continuous ones a
Beta draw with that mean (``--kind continuous``); ``--rubrics`` makes the first metric a
rubric metric with three rubric verdicts per run, each a Bernoulli draw, and its score their
mean. Metrics are independent given the case (the hardest case for a multiplicity
correction: nothing is shared between tests).

``--adaptive-runs MAX`` adds the package's adaptive repeats: after the planned runs, the
cases the package asks more runs for are drawn again (head only: the baseline is reused)
until the calls are decided or MAX runs or the budget are reached; the model calls spent
(head case runs, relative to the planned ones) are printed.

Usage::

    .venv/bin/python benchmarks/bench_calibration.py --grid       # the docs/gating.md table
    .venv/bin/python benchmarks/bench_calibration.py --cases 50 --runs 3 --effect 0.1
    .venv/bin/python benchmarks/bench_calibration.py --cases 3 --runs 5 --collapse 1
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from adk_eval_action.analysis.compare import Comparison, compare
from adk_eval_action.analysis.repeat_plan import plan_repeats
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

MIXES: dict[str, tuple[float, ...] | None] = {
    "easy": (1.0, 0.9, 0.7, 0.5),
    "hard": (0.5, 0.3, 0.1, 0.0),
    "wide": None,
}
RUBRIC_IDS = ("r1", "r2", "r3")
BETA_CONCENTRATION = 4.0
SUITE, EVAL_SET = "sim", "set"


@dataclass(frozen=True)
class Scenario:
    """One cell of the grid: shape, generator and the true change of the head."""

    cases: int = 50
    runs: int = 3
    metrics: int = 8
    kind: str = "binary"
    mix: str = "easy"
    rubrics: bool = False
    effect: float = 0.0
    degrade: str = "all"
    adaptive_runs: int = 0
    collapse: int = 0
    others: str = "mix"

    @property
    def changed(self) -> bool:
        """Whether the head agent differs from the baseline's."""
        return bool(self.effect or self.collapse)

    def label(self) -> str:
        """A short name for the table."""
        parts = [f"{self.cases}x{self.runs}", f"{self.metrics} {self.kind}", self.mix]
        if self.rubrics:
            parts.append("+3 rubrics")
        if self.effect:
            parts.append(f"-{self.effect:g} on {self.degrade}")
        if self.collapse:
            others = "steady" if self.others == "steady" else self.mix
            parts.append(f"{self.collapse} collapse(s), others {others}")
        if self.adaptive_runs:
            parts.append(f"adaptive {self.adaptive_runs}")
        return ", ".join(parts)


def case_probabilities(rng: np.random.Generator, s: Scenario) -> np.ndarray:
    """Per (case, metric) pass probability (or mean score) of the baseline agent."""
    mix = MIXES[s.mix]
    if mix is None:
        return rng.uniform(0.0, 1.0, (s.cases, s.metrics))
    return rng.choice(np.asarray(mix), size=(s.cases, s.metrics))


def degraded(p: np.ndarray, s: Scenario) -> np.ndarray:
    """The head agent's probabilities: ``effect`` lower on the degraded metrics; the
    collapsing cases of the first metric at 0 (their baseline at 1: :func:`baseline`)."""
    out = p.copy()
    columns = slice(None) if s.degrade == "all" else slice(0, 1)
    out[:, columns] = np.clip(out[:, columns] - s.effect, 0.0, 1.0)
    out[: s.collapse, 0] = 0.0
    return out


def baseline(rng: np.random.Generator, s: Scenario) -> np.ndarray:
    """The baseline agent's probabilities: the mix's, with the first metric's collapsing
    cases passing every run and, with ``others="steady"``, its other cases too."""
    p = case_probabilities(rng, s)
    if s.collapse:
        p[: s.collapse if s.others != "steady" else None, 0] = 1.0
    return p


def draw_runs(
    rng: np.random.Generator, p: np.ndarray, runs: int, s: Scenario
) -> tuple[np.ndarray, np.ndarray | None]:
    """Scores ``(case, run, metric)`` and rubric verdicts ``(case, run, rubric)`` (None
    without rubrics) for ``runs`` runs of every case."""
    shape = (p.shape[0], runs, p.shape[1])
    pp = np.broadcast_to(p[:, None, :], shape)
    if s.kind == "binary":
        scores = (rng.random(shape) < pp).astype(float)
    else:
        a = np.maximum(pp * BETA_CONCENTRATION, 1e-9)
        b = np.maximum((1.0 - pp) * BETA_CONCENTRATION, 1e-9)
        scores = np.where(pp >= 1.0, 1.0, np.where(pp <= 0.0, 0.0, rng.beta(a, b)))
    verdicts = None
    if s.rubrics:
        rp = np.broadcast_to(p[:, None, :1], (p.shape[0], runs, len(RUBRIC_IDS)))
        verdicts = (rng.random(rp.shape) < rp).astype(float)
        scores[:, :, 0] = verdicts.mean(axis=2)
    return scores, verdicts


def _run_record(run: int, scores: Sequence[float], verdicts: Sequence[float] | None) -> RunRecord:
    metrics = []
    for m, score in enumerate(scores):
        rubrics = []
        if verdicts is not None and m == 0:
            rubrics = [
                RubricScoreRecord.model_construct(rubric_id=rid, text=rid, score=v)
                for rid, v in zip(RUBRIC_IDS, verdicts, strict=True)
            ]
        metrics.append(
            MetricResult.model_construct(
                metric_name=f"metric_{m}",
                score=score,
                status=MetricStatus.PASSED if score >= 0.5 else MetricStatus.FAILED,
                threshold=0.5,
                min_value=0.0,
                max_value=1.0,
                higher_is_better=True,
                informational=False,
                reason=None,
                judge_model=None,
                rubrics=rubrics,
                invocations=[],
                details={},
            )
        )
    failed = any(m.status == MetricStatus.FAILED for m in metrics)
    return RunRecord.model_construct(
        run=run,
        status=CaseStatus.FAILED if failed else CaseStatus.PASSED,
        error=None,
        metrics=metrics,
        session_id=None,
        actual_invocations=None,
    )


def side_table(scores: Sequence[np.ndarray], verdicts: Sequence[np.ndarray] | None) -> ScoreTable:
    """One side's :class:`ScoreTable`, built case by case as the package builds it;
    ``scores[c]`` is case ``c``'s ``(run, metric)`` scores, ``verdicts[c]`` its
    ``(run, rubric)`` verdicts."""
    builder = TableBuilder()
    for c, case_scores in enumerate(scores):
        runs = [
            _run_record(
                r + 1,
                case_scores[r].tolist(),
                None if verdicts is None else verdicts[c][r].tolist(),
            )
            for r in range(case_scores.shape[0])
        ]
        case = EvalCaseRecord.model_construct(eval_id=f"case_{c:04d}", line=c + 1, runs=runs)
        builder.add_case(SUITE, EVAL_SET, "sim.evalset.json", case)
    skeleton = RunResults(
        suites=[
            SuiteRecord(
                name=SUITE,
                num_runs=max((x.shape[0] for x in scores), default=1),
                eval_sets=[EvalSetRecord(eval_set_id=EVAL_SET, file="sim.evalset.json")],
            )
        ]
    )
    return builder.build(skeleton)


@dataclass
class PrOutcome:
    """What one simulated PR's comparison called, and what it cost."""

    regressed: list[bool]  # per test (metric, then rubric) in the comparison's order
    degraded: list[bool]  # whether that test's true value changed
    head_runs: int  # case runs evaluated on the head
    planned_runs: int


Analyse = Callable[[list[np.ndarray], list[np.ndarray] | None, ScoreTable], Comparison]
"""A comparison of the head's scores and verdicts (per case, ``(run, metric)`` and
``(run, rubric)``) with the baseline's table."""


def package_compare(
    scores: list[np.ndarray], verdicts: list[np.ndarray] | None, base: ScoreTable
) -> Comparison:
    """The comparison under test: the package's ``compare`` with its defaults."""
    return compare(side_table(scores, verdicts), base, "simulated baseline")


def case_means(
    scores: Sequence[np.ndarray], verdicts: Sequence[np.ndarray] | None
) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
    """Each case's runs replaced by one run holding their means."""
    means = [x.mean(axis=0, keepdims=True) for x in scores]
    return means, None if verdicts is None else [v.mean(axis=0, keepdims=True) for v in verdicts]


def case_level_compare(
    scores: list[np.ndarray], verdicts: list[np.ndarray] | None, base: ScoreTable
) -> Comparison:
    """The test over whole cases (the sign flip over per-case means), as ``compare`` made
    it before it used the runs: ``compare`` on tables with one run per case holding the
    case's mean (``base`` must be such a table too: see :func:`simulate_pr`)."""
    return compare(side_table(*case_means(scores, verdicts)), base, "simulated baseline")


def simulate_pr(rng: np.random.Generator, s: Scenario, analyse: Analyse) -> PrOutcome:
    """Draws one PR (baseline and head results) and compares them; with adaptive runs,
    draws the head runs the package plans and compares again, until it plans none."""
    p_base = baseline(rng, s)
    p_head = degraded(p_base, s) if s.changed else p_base
    base_scores, base_verdicts = draw_runs(rng, p_base, s.runs, s)
    if analyse is case_level_compare:
        base = side_table(*case_means(list(base_scores), base_verdicts))
    else:
        base = side_table(base_scores, base_verdicts)
    head_scores, head_verdicts = (
        list(x) if x is not None else None for x in draw_runs(rng, p_head, s.runs, s)
    )
    comparison = analyse(head_scores, head_verdicts, base)
    planned = s.cases * s.runs
    budget = planned  # extra case runs: at most twice the planned model calls
    rows = {f"case_{c:04d}": c for c in range(s.cases)}
    while s.adaptive_runs and budget > 0:
        cases = [
            rows[key[2]]
            for key in plan_repeats(comparison, max_runs=s.adaptive_runs, budget=budget)
        ]
        if not cases:
            break
        for c in cases:
            scores, verdicts = draw_runs(rng, p_head[c : c + 1], 1, s)
            head_scores[c] = np.concatenate([head_scores[c], scores[0]])
            if head_verdicts is not None and verdicts is not None:
                head_verdicts[c] = np.concatenate([head_verdicts[c], verdicts[0]])
        budget -= len(cases)
        comparison = analyse(head_scores, head_verdicts, base)
    tests = [(m.metric_name, m.classification) for m in comparison.metrics]
    tests += [(r.metric_name, r.classification) for r in comparison.rubrics]
    changed = {f"metric_{m}" for m in range(s.metrics)} if s.degrade == "all" else {"metric_0"}
    if s.collapse and not s.effect:
        changed = {"metric_0"}
    return PrOutcome(
        regressed=[call == "regressed" for _, call in tests],
        degraded=[s.changed and name in changed for name, _ in tests],
        head_runs=sum(x.shape[0] for x in head_scores),
        planned_runs=planned,
    )


@dataclass
class Rates:
    """Monte-Carlo estimates over ``prs`` simulated PRs."""

    prs: int
    null_tests: int
    null_regressed: int
    null_prs_alarmed: int
    alt_tests: int
    alt_regressed: int
    alt_prs_detected: int
    head_runs: int
    planned_runs: int
    seconds: float


def estimate(s: Scenario, prs: int, seed: int, analyse: Analyse) -> Rates:
    """Simulates ``prs`` PRs of scenario ``s``."""
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(
        (
            "null_tests",
            "null_regressed",
            "null_prs_alarmed",
            "alt_tests",
            "alt_regressed",
            "alt_prs_detected",
            "head_runs",
            "planned_runs",
        ),
        0,
    )
    start = time.perf_counter()
    for _ in range(prs):
        pr = simulate_pr(rng, s, analyse)
        null = [r for r, d in zip(pr.regressed, pr.degraded, strict=True) if not d]
        alt = [r for r, d in zip(pr.regressed, pr.degraded, strict=True) if d]
        counts["null_tests"] += len(null)
        counts["null_regressed"] += sum(null)
        counts["null_prs_alarmed"] += any(null)
        counts["alt_tests"] += len(alt)
        counts["alt_regressed"] += sum(alt)
        counts["alt_prs_detected"] += any(alt)
        counts["head_runs"] += pr.head_runs
        counts["planned_runs"] += pr.planned_runs
    return Rates(prs=prs, seconds=time.perf_counter() - start, **counts)


def rate(hits: int, n: int) -> str:
    """``12.3% ±1.4`` (Monte-Carlo 95% margin), or ``-`` when nothing was counted."""
    if n == 0:
        return "-"
    p = hits / n
    margin = 1.96 * math.sqrt(max(p * (1 - p), 1.0 / n) / n)
    return f"{100 * p:.1f}% ±{100 * margin:.1f}"


HEADER = (
    f"{'scenario':<56}{'test':<14}{'PRs':>6}  {'metric false 🔴':>15}  {'PR false 🔴':>13}  "
    f"{'power/metric':>13}  {'power/PR':>13}  {'calls':>6}"
)
TESTS: dict[str, Analyse] = {"within cases": package_compare, "whole cases": case_level_compare}


def row(s: Scenario, name: str, r: Rates) -> str:
    """One table line."""
    calls = r.head_runs / r.planned_runs if r.planned_runs else float("nan")
    detected = rate(r.alt_prs_detected, r.prs) if r.alt_tests else "-"
    return (
        f"{s.label():<56}{name:<14}{r.prs:>6}  {rate(r.null_regressed, r.null_tests):>15}  "
        f"{rate(r.null_prs_alarmed, r.prs) if r.alt_tests == 0 else '':>13}  "
        f"{rate(r.alt_regressed, r.alt_tests):>13}  {detected:>13}  "
        f"{calls:>5.2f}x"
    )


def _ratio(a: int, b: int, n: int) -> str:
    if n == 0:
        return ""
    if b == 0:
        return "-" if a == 0 else "∞"
    return f"{a / b:.2f}x"


def ratio_row(new: Rates, old: Rates) -> str:
    """The ratios of the package's rates to the test over whole cases."""
    false_pr = _ratio(new.null_prs_alarmed, old.null_prs_alarmed, int(new.alt_tests == 0))
    return (
        f"{'':<56}{'ratio':<14}{'':>6}  "
        f"{_ratio(new.null_regressed, old.null_regressed, new.null_tests):>15}  "
        f"{false_pr:>13}  "
        f"{_ratio(new.alt_regressed, old.alt_regressed, new.alt_tests):>13}  "
        f"{_ratio(new.alt_prs_detected, old.alt_prs_detected, new.alt_tests):>13}  "
        f"{_ratio(new.head_runs, old.head_runs, 1):>6}"
    )


def grid() -> list[Scenario]:
    """The scenarios of docs/gating.md's table: the larger suites first (rows 0-12),
    then the small suites real repositories keep (rows 13-)."""
    null = [
        Scenario(cases=20, runs=3),
        Scenario(cases=50, runs=3),
        Scenario(cases=20, runs=3, mix="hard"),
        Scenario(cases=50, runs=3, mix="wide", kind="continuous"),
        Scenario(cases=50, runs=3, rubrics=True),
        Scenario(cases=200, runs=1),
        Scenario(cases=50, runs=3, adaptive_runs=6),
        Scenario(cases=50, runs=3, mix="hard", adaptive_runs=6),
    ]
    power = [
        Scenario(cases=50, runs=3, effect=0.1),
        Scenario(cases=50, runs=3, effect=0.1, adaptive_runs=6),
        Scenario(cases=20, runs=3, effect=0.1),
        Scenario(cases=50, runs=3, effect=0.05),
        Scenario(cases=50, runs=3, effect=0.1, degrade="one"),
    ]
    small_null = [
        Scenario(cases=3, runs=5),
        Scenario(cases=3, runs=5, mix="hard"),
        Scenario(cases=3, runs=5, mix="wide", kind="continuous"),
        Scenario(cases=3, runs=5, rubrics=True),
        Scenario(cases=1, runs=5),
        Scenario(cases=2, runs=3),
        Scenario(cases=4, runs=5),
        Scenario(cases=3, runs=5, adaptive_runs=8),
    ]
    small_power = [
        Scenario(cases=3, runs=5, collapse=1, others="steady"),
        Scenario(cases=3, runs=5, collapse=1),
        Scenario(cases=4, runs=5, collapse=2, others="steady"),
        Scenario(cases=4, runs=5, collapse=2),
        Scenario(cases=3, runs=3, collapse=1, others="steady"),
        Scenario(cases=3, runs=3, collapse=1, others="steady", adaptive_runs=6),
        Scenario(cases=10, runs=3, effect=0.2),
    ]
    return null + power + small_null + small_power


def main(argv: Sequence[str] | None = None) -> None:
    """Parses arguments, simulates and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--metrics", type=int, default=8)
    parser.add_argument("--kind", choices=("binary", "continuous"), default="binary")
    parser.add_argument("--mix", choices=tuple(MIXES), default="easy")
    parser.add_argument("--rubrics", action="store_true")
    parser.add_argument("--effect", type=float, default=0.0)
    parser.add_argument("--degrade", choices=("all", "one"), default="all")
    parser.add_argument("--collapse", type=int, default=0)
    parser.add_argument("--others", choices=("mix", "steady"), default="mix")
    parser.add_argument("--adaptive-runs", type=int, default=0)
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", action="store_true", help="the whole docs/gating.md table")
    parser.add_argument("--rows", help="with --grid, only these rows (0-based, e.g. 6,7,8)")
    parser.add_argument("--test", choices=("both", *TESTS), default="both")
    args = parser.parse_args(argv)
    base = Scenario(
        cases=args.cases,
        runs=args.runs,
        metrics=args.metrics,
        kind=args.kind,
        mix=args.mix,
        rubrics=args.rubrics,
        effect=args.effect,
        degrade=args.degrade,
        adaptive_runs=args.adaptive_runs,
        collapse=args.collapse,
        others=args.others,
    )
    scenarios = grid() if args.grid else [base]
    wanted = {int(r) for r in args.rows.split(",")} if args.grid and args.rows else None
    tests = TESTS if args.test == "both" else {args.test: TESTS[args.test]}
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; {args.prs} PRs per row")
    print(HEADER)
    for index, s in enumerate(scenarios):
        if wanted is not None and index not in wanted:
            continue
        # The same seed for both tests: the same simulated PRs (until adaptive runs differ).
        rates = {name: estimate(s, args.prs, args.seed + index, f) for name, f in tests.items()}
        for name, r in rates.items():
            print(row(s, name, r), flush=True)
        if len(rates) == 2:
            print(ratio_row(*rates.values()), flush=True)


if __name__ == "__main__":
    main()

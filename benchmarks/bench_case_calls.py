"""Each eval case's own test (analysis/case_calls.py): how often one collapsing case among
noisy ones is called, and the false 🔴 it costs on unchanged agents (a script, not a test).

The PRs are ``bench_calibration.py``'s (the same generator, the same seeds): 3 eval cases
x 5 runs a side, one case of the first metric passing every baseline run and failing every
head run, the other two drawn from the ``easy`` mix (pass probabilities 1.0 / 0.9 / 0.7 /
0.5); and unchanged agents of the small shapes. Each row is compared twice on the same
simulated PRs: by the package as it is (``after``) and by the same ``compare`` with no
case test entering the family (``before``: the mean-change test alone, what the package
did before case tests; the candidates function of :mod:`adk_eval_action.analysis.paired`
swapped for one that chooses none), with the ratio of the two.

``--prs 50`` is the issue's simulation (50 PRs); the default, 1000, gives the margins of
docs/gating.md's table. Usage::

    .venv/bin/python benchmarks/bench_case_calls.py            # the docs/gating.md rows
    .venv/bin/python benchmarks/bench_case_calls.py --prs 50   # the issue's 50 PRs
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from bench_calibration import Rates, Scenario, estimate, package_compare, rate

from adk_eval_action.analysis import paired
from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.results.scoretable import ScoreTable


@contextmanager
def without_case_tests() -> Iterator[None]:
    """``compare`` as before case tests: no case test enters the worse family."""
    chosen = paired.candidates
    paired.candidates = lambda *_: []  # type: ignore[assignment]
    try:
        yield
    finally:
        paired.candidates = chosen


def before(
    scores: list[np.ndarray], verdicts: list[np.ndarray] | None, base: ScoreTable
) -> Comparison:
    """The package's ``compare`` with no case test (module docstring)."""
    with without_case_tests():
        return package_compare(scores, verdicts, base)


def rows() -> list[Scenario]:
    """Detection first (one collapse among noisy cases, at 1, 2 and 8 metrics; two among
    four), then unchanged agents."""
    return [
        Scenario(cases=3, runs=5, metrics=1, collapse=1),
        Scenario(cases=3, runs=5, metrics=2, collapse=1),
        Scenario(cases=3, runs=5, metrics=8, collapse=1),
        Scenario(cases=3, runs=5, metrics=8, collapse=1, others="steady"),
        Scenario(cases=4, runs=5, metrics=8, collapse=2),
        Scenario(cases=3, runs=5, metrics=2),
        Scenario(cases=3, runs=5, metrics=8),
        Scenario(cases=3, runs=5, metrics=8, mix="hard"),
        Scenario(cases=3, runs=5, metrics=8, mix="wide", kind="continuous"),
        Scenario(cases=3, runs=5, metrics=8, rubrics=True),
        Scenario(cases=4, runs=5, metrics=8),
        Scenario(cases=10, runs=5, metrics=8),
        Scenario(cases=20, runs=3, metrics=8),
    ]


def _ratio(a: int, b: int) -> str:
    if b == 0:
        return "-" if a == 0 else "∞"
    return f"{a / b:.2f}x"


def line(s: Scenario, after: Rates, was: Rates) -> str:
    """One row: the PRs with a 🔴 where it is a detection (the collapsing metric) or a
    false alarm (any other, and every metric of an unchanged agent), after / before /
    ratio."""
    if s.changed:
        a, b = after.alt_prs_detected, was.alt_prs_detected
        what = "PRs with the collapse called"
    else:
        a, b = after.null_prs_alarmed, was.null_prs_alarmed
        what = "PRs with a false 🔴"
    false_metric = (
        f"false 🔴 per other metric {rate(after.null_regressed, after.null_tests)} / "
        f"{rate(was.null_regressed, was.null_tests)}"
    )
    return (
        f"{s.label():<50} {what:<28} {rate(a, after.prs):>13} / {rate(b, was.prs):>13} "
        f"({_ratio(a, b)}); {false_metric}; {after.prs} PRs, {after.seconds:.0f} s"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Simulates every row with and without case tests and prints them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", help="only these rows (0-based, e.g. 0,2)")
    args = parser.parse_args(argv)
    wanted = {int(r) for r in args.rows.split(",")} if args.rows else None
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; after / before (ratio)")
    for index, s in enumerate(rows()):
        if wanted is not None and index not in wanted:
            continue
        after = estimate(s, args.prs, args.seed + index, package_compare)
        was = estimate(s, args.prs, args.seed + index, before)
        print(line(s, after, was), flush=True)


if __name__ == "__main__":
    main()

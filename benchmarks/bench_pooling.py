"""What pooling earlier recorded runs into the baseline buys, and what it costs under drift
(a script, not a test): ``gate.pool_runs`` (docs/baselines.md, "Pooling runs already paid
for").

Simulated pull requests as in ``bench_calibration.py`` (binary scores, 8 independent
metrics, per-case pass probabilities from the ``easy`` mix 1.0 / 0.9 / 0.7 / 0.5): a
baseline evaluation (the merge-base's recording run) and a head evaluation, each ``runs``
runs of every case, compared by the package's own ``compare``; with ``K`` pooled runs,
``K`` earlier recording runs of the same agent add their runs of each case to the
baseline's (``compare(..., pool=...)``, as the pipeline passes them).

Every evaluation is one day's: the model behind the agent may answer a case differently
from one evaluation to the next. Drift models, per (case, metric), on the logit of the pass
probability (probabilities of 0 and 1 clipped to 0.01 / 0.99 first when there is drift):

* ``none``: every evaluation draws from the same probabilities (what the test assumes);
* ``day σ``: each evaluation adds its own N(0, σ²) shift (independent days);
* ``walk σ``: a random walk back in time: the baseline is one step of N(0, σ²) from the
  head's day, each older recorded run one more step (the older, the further);
* ``update σ``: the model behind a name was updated (a provider's alias moved) at a random
  point among the pooled recorded runs: every evaluation before it has one shift per metric,
  N(0, σ²), the same for every case (the inputs hash, the google-adk version and the judge
  names do not see it). Without pooling nothing changes: the update lies before the
  baseline.

"False 🔴" counts PRs of an unchanged agent with any metric called regressed; "power" the
share of metrics called regressed when every metric's pass probability drops by 10 points
on the head. Each rate is printed with its Monte-Carlo 95% margin.

Usage::

    .venv/bin/python benchmarks/bench_pooling.py --grid            # docs/baselines.md's table
    .venv/bin/python benchmarks/bench_pooling.py --cases 20 --pool 8 --drift day --sigma 0.5
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from bench_calibration import EVAL_SET, SUITE, rate, side_table

from adk_eval_action.analysis.compare import compare

MIX = (1.0, 0.9, 0.7, 0.5)


@dataclass(frozen=True)
class Setup:
    """One row: shape, pooled recorded runs, drift model and its σ, the head's drop."""

    cases: int = 20
    runs: int = 3
    metrics: int = 8
    pool: int = 0
    drift: str = "none"
    sigma: float = 0.0
    effect: float = 0.0

    def label(self) -> str:
        drift = "no drift" if self.drift == "none" else f"{self.drift} σ={self.sigma:g}"
        change = f", −{self.effect * 100:.0f} points" if self.effect else ", unchanged"
        return f"{self.cases}x{self.runs}, {drift}{change}, pool {self.pool}"


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1.0 - p))


def _shifts(rng: np.random.Generator, s: Setup, shape: tuple[int, int]) -> list[np.ndarray]:
    """Logit shifts of the head's evaluation (index 0), the baseline's (1) and the pooled
    ones (2..pool+1), per (case, metric)."""
    n = s.pool + 2
    if s.drift == "none":
        return [np.zeros(shape)] * n
    if s.drift == "update":
        out = [np.zeros(shape)] * n
        if s.pool:
            shared = np.broadcast_to(rng.normal(0.0, s.sigma, (1, shape[1])), shape)
            cut = int(rng.integers(2, s.pool + 2))  # the first evaluation before the update
            out = out[:cut] + [shared] * (n - cut)
        return out
    steps = rng.normal(0.0, s.sigma, (n, *shape))
    if s.drift == "day":
        return list(steps)
    walk = np.cumsum(steps[1:], axis=0)  # each older evaluation one step further back
    return [np.zeros(shape), *walk]


def _draw(rng: np.random.Generator, p: np.ndarray, runs: int) -> list[np.ndarray]:
    """Each case's ``(run, metric)`` binary scores."""
    scores = (rng.random((p.shape[0], runs, p.shape[1])) < p[:, None, :]).astype(float)
    return list(scores)


def simulate(rng: np.random.Generator, s: Setup) -> list[bool]:
    """One PR: per metric, whether it was called regressed."""
    p = rng.choice(np.asarray(MIX), size=(s.cases, s.metrics))
    if s.drift != "none":
        p = np.clip(p, 0.01, 0.99)
    shifts = _shifts(rng, s, p.shape)
    days = [p if s.drift == "none" else 1.0 / (1.0 + np.exp(-(_logit(p) + d))) for d in shifts]
    head_p = np.clip(days[0] - s.effect, 0.0, 1.0)
    head = side_table(_draw(rng, head_p, s.runs), None)
    base = side_table(_draw(rng, days[1], s.runs), None)
    pool: dict[tuple[str, str, str, str], list[float]] = {}
    for day in days[2:]:
        for c, scores in enumerate(_draw(rng, day, s.runs)):
            for m in range(s.metrics):
                key = (SUITE, EVAL_SET, f"case_{c:04d}", f"metric_{m}")
                pool.setdefault(key, []).extend(scores[:, m].tolist())
    comparison = compare(head, base, "simulated", pool=pool or None)
    return [m.classification == "regressed" for m in comparison.metrics]


def estimate(s: Setup, prs: int, seed: int) -> tuple[str, str, str, float]:
    """(false 🔴 per PR, power per metric, power per PR, seconds) over ``prs`` PRs."""
    rng = np.random.default_rng(seed)
    alarmed = called = tests = 0
    start = time.perf_counter()
    for _ in range(prs):
        calls = simulate(rng, s)
        alarmed += any(calls)
        called += sum(calls)
        tests += len(calls)
    seconds = time.perf_counter() - start
    if s.effect:
        return "", rate(called, tests), rate(alarmed, prs), seconds
    return rate(alarmed, prs), "", "", seconds


def grid(cases: int) -> list[Setup]:
    """docs/baselines.md's table: pooling 0, 4 and 8 recorded runs, without drift and
    under each drift model, unchanged and with a 10-point drop."""
    rows = []
    for drift, sigma in (("none", 0.0), ("day", 0.3), ("day", 0.6), ("walk", 0.15),
                         ("walk", 0.3), ("update", 0.3), ("update", 0.6)):
        for effect in (0.0, 0.1):
            for pool in (0, 4, 8):
                rows.append(Setup(cases=cases, pool=pool, drift=drift, sigma=sigma,
                                  effect=effect))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", action="store_true", help="the docs/baselines.md table")
    parser.add_argument("--prs", type=int, default=400)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pool", type=int, default=4)
    parser.add_argument("--drift", choices=("none", "day", "walk", "update"), default="none")
    parser.add_argument("--sigma", type=float, default=0.0)
    parser.add_argument("--effect", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    setups = grid(args.cases) if args.grid else [Setup(
        cases=args.cases, runs=args.runs, pool=args.pool, drift=args.drift, sigma=args.sigma,
        effect=args.effect)]
    print(f"python {sys.version.split()[0]}; {args.prs} PRs per row, 8 binary metrics, "
          f"easy mix {MIX}")
    print(f"{'scenario':<48}{'PR false 🔴':>14}  {'power/metric':>14}  {'power/PR':>14}")
    for index, s in enumerate(setups):
        false, power, power_pr, seconds = estimate(s, args.prs, args.seed + index)
        print(f"{s.label():<48}{false:>14}  {power:>14}  {power_pr:>14}  ({seconds:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()

"""Which gate settings make a required check that catches regressions (a script, not a test).

Simulated pull requests, drawn as in ``bench_calibration.py`` (per-case pass probabilities
from a difficulty mix, binary scores, 8 independent metrics), compared by the package's
``compare`` and gated by its ``decide`` under each setting of the regression rule. Per
setting and scenario, side by side:

* **red**: the share of PRs the regression rule fails (``fail_on: regression``; the threshold
  rule is left out: the simulated thresholds say nothing about a real eval config);
* **named**: the share of PRs whose headline names a drop (``analysis.drops``: a metric
  called 🔴 or worse than its budget), whatever the gate decides.

On an unchanged agent both are false alarms; on a degraded one (every metric's pass
probability ``--effect`` lower) they are the power. Each rate has its Monte-Carlo 95% margin.

docs/gating.md ("For a required check") gives the red rates of ``--prs 400``; "named" is
the same as the red rate of the point rule with the same budget, so it is not repeated there.

Usage: ``.venv/bin/python benchmarks/bench_gate_settings.py [--prs 400]``
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from bench_calibration import Scenario, case_probabilities, degraded, draw_runs, side_table

from adk_eval_action.analysis.compare import compare
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig


@dataclass(frozen=True)
class Setting:
    """A gate setting under test: its label and the gate config."""

    label: str
    config: GateConfig


SETTINGS = (
    Setting("max_regression 0 (the default budget)", GateConfig(fail_on="regression")),
    Setting("max_regression 0.05", GateConfig(fail_on="regression", max_regression=0.05)),
    Setting("max_regression 0.1", GateConfig(fail_on="regression", max_regression=0.1)),
    Setting("require_significance", GateConfig(fail_on="regression",
                                               require_significance=True)),
    Setting("require_significance, min_effect 0.05",
            GateConfig(fail_on="regression", require_significance=True, min_effect=0.05)),
)
SCENARIOS = (
    Scenario(cases=20, runs=3),
    Scenario(cases=3, runs=5),
    Scenario(cases=20, runs=3, effect=0.1),
    Scenario(cases=3, runs=5, effect=0.3),
)


def rate(hits: int, n: int) -> str:
    """``12.5% ±1.4``: the share and its 95% Monte-Carlo margin."""
    p = hits / n
    return f"{p:.1%} ±{1.96 * math.sqrt(max(p * (1 - p), 1e-12) / n):.1%}"


def simulate(s: Scenario, setting: Setting, prs: int, seed: int) -> tuple[int, int]:
    """``(red, named)`` PR counts over ``prs`` simulated PRs of ``s`` under ``setting``."""
    rng = np.random.default_rng(seed)
    red = named = 0
    for _ in range(prs):
        p_base = case_probabilities(rng, s)
        p_head = degraded(p_base, s) if s.effect else p_base
        base = side_table(*draw_runs(rng, p_base, s.runs, s))
        head = side_table(*draw_runs(rng, p_head, s.runs, s))
        config = setting.config
        comparison = compare(head, base, "b", min_effect=config.min_effect_for)
        gate = decide(comparison, config)
        red += any(r.startswith("max_regression") for r in gate.reasons)
        named += bool(gate.drops)
    return red, named


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.prs} PRs per row, 8 binary metrics, easy mix; red = fail_on regression "
          "fails, named = the headline names a drop")
    print("| scenario | setting | red | named |")
    print("|---|---|---:|---:|")
    for s in SCENARIOS:
        change = f"every metric −{s.effect:g}" if s.effect else "unchanged"
        for setting in SETTINGS:
            start = time.perf_counter()
            red, named = simulate(s, setting, args.prs, args.seed)
            print(f"| {s.cases} × {s.runs}, {change} | {setting.label} | "
                  f"{rate(red, args.prs)} | {rate(named, args.prs)} |"
                  f" <!-- {time.perf_counter() - start:.0f} s -->")


if __name__ == "__main__":
    main()

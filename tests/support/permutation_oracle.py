"""The stratified permutation test by brute force, for tests: every way to label each eval
case's pooled runs as head or baseline, every combination across cases, counted one by
one with itertools. Written from the definition (docs/gating.md), independent of
analysis/stratified.py: no tables, no convolution, no inversion."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

Case = tuple[Sequence[float], Sequence[float]]
"""One eval case: its head scores and its baseline scores."""

EPS = 1e-12


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def case_statistics(head: Sequence[float], base: Sequence[float], theta: float) -> list[float]:
    """``mean(labelled head) − mean(labelled baseline)`` for every labelling of the case's
    runs, with ``theta`` taken off every head score first; the observed labelling first."""
    pooled = [h - theta for h in head] + list(base)
    out = []
    for chosen in itertools.combinations(range(len(pooled)), len(head)):
        picked = set(chosen)
        new_head = [pooled[i] for i in chosen]
        new_base = [pooled[i] for i in range(len(pooled)) if i not in picked]
        out.append(_mean(new_head) - _mean(new_base))
    return out


def enumerated_p(cases: Sequence[Case], theta: float, *, less: bool) -> float:
    """The exact p-value of "the mean change is below ``theta``" (``less``) or "above"
    (not ``less``): the share of joint labellings whose mean over cases is at most (at
    least) the observed one, ties counted."""
    per_case = [case_statistics(head, base, theta) for head, base in cases]
    observed = sum(options[0] for options in per_case)
    hits = total = 0
    for combination in itertools.product(*per_case):
        value = sum(combination)
        hits += value <= observed + EPS if less else value >= observed - EPS
        total += 1
    return hits / total


def smallest_p(cases: Sequence[Case]) -> float:
    """One over the number of joint labellings."""
    total = 1
    for head, base in cases:
        total *= len(list(itertools.combinations(range(len(head) + len(base)), len(head))))
    return 1 / total

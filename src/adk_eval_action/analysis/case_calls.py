"""Each eval case's own test: a case whose runs alone prove it worse is called, whatever
the other cases of its metric did. Pure functions of their inputs.

**Why.** The paired test (:mod:`adk_eval_action.analysis.paired`) is about the mean
change over the matched cases, and cannot know in advance which case to look at: one case
of three collapsing from all-pass to all-fail over 5 runs a side while the other two are
noisy moves the mean by −1/3 ± their noise, which that test calls in about a third of
simulated PRs at 8 metrics. Looked at alone, the case's runs are as plain as evidence
gets: one labelling in C(10, 5) = 252 puts every failing run on the head, p = 1/252.

**The test** is the stratified test of :mod:`adk_eval_action.analysis.stratified` with one
stratum: the case's ``m`` head and ``n`` baseline runs exchanged, every one of the
``C(m + n, m)`` labellings counted (the case's shape's table: at most
:data:`~adk_eval_action.analysis.stratified.MAX_SUBSETS` of them), in the worse direction
only (a drop beyond ``min_effect``: "the case's change is at least −min_effect" rejected),
for every gated metric and rubric tested within cases with at least 2 matched cases (with
one, the mean's test is the case's). Informational metrics are not tested per case.

**Their own family.** The case tests are corrected as a family of their own, apart from
the mean tests of the metrics and rubrics: when any case test is counted, the worse
direction's first-stage level ``q = α / (1 + α)`` is split in halves, ``q / 2`` for the
mean tests' family and ``q / 2`` for the case tests' (each by the two-stage step-up
procedure, :func:`adk_eval_action.analysis.signflip.two_stage_level`); when none is, the
mean tests keep all of ``q``, as before case tests. On an unchanged agent a false 🔴 needs
a first-stage rejection in one of the two families, at most ``q / 2`` each (Simes'
inequality: independent or positively dependent tests), so at most ``q`` of runs have one.
The split keeps a lone collapse's level from depending on how many metrics the run has
(8 mean tests would leave 1/252 short of ``q / 9``).

**Which case tests count** (Tarone 1990, *Biometrics* 46:515; for the false discovery
rate, Gilbert 2005, *JRSS C* 54:143). A case's runs, pooled, bound the smallest p-value
any labelling of them can give (its *attainable minimum*: the labelling that puts the
lowest scores on the head; ties counted, so 5 failures among 10 runs give 1/252, 4 give
6/252, continuous scores 1/252 for every case). That bound depends only on the pooled
runs, which no labelling changes, so choosing tests by it leaves every chosen test's
p-value valid (conditionally on the pooled runs, and so overall), and a test that could
never reach the level need not be counted against the others. Case tests are counted in
order of their attainable minima, equal ones together, as long as each one's minimum is
at most ``(q / 2) / j``, ``j`` the case tests counted so far with it. With 3 runs a side
none is (1/20 is above ``q / 2``), and the mean tests keep all of ``q``; noisy cases whose
pooled runs could look like a collapse are counted and tighten the case tests' level
(``benchmarks/bench_case_calls.py``, docs/gating.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from adk_eval_action.analysis.signflip import FlipDistribution
from adk_eval_action.analysis.stratified import (
    MAX_SUBSETS,
    Strata,
    SubsetTables,
    exact_distribution,
)

_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class CaseTest:
    """One candidate case test: the index of its metric's (or rubric's) test among those
    given to :func:`candidates`, the case's position in that test's strata, and the
    attainable minimum of its p-value (module docstring)."""

    test: int
    position: int
    attainable: float


@dataclass(frozen=True, slots=True)
class CaseCallResult:
    """A case test's outcome: ``p`` its p-value in the worse direction at ``−min_effect``;
    ``delta`` the case's ``mean(head) − mean(baseline)``; ``bound`` its worse-side end at
    the family's level (metric units: the upper end when higher is better, else the lower
    end; None when the level is out of its reach)."""

    test: int
    position: int
    p: float
    delta: float
    bound: float | None


@dataclass(frozen=True, slots=True)
class CaseInput:
    """One metric's (or rubric's) test within cases: its strata, its direction and the
    smallest change that matters (metric units)."""

    strata: Strata
    higher_is_better: bool
    min_effect: float


def _case(s: Strata, i: int) -> Strata:
    """Case ``i`` of ``s`` as strata of its own."""
    values = s.values[s.start[i] : s.start[i + 1]]
    m, n = int(s.head_runs[i]), int(s.base_runs[i])
    return Strata(
        head_runs=np.array([m], dtype=np.int64),
        base_runs=np.array([n], dtype=np.int64),
        values=values,
        start=np.array([0, m + n], dtype=np.int64),
    )


def attainable_minimum(pooled: np.ndarray, m: int, higher_is_better: bool) -> float:
    """The smallest worse-direction p-value any labelling of ``pooled`` (one case's runs,
    ``m`` of them head) gives: the labellings whose head sum is the lowest possible (the
    highest when lower is better) over all ``C(len, m)``. Ties at the ``m``-th value are
    what lets several labellings share it: ``C(c_eq, m − c_less)`` of them."""
    values = np.sort(pooled if higher_is_better else -pooled)
    v = values[m - 1]
    less = int(np.count_nonzero(values < v))
    equal = int(np.count_nonzero(values == v))
    return math.comb(equal, m - less) / math.comb(values.size, m)


def candidates(inputs: list[CaseInput], q: float) -> list[CaseTest]:
    """The case tests that are counted in their family at first-stage level ``q``
    (module docstring): every case of every input with at least 2 cases whose runs
    differ and whose labellings fit a table, chosen by attainable minimum."""
    loosest = q
    found: list[CaseTest] = []
    for t, one in enumerate(inputs):
        s = one.strata
        if s.size < 2:
            continue
        for i, (m, n) in enumerate(zip(s.head_runs.tolist(), s.base_runs.tolist(), strict=True)):
            count = math.comb(m + n, m)
            if count > MAX_SUBSETS or 1.0 / count > loosest * (1 + _SLACK):
                continue
            pooled = s.values[s.start[i] : s.start[i + 1]]
            if pooled.min() == pooled.max():
                continue
            least = attainable_minimum(pooled, m, one.higher_is_better)
            if least <= loosest * (1 + _SLACK):
                found.append(CaseTest(t, i, least))
    return _chosen(found, q)


def _chosen(found: list[CaseTest], q: float) -> list[CaseTest]:
    """The longest run of ``found`` by attainable minimum (equal minima together) whose
    every member's minimum is at most ``q / (size of the run)``."""
    ordered = sorted(found, key=lambda c: (c.attainable, c.test, c.position))
    taken = 0
    j = 0
    while j < len(ordered):
        k = j
        while k < len(ordered) and ordered[k].attainable == ordered[j].attainable:
            k += 1
        if ordered[j].attainable > q / k * (1 + _SLACK):
            break
        taken = j = k
    return ordered[:taken]


def case_p_values(
    inputs: list[CaseInput], chosen: list[CaseTest], tables: SubsetTables
) -> list[float]:
    """Each chosen case test's p-value: "the case's change is at least −min_effect"
    (higher is better; "at most +min_effect" otherwise), every labelling counted."""
    out = []
    for c in chosen:
        one = inputs[c.test]
        dist = _distribution(one, c.position, tables)
        if dist is None:
            out.append(1.0)
            continue
        out.append(
            dist.p_less(-one.min_effect) if one.higher_is_better
            else dist.p_greater(one.min_effect)
        )
    return out


def case_calls(
    inputs: list[CaseInput],
    chosen: list[CaseTest],
    p_values: list[float],
    level: float,
    tables: SubsetTables,
) -> list[CaseCallResult]:
    """The chosen case tests whose p-value is within ``level`` (their family's corrected
    level), with their worse-side bounds at it."""
    out = []
    for c, p in zip(chosen, p_values, strict=True):
        if p > level * (1 + _SLACK):
            continue
        one = inputs[c.test]
        dist = _distribution(one, c.position, tables)
        assert dist is not None  # its p-value came from it
        bound = dist.upper(level) if one.higher_is_better else dist.lower(level)
        out.append(CaseCallResult(c.test, c.position, p, dist.delta, bound))
    return out


def _distribution(
    one: CaseInput, position: int, tables: SubsetTables
) -> FlipDistribution | None:
    """The exact distribution of one case's own test (None: too many distinct points)."""
    s = _case(one.strata, position)
    return exact_distribution(s, float(s.diffs()[0]), tables)

"""Each eval case's own test (analysis/case_calls.py): one case that flips in every run is
called among noisy cases, against labellings counted by hand (tests/support/
permutation_oracle.py) and the correction applied by hand."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from adk_eval_action.analysis.case_calls import attainable_minimum
from adk_eval_action.analysis.gate import decide
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import MetricResult
from support.permutation_oracle import case_statistics, enumerated_p
from support.results_builder import metric, results, scores_side
from support.tables import compare

Q = 0.05 / 1.05  # the two-stage correction's first stage

# One case passes every baseline run and fails every head run; the two others are noisy
# (2 of 5 → 4 of 5, 3 of 5 → 4 of 5): the mean change is −0.133.
BASE = {"a": [1, 1, 1, 1, 1], "b": [0, 1, 0, 1, 0], "c": [1, 0, 1, 0, 1]}
HEAD = {"a": [0, 0, 0, 0, 0], "b": [1, 1, 1, 0, 1], "c": [1, 1, 0, 1, 1]}


def _side(runs: dict[str, list[int]]):
    return scores_side({k: [float(x) for x in v] for k, v in runs.items()})


def _smallest_p_by_hand(pooled: list[float], m: int) -> float:
    """The smallest worse-direction p-value over every arrangement of ``pooled`` with
    ``m`` head runs, each arrangement's p counted over all its labellings."""
    best = 1.0
    for chosen in set(itertools.combinations(sorted(pooled), m)):
        rest = list(pooled)
        for x in chosen:
            rest.remove(x)
        best = min(best, enumerated_p([(list(chosen), rest)], 0.0, less=True))
    return best


@pytest.mark.parametrize(
    "pooled",
    [
        [0.0] * 5 + [1.0] * 5,  # a collapse's runs: 1/252
        [0.0] * 4 + [1.0] * 6,  # 4 failures of 10: 6/252
        [0.0] * 3 + [1.0] * 7,  # 3 failures of 10: 21/252
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],  # no ties: 1/252
        [0.0, 0.5, 0.5, 0.5, 1.0, 1.0],  # 3 runs a side with a tie at the third value
    ],
)
def test_the_attainable_minimum_is_the_smallest_p_of_any_arrangement(pooled) -> None:
    m = len(pooled) // 2
    expected = _smallest_p_by_hand(pooled, m)
    assert attainable_minimum(np.asarray(pooled), m, True) == pytest.approx(expected)


def test_one_case_that_flips_in_every_run_is_called_among_noisy_cases() -> None:
    """The mean change (−0.133) is far from proven (its p is 0.36 by the labellings
    counted by hand), but case `a`'s own 252 labellings put every failing run on the head
    once: p = 1/252. Its runs alone could reach 1/252 (5 failures among 10 runs), `b`'s
    and `c`'s not within q/2 / 2 (6/252 and 21/252), so `a`'s test is the only one counted
    in the case tests' family; with it, the worse side's first stage is split: q/2 for
    the mean test, q/2 for `a`'s (a family of one: level q/2 >= 1/252). The metric is 🔴
    regressed by case `a`."""
    comparison = compare(_side(HEAD), _side(BASE), "b")
    row = comparison.metrics[0]
    cases = [([float(x) for x in HEAD[k]], [float(x) for x in BASE[k]]) for k in "abc"]
    # The mean test's p by convolution of each case's counted labellings.
    joint: Counter[float] = Counter({0.0: 1})
    for head, base in cases:
        one = Counter(round(v, 9) for v in case_statistics(head, base, 0.0))
        grown: Counter[float] = Counter()
        for s, n in joint.items():
            for v, k in one.items():
                grown[round(s + v, 9)] += n * k
        joint = grown
    observed = round(sum(case_statistics(h, b, 0.0)[0] for h, b in cases), 9)
    p_mean = sum(n for s, n in joint.items() if s <= observed + 1e-9) / 252**3
    assert row.interval.p_worse == pytest.approx(p_mean)
    assert p_mean > 0.3 and row.interval.high > 0  # the mean's own interval decides nothing
    p_case = enumerated_p([cases[0]], 0.0, less=True)
    assert p_case == pytest.approx(1 / 252)
    tests = comparison.tests
    assert tests.case_tests == 1 and tests.case_level == pytest.approx(Q / 2)
    assert tests.level_worse == pytest.approx(Q / 2) and tests.level_better == pytest.approx(Q)
    assert row.classification == "regressed"
    [call] = row.interval.case_calls
    assert (call.eval_id, call.baseline, call.head, call.delta) == ("a", 1.0, 0.0, -1.0)
    assert call.p_worse == pytest.approx(p_case) and call.level == pytest.approx(Q / 2)
    assert call.bound == pytest.approx(-1.0)
    assert row.interval.to_decide is None
    gate = decide(comparison, GateConfig(fail_on="regression", require_significance=True))
    assert not gate.passed
    assert any(
        "eval case `a` alone 1.000 → 0.000, its own runs prove it beyond (p = 0.00397 ≤ "
        "0.0238)" in reason for reason in gate.reasons
    )


def test_a_case_that_improved_is_not_called_regressed() -> None:
    """The case tests look at the worse side only."""
    row = compare(_side(BASE), _side(HEAD), "b").metrics[0]
    assert row.interval.case_calls == [] and row.classification != "regressed"


def test_cases_that_could_each_look_like_a_collapse_do_not_enter_the_family() -> None:
    """Continuous scores never tie, so every case's runs could give 1/252: 8 metrics x 3
    cases of them would need (q/2)/24 >= 1/252, so none is counted, and the mean tests keep
    all of q (the same levels as with no case tests)."""
    rng = np.random.default_rng(0)
    def side(offset: float) -> dict[str, list[list[MetricResult]]]:
        return {
            f"c{i}": [
                [metric(f"m{j}", float(rng.uniform(0.2, 0.8)) + offset) for j in range(8)]
                for _ in range(5)
            ]
            for i in range(3)
        }
    comparison = compare(results(side(0.0)), results(side(0.0)), "b")
    assert comparison.tests.case_tests == 0 and comparison.tests.tests == 8
    assert comparison.tests.case_level is None
    assert all(not m.interval.case_calls for m in comparison.metrics)


def test_three_runs_a_side_never_test_a_case_alone() -> None:
    """C(6, 3) = 20 labellings: 1/20 is above any corrected level, so no case test is
    counted and a lone collapse is left to the mean test (p = 1/20: ❔, with advice)."""
    base = {"a": [1.0] * 3, "b": [1.0, 0.0, 1.0], "c": [0.0, 1.0, 1.0]}
    head = {"a": [0.0] * 3, "b": [1.0, 1.0, 0.0], "c": [1.0, 0.0, 1.0]}
    comparison = compare(scores_side(head), scores_side(base), "b")
    assert comparison.tests.case_tests == 0
    assert comparison.metrics[0].classification == "inconclusive"
    assert comparison.metrics[0].interval.to_decide is not None
    assert math.comb(6, 3) == 20

"""What sample would decide an undecided change (``interval.to_decide``) and what a planned
sample can call (``plan``), against the permutation test enumerated by hand
(tests/permutation_oracle.py) and the binomial coefficients."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from adk_eval_action.analysis.sample import MAX_RUNS, detectable, sample_text
from support.permutation_oracle import enumerated_p
from support.results_builder import scores_side
from support.tables import compare

LEVEL_ONE_TEST = 0.05 / 1.05  # the two-stage correction's first stage, one test


def _row(head: dict, base: dict, **kwargs):
    return compare(scores_side(head), scores_side(base), "b", **kwargs).metrics[0]


def _fewest_runs(head: float, base: float, cases: int, level: float) -> int:
    """The fewest runs a side at which ``cases`` cases scoring ``head`` vs ``base`` in every
    run are called, by enumerating each count's labellings."""
    for runs in range(1, MAX_RUNS + 1):
        one = ([head] * runs, [base] * runs)
        if enumerated_p([one] * cases, 0.0, less=True) <= level:
            return runs
    raise AssertionError("not within MAX_RUNS")


def test_one_case_one_run_says_how_many_runs_would_decide_it() -> None:
    """google/adk-samples' shape: a drop from 1.0 to 0.45 on one case, one run a side."""
    row = _row({"a": [0.45]}, {"a": [1.0]})
    assert row.classification == "inconclusive"
    runs = _fewest_runs(0.45, 1.0, cases=1, level=LEVEL_ONE_TEST)
    assert runs == 4  # 1/C(6, 3) = 0.05 is not enough, 1/C(8, 4) = 0.014 is
    assert row.interval.to_decide == (
        "4 runs per case would decide a drop this size; with 1 the smallest possible p is "
        "0.5 (a call needs p ≤ 0.0476)"
    )


def test_two_cases_one_run_need_two_runs() -> None:
    row = _row({"a": [0.45], "b": [0.45]}, {"a": [1.0], "b": [1.0]})
    assert _fewest_runs(0.45, 1.0, cases=2, level=LEVEL_ONE_TEST) == 2
    assert row.interval.to_decide.startswith("2 runs per case would decide a drop this size")


def test_the_current_p_is_given_when_the_design_could_have_called_it() -> None:
    """3 cases x 3 runs, one collapsing: the design reaches 20**-3, this drop p = 1/20."""
    head = {"a": [0.0] * 3, "b": [1.0] * 3, "c": [1.0] * 3}
    base = {k: [1.0] * 3 for k in head}
    row = _row(head, base)
    p = enumerated_p([(head[k], base[k]) for k in head], 0.0, less=True)
    assert row.interval.p_worse == pytest.approx(p) == pytest.approx(1 / 20)
    assert row.interval.to_decide == (
        "4 runs per case would decide a drop this size; with 3 the smallest possible p is "
        "0.000125 and this drop's is 0.05 (a call needs p ≤ 0.0476)"
    )


def test_nothing_to_decide_when_called() -> None:
    called = _row({"a": [0.0] * 5}, {"a": [1.0] * 5})
    assert called.classification == "regressed" and called.interval.to_decide is None
    unchanged = _row({"a": [0.5, 0.5]}, {"a": [0.5, 0.5]}, min_effect=0.1)
    assert unchanged.classification == "unchanged" and unchanged.interval.to_decide is None


def test_a_change_within_min_effect_is_told_what_shows_it_within() -> None:
    """1.0 → 0.95 within min_effect 0.1, one run a side: ⚪ unchanged needs both "the change
    is above −0.1" and "below +0.1" proven; with r runs a side each has the one extreme
    labelling of C(2r, r), so 4 runs (1/70) reach the level of one test and 3 (1/20) not."""
    small = _row({"a": [0.45]}, {"a": [0.5]}, min_effect=0.1)
    assert small.classification == "inconclusive"
    for theta, less in ((-0.1, False), (0.1, True)):
        three, four = (
            enumerated_p([([0.45] * r, [0.5] * r)], theta, less=less) for r in (3, 4)
        )
        assert three == pytest.approx(1 / 20) and three > LEVEL_ONE_TEST
        assert four == pytest.approx(1 / 70) and four <= LEVEL_ONE_TEST
    assert small.interval.to_decide == (
        "4 runs per case would decide that this change is within ±0.1; with 1 the smallest "
        "possible p is 0.5 (a call needs p ≤ 0.0476)"
    )


def test_a_change_within_min_effect_zero_says_what_would_call_it() -> None:
    """With min_effect 0 only an interval of [0, 0] is ⚪ unchanged: no sample decides a
    noisy zero, so the line names the setting that would."""
    row = _row({"a": [0.9, 0.8], "b": [0.7, 0.9]}, {"a": [0.8, 0.9], "b": [0.9, 0.7]})
    assert row.delta == 0.0 and row.classification == "inconclusive"
    assert row.interval.to_decide == (
        "a change this small (+0) is never called ⚪ unchanged with min_effect 0: set "
        "gate.min_effect to the smallest change worth a call"
    )


def test_a_change_out_of_reach_is_told_how_far() -> None:
    """+0.033 against runs of 0.1 to 0.9: no count up to 8 runs or 20× the cases reaches
    the level; the line gives the normal approximation's factor past that, z growing with
    the square root of the number of cases."""
    base = {f"c{i}": [0.8, 0.1, 0.5] for i in range(3)}
    head = {f"c{i}": [0.9, 0.1, 0.5] for i in range(3)}
    row = _row(head, base)
    assert row.classification == "inconclusive"
    # The stratified test's permutation variance, by hand: per case the 6 pooled scores'
    # variance σ² times L/(L−1) (1/3 + 1/3), summed over the 3 cases.
    pooled = [0.9, 0.1, 0.5, 0.8, 0.1, 0.5]
    mean = sum(pooled) / 6
    var = sum((x - mean) ** 2 for x in pooled) / 6 * 6 / 5 * (2 / 3)
    z = 3 * (0.1 / 3) / math.sqrt(3 * var)
    factor = math.ceil((NormalDist().inv_cdf(1 - LEVEL_ONE_TEST) / z) ** 2)
    assert factor == 64
    assert row.interval.to_decide == (
        "no sample within 8 runs per case or 20× the eval cases would decide a gain this "
        "size (about 64× the eval cases would): it is small against the runs' noise; this "
        f"gain's p is {row.interval.p_better:.3g} (a call needs p ≤ 0.0476)"
    )


def test_a_gain_is_described_as_a_gain() -> None:
    row = _row({"a": [1.0]}, {"a": [0.45]})
    assert row.interval.to_decide.startswith("4 runs per case would decide a gain this size")


def test_beyond_the_test_within_cases_more_cases_decide_it() -> None:
    """Over whole cases (more than 100 matched cases) more runs of the same case means
    change nothing: the sentence names how many times the cases, from the normal
    approximation of the sign flip, z growing with the square root of the count."""
    diffs = [-0.1] * 80 + [0.1] * 70
    head = {f"c{i:03d}": [0.5 + d] for i, d in enumerate(diffs)}
    base = {f"c{i:03d}": [0.5] for i in range(150)}
    row = _row(head, base)
    assert row.classification == "inconclusive"
    z = -sum(diffs) / math.sqrt(sum(d * d for d in diffs))
    factor = math.ceil((NormalDist().inv_cdf(1 - LEVEL_ONE_TEST) / z) ** 2)
    assert row.interval.to_decide.startswith(
        f"about {factor}× the eval cases ({factor * 150}) would decide a drop this size"
    )


def test_sample_text() -> None:
    assert sample_text(1, (2, 2)) == "1 paired case x 2 runs a side"
    assert sample_text(4, (1, 1)) == "4 paired cases x 1 run a side"
    assert sample_text(3, (2, 5)) == "3 paired cases x 2-5 runs a side"


@pytest.mark.parametrize(
    ("cases", "runs", "tests", "called", "collapse_runs"),
    [
        (3, 5, 8, True, 5),  # 1/252 <= 0.0476/8
        (3, 3, 8, False, 5),  # 1/20 is not
        (3, 3, 1, False, 4),  # 1/20 > 0.0476, 1/70 is not
        (2, 1, 1, False, 4),
    ],
)
def test_what_a_planned_sample_can_call(
    cases: int, runs: int, tests: int, called: bool, collapse_runs: int
) -> None:
    found = detectable(
        cases, runs, tests, alpha=0.05, n_resamples=2000, within_cases_up_to=100
    )
    assert found.level == pytest.approx(0.05 / 1.05 / tests)
    assert found.p_min == pytest.approx(math.comb(2 * runs, runs) ** -cases)
    steady = ([0.0] * runs, [1.0] * runs)
    collapse_p = enumerated_p([steady, *[([1.0] * runs, [1.0] * runs)] * (cases - 1)], 0.0,
                              less=True)
    assert found.collapse_p == pytest.approx(collapse_p)
    assert (found.collapse_p <= found.level) is called
    assert found.collapse_runs == collapse_runs
    assert ("would be called" in found.line) is called


def test_a_planned_sample_over_whole_cases() -> None:
    found = detectable(300, 3, 8, alpha=0.05, n_resamples=2000, within_cases_up_to=100)
    assert found.p_min == pytest.approx(1 / 2001) and found.collapse_p == 0.5
    assert found.collapse_runs is None


@pytest.mark.parametrize("runs", [100, 513, 1000])  # 1000: --num-runs's documented maximum
def test_a_planned_sample_of_the_most_runs_is_bounded(runs: int) -> None:
    """C(2r, r) for r = 1000 has 600 digits, past any float: the planned sample's p-values
    are computed without an OverflowError and agree with exact rational arithmetic
    (``fractions``), an underflow shown as a bound, never as p = 0."""
    from fractions import Fraction

    found = detectable(3, runs, 5, alpha=0.05, n_resamples=2000, within_cases_up_to=100)
    exact = Fraction(1, math.comb(2 * runs, runs))
    assert found.collapse_p == pytest.approx(float(exact), rel=1e-9, abs=0.0)
    assert found.p_min == pytest.approx(float(exact**3), rel=1e-9, abs=0.0)
    assert found.collapse_p <= found.level and "would be called" in found.line
    if float(exact**3) == 0.0:
        assert "the smallest possible p is below 1e-300" in found.line
    if float(exact) == 0.0:
        assert "(p < 1e-300)" in found.line and "p = 0" not in found.line

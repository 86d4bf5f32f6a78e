"""compare's vectorised group-bys against a plain reference of the same rules.

:mod:`adk_eval_action.analysis.compare` aggregates a columnar :class:`ScoreTable` with numpy. This
test restates the module's rules one object at a time over :class:`RunResults` (the way a
reader would apply them by hand) and checks every per-metric, per-rubric and per-case
number on random sides: any status, missing scores, reasons, rubrics with and without
verdicts, metrics a run or side lacks, cases only one side has, a case written twice.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_action.analysis.compare import NO_RUNS_ERROR
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
from adk_eval_action.results.scoretable import ScoreTable
from conftest import examples
from support.tables import compare

SCORED = (MetricStatus.PASSED, MetricStatus.FAILED, MetricStatus.INFORMATIONAL)
WORST = (MetricStatus.ERROR, MetricStatus.NOT_EVALUATED, MetricStatus.FAILED)

metric_names = st.sampled_from(["m_a", "m_b", "tokens"])
rubric = st.builds(
    RubricScoreRecord,
    rubric_id=st.sampled_from(["r1", "r2"]),
    text=st.sampled_from([None, "Polite.", "Short."]),
    score=st.sampled_from([None, 0.0, 1.0]),
)
metric_result = st.builds(
    MetricResult,
    metric_name=metric_names,
    score=st.one_of(st.none(), st.floats(0.0, 1.0), st.sampled_from([math.nan, math.inf])),
    status=st.sampled_from(list(MetricStatus)),
    threshold=st.sampled_from([None, 0.5]),
    informational=st.booleans(),
    reason=st.sampled_from([None, "", "judge timed out", "no rubrics"]),
    rubrics=st.lists(rubric, max_size=2),
)
run = st.builds(
    RunRecord,
    status=st.sampled_from(list(CaseStatus)),
    error=st.sampled_from([None, "agent raised"]),
    metrics=st.lists(metric_result, max_size=3, unique_by=lambda m: m.metric_name),
)
cases = st.lists(
    st.builds(EvalCaseRecord, eval_id=st.sampled_from("abcdef"), runs=st.lists(run, max_size=3)),
    max_size=6,
)


def _side(eval_cases: list[EvalCaseRecord]) -> RunResults:
    # Two eval sets, so a case id can live in both (different cases) as well as twice in one.
    sets = [
        EvalSetRecord(eval_set_id=f"set{i}", file=f"evals/set{i}.json", eval_cases=eval_cases[i::2])
        for i in range(2)
    ]
    return RunResults(suites=[SuiteRecord(name="s", num_runs=3, eval_sets=sets)])


def _effective(m: MetricResult) -> MetricResult:
    """A result as compare reads it: a non-finite score that would be averaged makes the
    result an error (with a reason); otherwise a non-finite score is no score."""
    if m.score is None or math.isfinite(m.score):
        return m
    if m.status in SCORED:
        reason = f"non-finite score {m.score!r}"
        return m.model_copy(update={"score": None, "status": MetricStatus.ERROR, "reason": reason})
    return m.model_copy(update={"score": None})


class _Case:
    """One case of one side by the module's rules, read one object at a time."""

    def __init__(self, runs: list[RunRecord]) -> None:
        self.runs = runs
        self.metrics: dict[str, dict] = {}
        for r in runs:
            for m in map(_effective, r.metrics):
                acc = self.metrics.setdefault(
                    m.metric_name, {"scores": [], "verdicts": [], "status": None, "reason": None}
                )
                if m.status in SCORED and m.score is not None:
                    acc["scores"].append(m.score)
                if m.status in (MetricStatus.PASSED, MetricStatus.FAILED):
                    acc["verdicts"].append(m.status == MetricStatus.PASSED)
                if acc["status"] is None or (m.status in WORST and acc["status"] not in WORST):
                    acc["status"] = m.status
                acc["reason"] = acc["reason"] or m.reason or None

    def mean(self, name: str) -> float | None:
        scores = self.metrics[name]["scores"] if name in self.metrics else []
        return sum(scores) / len(scores) if scores else None

    def run_status(self, run: RunRecord) -> CaseStatus:
        """The run's recorded status and its gated metrics, read by the one status rule
        (results.status): failed > error > not evaluated > passed."""
        gated = {_effective(m).status for m in run.metrics if not m.informational}
        for case, metric in (
            (CaseStatus.FAILED, MetricStatus.FAILED),
            (CaseStatus.ERROR, MetricStatus.ERROR),
            (CaseStatus.NOT_EVALUATED, MetricStatus.NOT_EVALUATED),
        ):
            if run.status == case or metric in gated:
                return case
        return CaseStatus.PASSED

    def status(self) -> CaseStatus:
        statuses = {self.run_status(r) for r in self.runs}
        if not statuses:
            return CaseStatus.ERROR
        for status in (CaseStatus.FAILED, CaseStatus.ERROR, CaseStatus.NOT_EVALUATED):
            if status in statuses:
                return status
        return CaseStatus.PASSED

    def passes(self) -> int:
        """Runs that pass by the status rule."""
        return sum(self.run_status(r) == CaseStatus.PASSED for r in self.runs)

    def flaky(self) -> dict[str, tuple[int, int]]:
        out = {}
        passes = self.passes()
        if 0 < passes < len(self.runs):
            out["overall"] = (passes, len(self.runs))
        for name, acc in self.metrics.items():
            p, v = sum(acc["verdicts"]), len(acc["verdicts"])
            if 0 < p < v:
                out[name] = (p, v)
        return out


def _cases(side: RunResults) -> dict[tuple[str, str, str], _Case]:
    runs: dict[tuple[str, str, str], list[RunRecord]] = {}
    for s in side.suites:
        for e in s.eval_sets:
            for c in e.eval_cases:
                runs.setdefault((s.name, e.eval_set_id, c.eval_id), []).extend(c.runs)
    return {key: _Case(r) for key, r in runs.items()}


def _metric_results(side: RunResults, name: str) -> list[MetricResult]:
    return [
        _effective(m)
        for s in side.suites
        for e in s.eval_sets
        for c in e.eval_cases
        for r in c.runs
        for m in r.metrics
        if m.metric_name == name
    ]


def _runs_without(side: RunResults, name: str, informational: bool) -> tuple[int, int]:
    """Runs that raised (an error) with no result of metric ``name``: (recorded failed, the
    others); none for an informational metric (one suite holds every case here)."""
    if informational:
        return 0, 0
    runs = [r for s in side.suites for e in s.eval_sets for c in e.eval_cases for r in c.runs
            if r.error and all(m.metric_name != name for m in r.metrics)]
    raised = sum(r.status == CaseStatus.FAILED for r in runs)
    return raised, len(runs) - raised


def _rubric_scores(side: RunResults, name: str, rubric_id: str) -> list[float]:
    return [
        v.score
        for m in _metric_results(side, name)
        for v in m.rubrics
        if v.rubric_id == rubric_id and v.score is not None
    ]


def _close(got: float | None, want: float | None) -> bool:
    if got is None or want is None:
        return got is want
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12)


def _check_metrics(comparison, head: RunResults, base: RunResults) -> None:
    for row in comparison.metrics:
        for side, results in ((row.head, head), (row.baseline, base)):
            found = _metric_results(results, row.metric_name)
            assert (side is None) == (not found)
            if side is None:
                continue
            statuses = Counter(m.status for m in found)
            scores = [m.score for m in found if m.status in SCORED and m.score is not None]
            assert side.scored == len(scores)
            assert _close(side.mean, math.fsum(scores) / len(scores) if scores else None)
            assert (side.passed, side.failed) == (
                statuses[MetricStatus.PASSED],
                statuses[MetricStatus.FAILED],
            )
            assert side.not_evaluated == statuses[MetricStatus.NOT_EVALUATED]
            raised, other = _runs_without(results, row.metric_name, found[0].informational)
            assert side.errors == statuses[MetricStatus.ERROR] + other
            assert side.crashed == raised
            want = list(dict.fromkeys(m.reason for m in found if m.reason))
            assert [r[: len(w)] for r, w in zip(side.reasons, want, strict=True)] == want
            assert side.threshold == found[0].threshold
            assert side.informational == found[0].informational


def _check_rubrics(comparison, head: RunResults, base: RunResults) -> None:
    for row in comparison.rubrics:
        for mean, n, results in (
            (row.head_mean, row.head_n, head),
            (row.baseline_mean, row.baseline_n, base),
        ):
            scores = _rubric_scores(results, row.metric_name, row.rubric_id)
            assert n == len(scores)
            assert _close(mean, math.fsum(scores) / len(scores) if scores else None)


def _check_cases(comparison, head: RunResults, base: RunResults) -> None:
    head_cases, base_cases = _cases(head), _cases(base)
    want_keys = [*head_cases, *(k for k in base_cases if k not in head_cases)]
    assert [c.key for c in comparison.cases] == want_keys
    for case in comparison.cases:
        h, b = head_cases.get(case.key), base_cases.get(case.key)
        assert case.head_status == (h.status() if h else None)
        assert case.baseline_status == (b.status() if b else None)
        assert case.flaky_head == (h.flaky() if h else {})
        assert case.flaky_baseline == (b.flaky() if b else {})
        assert case.head_runs == (len(h.runs) if h else 0)
        assert case.head_passes == (h.passes() if h else 0)
        error = next((r.error for r in h.runs if r.error), None) if h else None
        assert case.error == (NO_RUNS_ERROR if h and not h.runs else error)
        names = [
            *(h.metrics if h else {}),
            *(n for n in (b.metrics if b else {}) if not h or n not in h.metrics),
        ]
        assert [d.metric_name for d in case.metrics] == names
        worst = 0.0
        for d in case.metrics:
            head_mean = h.mean(d.metric_name) if h and d.metric_name in h.metrics else None
            base_mean = b.mean(d.metric_name) if b and d.metric_name in b.metrics else None
            assert _close(d.head, head_mean) and _close(d.baseline, base_mean)
            delta = None if head_mean is None or base_mean is None else head_mean - base_mean
            assert _close(d.delta, delta)
            in_head = h is not None and d.metric_name in h.metrics
            assert d.head_status == (h.metrics[d.metric_name]["status"] if in_head else None)
            want = h.metrics[d.metric_name]["reason"] if in_head else None
            assert d.reason == want or (d.reason or "").startswith(want or "-")
            first = _metric_results(head, d.metric_name)[0] if in_head else None
            if delta is not None and first is not None and not first.informational:
                sign = 1.0 if first.higher_is_better else -1.0
                span = (first.max_value or 1.0) - (first.min_value or 0.0)
                worst = max(worst, -delta * sign / (span if span > 0 else 1.0))
        if h is not None:
            assert case.largest_drop == pytest.approx(worst, abs=1e-12)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases, cases)
def test_compare_matches_the_rules_applied_one_object_at_a_time(head_cases, base_cases) -> None:
    head, base = _side(head_cases), _side(base_cases)
    comparison = compare(head, base, "b", n_resamples=50)
    _check_metrics(comparison, head, base)
    _check_rubrics(comparison, head, base)
    _check_cases(comparison, head, base)
    # A ScoreTable gives the same comparison as the results it was built from.
    again = compare(
        ScoreTable.from_results(head), ScoreTable.from_results(base), "b", n_resamples=50
    )
    assert again.model_dump() == comparison.model_dump()
    # Serialisable, with each case's metric rows as objects, whether read yet or not.
    dumped = json.loads(compare(head, base, "b", n_resamples=50).model_dump_json())
    for case, row in zip(comparison.cases, dumped["cases"], strict=True):
        assert [d["metric_name"] for d in row["metrics"]] == [d.metric_name for d in case.metrics]


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_compare_without_baseline_matches_the_rules(head_cases) -> None:
    head = _side(head_cases)
    comparison = compare(head, None, "none")
    _check_metrics(comparison, head, RunResults())
    _check_cases(comparison, head, RunResults())

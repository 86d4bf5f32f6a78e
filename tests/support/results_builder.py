"""Hand-built :class:`RunResults` for compare, gate and render tests (no agent, no ADK run).

A side is given as ``{eval_id: [run, ...]}`` where each run is a list of
:class:`MetricResult` made by :func:`metric`; statuses follow the threshold like ADK's
evaluators (``score >= threshold`` passes, ``<=`` for lower-is-better metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from adk_eval_action.results.model import (
    CaseStatus,
    EvalCaseRecord,
    EvalSetRecord,
    MetricResult,
    MetricStatus,
    RubricScoreRecord,
    RunMetadata,
    RunRecord,
    RunResults,
    SuiteRecord,
)

Runs = Sequence[Sequence[MetricResult]]


def metric(
    name: str,
    score: float | None,
    *,
    threshold: float | None = 0.5,
    higher_is_better: bool = True,
    informational: bool = False,
    min_value: float | None = 0.0,
    max_value: float | None = 1.0,
    status: MetricStatus | None = None,
    rubrics: Mapping[str, float | None] | None = None,
) -> MetricResult:
    """One metric result; ``status`` defaults to the threshold verdict."""
    if status is None:
        if informational:
            status = MetricStatus.INFORMATIONAL
        elif score is None or threshold is None:
            status = MetricStatus.NOT_EVALUATED
        else:
            ok = score >= threshold if higher_is_better else score <= threshold
            status = MetricStatus.PASSED if ok else MetricStatus.FAILED
    return MetricResult(
        metric_name=name,
        score=score,
        status=status,
        threshold=None if informational else threshold,
        min_value=None if informational else min_value,
        max_value=None if informational else max_value,
        higher_is_better=False if informational else higher_is_better,
        informational=informational,
        rubrics=[
            RubricScoreRecord(rubric_id=rid, text=f"The answer is {rid}.", score=value)
            for rid, value in (rubrics or {}).items()
        ],
    )


def tokens(count: float) -> MetricResult:
    """ADK's informational token count metric."""
    return metric("token_usage_v1", count, informational=True)


def run_record(index: int, metrics: Sequence[MetricResult]) -> RunRecord:
    """A run whose status is ADK's: failed when any metric failed."""
    failed = any(m.status == MetricStatus.FAILED for m in metrics)
    errored = any(m.status == MetricStatus.ERROR for m in metrics)
    status = CaseStatus.ERROR if errored else CaseStatus.FAILED if failed else CaseStatus.PASSED
    return RunRecord(run=index + 1, status=status, metrics=list(metrics))


def results(
    cases: Mapping[str, Runs],
    *,
    suite: str = "travel",
    eval_set: str = "smoke",
    sha: str = "0123456789abcdef0123",
) -> RunResults:
    """One suite, one eval set, the given cases; ``num_runs`` is the most runs of a case."""
    records = [
        EvalCaseRecord(
            eval_id=eval_id,
            line=index + 3,
            runs=[run_record(i, run) for i, run in enumerate(runs)],
        )
        for index, (eval_id, runs) in enumerate(cases.items())
    ]
    num_runs = max((len(r) for r in cases.values()), default=1)
    return RunResults(
        metadata=RunMetadata(git_sha=sha, adk_version="2.13.0", tool_version="0.1.0"),
        suites=[
            SuiteRecord(
                name=suite,
                num_runs=num_runs,
                eval_sets=[
                    EvalSetRecord(
                        eval_set_id=eval_set,
                        file=f"evals/{eval_set}.evalset.json",
                        eval_cases=records,
                    )
                ],
            )
        ],
    )


def scores_side(
    scores: Mapping[str, Sequence[float]], name: str = "response_match_score", **kwargs: object
) -> RunResults:
    """A side with one metric: ``{eval_id: [score of each run]}``."""
    return results(
        {
            eval_id: [[metric(name, s, **kwargs)] for s in runs]  # type: ignore[arg-type]
            for eval_id, runs in scores.items()
        }
    )

"""One side's results as columns: what compare reads, without the result objects.

A results file of 10,000 eval cases x 8 metrics x 3 runs loads as ~1.4 million pydantic
objects (~700 MB per side); compare reads six fields of each metric result and two of each
rubric verdict. A :class:`ScoreTable` keeps exactly those as numpy columns (~27 bytes per
metric result, ~17 per rubric verdict) plus the results' *skeleton* (metadata, suites and eval
sets without their cases, errors, warnings), so both sides of a comparison fit in a few MB
and every per-metric, per-rubric and per-case aggregate in :mod:`adk_eval_action.analysis.compare`
is a vectorised group-by.

Tables are built one eval case at a time by :class:`TableBuilder`: :meth:`ScoreTable.from_results`
walks a loaded :class:`~adk_eval_action.results.model.RunResults`; a caller that produces cases one
at a time (``benchmarks/bench_compare.py``) feeds them directly and never holds the tree.

Non-finite scores follow :func:`adk_eval_action.results.model.finite_score` (an ``error`` with a
reason where the score would be averaged), so a hand-edited file can neither crash the
comparison nor poison a mean; a non-finite rubric verdict is no verdict.

The table also keeps, by reference, the records of up to :data:`MAX_KEPT_RECORDS` eval cases
that did not pass on every run and of the first :data:`MAX_KEPT_OTHER_RECORDS` that did
(``kept_records``): what the comment's evidence (expected vs actual, baseline vs head,
rubric rationales, reasons) is computed from, without keeping every case. Which passing
cases got worse than the baseline is known only once both sides are compared, so a run of
at most :data:`MAX_KEPT_OTHER_RECORDS` passing cases (every eval set real repositories keep)
has all of its records; a larger one has evidence for the drops among its first ones.

Rows keep the results' order (case, then run, then metric), which is what makes
"first seen" rules (a metric's threshold and range come from its first result; a rubric's
text is its first non-empty text) and per-case metric order the same as in the results file.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from dataclasses import dataclass, field

import numpy as np

from adk_eval_action.results.answers import answer_key
from adk_eval_action.results.identity import rename_suites
from adk_eval_action.results.model import (
    CaseStatus,
    EvalCaseRecord,
    EvalSetRecord,
    MetricResult,
    MetricStatus,
    RunRecord,
    RunResults,
    SuiteRecord,
    finite_score,
)

CaseKey = tuple[str, str, str]
"""(suite, eval set id, eval id)."""
MetricKey = tuple[str, str]
"""(suite, metric name)."""
RubricKey = tuple[str, str, str]
"""(suite, metric name, rubric id)."""

MAX_KEPT_RECORDS = 200
"""Eval cases that did not pass whose records a table keeps (the first ones in the file): the
comment shows evidence for 10 of them and the job summary for 50, most severe first."""
MAX_KEPT_OTHER_RECORDS = 200
"""Eval cases that passed whose records a table keeps (the first ones in the file): the
evidence of the cases that got worse than the baseline while passing, on both sides."""
METRIC_STATUSES: tuple[MetricStatus, ...] = tuple(MetricStatus)
"""``ScoreTable.m_status`` codes: the index of the status in this tuple."""
CASE_STATUSES: tuple[CaseStatus, ...] = tuple(CaseStatus)
"""``ScoreTable.run_status`` codes: the index of the status in this tuple."""
_METRIC_CODE = {status: code for code, status in enumerate(METRIC_STATUSES)}
_CASE_CODE = {status: code for code, status in enumerate(CASE_STATUSES)}


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """What a metric's first result says about the metric: threshold, range (metric units),
    direction, and whether it is informational (tokens, duration: shown, never gated)."""

    threshold: float | None
    min_value: float | None
    max_value: float | None
    higher_is_better: bool
    informational: bool

    @classmethod
    def of(cls, metric: MetricResult) -> MetricInfo:
        """The info of ``metric``'s result."""
        return cls(
            threshold=_finite(metric.threshold),
            min_value=_finite(metric.min_value),
            max_value=_finite(metric.max_value),
            higher_is_better=metric.higher_is_better,
            informational=metric.informational,
        )


def _finite(value: float | None) -> float | None:
    """A threshold or range end that is NaN or infinite (a hand-edited file) is unknown."""
    return value if value is None or math.isfinite(value) else None


@dataclass(slots=True)
class ScoreTable:
    """One side of a comparison, as columns.

    Cases (``c`` rows, in order of first appearance; a case key seen twice adds runs to the
    first, and ``repeated`` counts how often each such key appeared): ``case_keys``,
    ``case_files`` (eval set file), ``case_lines``.

    Runs (``r`` rows): ``run_case`` (case row), ``run_status`` (code into
    :data:`CASE_STATUSES`), ``run_errors`` (run row -> error, only for runs with one),
    ``run_agent_tokens`` and ``run_agent_usd`` (the agent's own tokens and their dollars in
    the run, :meth:`~adk_eval_action.results.model.RunRecord.agent_tokens`; NaN when
    unknown), ``run_answer`` (what the run answered, :func:`~.answers.answer_key`, for runs
    with a judge metric: one with a judge model or rubric verdicts; None for the others
    and runs without recorded invocations).

    Metric results (``m`` rows): ``m_case`` (case row), ``m_run`` (run row), ``m_key`` (index into
    ``metric_keys``), ``m_score`` (metric units; 0.0 where ``m_has_score`` is False),
    ``m_has_score``, ``m_status`` (code into :data:`METRIC_STATUSES`), ``m_informational``
    (the result's own flag), ``m_reason`` (index into ``reasons``, -1 for none).
    ``metric_keys`` are in order of first appearance, ``metric_info`` parallel to them.

    Rubric verdicts (``v`` rows): ``r_case``, ``r_run`` (run row), ``r_key`` (index into
    ``rubric_keys``),
    ``r_score`` (0.0 where ``r_has_score`` is False), ``r_has_score``; ``rubric_text`` is
    each rubric's first non-empty text.

    ``skeleton`` is the results without eval cases: metadata, suites (name, num_runs, eval
    config hash, judge models, eval sets with their content hash), errors, warnings.
    ``kept_records`` maps the keys of up to :data:`MAX_KEPT_RECORDS` cases with a run or
    a gated metric that did not pass, and of the first :data:`MAX_KEPT_OTHER_RECORDS`
    others, to their records (shared with the results, not copied).
    """

    skeleton: RunResults
    case_keys: list[CaseKey]
    case_files: list[str | None]
    case_lines: list[int | None]
    run_case: np.ndarray
    run_status: np.ndarray
    run_errors: dict[int, str]
    run_agent_tokens: np.ndarray
    run_agent_usd: np.ndarray
    run_answer: list[str | None]
    metric_keys: list[MetricKey]
    metric_info: list[MetricInfo]
    reasons: list[str]
    m_case: np.ndarray
    m_run: np.ndarray
    m_key: np.ndarray
    m_score: np.ndarray
    m_has_score: np.ndarray
    m_status: np.ndarray
    m_informational: np.ndarray
    m_reason: np.ndarray
    rubric_keys: list[RubricKey]
    rubric_text: list[str | None]
    repeated: dict[CaseKey, int]
    r_case: np.ndarray
    r_run: np.ndarray
    r_key: np.ndarray
    r_score: np.ndarray
    r_has_score: np.ndarray
    kept_records: dict[CaseKey, EvalCaseRecord] = field(default_factory=dict)

    @property
    def num_runs(self) -> int:
        """The largest ``num_runs`` of any suite (1 without suites)."""
        return max((s.num_runs for s in self.skeleton.suites), default=1)

    def repeated_warnings(self, side: str) -> list[str]:
        """One warning per eval case written more than once on ``side`` ("head" results,
        "baseline" results): ``run`` never writes one, so the file was edited or merged."""
        return [
            f"{side} results: eval case `{eval_id}` of eval set `{eval_set}` (suite "
            f"`{suite}`) appears {count} times; its runs are counted together as one case"
            for (suite, eval_set, eval_id), count in self.repeated.items()
        ]

    @property
    def nbytes(self) -> int:
        """Bytes held by the numpy columns (the lists and skeleton not counted)."""
        return sum(v.nbytes for v in (getattr(self, f) for f in self.__slots__) if _is_array(v))

    def renamed(self, renames: dict[str, str]) -> ScoreTable:
        """This table with its suites named by ``renames`` (old name -> new name; the new
        names must not be in the table already): every key that starts with a suite name,
        and the skeleton (:mod:`adk_eval_action.results.identity`). ``self`` unchanged
        without renames."""
        if not renames:
            return self

        def key(k: tuple[str, ...]) -> tuple[str, ...]:
            return (renames.get(k[0], k[0]), *k[1:])

        return dataclasses.replace(
            self,
            skeleton=rename_suites(self.skeleton.model_copy(deep=True), renames),
            case_keys=[key(k) for k in self.case_keys],  # type: ignore[misc]
            metric_keys=[key(k) for k in self.metric_keys],  # type: ignore[misc]
            rubric_keys=[key(k) for k in self.rubric_keys],  # type: ignore[misc]
            repeated={key(k): n for k, n in self.repeated.items()},  # type: ignore[misc]
            kept_records={key(k): r for k, r in self.kept_records.items()},  # type: ignore[misc]
        )

    @classmethod
    def from_results(cls, results: RunResults) -> ScoreTable:
        """The table of a loaded results object (which is not modified)."""
        builder = TableBuilder()
        for suite in results.suites:
            for eval_set in suite.eval_sets:
                for case in eval_set.eval_cases:
                    builder.add_case(suite.name, eval_set.eval_set_id, eval_set.file, case)
        return builder.build(skeleton_of(results))


def _is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


def skeleton_of(results: RunResults) -> RunResults:
    """``results`` without eval cases (shares nothing mutable with ``results``)."""
    suites = [
        SuiteRecord(
            **suite.model_dump(exclude={"eval_sets"}),
            eval_sets=[
                EvalSetRecord(**s.model_dump(exclude={"eval_cases"})) for s in suite.eval_sets
            ],
        )
        for suite in results.suites
    ]
    return RunResults(
        schema_version=results.schema_version,
        metadata=results.metadata.model_copy(),
        suites=suites,
        errors=[e.model_copy() for e in results.errors],
        warnings=list(results.warnings),
    )


@dataclass(slots=True)
class TableBuilder:
    """Appends eval cases to growing typed arrays (``array.array``: 4-8 bytes a value, not
    a Python object each), then :meth:`build` makes the :class:`ScoreTable`."""

    case_rows: dict[CaseKey, int] = field(default_factory=dict)
    case_files: list[str | None] = field(default_factory=list)
    case_lines: list[int | None] = field(default_factory=list)
    run_case: array[int] = field(default_factory=lambda: array("i"))
    run_status: array[int] = field(default_factory=lambda: array("b"))
    run_errors: dict[int, str] = field(default_factory=dict)
    run_agent_tokens: array[float] = field(default_factory=lambda: array("d"))
    run_agent_usd: array[float] = field(default_factory=lambda: array("d"))
    run_answer: list[str | None] = field(default_factory=list)
    metric_ids: dict[MetricKey, int] = field(default_factory=dict)
    metric_info: list[MetricInfo] = field(default_factory=list)
    reason_ids: dict[str, int] = field(default_factory=dict)
    m_case: array[int] = field(default_factory=lambda: array("i"))
    m_run: array[int] = field(default_factory=lambda: array("i"))
    m_key: array[int] = field(default_factory=lambda: array("i"))
    m_score: array[float] = field(default_factory=lambda: array("d"))
    m_has_score: array[int] = field(default_factory=lambda: array("b"))
    m_status: array[int] = field(default_factory=lambda: array("b"))
    m_informational: array[int] = field(default_factory=lambda: array("b"))
    m_reason: array[int] = field(default_factory=lambda: array("i"))
    rubric_ids: dict[RubricKey, int] = field(default_factory=dict)
    rubric_text: list[str | None] = field(default_factory=list)
    repeated: dict[CaseKey, int] = field(default_factory=dict)
    r_case: array[int] = field(default_factory=lambda: array("i"))
    r_run: array[int] = field(default_factory=lambda: array("i"))
    r_key: array[int] = field(default_factory=lambda: array("i"))
    r_score: array[float] = field(default_factory=lambda: array("d"))
    r_has_score: array[int] = field(default_factory=lambda: array("b"))
    kept_records: dict[CaseKey, EvalCaseRecord] = field(default_factory=dict)
    kept_failing: int = 0

    def add_case(
        self, suite: str, eval_set_id: str, file: str | None, case: EvalCaseRecord
    ) -> None:
        """Appends every run, metric result and rubric verdict of ``case``."""
        key = (suite, eval_set_id, case.eval_id)
        row = self.case_rows.get(key)
        if row is None:
            row = self.case_rows[key] = len(self.case_rows)
            self.case_files.append(file)
            self.case_lines.append(case.line)
        else:
            self.repeated[key] = self.repeated.get(key, 1) + 1
        self._keep(key, case)
        # Runs once per metric result (~10^6 times at 10,000 cases): kept flat.
        metric_ids, reason_ids = self.metric_ids, self.reason_ids
        for run in case.runs:
            if run.error:
                self.run_errors[len(self.run_case)] = run.error
            self.run_case.append(row)
            self.run_status.append(_CASE_CODE[run.status])
            tokens, usd = run.agent_tokens(), run.agent_usd()
            self.run_agent_tokens.append(math.nan if tokens is None else float(tokens))
            self.run_agent_usd.append(math.nan if usd is None else usd)
            judged = any(m.judge_model or m.rubrics for m in run.metrics)
            self.run_answer.append(answer_key(run.actual_invocations) if judged else None)
            for metric in run.metrics:
                name = metric.metric_name
                k = metric_ids.get((suite, name))
                if k is None:
                    k = metric_ids[(suite, name)] = len(metric_ids)
                    self.metric_info.append(MetricInfo.of(metric))
                score, status, reason = finite_score(metric.score, metric.status, metric.reason)
                self.m_case.append(row)
                self.m_run.append(len(self.run_case) - 1)
                self.m_key.append(k)
                self.m_score.append(0.0 if score is None else score)
                self.m_has_score.append(score is not None)
                self.m_status.append(_METRIC_CODE[status])
                self.m_informational.append(metric.informational)
                if reason:
                    self.m_reason.append(reason_ids.setdefault(reason, len(reason_ids)))
                else:
                    self.m_reason.append(-1)
                if metric.rubrics:
                    self._add_rubrics(suite, row, len(self.run_case) - 1, metric)

    def _keep(self, key: CaseKey, case: EvalCaseRecord) -> None:
        """Keeps ``case``'s record while its kind (failing or not) has room."""
        kept = self.kept_records
        if key in kept:
            return
        if not passed_every_run(case):
            if self.kept_failing < MAX_KEPT_RECORDS:
                kept[key] = case
                self.kept_failing += 1
        elif len(kept) - self.kept_failing < MAX_KEPT_OTHER_RECORDS:
            kept[key] = case

    def _add_rubrics(self, suite: str, row: int, run: int, metric: MetricResult) -> None:
        for rubric in metric.rubrics:
            rkey = (suite, metric.metric_name, rubric.rubric_id)
            r = self.rubric_ids.get(rkey)
            if r is None:
                r = self.rubric_ids[rkey] = len(self.rubric_ids)
                self.rubric_text.append(None)
            if self.rubric_text[r] is None:
                self.rubric_text[r] = rubric.text
            # A non-finite verdict is no verdict (a verdict is 0 or 1, or a mean of them).
            verdict = rubric.score
            scored = verdict if verdict is not None and math.isfinite(verdict) else None
            self.r_case.append(row)
            self.r_run.append(run)
            self.r_key.append(r)
            self.r_score.append(0.0 if scored is None else scored)
            self.r_has_score.append(scored is not None)

    def build(self, skeleton: RunResults) -> ScoreTable:
        """The table of every case added so far, with ``skeleton`` (results without eval
        cases, see :func:`skeleton_of`)."""
        return ScoreTable(
            skeleton=skeleton,
            case_keys=list(self.case_rows),
            case_files=self.case_files,
            case_lines=self.case_lines,
            run_case=np.array(self.run_case, dtype=np.int32),
            run_status=np.array(self.run_status, dtype=np.int8),
            run_errors=self.run_errors,
            run_agent_tokens=np.array(self.run_agent_tokens, dtype=np.float64),
            run_agent_usd=np.array(self.run_agent_usd, dtype=np.float64),
            run_answer=self.run_answer,
            metric_keys=list(self.metric_ids),
            metric_info=self.metric_info,
            reasons=list(self.reason_ids),
            m_case=np.array(self.m_case, dtype=np.int32),
            m_run=np.array(self.m_run, dtype=np.int32),
            m_key=np.array(self.m_key, dtype=np.int32),
            m_score=np.array(self.m_score, dtype=np.float64),
            m_has_score=np.array(self.m_has_score, dtype=np.bool_),
            m_status=np.array(self.m_status, dtype=np.int8),
            m_informational=np.array(self.m_informational, dtype=np.bool_),
            m_reason=np.array(self.m_reason, dtype=np.int32),
            rubric_keys=list(self.rubric_ids),
            rubric_text=self.rubric_text,
            repeated=self.repeated,
            r_case=np.array(self.r_case, dtype=np.int32),
            r_run=np.array(self.r_run, dtype=np.int32),
            r_key=np.array(self.r_key, dtype=np.int32),
            r_score=np.array(self.r_score, dtype=np.float64),
            r_has_score=np.array(self.r_has_score, dtype=np.bool_),
            kept_records=self.kept_records,
        )


def run_passed(run: RunRecord) -> bool:
    """True when ``run`` passed and none of its gated (not informational) metrics failed,
    errored or went unevaluated."""
    return run.status == CaseStatus.PASSED and all(
        m.informational or m.status == MetricStatus.PASSED for m in run.metrics
    )


def passed_every_run(case: EvalCaseRecord) -> bool:
    """True when every run of ``case`` passed (:func:`run_passed`); a case without runs
    did not pass."""
    return bool(case.runs) and all(run_passed(run) for run in case.runs)


def exact_mean(values: list[float]) -> float:
    """The mean of finite values (non-empty) by ``math.fsum``: exact and the same whatever
    their order. Near the float limit, where the sum itself would overflow, each value is
    divided by the count first."""
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        return math.fsum(v / len(values) for v in values)


def fsum_mean_by_group(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`exact_mean` of ``values`` per group id in ``0..n_groups-1`` (NaN for an empty
    group), so a side's mean does not depend on the order its cases were written in."""
    out = np.full(n_groups, np.nan)
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(n_groups + 1)).tolist()
    ordered = values[order].tolist()
    for g in range(n_groups):
        lo, hi = bounds[g], bounds[g + 1]
        if hi > lo:
            out[g] = exact_mean(ordered[lo:hi])
    return out

"""The default branch's history: the recorded runs of the default branch, carried forward by
each recording run (``run --record --history-out FILE``; the action writes
``adk-eval-history.json`` beside the results file for the workflow's upload step).

Shape (``schema_version`` 1)::

    History
      repository          owner/name the runs were recorded in (None: unknown, a laptop)
      branch              the branch they were recorded on (``main``)
      max_runs            how many recorded runs the file keeps (the oldest go first)
      runs[]              oldest first
        commit, recorded_at, run_url, ref, adk_version, tool_version
        model_calls       the run's model calls (agents, judges, user simulator)
        tokens            its tokens, when the results recorded them
        suites[]
          name, agent, inputs_hash (agent files, eval sets, eval config), eval_config_hash,
          judge_models, num_runs
          metrics[]       name, mean and count over every case run, range, threshold,
                          direction, informational
          cases[]         eval_set_id, eval_id, ``runs`` (one letter per run: ``p`` passed,
                          ``f`` failed, ``n`` not evaluated, ``e`` error) and ``scores``
                          (per metric of ``metrics``, in that order, the run scores; null
                          where a run has no score)

Compact on purpose: per recorded run the means and the run scores, never invocations or
reasons (the results file has those). Bounded: :data:`DEFAULT_HISTORY_RUNS` runs unless
configured (at most :data:`MAX_HISTORY_RUNS`), and at most :data:`MAX_HISTORY_BYTES` of
JSON: when a run would push it beyond, the oldest runs go first (:func:`appended`).
Reading is :mod:`adk_eval_action.results.history_file_io`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from adk_eval_action.results.model import (
    AVERAGED_STATUSES,
    CaseStatus,
    MetricResult,
    RunResults,
    SuiteRecord,
)

HISTORY_SCHEMA_VERSION = 1
HISTORY_FILE_NAME = "adk-eval-history.json"
#: Recorded runs a history keeps unless ``history_runs`` says otherwise.
DEFAULT_HISTORY_RUNS = 100
#: The most recorded runs ``history_runs`` may ask for.
MAX_HISTORY_RUNS = 10_000
#: Largest history file written or read (bytes of JSON): ~160 bytes per eval case of 8
#: metrics x 3 runs per recorded run, so 100 runs of 2,000 such cases.
MAX_HISTORY_BYTES = 32 * 1024 * 1024
#: Significant digits kept of a score (float rounding, never a real difference).
SCORE_DIGITS = 9

STATUS_LETTERS: dict[CaseStatus, str] = {
    CaseStatus.PASSED: "p", CaseStatus.FAILED: "f",
    CaseStatus.NOT_EVALUATED: "n", CaseStatus.ERROR: "e",
}


class RecordedMetric(BaseModel):
    """One metric of a suite in a recorded run: its mean over every scored case run (None:
    no score) and how many runs that is; its value range, threshold and direction."""

    model_config = ConfigDict(extra="ignore")

    name: str
    mean: float | None = None
    count: int = 0
    min_value: float | None = None
    max_value: float | None = None
    threshold: float | None = None
    higher_is_better: bool = True
    informational: bool = False


class RecordedCase(BaseModel):
    """One eval case of a recorded run: its runs' statuses as letters
    (:data:`STATUS_LETTERS`) and, per metric of the suite, the run scores."""

    model_config = ConfigDict(extra="ignore")

    eval_set_id: str
    eval_id: str
    runs: str = ""
    scores: list[list[float | None]] = Field(default_factory=list)

    @property
    def status(self) -> CaseStatus | None:
        """The case's status over its runs by ``adk eval``'s rule (a failed run fails the
        case; an error or a run not evaluated makes it so when none failed); None without
        runs."""
        if not self.runs:
            return None
        for letter, status in (("f", CaseStatus.FAILED), ("e", CaseStatus.ERROR),
                               ("n", CaseStatus.NOT_EVALUATED)):
            if letter in self.runs:
                return status
        return CaseStatus.PASSED


class RecordedSuite(BaseModel):
    """One suite of a recorded run (module docstring)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    agent: str | None = None
    inputs_hash: str | None = None
    eval_config_hash: str | None = None
    judge_models: dict[str, str] = Field(default_factory=dict)
    num_runs: int = 1
    metrics: list[RecordedMetric] = Field(default_factory=list)
    cases: list[RecordedCase] = Field(default_factory=list)


class RecordedRun(BaseModel):
    """One recording run of the default branch. Times are ISO 8601 UTC."""

    model_config = ConfigDict(extra="ignore")

    commit: str | None = None
    recorded_at: str | None = None
    run_url: str | None = None
    ref: str | None = None
    adk_version: str | None = None
    tool_version: str | None = None
    model_calls: int | None = None
    tokens: int | None = None
    suites: list[RecordedSuite] = Field(default_factory=list)

    def suite(self, name: str) -> RecordedSuite | None:
        """The suite named ``name``, or None."""
        return next((s for s in self.suites if s.name == name), None)


class History(BaseModel):
    """The history file (module docstring)."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = HISTORY_SCHEMA_VERSION
    repository: str | None = None
    branch: str | None = None
    max_runs: int = DEFAULT_HISTORY_RUNS
    runs: list[RecordedRun] = Field(default_factory=list)
    #: What reading the file left out of it (``history_io``), one short line each; never
    #: written.
    _left_out: list[str] = PrivateAttr(default_factory=list)

    @property
    def left_out(self) -> list[str]:
        """What reading the file left out of it and why, one short line each (``"2 recorded
        runs of another branch (feature/x)"``); empty for a history made in this run."""
        return self._left_out


def _score(metric: MetricResult) -> float | None:
    """A run's score of ``metric`` as means use it (a finite score with an averaged
    status), rounded to :data:`SCORE_DIGITS` significant digits; else None."""
    score = metric.score
    if score is None or metric.status not in AVERAGED_STATUSES or not math.isfinite(score):
        return None
    return float(f"{score:.{SCORE_DIGITS}g}")


def recorded_suite(suite: SuiteRecord, inputs_hash: str | None) -> RecordedSuite:
    """``suite`` of a results file as a history keeps it (module docstring)."""
    names: list[str] = []
    first: dict[str, MetricResult] = {}
    cases: list[RecordedCase] = []
    rows: list[dict[str, list[float | None]]] = []
    for eval_set in suite.eval_sets:
        for case in eval_set.eval_cases:
            by_metric: dict[str, list[float | None]] = {}
            for index, run in enumerate(case.runs):
                for metric in run.metrics:
                    if metric.metric_name not in first:
                        first[metric.metric_name] = metric
                        names.append(metric.metric_name)
                    scores = by_metric.setdefault(metric.metric_name, [None] * len(case.runs))
                    scores[index] = _score(metric)
            letters = "".join(STATUS_LETTERS.get(run.status, "e") for run in case.runs)
            cases.append(RecordedCase(eval_set_id=eval_set.eval_set_id, eval_id=case.eval_id,
                                      runs=letters))
            rows.append(by_metric)
    for recorded, by_metric in zip(cases, rows, strict=True):
        recorded.scores = [by_metric.get(name, []) for name in names]
    return RecordedSuite(
        name=suite.name, agent=suite.agent, inputs_hash=inputs_hash,
        eval_config_hash=suite.eval_config_hash, judge_models=dict(suite.judge_models),
        num_runs=suite.num_runs, cases=cases,
        metrics=[_metric_summary(first[name], [c.scores[i] for c in cases])
                 for i, name in enumerate(names)],
    )


def _metric_summary(first: MetricResult, runs: list[list[float | None]]) -> RecordedMetric:
    scores = [s for case in runs for s in case if s is not None]
    return RecordedMetric(
        name=first.metric_name, mean=math.fsum(scores) / len(scores) if scores else None,
        count=len(scores), min_value=first.min_value, max_value=first.max_value,
        threshold=first.threshold, higher_is_better=first.higher_is_better,
        informational=first.informational,
    )


def recorded_run(
    results: RunResults, inputs_hashes: Mapping[str, str | None], *,
    run_url: str | None = None, recorded_at: str | None = None,
) -> RecordedRun:
    """A recording run's results as one run of the history; ``inputs_hashes`` maps each
    suite's name to its :func:`inputs_hash` (None: unknown)."""
    meta = results.metadata
    calls = meta.model_calls.calls if meta.model_calls is not None else None
    return RecordedRun(
        commit=meta.git_sha, recorded_at=recorded_at or meta.finished_at or meta.started_at,
        run_url=run_url, ref=meta.git_ref, adk_version=meta.adk_version,
        tool_version=meta.tool_version, model_calls=calls,
        suites=[recorded_suite(s, inputs_hashes.get(s.name)) for s in results.suites
                if s.reused_from is None],
    )


def inputs_hash(agent_digest: str | None, suite: SuiteRecord) -> str | None:
    """The hash of what a suite's scores depend on besides the model: the agent folder's
    files (``agent_digest``, :func:`adk_eval_action.project.inputs.folder_digest`), each
    eval set's content hash and the eval config's; None when one of them is unknown."""
    sets = sorted((e.eval_set_id, e.content_hash) for e in suite.eval_sets)
    if agent_digest is None or any(h is None for _, h in sets):
        return None
    data = json.dumps({"agent": agent_digest, "eval_sets": sets,
                       "eval_config": suite.eval_config_hash}, sort_keys=True)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def history_json(history: History) -> str:
    """The history as compact JSON (no indentation, no nulls of unset optional fields)."""
    return history.model_dump_json(exclude_none=True) + "\n"


def appended(
    history: History | None, run: RecordedRun, *, max_runs: int = DEFAULT_HISTORY_RUNS,
    max_bytes: int = MAX_HISTORY_BYTES, repository: str | None = None,
    branch: str | None = None,
) -> tuple[History, list[str]]:
    """``history`` (None: a new one) with ``run`` added last, keeping the newest
    ``max_runs`` runs and, when its JSON would exceed ``max_bytes``, fewer (oldest out
    first; ``run`` itself is always kept, whatever its size). Also what was left out, as
    notes for the log."""
    runs = [*(history.runs if history is not None else []), run]
    notes = []
    if len(runs) > max_runs:
        notes.append(f"history: the {len(runs) - max_runs} oldest recorded run(s) left out "
                     f"(it keeps {max_runs})")
        runs = runs[-max_runs:]
    sizes = [len(r.model_dump_json(exclude_none=True)) + 1 for r in runs]
    total, first = sum(sizes) + 256, 0
    while total > max_bytes and first < len(runs) - 1:
        total -= sizes[first]
        first += 1
    if first:
        notes.append(f"history: the {first} oldest recorded run(s) left out to keep the file "
                     f"under {max_bytes:,} bytes")
    made = History(
        repository=repository or (history.repository if history else None),
        branch=branch or (history.branch if history else None),
        max_runs=max_runs, runs=runs[first:],
    )
    return made, notes

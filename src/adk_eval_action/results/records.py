"""Rules over a suite's recorded runs, applied where runs are recorded (the engine) and
where results are combined (``merge`` of shards), so both give the same record."""

from __future__ import annotations

from collections import Counter

from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.model import (
    ErrorKind,
    ErrorRecord,
    MetricResult,
    RunResults,
    SuiteRecord,
)

METRIC_ERROR_HINT = "its eval case cannot pass while it is not evaluated"
"""The hint of every ``metric`` record of :func:`metric_errors`. Whether such a case fails or
only warns is the gate's ``not_evaluated`` setting, which the report words next to each of
these errors."""

METRIC_CODE_HINT = (
    "the fault is in the metric's code, not the agent: fix it (for a custom metric, the "
    "function its code_config.name names); the run is incomplete until every metric scores"
)
"""The hint of every ``metric_code`` record of :func:`metric_errors`."""

JUDGE_ANSWER_HINT = (
    "no verdict on the agent: rerun, or use a stronger judge_model or more num_samples; "
    "a gate.not_evaluated you set (fail or warn) decides such cases instead"
)
"""The hint of every ``judge_answer`` record of :func:`metric_errors`."""

NO_VERDICT = "the judge's answer gave no verdict for it"
NOT_YES_OR_NO = "the judge's verdict was neither yes nor no"
EMPTY_ANSWER = "the judge's answer was empty"
UNPARSABLE_ANSWER = "the judge's answer was not in ADK's ID/Property/Rationale/Verdict format"
JUDGE_ANSWER_REASONS = frozenset({NO_VERDICT, NOT_YES_OR_NO, EMPTY_ANSWER, UNPARSABLE_ANSWER})
"""Why a rubric sent to the judge has no verdict when the judge model answered, but not in
a form google-adk reads as a verdict (``adk.evaluate.verdicts``): the judge's fault."""

MAX_LISTED_EVAL_SETS = 4
"""Eval sets a :func:`metric_errors` message names before ``… and N more``."""

MAX_LISTED_CASES = 8
"""Eval case ids a :func:`metric_errors` message names per eval set before ``… and N more``."""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _bounded(names: list[str], limit: int) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … and {len(names) - limit} more" if len(names) > limit else "")


def affected_text(runs: int, cases: dict[str, list[str]]) -> str:
    """Where a metric failed, e.g. ``5 runs of 4 eval cases across 2 eval sets:
    legacy_weather.test.json (legacy_weather), travel.evalset.json (a, b, c)``, or ``1 run
    of 1 eval case in trip.evalset.json (trip)``.

    ``cases`` maps each eval set's shown name to its eval case ids, in order. At most
    :data:`MAX_LISTED_EVAL_SETS` eval sets and :data:`MAX_LISTED_CASES` ids per set are
    named (``… and N more``), so a huge suite keeps the message short."""
    n_cases = sum(len(ids) for ids in cases.values())
    sets = [f"{name} ({_bounded(ids, MAX_LISTED_CASES)})" for name, ids in cases.items()]
    where = f"across {len(cases)} eval sets:" if len(cases) > 1 else "in"
    return (
        f"{_plural(runs, 'run')} of {_plural(n_cases, 'eval case')} {where} "
        f"{_bounded(sets, MAX_LISTED_EVAL_SETS)}"
    )


def _set_names(record: SuiteRecord) -> dict[int, str]:
    """Each eval set's shown name: its file's base name, or its whole path when two files
    share a base name; the eval set id when it has no file."""
    names = {
        i: (s.file or s.eval_set_id).rsplit("/", 1)[-1] for i, s in enumerate(record.eval_sets)
    }
    taken = Counter(names.values())
    return {
        i: (record.eval_sets[i].file or name) if taken[name] > 1 else name
        for i, name in names.items()
    }


_Key = tuple[str, str, ErrorKind]
"""(metric name, reason, the error kind: :func:`_unscored_kind`)."""


def _unscored_kind(metric: MetricResult) -> ErrorKind:
    """``metric_code`` for a metric that errored (its code failed), ``judge_answer`` for a
    rubric metric not evaluated only because the judge's answers gave no usable verdict
    (:data:`JUDGE_ANSWER_REASONS` for every rubric without one), else ``metric``."""
    if metric.status.value == "error":
        return "metric_code"
    gaps = [r for r in metric.rubrics if r.score is None]
    if gaps and all(r.reason in JUDGE_ANSWER_REASONS for r in gaps):
        return "judge_answer"
    return "metric"


def _unscored(record: SuiteRecord) -> tuple[Counter[_Key], dict[_Key, dict[int, list[str]]]]:
    """Per (metric, reason, code failed): how many runs, and which eval cases per eval set
    (index into ``record.eval_sets``), of the metrics without a score (an informational
    one only when it errored)."""
    runs: Counter[_Key] = Counter()
    cases: dict[_Key, dict[int, list[str]]] = {}
    for index, eval_set in enumerate(record.eval_sets):
        for case in eval_set.eval_cases:
            for metric in (m for r in case.runs for m in r.metrics):
                if metric.status.value not in ("error", "not_evaluated") or (
                    metric.informational and metric.status.value != "error"
                ):
                    continue  # an informational metric's code failing is still a fault
                reason = metric.reason or "the metric returned NOT_EVALUATED"
                if reason.startswith(("model:", "credentials:", "judge:")):
                    # A judge that could not be reached, or that the API does not know: said
                    # once for the suite (engine.model_errors).
                    continue
                key = (metric.metric_name, reason, _unscored_kind(metric))
                runs[key] += 1
                ids = cases.setdefault(key, {}).setdefault(index, [])
                if case.eval_id not in ids:
                    ids.append(case.eval_id)
    return runs, cases


_MESSAGES = {
    "metric_code": "the code of `{metric}` failed in {where}: {reason}",
    "judge_answer": "the judge model answered off-format: `{metric}` not evaluated in "
    "{where}: {reason}",
    "metric": "`{metric}` not evaluated in {where}: {reason}",
}
_HINTS = {"metric_code": METRIC_CODE_HINT, "judge_answer": JUDGE_ANSWER_HINT,
          "metric": METRIC_ERROR_HINT}


def metric_errors(record: SuiteRecord) -> list[ErrorRecord]:
    """One error record per (metric, reason) of the suite's metrics without a score (gated
    metrics, and informational ones whose code failed), naming every eval set and eval case
    it hit (:func:`affected_text`), never passed over.

    A metric that raised while scoring or gave a non-finite score or one outside the range
    it declared (status ``error``) is a fault of the metric's code, not of the agent: kind
    ``metric_code``, which makes the run incomplete (exit 2). A rubric metric not evaluated
    because the judge model answered off-format (no usable verdict for its rubrics) is kind
    ``judge_answer``, which makes the run incomplete too unless the gate's
    ``not_evaluated`` is set (:func:`judge_answers_decided_by_gate`). One not evaluated for
    another reason (ADK's NOT_EVALUATED) is kind ``metric``, counted by the gate's
    ``not_evaluated`` setting. ``file``/``eval_set_id`` are
    set when one eval set was hit, ``eval_id`` when one eval case was."""
    runs, cases = _unscored(record)
    names = _set_names(record)
    errors = []
    for key, per_set in cases.items():
        metric_name, reason, kind = key
        where = affected_text(runs[key], {names[i]: ids for i, ids in per_set.items()})
        one_set = record.eval_sets[next(iter(per_set))] if len(per_set) == 1 else None
        only_case = next(iter(per_set.values())) if one_set else []
        errors.append(
            ErrorRecord(
                kind=kind,
                message=_MESSAGES[kind].format(metric=metric_name, where=where, reason=reason),
                suite=record.name,
                file=one_set.file if one_set else None,
                eval_set_id=one_set.eval_set_id if one_set else None,
                eval_id=only_case[0] if len(only_case) == 1 else None,
                metric=metric_name,
                hint=_HINTS[kind],
            )
        )
    return errors


def is_metric_error(error: ErrorRecord) -> bool:
    """Whether ``error`` is one of :func:`metric_errors` (recomputed, never merged)."""
    return error.metric is not None and (error.kind, error.hint) in (
        ("metric", METRIC_ERROR_HINT), ("metric_code", METRIC_CODE_HINT),
        ("judge_answer", JUDGE_ANSWER_HINT),
    )


def judge_answers_decided_by_gate(results: RunResults, gate: GateConfig) -> None:
    """When the user set ``gate.not_evaluated`` (fail or warn), makes the ``judge_answer``
    errors of ``results`` (in place) kind ``metric``, which that setting decides, instead of
    making the run incomplete; nothing when it was left unset (its default applies)."""
    if "not_evaluated" not in gate.model_fields_set:
        return
    for error in results.all_errors():
        if error.kind == "judge_answer":
            error.kind = "metric"


def lower_is_better_votes(record: SuiteRecord, candidates: set[str] | None = None) -> Counter[str]:
    """Evidence that a metric is lower-is-better, from its own pass/fail decisions: +1 for
    each run that passed below its threshold or failed above it, -1 for the opposite; a
    positive total means lower is better. ADK's MetricInfo has no direction, but a custom
    metric decides pass/fail itself. ``candidates``: the metric names to count (None: all).
    """
    votes: Counter[str] = Counter()
    runs = (r for s in record.eval_sets for c in s.eval_cases for r in c.runs)
    for metric in (m for r in runs for m in r.metrics):
        if candidates is not None and metric.metric_name not in candidates:
            continue
        if metric.score is None or metric.threshold is None or metric.score == metric.threshold:
            continue
        if metric.status.value in ("passed", "failed"):
            above = metric.score > metric.threshold
            votes[metric.metric_name] += 1 if above == (metric.status.value == "failed") else -1
    return votes


def mark_lower_is_better(record: SuiteRecord, names: set[str]) -> None:
    """Sets ``higher_is_better`` False on every result of the metrics ``names``."""
    for eval_set in record.eval_sets:
        for case in eval_set.eval_cases:
            for metric in (m for r in case.runs for m in r.metrics):
                if metric.metric_name in names:
                    metric.higher_is_better = False

"""Rules over a suite's recorded runs, applied where runs are recorded (the engine) and
where results are combined (``merge`` of shards), so both give the same record."""

from __future__ import annotations

from collections import Counter
from typing import cast

from adk_eval_action.results.model import (
    ErrorKind,
    ErrorRecord,
    MetricResult,
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

JUDGE_ANSWER_COUNTED_HINT = (
    "no verdict on the agent: the judge model answered off-format; counted by the "
    "gate.not_evaluated you set (fail or warn); rerun, or use a stronger judge_model or "
    "more num_samples"
)
"""The hint of a ``judge_answer`` record made kind ``metric`` because the run's gate sets
``not_evaluated`` (:func:`metric_errors`' ``judge_answers_counted``): what the record
keeps of that decision, so a record recomputed from a saved one decides alike
(:func:`recomputed_metric_errors`)."""

JUDGE_FAULT_HINT = (
    "no verdict on the agent: the judge model raised instead of answering; check its "
    "judge_model_options.judge_model (the name, the model class registered for it, what it "
    "needs installed and set) and rerun"
)
"""The hint of a ``judge`` record of :func:`metric_errors`: the judge model's call raised an
exception that is no fault of the model service (a judge model that cannot work)."""

JUDGE_OUTAGE_HINT = (
    "no verdict on the agent: no score was recorded for it; rerun when the model service "
    "answers, or see model_retries in docs/action.md"
)
"""The hint of a ``model`` record of :func:`metric_errors`: the judge model could not be
reached after the retries (a 429, a 5xx, a timeout, a dropped connection)."""

JUDGE_CREDENTIALS_HINT = (
    "no verdict on the agent: give the judge model usable credentials (see Model "
    "credentials in docs/action.md)"
)
"""The hint of a ``credentials`` record of :func:`metric_errors` for a judge model."""

JUDGE_UNKNOWN_HINT = (
    "no verdict on the agent: check judge_model_options.judge_model's spelling and that the "
    "model is available to this API key or project"
)
"""The hint of a ``judge`` record of :func:`metric_errors` for a judge model the API does
not know (404 NOT_FOUND)."""

NO_VERDICT = "the judge's answer gave no verdict for it"
NOT_YES_OR_NO = "the judge's verdict was neither yes nor no"
EMPTY_ANSWER = "the judge's answer was empty"
UNPARSABLE_ANSWER = "the judge's answer was not in ADK's ID/Property/Rationale/Verdict format"
NO_PARSABLE_VERDICT = "the judge gave no parsable verdict"
JUDGE_ANSWER_REASONS = frozenset(
    {NO_VERDICT, NOT_YES_OR_NO, EMPTY_ANSWER, UNPARSABLE_ANSWER, NO_PARSABLE_VERDICT})
"""Why a judge metric (a rubric of one) has no verdict when the judge model answered, but
not in a form google-adk reads as a verdict (``adk.evaluate.verdicts``,
``adk.evaluate.recording``): the judge's fault."""

JUDGE_CALL_FAILED = "judge call failed: "
"""How the reason of a judge metric (or rubric) begins when the judge model's call raised
an exception that is no model service fault (``adk.evaluate.recording``): the judge's
fault."""

UNREACHED_PREFIXES = ("model:", "credentials:", "judge:")
"""How the reason of a metric whose judge model could not be reached (after the retries),
had no usable credentials or is unknown to the API begins: the error kind, then the model
call's error (``adk.evaluate.recording``)."""

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


_Key = tuple[str, str | None, str, ErrorKind]
"""(metric name, its judge model, reason, the error kind: :func:`unscored_kind`)."""


def _judge_fault(reason: str) -> ErrorKind | None:
    """The judge fault one reason says (:func:`unscored_kind`), or None."""
    if reason in JUDGE_ANSWER_REASONS:
        return "judge_answer"
    if reason.startswith(JUDGE_CALL_FAILED):
        return "judge"
    return None


def unscored_kind(metric: MetricResult, judge_answers_counted: bool = False) -> ErrorKind:
    """The error kind of a metric result without a score: the one rule for judge faults,
    the same for every metric with a judge model (``MetricResult.judge_model``: rubric
    metrics, ``final_response_match_v2``, ``hallucinations_v1``,
    ``per_turn_user_simulator_quality_v1``).

    * The judge model could not be reached after the retries, had no usable credentials,
      or is unknown to the API (its reason begins with :data:`UNREACHED_PREFIXES`): that
      kind (``model``, ``credentials``, ``judge``).
    * The judge model answered, but not in a form google-adk reads as a verdict
      (:data:`JUDGE_ANSWER_REASONS`, for the metric or every rubric left without a
      verdict): ``judge_answer``; ``metric`` when ``judge_answers_counted`` (the run's gate
      sets ``not_evaluated``, which then decides such cases).
    * The judge model's call raised an exception that is no model service fault
      (:data:`JUDGE_CALL_FAILED`): ``judge``, a judge model that cannot work.
    * Else a metric that errored (raised while scoring, a non-finite score) is
      ``metric_code``: its code failed; one left NOT_EVALUATED for another reason is
      ``metric``, counted by the gate's ``not_evaluated``.

    Every kind but ``metric`` makes the run incomplete (exit 2:
    :data:`~adk_eval_action.results.model.INCOMPLETE_ERROR_KINDS`)."""
    reason = metric.reason or ""
    if reason.startswith(UNREACHED_PREFIXES):
        return cast(ErrorKind, reason.split(":", 1)[0])
    if metric.judge_model is not None:
        gaps = [r.reason or NO_VERDICT for r in metric.rubrics if r.score is None]
        faults = {_judge_fault(why) for why in gaps or [reason]}
        if faults == {"judge_answer"}:
            return "metric" if judge_answers_counted else "judge_answer"
        if None not in faults:
            return "judge"
    return "metric_code" if metric.status.value == "error" else "metric"


def _unscored(
    record: SuiteRecord, judge_answers_counted: bool,
) -> tuple[Counter[_Key], dict[_Key, dict[int, list[str]]]]:
    """Per (metric, judge model, reason, kind): how many runs, and which eval cases per eval
    set (index into ``record.eval_sets``), of the metrics without a score (an informational
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
                if reason.startswith(UNREACHED_PREFIXES) and metric.judge_model is None:
                    # A model the metric's own code called: said once for the suite
                    # (engine.model_errors).
                    continue
                kind = unscored_kind(metric, judge_answers_counted)
                key = (metric.metric_name, metric.judge_model, reason, kind)
                runs[key] += 1
                ids = cases.setdefault(key, {}).setdefault(index, [])
                if case.eval_id not in ids:
                    ids.append(case.eval_id)
    return runs, cases


_JUDGE_WHAT = {
    "judge_answer": "answered off-format",
    "judge": "could not be used",
    "model": "could not be reached",
    "credentials": "had no usable credentials",
}
"""What a judge fault's message says the judge model did, per error kind."""

_MESSAGES = {
    "metric_code": "the code of `{metric}` failed in {where}: {reason}",
    "metric": "`{metric}` not evaluated in {where}: {reason}",
}
_HINTS = {"metric_code": METRIC_CODE_HINT, "judge_answer": JUDGE_ANSWER_HINT,
          "metric": METRIC_ERROR_HINT, "judge": JUDGE_FAULT_HINT, "model": JUDGE_OUTAGE_HINT,
          "credentials": JUDGE_CREDENTIALS_HINT}
METRIC_ERROR_HINTS = frozenset({*_HINTS.values(), JUDGE_ANSWER_COUNTED_HINT,
                                JUDGE_UNKNOWN_HINT})
"""The hints of :func:`metric_errors`' records: how :func:`is_metric_error` knows them."""


def _said(metric: str, judge: str | None, reason: str, kind: ErrorKind, where: str,
          counted: bool) -> tuple[str, str]:
    """The message and hint of one :func:`metric_errors` record."""
    if judge is None or (kind not in _JUDGE_WHAT and not counted):
        return _MESSAGES[kind].format(metric=metric, where=where, reason=reason), _HINTS[kind]
    what = _JUDGE_WHAT["judge_answer" if counted else kind]
    cause = reason.split(":", 1)[1].strip() if reason.startswith(UNREACHED_PREFIXES) else reason
    hint = (JUDGE_ANSWER_COUNTED_HINT if counted
            else JUDGE_UNKNOWN_HINT if kind == "judge" and reason.startswith("judge:")
            else _HINTS[kind])
    message = (f"the judge model `{judge}` of `{metric}` {what}: no verdict in {where}: "
               f"{cause}")
    return message, hint


def metric_errors(record: SuiteRecord, judge_answers_counted: bool = False
                  ) -> list[ErrorRecord]:
    """One error record per (metric, reason) of the suite's metrics without a score (gated
    metrics, and informational ones whose code failed), naming every eval set and eval case
    it hit (:func:`affected_text`), never passed over; its kind is :func:`unscored_kind`'s.

    A metric that raised while scoring or gave a non-finite score or one outside the range
    it declared (status ``error``) is a fault of the metric's code, not of the agent: kind
    ``metric_code``, which makes the run incomplete (exit 2). A metric with a judge model
    that gave no verdict is the judge's fault, whichever metric: ``judge_answer`` (answered
    off-format), ``judge`` (its call raised), ``model`` or ``credentials`` (not reached),
    each making the run incomplete and named ``the judge model `J` of `M` …``; with
    ``judge_answers_counted`` (the run's gate sets ``not_evaluated``: the engine's
    settings, decided once when the run is recorded) an off-format answer is kind
    ``metric`` instead, which that setting decides. One not evaluated for another reason
    (ADK's NOT_EVALUATED) is kind ``metric``, counted by the gate's ``not_evaluated``.
    ``file``/``eval_set_id`` are set when one eval set was hit, ``eval_id`` when one eval
    case was."""
    runs, cases = _unscored(record, judge_answers_counted)
    names = _set_names(record)
    errors = []
    for key, per_set in cases.items():
        metric_name, judge, reason, kind = key
        where = affected_text(runs[key], {names[i]: ids for i, ids in per_set.items()})
        one_set = record.eval_sets[next(iter(per_set))] if len(per_set) == 1 else None
        only_case = next(iter(per_set.values())) if one_set else []
        counted = kind == "metric" and judge is not None and _judge_fault(reason) is not None
        message, hint = _said(metric_name, judge, reason, kind, where, counted)
        errors.append(
            ErrorRecord(
                kind=kind,
                message=message,
                suite=record.name,
                file=one_set.file if one_set else None,
                eval_set_id=one_set.eval_set_id if one_set else None,
                eval_id=only_case[0] if len(only_case) == 1 else None,
                metric=metric_name,
                hint=hint,
            )
        )
    return errors


def is_metric_error(error: ErrorRecord) -> bool:
    """Whether ``error`` is one of :func:`metric_errors` (recomputed, never merged)."""
    return error.metric is not None and error.hint in METRIC_ERROR_HINTS


def recomputed_metric_errors(record: SuiteRecord, before: list[ErrorRecord]
                             ) -> list[ErrorRecord]:
    """``before`` (a saved or merged record's errors) with its :func:`metric_errors`
    recomputed from ``record``'s runs, deciding off-format judge answers as the saved
    records did (a ``metric`` record with :data:`JUDGE_ANSWER_COUNTED_HINT`: the run's gate
    set ``not_evaluated``), so the same runs give the same kinds. A new list; nothing in
    ``before`` is changed."""
    counted = any(e.kind == "metric" and e.hint == JUDGE_ANSWER_COUNTED_HINT for e in before)
    return [e for e in before if not is_metric_error(e)] + metric_errors(record, counted)


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

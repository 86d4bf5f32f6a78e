"""Rules over a suite's recorded runs, applied where runs are recorded (the engine) and
where results are combined (``merge`` of shards), so both give the same record."""

from __future__ import annotations

from collections import Counter

from adk_eval_action.results.model import ErrorRecord, EvalSetRecord, SuiteRecord

METRIC_ERROR_HINT = "its eval case cannot pass while it is not evaluated"
"""The hint of every :func:`metric_errors` record. Whether such a case fails or only warns is
the gate's ``not_evaluated`` setting, which the report words next to each of these errors."""


def metric_errors(record: SuiteRecord) -> list[ErrorRecord]:
    """One error record per (metric, reason) of the suite's runs: a metric that could not
    be evaluated is shown with its reason and how many runs it hit, never passed over. The
    record names the first case (eval sets' and cases' order)."""
    counts: Counter[tuple[str, str]] = Counter()
    first_case: dict[tuple[str, str], tuple[EvalSetRecord, str]] = {}
    for eval_set in record.eval_sets:
        for case in eval_set.eval_cases:
            for metric in (m for r in case.runs for m in r.metrics):
                if metric.informational or metric.status.value not in ("error", "not_evaluated"):
                    continue
                reason = metric.reason or "the metric returned NOT_EVALUATED"
                if reason.startswith(("model:", "credentials:")):
                    continue  # a judge that could not be reached: said once (engine.model_errors)
                key = (metric.metric_name, reason)
                counts[key] += 1
                first_case.setdefault(key, (eval_set, case.eval_id))
    errors = []
    for (metric_name, reason), count in counts.items():
        eval_set, eval_id = first_case[(metric_name, reason)]
        errors.append(
            ErrorRecord(
                kind="metric",
                message=f"`{metric_name}` not evaluated in {count} run(s): {reason}",
                suite=record.name,
                file=eval_set.file,
                eval_set_id=eval_set.eval_set_id,
                eval_id=eval_id,
                metric=metric_name,
                hint=METRIC_ERROR_HINT,
            )
        )
    return errors


def is_metric_error(error: ErrorRecord) -> bool:
    """Whether ``error`` is one of :func:`metric_errors` (recomputed, never merged)."""
    return error.kind == "metric" and error.metric is not None and error.hint == METRIC_ERROR_HINT


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

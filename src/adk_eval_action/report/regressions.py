"""Evidence for the eval cases that got worse than the baseline, whether or not they fail:
what the head's agent did next to what the baseline's did in the same eval case.

Computed from the case's record on each side (:class:`EvalCaseRecord`: the runs'
``actual_invocations``, metric results with their per-invocation scores, rubric verdicts
with the judge's rationale, reasons), so every line can be recomputed from the two results
files; the models are :mod:`adk_eval_action.report.evidence`'s (``kind`` ``dropped``).

Rules:

* **Cases**: the eval cases that drove a drop of a gated metric or rubric
  (:attr:`adk_eval_action.analysis.gate.GateResult.dropped_cases`: each case's own drop
  beyond the metric's ``min_effect``, largest first), but those already shown as failing,
  whose head record the results keep, at most ``limit`` of them.
* **Runs**: the head run with the worst score of the case's largest drop, next to the
  baseline run with the best (the first of equals): the pair the drop shows in.
* **Turn**: the first invocation where a dropped metric scored worse than in the baseline
  run (per-invocation scores), else the first whose tool calls differ from the baseline
  run's, else whose final response differs, else the last. Its tool calls and final
  response are diffed against the baseline run's (``reference`` ``baseline``); the other
  turns that scored worse are named (``other_turns``). Without a
  baseline run that recorded invocations, the turn is shown against the eval case's
  expected invocations, as for a failing case.
* **Rubrics**: the dropped metrics' verdicts in the head run that are lower than the
  baseline run's verdict of the same rubric on the same turn (or below 1 when the
  baseline run has none), with the judge's rationale; at most
  :data:`adk_eval_action.report.evidence.MAX_RUBRICS`.
* **Drops**: each dropped metric of the case, its case means on both sides, the head
  run's threshold and reason (a custom metric's explanation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adk_eval_action.analysis.compare import CaseComparison
from adk_eval_action.analysis.drops import CaseDrop
from adk_eval_action.report.evidence import (
    MAX_RUBRICS,
    RATIONALE_CHARS,
    CaseEvidence,
    DropEvidence,
    RubricEvidence,
    TurnEvidence,
    case_records,
    expected_turn,
    failed_rubrics,
    turn_at,
)
from adk_eval_action.report.format import cut, one_line
from adk_eval_action.report.invocations import response_text, tool_calls
from adk_eval_action.results.model import EvalCaseRecord, MetricResult, RunRecord, RunResults
from adk_eval_action.results.scoretable import CaseKey, ScoreTable

__all__ = ["collect_drop_evidence", "drop_evidence"]


def collect_drop_evidence(
    head: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    cases: Sequence[tuple[CaseComparison, list[CaseDrop]]],
    shown: set[CaseKey],
    limit: int = 50,
) -> list[CaseEvidence]:
    """Evidence for the first ``limit`` of ``cases`` (the gate's dropped cases, largest
    drop first) not in ``shown`` (the failing cases' evidence) whose head record ``head``
    holds; the baseline's record of each, when ``baseline`` holds it, is what the head is
    compared with (module docstring).

    Raises nothing for odd records (hand-edited files): what cannot be read is left out.
    """
    wanted = [(c, d) for c, d in cases if c.key not in shown][: limit * 2]
    keys = {c.key for c, _ in wanted}
    heads = case_records(head, keys)
    bases = case_records(baseline, keys) if baseline is not None else {}
    out = []
    for case, drops in wanted:
        record = heads.get(case.key)
        if record is None or not record.runs:
            continue
        out.append(drop_evidence(case, drops, record, bases.get(case.key)))
        if len(out) >= limit:
            break
    return out


def _score(run: RunRecord, name: str) -> MetricResult | None:
    return next((m for m in run.metrics if m.metric_name == name), None)


def _pick(runs: list[RunRecord], name: str, worst: bool) -> RunRecord:
    """The run whose ``name`` score is worst (or best), in the metric's direction; the first
    of equals, and the first run when none has a score."""
    scored = [(r, m) for r in runs if (m := _score(r, name)) and m.score is not None]
    if not scored:
        return runs[0]

    def goodness(item: tuple[RunRecord, MetricResult]) -> float:
        metric = item[1]
        value = float(metric.score or 0.0)
        return value if metric.higher_is_better else -value

    pick = min if worst else max
    return pick(scored, key=goodness)[0]


def drop_evidence(
    case: CaseComparison, drops: list[CaseDrop], head: EvalCaseRecord,
    baseline: EvalCaseRecord | None,
) -> CaseEvidence:
    """The evidence of one case that got worse than the baseline (module docstring);
    ``drops`` are its own drops, largest first."""
    names = [d.metric_name for d in drops]
    run = _pick(head.runs, names[0], worst=True)
    base_run = _pick(baseline.runs, names[0], worst=False) if baseline and baseline.runs else None
    dropped = [m for m in run.metrics if m.metric_name in names]
    rubrics = list(_worse_rubrics(dropped, base_run))
    return CaseEvidence(
        kind="dropped",
        suite=case.suite,
        eval_set_id=case.eval_set_id,
        eval_id=case.eval_id,
        change=case.change,
        file=case.file,
        line=case.line,
        run=run.run,
        runs=len(head.runs),
        baseline_run=base_run.run if base_run else None,
        baseline_runs=len(baseline.runs) if base_run and baseline else None,
        error=cut(one_line(run.error), RATIONALE_CHARS) if run.error else None,
        turn=_turn(head, run, base_run, dropped),
        rubrics=rubrics[:MAX_RUBRICS],
        more_rubrics=max(0, len(rubrics) - MAX_RUBRICS),
        drops=[_drop(d, _score(run, d.metric_name)) for d in drops],
    )


def _drop(drop: CaseDrop, metric: MetricResult | None) -> DropEvidence:
    reason = metric.reason if metric else None
    return DropEvidence(
        metric_name=drop.metric_name,
        baseline=drop.baseline,
        head=drop.head,
        threshold=metric.threshold if metric else None,
        min_value=metric.min_value if metric else None,
        max_value=metric.max_value if metric else None,
        higher_is_better=metric.higher_is_better if metric else True,
        reason=cut(one_line(reason), RATIONALE_CHARS) if reason else None,
    )


def _worse_rubrics(
    metrics: list[MetricResult], base_run: RunRecord | None
) -> list[RubricEvidence]:
    base: dict[tuple[str, str, int | None], float | None] = {}
    for verdict in failed_rubrics(base_run.metrics if base_run else []):
        base[(verdict.metric_name, verdict.rubric_id, verdict.turn)] = verdict.score
    out = []
    for verdict in failed_rubrics(metrics):
        key = (verdict.metric_name, verdict.rubric_id, verdict.turn)
        if key not in base:  # the baseline said yes (or was not asked)
            out.append(verdict)
            continue
        was = base[key]
        if verdict.score is not None and (was is None or verdict.score < was):
            out.append(verdict)
    return out


def _worse_turns(metrics: list[MetricResult], base_run: RunRecord) -> dict[int, list[str]]:
    """Per invocation index, the dropped metrics that scored worse there than in the
    baseline run (both scored)."""
    worse: dict[int, list[str]] = {}
    for metric in metrics:
        base = _score(base_run, metric.metric_name)
        before = {i.index: i.score for i in base.invocations} if base else {}
        sign = 1.0 if metric.higher_is_better else -1.0
        for inv in metric.invocations:
            was = before.get(inv.index)
            if inv.score is not None and was is not None and sign * (inv.score - was) < 0:
                worse.setdefault(inv.index, []).append(metric.metric_name)
    return worse


def _turn(
    head: EvalCaseRecord, run: RunRecord, base_run: RunRecord | None,
    dropped: list[MetricResult],
) -> TurnEvidence | None:
    actual = run.actual_invocations or []
    reference = (base_run.actual_invocations if base_run else None) or []
    if not actual:
        return None
    if not reference or base_run is None:
        return expected_turn(head.expected_invocations, run, dropped)

    def at(i: int) -> dict[str, Any] | None:
        return reference[i] if i < len(reference) else None

    worse = _worse_turns(dropped, base_run)
    order = range(len(actual))
    index = next((i for i in sorted(worse) if i < len(actual)), None)
    if index is None:
        index = next((i for i in order if tool_calls(at(i)) != tool_calls(actual[i])), None)
    if index is None:
        index = next((i for i in order if response_text(at(i)) != response_text(actual[i])),
                     len(actual) - 1)
    turn = turn_at(index, at(index), actual, True, worse.get(index, []))
    others = [i + 1 for i in sorted(worse) if i != index and i < len(actual)]
    return turn.model_copy(update={"reference": "baseline", "other_turns": others})

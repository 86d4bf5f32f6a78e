"""Rubric verdicts: each invocation is judged against its own rubrics, and every rubric that
applies to an invocation ends with a verdict or a named reason.

Why, in google-adk 2.13 (``google/adk/evaluation/llm_as_judge.py``,
``rubric_based_evaluator.py``): ``LlmAsJudge.evaluate_invocations`` formats the prompt of
every invocation first (``format_auto_rater_prompt`` calls ``create_effective_rubrics_list``,
which keeps ONE list on the evaluator) and parses every answer afterwards against that list,
i.e. against the *last* invocation's rubrics. The verdicts on an earlier turn's own rubrics
are dropped with the log line "Rubric … not found in the rubrics provided to the metric",
and the case passes on what is left. (google-adk's main branch keys the list by invocation
since commit 07c7747; the 2.13 release does not.) Judging one invocation per call sends the
same prompts and parses each answer against the rubrics that were sent, on either version.

A judge's answer can also leave a rubric out (ADK's parser accepts a partial answer whose
blocks are well formed), give a verdict that is neither yes nor no, be empty, be unparsable
or fail; ADK then averages whatever verdicts it got. Here each rubric sent without a usable
verdict becomes a :class:`RubricGap` with the reason, and the metric is NOT_EVALUATED unless
the verdicts given fail it whatever the missing ones would say (:func:`settle`).

``rubric_based_multi_turn_trajectory_quality_v1`` judges the whole conversation once, with
the rubrics of its last turn: a rubric put on an earlier turn is never sent, and gets a gap
that says so.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus
from google.adk.evaluation.eval_rubrics import Rubric, RubricScore
from google.adk.evaluation.evaluator import EvaluationResult, PerInvocationResult
from pydantic import BaseModel

from adk_eval_action.adk.files.criteria import criterion_rubrics
from adk_eval_action.adk.files.rubrics import RUBRIC_METRIC_TYPES
from adk_eval_action.adk.runtime.model_faults import described_call_error
from adk_eval_action.results.model import MetricResult, MetricStatus, RubricScoreRecord
from adk_eval_action.results.records import (
    EMPTY_ANSWER,
    JUDGE_CALL_FAILED,
    NO_VERDICT,
    NOT_YES_OR_NO,
    UNPARSABLE_ANSWER,
)

CONVERSATION_LEVEL_METRICS = frozenset({"rubric_based_multi_turn_trajectory_quality_v1"})
"""Rubric metrics that judge the whole conversation once, at its last turn."""

JUDGE_LOGGERS = (
    "google_adk.google.adk.evaluation.llm_as_judge",
    "google_adk.google.adk.evaluation.rubric_based_evaluator",
)
"""The loggers ADK's judges warn on (failed samples, unparsable answers, unknown rubrics)."""


Invoke = Callable[[list[Any], list[Any] | None], Awaitable[EvaluationResult]]


class RubricGap(BaseModel):
    """A rubric that applies to an invocation and ended without a usable verdict.

    ``invocation`` is the 0-based index of the turn in the eval case; ``reason`` says why
    (the judge left it out, answered neither yes nor no, failed, …); ``text`` is the
    rubric's text when known (kept on the record, which no verdict carries then).
    """

    invocation: int
    rubric_id: str
    reason: str
    text: str | None = None


class JudgeNote(BaseModel):
    """One warning ADK's judge logged during a call: ``kind`` is ``failed`` (a judge call
    raised), ``empty``, ``unparsable``, ``unknown_rubric`` (an answer about a rubric that
    was not sent) or ``other``; ``text`` is the log message with the exception, if any."""

    kind: str
    text: str


class RubricVerdicts(BaseModel):
    """What judging a rubric metric gave: ADK's result (settled), the gaps, and ADK's judge
    warnings worth showing (answers about rubrics that were never sent)."""

    result: EvaluationResult
    gaps: list[RubricGap]
    warnings: list[str]


_NOTES: contextvars.ContextVar[list[JudgeNote] | None] = contextvars.ContextVar(
    "adk_eval_action_judge_notes", default=None
)


def _note_kind(message: str) -> str:
    """The kind of an ADK judge warning, by the wording of google-adk 2.13's messages."""
    for kind, start in (
        ("failed", "Evaluation sample failed"),
        ("empty", "Auto-rater returned an empty response"),
        ("unparsable", "Auto-rater response did not match"),
    ):
        if message.startswith(start):
            return kind
    return "unknown_rubric" if "not found in the rubrics provided" in message else "other"


class JudgeNotesHandler(logging.Handler):
    """Keeps ADK's judge warnings for the call being judged (:func:`collect_notes`), so they
    become reasons and warnings in the results instead of lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        notes = _NOTES.get()
        if notes is None:
            return
        message = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        text = described_call_error(error) if error else message
        notes.append(JudgeNote(kind=_note_kind(message), text=text))


async def collect_notes(
    call: Awaitable[EvaluationResult],
) -> tuple[EvaluationResult, list[JudgeNote]]:
    """Awaits ``call`` (a coroutine not yet started) and returns its result with the judge
    warnings logged meanwhile, also by the tasks ADK spawns: they copy the context, and
    with it the list."""
    notes: list[JudgeNote] = []
    token = _NOTES.set(notes)
    try:
        return await call, notes
    finally:
        _NOTES.reset(token)


def _missing_reason(given_any: bool, notes: Sequence[JudgeNote]) -> str:
    """Why a rubric sent to the judge has no verdict at all."""
    if given_any:
        return NO_VERDICT
    kinds = {n.kind: n.text for n in notes}
    if "failed" in kinds:
        return f"{JUDGE_CALL_FAILED}{kinds['failed']}"
    if "empty" in kinds:
        return EMPTY_ANSWER
    if "unparsable" in kinds:
        return UNPARSABLE_ANSWER
    return NO_VERDICT


def _text(rubric: Rubric) -> str | None:
    """The rubric's text (its ``rubric_content.text_property``), None when it has none."""
    content = getattr(rubric, "rubric_content", None)
    return getattr(content, "text_property", None) or None


def verdict_gaps(
    index: int, result: PerInvocationResult, sent: Sequence[Rubric], notes: Sequence[JudgeNote]
) -> list[RubricGap]:
    """Gaps of one judged invocation: each rubric in ``sent`` whose verdict is missing from
    ``result.rubric_scores`` or has no score."""
    given = {s.rubric_id: s for s in result.rubric_scores or []}
    gaps = []
    for rubric in sent:
        score = given.get(rubric.rubric_id)
        if score is not None and score.score is not None:
            continue
        reason = NOT_YES_OR_NO if score is not None else _missing_reason(bool(given), notes)
        gaps.append(RubricGap(invocation=index, rubric_id=rubric.rubric_id, reason=reason,
                              text=_text(rubric)))
    return gaps


def _threshold(metric: EvalMetric) -> float | None:
    criterion = metric.criterion
    if criterion is not None and criterion.threshold is not None:
        return float(criterion.threshold)
    return metric.threshold


def _unsure_status(scores: list[float], missing: int, threshold: float | None) -> EvalStatus:
    """FAILED when the mean of ``scores`` stays below ``threshold`` even if every missing
    verdict were yes; else NOT_EVALUATED (a gap never lets a metric pass)."""
    best = (sum(scores) + missing) / (len(scores) + missing)
    return EvalStatus.FAILED if threshold is not None and best < threshold else (
        EvalStatus.NOT_EVALUATED
    )


def _with_placeholders(per_invocation: PerInvocationResult, gaps: list[RubricGap]) -> Any:
    """The invocation's result with a score-less RubricScore for every gap rubric ADK left
    out, so each rubric sent shows in the results, and its status settled."""
    scores = list(per_invocation.rubric_scores or [])
    present = {s.rubric_id for s in scores}
    scores += [RubricScore(rubric_id=g.rubric_id) for g in gaps if g.rubric_id not in present]
    return per_invocation.model_copy(update={"rubric_scores": scores})


def settle(result: EvaluationResult, gaps: list[RubricGap], metric: EvalMetric) -> Any:
    """``result`` with the gaps applied: placeholder verdicts for rubrics the judge left out,
    and every status that rests on a gap made NOT_EVALUATED (or FAILED when the verdicts given
    fail it anyway; :func:`_unsure_status`). Scores stay ADK's (the mean of the verdicts
    given)."""
    if not gaps:
        return result
    threshold = _threshold(metric)
    per_invocation = []
    for index, one in enumerate(result.per_invocation_results):
        mine = [g for g in gaps if g.invocation == index]
        if mine:
            one = _with_placeholders(one, mine)
            known = [s.score for s in one.rubric_scores or [] if s.score is not None]
            one.eval_status = _unsure_status(known, len(mine), threshold)
        per_invocation.append(one)
    known = [
        s.score for p in per_invocation for s in p.rubric_scores or [] if s.score is not None
    ]
    status = _unsure_status(known, len(gaps), threshold)
    return result.model_copy(
        update={"per_invocation_results": per_invocation, "overall_eval_status": status}
    )


USER_SIMULATOR_QUALITY = "per_turn_user_simulator_quality_v1"
"""The metric whose judge gives a verdict per simulated user turn (after the first, which
google-adk compares with the starting prompt itself)."""


def settle_user_turns(result: EvaluationResult, metric: EvalMetric) -> EvaluationResult:
    """``per_turn_user_simulator_quality_v1``'s ``result`` with the turns its judge gave no
    verdict on (an answer without ``"is_valid"``: google-adk's
    ``simulation/per_turn_user_simulator_quality_v1.py`` leaves that turn NOT_EVALUATED
    without a score, then counts it as an invalid turn in the overall score) made a gap as
    for rubric metrics: NOT_EVALUATED without a score, or FAILED with ADK's score when the
    verdicts given fail it whatever the missing ones would say (:func:`_unsure_status`).
    Other results, and this metric's without such turns, are returned as they are. A
    missing verdict on the stop signal is not seen: ADK keeps only a failed one."""
    if metric.metric_name != USER_SIMULATOR_QUALITY:
        return result  # every other metric's result, on every case run: nothing to count
    turns = list(result.per_invocation_results or [])[1:]
    missing = sum(t.score is None and t.eval_status == EvalStatus.NOT_EVALUATED for t in turns)
    if not missing:
        return result
    known = [float(t.score) for t in result.per_invocation_results if t.score is not None]
    status = _unsure_status(known, missing, _threshold(metric))
    update: dict[str, Any] = {"overall_eval_status": status}
    if status == EvalStatus.NOT_EVALUATED:
        update["overall_score"] = None  # ADK's counts each missing verdict as invalid
    return result.model_copy(update=update)


def _sent_rubrics(evaluator: Any) -> list[Rubric]:
    """The rubrics ADK put in the prompt it formatted last (``get_effective_rubrics_list``)."""
    try:
        return list(evaluator.get_effective_rubrics_list())
    except (AttributeError, ValueError):
        return []


def _applicable(
    invocation: Any, metric_name: str, config_rubrics: Sequence[Rubric]
) -> list[Rubric]:
    """Rubrics that apply to one invocation: the criterion's and the invocation's own of the
    metric's rubric type (``create_effective_rubrics_list``'s filter)."""
    rubric_type = RUBRIC_METRIC_TYPES.get(metric_name)
    own = [r for r in invocation.rubrics or [] if r.type == rubric_type]
    return [*config_rubrics, *own]


def config_rubrics(metric: EvalMetric) -> list[Rubric]:
    """The criterion's rubrics (:func:`adk_eval_action.adk.files.criteria.criterion_rubrics`)."""
    return criterion_rubrics(metric.metric_name, metric.criterion)


async def judge_each_invocation(
    evaluator: Any, invoke: Invoke, metric: EvalMetric, actual: list[Any],
    expected: list[Any] | None, judged: Sequence[int],
) -> RubricVerdicts:
    """Judges the invocations at ``judged`` one call each, in turn (the evaluator keeps the
    rubrics of the prompt it formatted last), and aggregates them with ADK's own summarizer
    (``aggregate_invocation_results``). Turns not judged are NOT_EVALUATED, without rubrics.
    """
    per_invocation: list[Any] = []
    gaps: list[RubricGap] = []
    notes: list[JudgeNote] = []
    for index, invocation in enumerate(actual):
        unjudged = PerInvocationResult(
            actual_invocation=invocation, eval_status=EvalStatus.NOT_EVALUATED
        )
        if index not in judged:
            per_invocation.append(unjudged)
            continue
        one_expected = [expected[index]] if expected is not None else None
        result, found = await collect_notes(invoke([invocation], one_expected))
        one = result.per_invocation_results[0] if result.per_invocation_results else unjudged
        gaps += verdict_gaps(index, one, _sent_rubrics(evaluator), found)
        notes += found
        per_invocation.append(one)
    summary = evaluator.aggregate_invocation_results(per_invocation)
    return RubricVerdicts(
        result=settle(summary, gaps, metric), gaps=gaps, warnings=_warnings(notes)
    )


async def judge_conversation(
    evaluator: Any, invoke: Invoke, metric: EvalMetric, actual: list[Any],
    expected: list[Any] | None,
) -> RubricVerdicts:
    """Judges a conversation-level rubric metric in ADK's one call; rubrics sent without a
    verdict, and rubrics of earlier turns that ADK never sends, become gaps.

    Raises:
        ValueError: the last turn has no rubrics, so ADK would judge nothing.
    """
    criterion = config_rubrics(metric)
    if not _applicable(actual[-1], metric.metric_name, criterion):
        raise ValueError(
            f"`{metric.metric_name}` judges the whole conversation at its last turn, which has "
            "no rubrics of its type: put them on the criterion, the eval case or the last turn"
        )
    result, notes = await collect_notes(invoke(actual, expected))
    last = len(actual) - 1
    sent = _sent_rubrics(evaluator)
    verdict = (
        result.per_invocation_results[last]
        if len(result.per_invocation_results) == len(actual)
        else PerInvocationResult(actual_invocation=actual[last])
    )
    gaps = verdict_gaps(last, verdict, sent, notes)
    sent_ids = {r.rubric_id for r in sent}
    for index, invocation in enumerate(actual[:-1]):
        for rubric in _applicable(invocation, metric.metric_name, criterion):
            if rubric.rubric_id not in sent_ids:
                gaps.append(RubricGap(
                    invocation=index, rubric_id=rubric.rubric_id,
                    reason=f"`{metric.metric_name}` judges the whole conversation once, with "
                    "the rubrics of its last turn; put this rubric on the eval case or the "
                    "last turn",
                ))
    return RubricVerdicts(result=settle(result, gaps, metric), gaps=gaps, warnings=_warnings(notes))


def _warnings(notes: Sequence[JudgeNote]) -> list[str]:
    """ADK's judge warnings that no gap explains: answers about rubrics never sent."""
    return list(dict.fromkeys(
        f"the judge answered about a rubric that was not sent ({n.text})"
        for n in notes if n.kind == "unknown_rubric"
    ))


def gaps_reason(gaps: Sequence[RubricGap], shown: int = 3) -> str:
    """One line naming the rubrics without a verdict and why, turns grouped, e.g. ``no
    verdict for rubric `t1_tokyo` (turn 1): the judge's answer gave no verdict for it``."""
    turns: dict[tuple[str, str], list[int]] = {}
    for gap in gaps:
        turns.setdefault((gap.rubric_id, gap.reason), []).append(gap.invocation + 1)
    parts = [
        f"`{rubric_id}` (turn{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}): {reason}"
        for (rubric_id, reason), at in list(turns.items())[:shown]
    ]
    more = f"; and {len(turns) - shown} more" if len(turns) > shown else ""
    noun = "rubric" if len({g.rubric_id for g in gaps}) == 1 else "rubrics"
    return f"no verdict for {noun} " + "; ".join(parts) + more


def _reason_on(rubrics: list[RubricScoreRecord], gap: RubricGap) -> None:
    """Puts the gap's reason on its rubric's record (added if ADK recorded none)."""
    record = next((r for r in rubrics if r.rubric_id == gap.rubric_id), None)
    if record is None:
        rubrics.append(RubricScoreRecord(rubric_id=gap.rubric_id, text=gap.text,
                                         reason=gap.reason))
    elif record.score is None:
        record.reason = record.reason or gap.reason
        record.text = record.text or gap.text


def _invocation_verdicts(metric: MetricResult, verdicts: RubricVerdicts) -> None:
    """Each invocation's verdicts, score and status as judged and settled here. Older
    google-adk drops every per-invocation result of a metric whose overall status is
    NOT_EVALUATED (local_eval_service before 2.13), so the record takes them from the judging
    itself rather than from what ADK kept."""
    by_index = {i.index: i for i in metric.invocations}
    for index, one in enumerate(verdicts.result.per_invocation_results):
        invocation = by_index.get(index)
        if invocation is None or invocation.rubrics or not one.rubric_scores:
            continue
        invocation.rubrics = [
            RubricScoreRecord(rubric_id=s.rubric_id, score=s.score, rationale=s.rationale)
            for s in one.rubric_scores
        ]
        invocation.score = one.score
        invocation.status = MetricStatus(one.eval_status.name.lower())


def record_verdicts(metric: MetricResult, verdicts: RubricVerdicts) -> None:
    """Writes a rubric metric's verdicts onto its record (in place): each invocation's
    verdicts (:func:`_invocation_verdicts`), and each gap's reason on the invocation's
    rubric and on the metric's overall rubric when no invocation gave it a verdict. Text and
    type come from the records ADK's scores already made."""
    _invocation_verdicts(metric, verdicts)
    by_index = {i.index: i for i in metric.invocations}
    for gap in verdicts.gaps:
        invocation = by_index.get(gap.invocation)
        if invocation is not None:
            _reason_on(invocation.rubrics, gap)
        _reason_on(metric.rubrics, gap)
    known = {r.rubric_id: r for r in metric.rubrics if r.text}
    for rubric in [*metric.rubrics, *(r for i in metric.invocations for r in i.rubrics)]:
        source = known.get(rubric.rubric_id)
        if source is not None and rubric.text is None:
            rubric.text, rubric.type = source.text, source.type

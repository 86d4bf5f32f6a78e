"""Judge flips: a judge's verdict on an eval case that changed between the baseline and the
head while the case's answer did not. Such a change comes from the judge, not the agent.

An eval case *answered alike* on both sides when every run of it, on either side, gave the
same answer (:func:`adk_eval_action.results.answers.answer_key`: the same final texts and
tool calls, turn by turn; a run without recorded invocations is never alike). On such a
case, a judge metric's per-case score (its runs averaged) or a rubric's per-case verdict
that differs between the sides is a **judge flip (same answer)** (:class:`JudgeFlip`).

What follows from a flip (:func:`judge_flips`):

* the metric's or rubric's delta, interval and call are computed on its other matched eval
  cases: the flipped ones are set aside (``MetricComparison.judge_flips`` and
  ``RubricComparison.judge_flips`` count them), so the judge's noise never makes a metric or
  rubric regressed. Only the flipped cases are set aside: on a case answered alike whose
  verdict did not flip, the agent's effect is nothing, and it stays in the delta as such;
* the judge's self-disagreement rate on the same answer, per judge model
  (:class:`~adk_eval_action.results.judgenoise.JudgeNoise`): over every verdict of a case
  answered alike that both sides gave (each rubric of a rubric metric, else the metric's
  score), the share that flipped.

Judge metrics are those the suites' ``judge_models`` name (on either side) and those with
rubric verdicts; a verdict's judge model is the head's, else the baseline's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from adk_eval_action.analysis.comparison import JudgeFlip
from adk_eval_action.analysis.sides import Dense, Side, dense_metrics, dense_rubrics
from adk_eval_action.results.judgenoise import UNKNOWN_JUDGE, JudgeNoise, judge_noise
from adk_eval_action.results.scoretable import MetricKey, RubricKey

__all__ = ["JudgeFlip", "JudgeFlips", "judge_flips"]

Key = TypeVar("Key", MetricKey, RubricKey)
"""A metric key (suite, metric) or a rubric key (suite, metric, rubric id)."""


@dataclass(frozen=True)
class JudgeFlips:
    """What :func:`judge_flips` found: the flipped verdicts (the scores of judge metrics
    without rubrics first, then rubric verdicts, each in case order), the judges'
    self-disagreement on the same answer, and the case ids to set aside per metric and
    rubric key (a rubric metric's score is set aside where it changed on a case answered
    alike: where a verdict of its rubrics flipped)."""

    flips: list[JudgeFlip] = field(default_factory=list)
    noise: list[JudgeNoise] = field(default_factory=list)
    metric_cases: dict[MetricKey, np.ndarray] = field(default_factory=dict)
    rubric_cases: dict[RubricKey, np.ndarray] = field(default_factory=dict)


def _answers(side: Side, n_ids: int) -> list[str | None]:
    """Per case id: the one answer every run of the case gave on this side, or None (runs
    that answered differently, one without recorded invocations, no runs)."""
    found: dict[int, set[str | None]] = {}
    table = side.table
    for run, row in enumerate(table.run_case.tolist()):
        found.setdefault(int(side.ids[row]), set()).add(table.run_answer[run])
    out: list[str | None] = [None] * n_ids
    for case_id, keys in found.items():
        if len(keys) == 1:
            out[case_id] = next(iter(keys))
    return out


def _alike(head: Side, baseline: Side, n_ids: int) -> np.ndarray:
    """The case ids answered alike on both sides (module docstring)."""
    ours, theirs = _answers(head, n_ids), _answers(baseline, n_ids)
    return np.asarray([i for i in range(n_ids) if ours[i] is not None and ours[i] == theirs[i]],
                      dtype=np.intp)


def _judges(head: Side, baseline: Side) -> dict[MetricKey, str]:
    """The judge model of each judge metric key (module docstring)."""
    judges: dict[MetricKey, str] = {}
    for side in (baseline, head):  # the head's last: it wins
        for record in side.table.skeleton.suites:
            judges.update({(record.name, m): j for m, j in record.judge_models.items()})
    for side in (baseline, head):
        for name, metric, _ in side.table.rubric_keys:
            judges.setdefault((name, metric), UNKNOWN_JUDGE)
    return judges


@dataclass(frozen=True)
class _Differing:
    """One key's verdicts on the cases answered alike: how many both sides gave
    (``compared``), the case ids whose values differ, and those values on each side."""

    compared: int
    ids: np.ndarray
    baseline: np.ndarray
    head: np.ndarray


def _differing(head_rows: Mapping[Key, int], base_rows: Mapping[Key, int],
               dense: tuple[Dense, Dense], alike: np.ndarray,
               judged: Callable[[Key], bool]) -> dict[Key, _Differing]:
    """Per key of both sides that ``judged`` accepts: its verdicts on the alike cases."""
    base, head = dense
    found = {}
    for key, h_row in head_rows.items():
        b_row = base_rows.get(key)
        if b_row is None or not judged(key):
            continue
        both = alike[(head.runs[h_row, alike] > 0) & (base.runs[b_row, alike] > 0)]
        ids = both[head.mean[h_row, both] != base.mean[b_row, both]]
        found[key] = _Differing(int(both.size), ids, base.mean[b_row, ids],
                                head.mean[h_row, ids])
    return found


def judge_flips(head: Side, baseline: Side, n_ids: int) -> JudgeFlips:
    """The judge flips between ``baseline`` and ``head`` (sides indexed on the same ``n_ids``
    case ids) and what follows from them (module docstring)."""
    alike = _alike(head, baseline, n_ids)
    judges = _judges(head, baseline)
    if not alike.size or not judges:
        return JudgeFlips()
    metrics = _differing(head.metric_rows, baseline.metric_rows,
                         (dense_metrics(baseline, n_ids), dense_metrics(head, n_ids)),
                         alike, lambda key: key in judges)
    rubrics = _differing(head.rubric_rows, baseline.rubric_rows,
                         (dense_rubrics(baseline, n_ids), dense_rubrics(head, n_ids)),
                         alike, lambda key: (key[0], key[1]) in judges)
    # A verdict is a rubric's, or the score of a judge metric without rubrics.
    with_rubrics = {(key[0], key[1]) for key in rubrics}
    verdicts = [(judges[key], d) for key, d in metrics.items() if key not in with_rubrics]
    verdicts += [(judges[(key[0], key[1])], d) for key, d in rubrics.items()]
    counts: dict[str, tuple[int, int]] = {}
    for judge, found in verdicts:
        compared, flipped = counts.get(judge, (0, 0))
        counts[judge] = (compared + found.compared, flipped + int(found.ids.size))
    case_keys = {int(head.ids[row]): key for row, key in enumerate(head.table.case_keys)}
    found_by: list[tuple[str, str, str | None, _Differing]] = [
        *((s, m, None, d) for (s, m), d in metrics.items() if (s, m) not in with_rubrics),
        *((s, m, r, d) for (s, m, r), d in rubrics.items())]
    flips = [
        JudgeFlip(suite=suite, eval_set_id=case_keys[i][1], eval_id=case_keys[i][2],
                  metric_name=metric, rubric_id=rubric, judge_model=judges[(suite, metric)],
                  baseline=b, head=h)
        for suite, metric, rubric, found in found_by
        for i, b, h in zip(found.ids.tolist(), found.baseline.tolist(), found.head.tolist(),
                           strict=True)
    ]
    return JudgeFlips(
        flips=flips, noise=judge_noise(counts),
        metric_cases={k: d.ids for k, d in metrics.items() if d.ids.size},
        rubric_cases={k: d.ids for k, d in rubrics.items() if d.ids.size},
    )

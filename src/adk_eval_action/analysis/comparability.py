"""Whether the baseline and the head were measured the same way: what differs between the
sides besides the agent (google-adk's version, a suite's eval config, judge models,
``num_runs``, an eval set's content). A difference does not stop the comparison; it is
said beside it (``Comparison.comparability``), so a reader weighs the deltas knowing it.

A judge metric's judging is compared apart, per suite and metric, because it is read beside
that metric's rubric deltas (:func:`judge_changes`): its judge model
(``SuiteRecord.judge_models``), the samples asked of the judge and the version of its
prompt (``SuiteRecord.judge_setup``, :mod:`adk_eval_action.results.judgesetup`). A side
that did not record one (results written before it was recorded, ADK's eval_history) is
not compared on it. A baseline re-scored under the head's eval config was judged as the
head is (adk.evaluate.rescore): nothing differs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from adk_eval_action.results.model import RunResults, SuiteRecord

__all__ = ["JudgeChange", "comparability", "judge_changes"]


class JudgeChange(BaseModel):
    """One way a judge metric of a suite was judged differently, baseline → head:
    ``what`` is ``judge_model``, ``num_samples`` or ``prompt`` (the prompt version's
    hash); ``baseline`` and ``head`` its values (None: the side has no such judge)."""

    suite: str
    metric_name: str
    what: Literal["judge_model", "num_samples", "prompt"]
    baseline: str | None = None
    head: str | None = None


def _compared(head: RunResults, baseline: RunResults) -> list[tuple[SuiteRecord, SuiteRecord]]:
    """(head suite, baseline suite) of each suite the baseline has scores for."""
    base_suites = {s.name: s for s in baseline.suites}
    return [(suite, other) for suite in head.suites
            if (other := base_suites.get(suite.name)) is not None and other.eval_sets]


def comparability(head: RunResults, baseline: RunResults) -> list[str]:
    """Why the two sides may not be comparable (module docstring), one note each;
    ``head``/``baseline`` may be skeletons (results without eval cases)."""
    notes = []
    versions = (baseline.metadata.adk_version, head.metadata.adk_version)
    if all(versions) and versions[0] != versions[1]:
        notes.append(
            f"google-adk {baseline.metadata.adk_version} (baseline) vs "
            f"{head.metadata.adk_version} (head)"
        )
    for suite, other in _compared(head, baseline):  # no baseline: suites_without_baseline
        if other.eval_config_hash and other.eval_config_hash != suite.eval_config_hash:
            notes.append(f"suite `{suite.name}`: the eval config changed")
        if other.judge_models and other.judge_models != suite.judge_models:
            notes.append(f"suite `{suite.name}`: judge models differ")
        if other.num_runs != suite.num_runs:
            notes.append(
                f"suite `{suite.name}`: num_runs {other.num_runs} (baseline) vs {suite.num_runs}"
            )
        base_sets = {e.eval_set_id: e for e in other.eval_sets}
        for eval_set in suite.eval_sets:
            base_set = base_sets.get(eval_set.eval_set_id)
            if (base_set is not None and base_set.content_hash
                    and base_set.content_hash != eval_set.content_hash):
                notes.append(f"suite `{suite.name}`: eval set `{eval_set.eval_set_id}` changed")
    return notes


def judge_changes(head: RunResults, baseline: RunResults) -> list[JudgeChange]:
    """Each judge metric both sides judged whose judge model, samples or prompt version
    differ (module docstring), in the head's order of suites and metrics."""
    changes = []
    for suite, other in _compared(head, baseline):
        for metric, model in suite.judge_models.items():
            base_model = other.judge_models.get(metric)
            if base_model is None:
                continue  # the baseline did not judge it (or did not record its judge)
            pairs: list[tuple[Literal["judge_model", "num_samples", "prompt"],
                              object, object]] = [("judge_model", base_model, model)]
            head_setup = (suite.judge_setup or {}).get(metric)
            base_setup = (other.judge_setup or {}).get(metric)
            if head_setup is not None and base_setup is not None:
                pairs += [("num_samples", base_setup.num_samples, head_setup.num_samples),
                          ("prompt", base_setup.prompt, head_setup.prompt)]
            changes += [
                JudgeChange(suite=suite.name, metric_name=metric, what=what,
                            baseline=str(old), head=str(new))
                for what, old, new in pairs
                if old is not None and new is not None and old != new
            ]
    return changes

"""Sharding an evaluation over a GitHub Actions matrix, and merging the parts back.

``run --shard K/N`` evaluates shard K of N of the run's plan: every eval case goes to
exactly one shard (all its runs with it), chosen deterministically from the plan alone, so
N jobs on the same commit and settings split the same way. The split balances the work by
turns: the cases are taken from the heaviest (turns × runs; a conversation scenario counts
one turn) to the lightest, each to the shard with the least work so far, the lowest shard
number on a tie (the "longest processing time first" rule, Graham 1969). The part's results
file says which shard of which plan it is (:class:`ShardInfo`): the plan's id (a hash of
its cases, weights, eval config and eval set hashes) and its cases in order.

``merge PART.json...`` (:func:`merge_parts`) refuses parts that do not make exactly one
whole plan of one commit, naming them: a file that is no shard, parts of different plans
or shard counts, parts recorded at different commits (``metadata.git_sha``), a shard given
twice, a missing shard, a case in two parts or in none. It writes one
results file in the plan's order, as the unsharded run would have, that ``compare``,
``render`` and the gate read like any other.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, Field, model_validator

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.results.model import (
    CaseKey,
    ModelCallCounts,
    RunMetadata,
    RunResults,
    ShardInfo,
    SuiteRecord,
)
from adk_eval_action.results.records import (
    lower_is_better_votes,
    mark_lower_is_better,
    recomputed_metric_errors,
)

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class MergeError(AdkEvalActionError):
    """The parts given to ``merge`` do not make one whole plan (exit 2); the message names
    the files and shards."""


#: Shards of a run at most: GitHub runs at most 256 jobs of one matrix ("Running variations
#: of jobs in a workflow", matrix limits).
MAX_SHARDS = 256


class ShardSpec(BaseModel):
    """Shard ``index`` of ``count`` (from 1), as ``--shard K/N`` and the ``shard`` input
    give it."""

    index: int = Field(ge=1)
    count: int = Field(ge=1, le=MAX_SHARDS)

    @model_validator(mode="after")
    def _index_in_range(self) -> ShardSpec:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K must be between 1 and N")
        return self

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``"2/4"`` as a spec.

        Raises:
            ValueError: not ``K/N`` with 1 <= K <= N.
        """
        found = _SPEC.match(text)
        if not found:
            raise ValueError(f"{text!r} is not K/N (for example 2/4)")
        return cls(index=int(found.group(1)), count=int(found.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def plan_id(cases: Sequence[tuple[CaseKey, int]], fingerprints: Sequence[str]) -> str:
    """``sha256:<hex>`` of a plan: its cases with their weights, in order, and the
    fingerprints of what they are evaluated under (eval config and eval set hashes, runs).
    Two shard jobs agree on it exactly when they split the same plan."""
    data = json.dumps([[list(k), w] for k, w in cases] + [list(fingerprints)])
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def assign_shards(weights: Sequence[int], count: int,
                  pinned: Sequence[int | None] | None = None) -> list[int]:
    """The shard (1..``count``) of each case, by the rule in the module docstring;
    ``weights`` are the cases' work in plan order. ``pinned`` gives some cases their shard
    (a suite's ``shard`` in adk-eval.yaml: the matrix job ``init`` grouped its agent in,
    whose dependencies that job installs); their work counts in their shard's load before
    the others are placed."""
    fixed = list(pinned) if pinned is not None else [None] * len(weights)
    loads = [0] * count
    shard = [0] * len(weights)
    for position, where in enumerate(fixed):
        if where is not None:
            loads[where - 1] += weights[position]
            shard[position] = where
    free = [i for i, where in enumerate(fixed) if where is None]
    for position in sorted(free, key=lambda i: (-weights[i], i)):
        target = min(range(count), key=lambda s: (loads[s], s))
        loads[target] += weights[position]
        shard[position] = target + 1
    return shard


def _check_parts(parts: Sequence[tuple[str, RunResults]]) -> list[tuple[str, ShardInfo]]:
    """The parts' shard info, once every refusal of the module docstring is ruled out.

    Raises:
        MergeError: see the module docstring.
    """
    if not parts:
        raise MergeError("no results files to merge")
    infos = []
    for name, results in parts:
        if results.shard is None:
            raise MergeError(f"{name} is not a shard's results (written by run --shard K/N)")
        infos.append((name, results.shard))
    first_name, first = infos[0]
    for name, info in infos[1:]:
        if (info.plan_id, info.count) != (first.plan_id, first.count):
            raise MergeError(
                f"{name} is shard {info.index}/{info.count} of plan {info.plan_id[:19]}, "
                f"{first_name} is shard {first.index}/{first.count} of plan "
                f"{first.plan_id[:19]}: parts of different runs (settings or eval sets) "
                "cannot be merged"
            )
    _same_commit(parts)
    seen: dict[int, str] = {}
    for name, info in infos:
        if info.index in seen:
            twice = f"{name} was named twice" if seen[info.index] == name else \
                f"{seen[info.index]} and {name}"
            raise MergeError(f"shard {info.index}/{info.count} given twice: {twice}")
        seen[info.index] = name
    missing = [i for i in range(1, first.count + 1) if i not in seen]
    if missing:
        shown = ", ".join(f"{i}/{first.count}" for i in missing)
        raise MergeError(f"shard {shown} missing (given: {', '.join(sorted(seen.values()))})")
    return infos


def _same_commit(parts: Sequence[tuple[str, RunResults]]) -> None:
    """Refuses parts recorded at different commits (``metadata.git_sha``, the head sha):
    the plan's id hashes the eval cases and what they are evaluated under, not the agent's
    code, so parts of two commits can share a plan and would merge into results of neither.

    Raises:
        MergeError: naming both parts and their commits.
    """
    first_name, first = parts[0]
    for name, results in parts[1:]:
        if results.metadata.git_sha != first.metadata.git_sha:
            raise MergeError(
                f"{name} was recorded at commit {results.metadata.git_sha or 'unknown'}, "
                f"{first_name} at commit {first.metadata.git_sha or 'unknown'}: parts of "
                "different commits cannot be merged; run every shard on the same commit"
            )


def _owners(infos: list[tuple[str, ShardInfo]]) -> dict[CaseKey, str]:
    """Which part evaluated each case of the plan.

    Raises:
        MergeError: a case in two parts, or in none.
    """
    owner: dict[CaseKey, str] = {}
    for name, info in infos:
        for key in info.cases:  # tuples: ShardInfo validates each as a CaseKey
            if key in owner:
                raise MergeError(f"eval case {'/'.join(key)} is in {owner[key]} and in {name}")
            owner[key] = name
    absent = [k for k in infos[0][1].plan if k not in owner]
    if absent:
        raise MergeError(f"eval case {'/'.join(absent[0])} of the plan is in no part")
    return owner


T = TypeVar("T")


def _unique(items: Sequence[T]) -> list[T]:
    out: list[T] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _merge_suite(name: str, parts: list[SuiteRecord], plan: list[CaseKey]) -> SuiteRecord:
    """One suite of the merged results: the first part's record with every part's cases
    in the plan's order, errors, warnings and agent details once, metric errors
    recomputed."""
    merged = parts[0].model_copy(deep=True)
    cases = {
        (s.eval_set_id, c.eval_id): c
        for part in parts
        for s in part.eval_sets
        for c in s.eval_cases
    }
    for eval_set in merged.eval_sets:
        eval_set.eval_cases = [
            cases[(eval_set_id, eval_id)].model_copy(deep=True)
            for suite, eval_set_id, eval_id in plan
            if suite == name
            and eval_set_id == eval_set.eval_set_id
            and (eval_set_id, eval_id) in cases
        ]
    merged.errors = _unique(
        recomputed_metric_errors(merged, [e for p in parts for e in p.errors]))
    merged.warnings = _unique([w for p in parts for w in p.warnings])
    merged.agent_details = {k: v for p in parts for k, v in p.agent_details.items()}
    _merge_directions(merged, parts)
    return merged


def _merge_directions(merged: SuiteRecord, parts: list[SuiteRecord]) -> None:
    """A metric that some parts inferred lower-is-better and others did not gets the
    verdict of all runs together (results.records.lower_is_better_votes)."""
    seen: dict[str, set[bool]] = {}
    for record in parts:
        for eval_set in record.eval_sets:
            for case in eval_set.eval_cases:
                for metric in (m for r in case.runs for m in r.metrics):
                    seen.setdefault(metric.metric_name, set()).add(metric.higher_is_better)
    disputed = {name for name, values in seen.items() if len(values) > 1}
    if not disputed:
        return
    for eval_set in merged.eval_sets:
        for case in eval_set.eval_cases:
            for metric in (m for r in case.runs for m in r.metrics):
                if metric.metric_name in disputed:
                    metric.higher_is_better = True
    votes = lower_is_better_votes(merged, disputed)
    mark_lower_is_better(merged, {n for n, v in votes.items() if v > 0})


def _sum_calls(counts: Sequence[ModelCallCounts | None]) -> ModelCallCounts | None:
    """The model calls of all parts together (None when no part counted any)."""
    given = [c for c in counts if c is not None]
    if not given:
        return None
    total = ModelCallCounts()
    for count in given:
        total.calls += count.calls
        total.retried_calls += count.retried_calls
        total.retries += count.retries
        total.failed_calls += count.failed_calls
        total.waited_s = round(total.waited_s + count.waited_s, 3)
        for cause, n in count.retry_causes.items():
            total.retry_causes[cause] = total.retry_causes.get(cause, 0) + n
        for cause, n in count.failure_causes.items():
            total.failure_causes[cause] = total.failure_causes.get(cause, 0) + n
    return total


def merge_parts(parts: Sequence[tuple[str, RunResults]]) -> RunResults:
    """The parts of a sharded run as one results file (module docstring); ``parts`` are
    (file name for messages, results).

    Raises:
        MergeError: the parts do not make exactly one whole plan (names them).
    """
    infos = _check_parts(parts)
    _owners(infos)
    plan: list[CaseKey] = [tuple(k) for k in infos[0][1].plan]  # type: ignore[misc]
    first = parts[0][1]
    names = _unique([s.name for _, r in parts for s in r.suites])
    suites = []
    for name in names:
        records = [s for _, r in parts for s in r.suites if s.name == name]
        # A suite taken from the baseline (--changed-only) is in every part as a whole.
        reused = records[0].reused_from is not None
        suites.append(records[0].model_copy(deep=True) if reused
                      else _merge_suite(name, records, plan))
    metadata = first.metadata.model_copy()
    starts = [r.metadata.started_at for _, r in parts if r.metadata.started_at]
    ends = [r.metadata.finished_at for _, r in parts if r.metadata.finished_at]
    durations = [r.metadata.duration_seconds for _, r in parts if r.metadata.duration_seconds]
    metadata = RunMetadata(
        **{
            **metadata.model_dump(),
            "started_at": min(starts, default=None),
            "finished_at": max(ends, default=None),
            "duration_seconds": max(durations, default=None),
            "model_calls": _sum_calls([r.metadata.model_calls for _, r in parts]),
        }
    )
    return RunResults(
        metadata=metadata,
        suites=suites,
        errors=_unique([e for _, r in parts for e in r.errors]),
        warnings=_unique([w for _, r in parts for w in r.warnings]),
    )


__all__ = [
    "MAX_SHARDS",
    "CaseKey",
    "MergeError",
    "ShardInfo",
    "ShardSpec",
    "assign_shards",
    "merge_parts",
    "plan_id",
]

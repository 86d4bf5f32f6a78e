"""Which suites share a job of the matrix workflow ``init`` writes (docs/scaling.md,
"Many agents, many jobs"): a repository with more agents than one job should evaluate, or
with agents whose own dependencies cannot live together, is evaluated by one job per
group of agents, each installing only its agents' dependencies, and merged into one
comment and one recorded artifact (``run --shard K/N``, ``merge``).

The rules, in suite order: at most :data:`SUITES_PER_JOB` suites in a group; two suites of
one dependency conflict never in one group; a suite whose dependencies replace the job's
google-adk in a group of its own; as few groups as that allows, each suite going to the
smallest group it may join (the lowest on a tie), so groups stay even.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from adk_eval_action.project.dependencies import ADK, DependencyConflict

__all__ = ["SUITES_PER_JOB", "job_groups"]

#: Suites one job of the matrix evaluates at most: forty agents make four jobs, each
#: within a job's time limit at the usual 1-7 eval cases per eval set.
SUITES_PER_JOB = 10


def _apart(conflicts: Iterable[DependencyConflict]) -> tuple[list[set[str]], set[str]]:
    """The sets of suites that may not share a group, and the suites that need one of
    their own (a google-adk of their own)."""
    apart: list[set[str]] = []
    alone: set[str] = set()
    for conflict in conflicts:
        if conflict.apart:
            apart += [set(pair) for pair in conflict.apart]
        elif conflict.package == ADK:
            alone |= set(conflict.suites)
    return apart, alone


def job_groups(
    suites: Sequence[str], conflicts: Iterable[DependencyConflict] = (),
    per_job: int = SUITES_PER_JOB,
) -> list[list[str]]:
    """The suites (names, in order) in groups by the module's rules; one group when they
    all fit in one job and nothing keeps them apart."""
    apart, alone = _apart(conflicts)
    groups: list[list[str]] = [[name] for name in suites if name in alone]
    shared = [name for name in suites if name not in alone]
    groups += [[] for _ in range(max(1, math.ceil(len(shared) / per_job)))]
    first_shared = len(groups) - max(1, math.ceil(len(shared) / per_job))
    for name in shared:
        fits = [g for g in groups[first_shared:] if len(g) < per_job
                and not any(name in s and set(g) & (s - {name}) for s in apart)]
        if not fits:
            groups.append([])
            fits = [groups[-1]]
        min(fits, key=len).append(name)
    return [g for g in groups if g]

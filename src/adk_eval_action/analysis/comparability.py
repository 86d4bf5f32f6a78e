"""Whether the baseline and the head were measured the same way: what differs between the
sides besides the agent (google-adk's version, a suite's eval config, judge models,
``num_runs``, an eval set's content). A difference does not stop the comparison; it is
said beside it (``Comparison.comparability``), so a reader weighs the deltas knowing it.
"""

from __future__ import annotations

from adk_eval_action.results.model import RunResults

__all__ = ["comparability"]


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
    base_suites = {s.name: s for s in baseline.suites}
    for suite in head.suites:
        other = base_suites.get(suite.name)
        if other is None or not other.eval_sets:  # no baseline: suites_without_baseline
            continue
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

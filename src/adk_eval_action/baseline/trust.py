"""Whether a baseline can be trusted, for the comment: its commit (linked), the run that
recorded it, its age, how many first-parent commits it is behind the merge-base, and what
a reader should doubt (docs/baselines.md, "Baselines you can trust"):

* a baseline older than ``baseline_max_age`` days (a model behind the agent may have moved
  since it was recorded: its scores are another day's);
* a baseline recorded at an ancestor of the merge-base (the merge-base recorded nothing)
  when the commits between them changed a suite's inputs: its agent folder, an eval set or
  its eval config (``GET /compare`` names the files; the head's suites name their paths).
"""

from __future__ import annotations

import datetime as dt

from adk_eval_action.analysis.trend_models import BaselineTrust
from adk_eval_action.baseline.models import ResolvedBaseline
from adk_eval_action.results.history_file_io import recorded_time
from adk_eval_action.results.model import RunResults, SuiteRecord

#: Files named at most in a flag.
SHOWN_FILES = 3


def _age_days(recorded_at: str | None, now: dt.datetime) -> float | None:
    then = recorded_time(recorded_at)
    if then is None:
        return None
    return max(0.0, (now - then).total_seconds() / 86400)


def _inputs(suite: SuiteRecord) -> list[str]:
    """The repository paths a suite's scores depend on: its agent folder (a prefix), its
    eval set files and eval config file."""
    paths = [f"{suite.agent.rstrip('/')}/"] if suite.agent else []
    paths += [e.file for e in suite.eval_sets if e.file]
    return paths + ([suite.eval_config_file] if suite.eval_config_file else [])


def changed_inputs(changed: list[str], head: RunResults) -> list[str]:
    """The files of ``changed`` that are inputs of one of ``head``'s suites."""
    inputs = [p for s in head.suites for p in _inputs(s)]
    return [f for f in changed
            if any(f == p or (p.endswith("/") and f.startswith(p)) for p in inputs)]


def baseline_trust(
    resolved: ResolvedBaseline, head: RunResults, max_age_days: float,
    now: dt.datetime | None = None,
) -> BaselineTrust | None:
    """The :class:`BaselineTrust` of ``resolved`` for ``head`` (module docstring); None
    without a baseline. ``max_age_days`` 0 flags no age."""
    if resolved.results is None:
        return None
    now = now or dt.datetime.now(dt.timezone.utc)
    age = _age_days(resolved.recorded_at, now)
    flags = []
    if max_age_days and age is not None and age > max_age_days:
        flags.append(f"the baseline is {age:.0f} days old, older than baseline_max_age "
                     f"({max_age_days:g} days): scores recorded then may not be today's")
    if resolved.behind:
        flags += _inputs_flag(resolved, head)
    return BaselineTrust(
        source=resolved.source, label=resolved.label, note=resolved.extras_note(),
        commit=resolved.commit,
        commit_url=resolved.commit_url, run_url=resolved.run_url,
        recorded_at=resolved.recorded_at, age_days=age, behind=resolved.behind,
        merge_base=resolved.merge_base, base_ref=resolved.base_ref, flags=flags,
    )


def _inputs_flag(resolved: ResolvedBaseline, head: RunResults) -> list[str]:
    """The flag of suite inputs changed between the baseline's commit and the merge-base
    (or that it is unknown whether they did)."""
    behind = f"{resolved.behind} commit(s) behind the merge-base"
    if resolved.changed_since is None:
        return [f"the baseline is {behind} and GitHub did not list the files changed since: "
                "the suite inputs may differ from the merge-base's"]
    changed = changed_inputs(resolved.changed_since, head)
    if not changed:
        return []
    more = f" and {len(changed) - SHOWN_FILES} more" if len(changed) > SHOWN_FILES else ""
    return [f"the suite inputs changed between the baseline ({behind}) and the merge-base: "
            + ", ".join(changed[:SHOWN_FILES]) + more]

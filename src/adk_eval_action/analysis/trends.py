"""What the default branch's history (:mod:`adk_eval_action.results.history_file`) says about a
pull request's comparison: each gated metric's trend, the eval cases known to be flaky, and
which recorded runs may be pooled into the baseline. Pure functions of the history and the
comparison.

**Unchanged inputs.** A suite's recorded runs count as repeats of one another only while
nothing its scores depend on changed: the same suite inputs hash (agent files, eval sets,
eval config), the same google-adk version and the same judge models. The *window* of a
suite is the newest recorded runs back to the first change of any of these.

**Known flaky.** An eval case is known flaky when, in its suite's window of at least
:data:`MIN_FLAKY_RUNS` recorded runs, it failed in some and passed in others (a recorded
run fails a case when one of its runs failed, as ``adk eval`` decides), or its runs within
the recorded runs disagreed. "failed 4 of the last 8 recorded runs on main, with unchanged
inputs" is then what a failing or regressed case of the pull request says.

**Pooling** (:func:`pooled_runs`): the recorded runs of the window of the baseline's own
recorded run, other than that run, up to ``pool_runs`` of the newest, add their runs of
each eval case and metric to the baseline's (:mod:`adk_eval_action.analysis.pooling`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from adk_eval_action.analysis.comparison import Comparison
from adk_eval_action.analysis.pooling import PoolKey
from adk_eval_action.analysis.trend_models import (
    HistoryFacts,
    KnownFlaky,
    MetricTrend,
    PoolNote,
    TrendPoint,
)
from adk_eval_action.results.history_file import History, RecordedRun, RecordedSuite
from adk_eval_action.results.model import CaseStatus, RunResults

#: Recorded runs with unchanged inputs a case needs before it can be called known flaky.
MIN_FLAKY_RUNS = 3
#: Recorded runs a trend shows at most (the newest), the pull request's head after them.
MAX_TREND_POINTS = 50



def branch_of(history: History) -> str | None:
    """The branch the history was recorded on (its own, else its newest run's ref)."""
    if history.branch:
        return history.branch
    refs = [r.ref for r in reversed(history.runs) if r.ref and r.ref != "HEAD"]
    return refs[0] if refs else None


def _suite_key(run: RecordedRun, suite: RecordedSuite) -> tuple[str, str | None, str] | None:
    """What must not change for two recorded runs of a suite to be repeats (module
    docstring); None when the inputs hash is unknown."""
    if suite.inputs_hash is None:
        return None
    return suite.inputs_hash, run.adk_version, repr(sorted(suite.judge_models.items()))


def window(runs: list[RecordedRun], name: str, newest: int | None = None,
           ) -> list[tuple[RecordedRun, RecordedSuite]]:
    """Suite ``name``'s recorded runs with unchanged inputs, newest first: from
    ``runs[newest]`` (default: the newest run holding the suite) back to the first change
    (module docstring). Empty when that run's inputs hash is unknown."""
    indexes = [i for i, r in enumerate(runs) if r.suite(name) is not None]
    if newest is not None:
        indexes = [i for i in indexes if i <= newest]
    if not indexes:
        return []
    first = runs[indexes[-1]]
    key = _suite_key(first, first.suite(name))  # type: ignore[arg-type]
    out: list[tuple[RecordedRun, RecordedSuite]] = []
    for i in reversed(indexes):
        suite = runs[i].suite(name)
        if key is None or suite is None or _suite_key(runs[i], suite) != key:
            break
        out.append((runs[i], suite))
    return out


def known_flaky(history: History, suites: Iterable[str]) -> list[KnownFlaky]:
    """The known flaky eval cases of ``suites`` (module docstring), in suite and case
    order."""
    branch = branch_of(history)
    out: list[KnownFlaky] = []
    for name in suites:
        counts: dict[tuple[str, str], list[int]] = {}
        previous: dict[tuple[str, str], CaseStatus] = {}
        for _, suite in reversed(window(history.runs, name)):  # oldest first
            for case in suite.cases:
                status = case.status
                if status not in (CaseStatus.PASSED, CaseStatus.FAILED):
                    continue
                key = (case.eval_set_id, case.eval_id)
                c = counts.setdefault(key, [0, 0, 0, 0, 0])  # recorded, failed, runs, fr, flips
                c[0] += 1
                c[1] += status == CaseStatus.FAILED
                c[2] += sum(letter in "pf" for letter in case.runs)
                c[3] += case.runs.count("f")
                c[4] += key in previous and previous[key] != status
                previous[key] = status
        for (set_id, eval_id), (recorded, failed, runs, failed_runs, flips) in counts.items():
            mixed = 0 < failed < recorded or 0 < failed_runs < runs
            if recorded >= MIN_FLAKY_RUNS and mixed:
                out.append(KnownFlaky(
                    suite=name, eval_set_id=set_id, eval_id=eval_id, recorded=recorded,
                    failed=failed, runs=runs, failed_runs=failed_runs, flips=flips,
                    branch=branch))
    return out


def trends(history: History, comparison: Comparison) -> list[MetricTrend]:
    """Each gated metric of the head's: its mean in the newest :data:`MAX_TREND_POINTS`
    recorded runs that measured it, oldest first, then the head's mean (the last point)."""
    recent = history.runs[-MAX_TREND_POINTS:]
    out = []
    for row in comparison.metrics:
        head = row.head
        if head is None or head.informational:
            continue
        points = []
        for run in recent:
            suite = run.suite(row.suite)
            metric = next((m for m in suite.metrics if m.name == row.metric_name),
                          None) if suite is not None else None
            if metric is not None and metric.mean is not None:
                label = (run.commit or "")[:7] or (run.recorded_at or "")[:10] or "run"
                points.append(TrendPoint(label=label, value=metric.mean, commit=run.commit))
        points.append(TrendPoint(label="head", value=head.mean, head=True,
                                 commit=comparison.head_metadata.git_sha))
        out.append(MetricTrend(
            suite=row.suite, metric_name=row.metric_name, higher_is_better=head.higher_is_better,
            min_value=head.min_value, max_value=head.max_value, points=points))
    return out


def baseline_run_index(history: History, baseline: RunResults) -> int | None:
    """The index of the baseline's own recorded run in ``history`` (the newest run of its
    commit), or None when the history does not hold it."""
    sha = baseline.metadata.git_sha
    if not sha:
        return None
    found = [i for i, r in enumerate(history.runs) if r.commit == sha]
    return found[-1] if found else None


def pooled_runs(
    history: History, baseline: RunResults, pool_runs: int, skip: Iterable[str] = (),
) -> tuple[dict[PoolKey, list[float]], PoolNote]:
    """The scores earlier recorded runs add to the baseline, by (suite, eval set id, eval
    id, metric), and what was pooled (module docstring). Suites in ``skip`` (re-scored
    under the head's eval config, so their recorded scores are another eval config's) are
    left out. Nothing when ``pool_runs`` is 0 or the history does not hold the baseline's
    own recorded run."""
    if pool_runs <= 0:
        return {}, PoolNote(reason="pool_runs is 0")
    index = baseline_run_index(history, baseline)
    if index is None:
        return {}, PoolNote(reason="the history holds no recorded run of the baseline's commit")
    extra: dict[PoolKey, list[float]] = {}
    note = PoolNote()
    used: dict[int, RecordedRun] = {}
    for suite in baseline.suites:
        if suite.name in set(skip):
            continue
        chosen = window(history.runs, suite.name, newest=index)[1:pool_runs + 1]
        for run, recorded in chosen:
            used[id(run)] = run
            note.case_runs += _add_scores(extra, recorded)
        if chosen:
            note.suites.append(suite.name)
    note.recorded_runs = len(used)
    note.commits = [(r.commit or "")[:12] for r in used.values()]
    if not used:
        note.reason = "no earlier recorded run with the baseline's inputs, google-adk and judges"
    return extra, note


def _add_scores(extra: dict[PoolKey, list[float]], suite: RecordedSuite) -> int:
    """Adds ``suite``'s run scores to ``extra``; the case runs added."""
    added = 0
    names = [m.name for m in suite.metrics]
    for case in suite.cases:
        for name, scores in zip(names, case.scores, strict=False):
            kept = [s for s in scores if s is not None]
            if kept:
                extra.setdefault((suite.name, case.eval_set_id, case.eval_id, name),
                                 []).extend(kept)
        added += len(case.runs)
    return added


def history_facts(
    history: History | None, comparison: Comparison, *, note: str | None = None,
    pooled: PoolNote | None = None,
) -> HistoryFacts | None:
    """The :class:`HistoryFacts` of ``comparison`` (None without a history and a note)."""
    if history is None:
        return HistoryFacts(note=note) if note else None
    suites = list(dict.fromkeys(m.suite for m in comparison.metrics))
    return HistoryFacts(
        recorded_runs=len(history.runs), branch=branch_of(history), note=note,
        trends=trends(history, comparison), flaky=known_flaky(history, suites), pooled=pooled,
    )


def counts_by_key(flaky: Iterable[KnownFlaky]) -> Mapping[tuple[str, str, str], KnownFlaky]:
    """Known flaky cases by (suite, eval set id, eval id)."""
    return {f.key: f for f in flaky}

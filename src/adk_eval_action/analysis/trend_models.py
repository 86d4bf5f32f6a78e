"""The typed values the default branch's history adds to a comparison
(:mod:`adk_eval_action.analysis.trends` computes them): trends, known flaky eval cases,
what was pooled into the baseline, and what is known of the baseline itself."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TrendPoint(BaseModel):
    """One point of a trend: a recorded run (``label`` its short commit) or the pull
    request's head (``head``); ``value`` the metric's mean over every case run (None: not
    measured then)."""

    label: str
    value: float | None = None
    commit: str | None = None
    head: bool = False


class MetricTrend(BaseModel):
    """A metric's means over the recorded runs, oldest first, then the head's."""

    suite: str
    metric_name: str
    higher_is_better: bool = True
    min_value: float | None = None
    max_value: float | None = None
    points: list[TrendPoint] = Field(default_factory=list)


class KnownFlaky(BaseModel):
    """An eval case that flipped over recorded runs with unchanged inputs: in ``recorded``
    recorded runs it failed in ``failed`` (``failed_runs`` of ``runs`` runs), its status
    changing ``flips`` times from one recorded run to the next."""

    suite: str
    eval_set_id: str
    eval_id: str
    recorded: int
    failed: int
    runs: int
    failed_runs: int
    flips: int
    branch: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """(suite, eval set id, eval id)."""
        return (self.suite, self.eval_set_id, self.eval_id)

    @property
    def flip_rate(self) -> float:
        """Status changes per pair of consecutive recorded runs."""
        return self.flips / (self.recorded - 1) if self.recorded > 1 else 0.0

    @property
    def text(self) -> str:
        """``failed 4 of the last 8 recorded runs on main, with unchanged inputs``."""
        where = f" on {self.branch}" if self.branch else ""
        runs = (f" ({self.failed_runs} of {self.runs} runs)" if self.runs != self.recorded
                else "")
        return (f"failed {self.failed} of the last {self.recorded} recorded runs{where}"
                f"{runs}, with unchanged inputs")


class PoolNote(BaseModel):
    """What pooling added to the baseline: ``recorded_runs`` earlier recorded runs (their
    ``commits``), ``case_runs`` extra case runs in all, for ``suites``; or why nothing
    (``reason``)."""

    recorded_runs: int = 0
    case_runs: int = 0
    commits: list[str] = Field(default_factory=list)
    suites: list[str] = Field(default_factory=list)
    reason: str | None = None


class HistoryFacts(BaseModel):
    """What the comparison knows from the history: how many recorded runs it holds and on
    which branch, where it came from (``note``), the gated metrics' trends, the known
    flaky eval cases of the head's suites, and what was pooled."""

    recorded_runs: int = 0
    branch: str | None = None
    note: str | None = None
    trends: list[MetricTrend] = Field(default_factory=list)
    flaky: list[KnownFlaky] = Field(default_factory=list)
    pooled: PoolNote | None = None

    def flaky_case(self, key: tuple[str, str, str]) -> KnownFlaky | None:
        """The known flaky record of eval case ``key``, or None."""
        return next((f for f in self.flaky if f.key == key), None)


class BaselineTrust(BaseModel):
    """What makes a baseline trustworthy, for the comment: its ``commit`` (and a link to
    it), the run that recorded it, when (``recorded_at``, ISO 8601; ``age_days``), how many
    first-parent commits it is ``behind`` the ``merge_base`` of ``base_ref``, and
    ``flags``: what a reader should doubt (older than ``baseline_max_age``, suite inputs
    changed between it and the merge-base)."""

    source: str = "none"
    label: str = ""
    #: What else the baseline's note says (its label, an incomplete run, re-scored or
    #: reused suites), shown before the trust line.
    note: str = ""
    commit: str | None = None
    commit_url: str | None = None
    run_url: str | None = None
    recorded_at: str | None = None
    age_days: float | None = None
    behind: int | None = None
    merge_base: str | None = None
    base_ref: str | None = None
    flags: list[str] = Field(default_factory=list)

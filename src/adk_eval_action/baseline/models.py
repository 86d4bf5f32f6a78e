"""What the baseline stage takes and gives: the request (from the run's settings), the GitHub
context, the resolved baseline with its one-line note, and the errors of its strategies.

The strategies are in :mod:`.artifact`, :mod:`.rerun` and :mod:`.resolve` (which also holds
the overview of the ``baseline`` setting).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.report.format import cut
from adk_eval_action.report.headline import incomplete_cause
from adk_eval_action.results.completeness import incomplete_suites
from adk_eval_action.results.history_file import History
from adk_eval_action.results.history_file_io import recorded_time
from adk_eval_action.results.model import SCHEMA_VERSION, RunResults
from adk_eval_action.settings.baseline_spec import BaselineSpec
from adk_eval_action.settings.run_settings import DEFAULT_ARTIFACT_NAME

BaselineSource = Literal["file", "artifact", "rerun", "none"]


class BaselineUnavailable(AdkEvalActionError):
    """A strategy found or produced no baseline; ``str()`` says why, for the comment."""


class NoArtifact(BaselineUnavailable):
    """No usable artifact for the merge-base or its first-parent ancestors."""


class ArtifactDownloadError(BaselineUnavailable):
    """Listing or downloading an artifact failed (permissions, expiry, network)."""


class RerunError(BaselineUnavailable):
    """The base commit could not be found, checked out or evaluated."""


class BaselineUnreadable(BaselineUnavailable):
    """The baseline exists but cannot be used: corrupt zip, wrong schema version, no suite
    in common with the head."""


class BaselineContext(BaseModel):
    """What the GitHub run tells the baseline search (see the module docstring).

    ``api_url``/``server_url`` come from ``GITHUB_API_URL``/``GITHUB_SERVER_URL`` so GitHub
    Enterprise Server works (GitHub's "Variables reference",
    https://docs.github.com/en/actions/reference/workflows-and-actions/variables). The token is a
    SecretStr so no repr shows it.
    """

    model_config = ConfigDict(frozen=True)

    repository: str = ""
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    token: SecretStr = SecretStr("")
    head_sha: str | None = None
    base_ref: str | None = None
    event_name: str = ""
    #: The branch a push ran on (``GITHUB_REF`` without ``refs/heads/``), None elsewhere:
    #: the branch the default branch's history is recorded on.
    branch: str | None = None

    @property
    def usable(self) -> bool:
        """True when the REST API can be asked (a repository and a token)."""
        return bool(self.repository and self.token.get_secret_value())


class BaselineRequest(BaseModel):
    """What the run asks of the baseline stage (built by the pipeline from its settings).

    ``spec`` is the ``baseline`` setting, parsed (:class:`BaselineSpec`); ``paths``, ``config``,
    ``num_runs`` and ``parallelism`` are the head run's, which a re-run repeats on the base
    commit. ``workdir`` is the head run's working directory: relative paths (a baseline
    file, ``paths``, ``config``) are relative to it. Built once per run
    (``baseline.request.baseline_request``); what a re-run may spend is known only after
    the head was evaluated, so it is passed beside it (:class:`RerunBudget`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: BaselineSpec = BaselineSpec()
    record: bool = False
    base_ref: str | None = None
    artifact_name: str = DEFAULT_ARTIFACT_NAME
    baseline_rerun: bool = False
    github: BaselineContext | None = None
    workdir: Path = Path(".")
    paths: list[Path] = Field(default_factory=lambda: [Path(".")])
    config: Path | None = None
    num_runs: int | None = None
    parallelism: int | None = None


class RerunBudget(BaseModel):
    """What is left of the run's budget once the head was evaluated (None: no limit): a
    re-run of the merge-base may spend at most that, and none is made when a limit is
    spent (``baseline.rerun``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_model_calls: int | None = None
    max_tokens: int | None = None
    max_usd: float | None = None

    def spent(self) -> str | None:
        """The name of a limit nothing is left of, or None."""
        for name in ("max_model_calls", "max_tokens", "max_usd"):
            left = getattr(self, name)
            if left is not None and left <= 0:
                return name
        return None


class ResolvedBaseline(BaseModel):
    """The baseline a run compares with, or why there is none.

    ``recorded_at`` is ISO 8601 UTC; ``rescored`` names the suites re-scored under the
    head's eval config. Frozen: a step that learns more (re-scoring, suites reused from
    it) returns a new value (:meth:`with_extra`, ``model_copy``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    results: RunResults | None = None
    source: BaselineSource = "none"
    label: str = ""
    commit: str | None = None
    relation: str | None = None
    run_url: str | None = None
    recorded_at: str | None = None
    reason: str | None = None
    rescored: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    #: The merge-base the baseline stands for, how many first-parent commits before it the
    #: baseline's commit is, and the base branch (an artifact baseline).
    merge_base: str | None = None
    behind: int | None = None
    base_ref: str | None = None
    commit_url: str | None = None
    #: The files changed between the baseline's commit and the merge-base ([]: none, the
    #: same commit; None: unknown).
    changed_since: list[str] | None = None
    #: The default branch's history the artifact held, or why it is not used.
    history: History | None = None
    history_note: str | None = None

    def with_extra(self, line: str) -> ResolvedBaseline:
        """This baseline with one more clause for its note (``"re-scoring failed, ..."``)."""
        return self.model_copy(update={"extra": (*self.extra, line)})

    def note(self, now: dt.datetime | None = None) -> str:
        """One line for the comment: source, commit, run link and age; or why none.

        Kept short: the comment template cuts the note at 300 characters.
        """
        if self.results is None:
            return self.reason or "none"
        parts = [self.label, incomplete_note(self.results)]
        if self.commit:
            parts.append(f"commit {self.commit[:12]}" + (f" ({self.relation})" if self.relation
                                                         else ""))
        if self.run_url:
            parts.append(f"run {self.run_url}")
        age = format_age(self.recorded_at, now)
        if age:
            parts.append(f"recorded {age} ago")
        return ", ".join(p for p in parts + self._extras() if p)

    def extras_note(self) -> str:
        """The note without the commit, run and age (the comment's trust line shows those
        linked): the label, an incomplete baseline run, and what was reused or
        re-scored."""
        parts = [self.label, incomplete_note(self.results)] if self.results else []
        return ", ".join(p for p in parts + self._extras() if p)

    def _extras(self) -> list[str]:
        parts = list(self.extra)
        if self.rescored:
            # A re-run baseline did run the base agent; the re-score only skipped a third run.
            how = "" if self.source == "rerun" else ", no agent run"
            parts.append(
                "re-scored under the head's eval config (" + ", ".join(self.rescored) + ")" + how
            )
        return parts


def incomplete_note(results: RunResults) -> str:
    """What the note says of a baseline whose own run was incomplete
    (:meth:`RunResults.is_complete`): for a run with a complete suite, ``its run was
    incomplete for 1 of 3 suites (no baseline for them)`` (the comment names each:
    :mod:`adk_eval_action.analysis.suite_baselines`); for one without, ``the baseline run
    itself was incomplete (configuration error: nothing was evaluated)``, naming the cause
    as an incomplete run's headline does
    (:func:`adk_eval_action.report.headline.incomplete_cause`) and its first error; "" for a
    complete one."""
    if results.is_complete():
        return ""
    incomplete = incomplete_suites(results)
    if len(incomplete) < len(results.suites):
        return (f"its run was incomplete for {len(incomplete)} of {len(results.suites)} "
                "suites (no baseline for them)")
    errors = results.incomplete_errors()
    why = incomplete_cause(errors) or "marked incomplete"
    what = ("nothing was evaluated" if not results.suites
            else cut(errors[0].message, 120) if errors else "")
    return f"the baseline run itself was incomplete ({why}{': ' + what if what else ''})"


def format_age(recorded_at: str | None, now: dt.datetime | None = None) -> str | None:
    """``"3 days"``, ``"5 h"`` or ``"less than an hour"`` since an ISO 8601 time; None if
    unknown."""
    then = recorded_time(recorded_at)
    if then is None:
        return None
    seconds = ((now or dt.datetime.now(dt.timezone.utc)) - then).total_seconds()
    if seconds < 0:
        return None
    if seconds < 3600:
        # Coarse on purpose: a comment rendered again a minute later reads the same.
        return "less than an hour"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def check_usable(baseline: RunResults, head: RunResults) -> None:
    """Refuses a baseline that shares no suite with the head.

    Raises:
        BaselineUnreadable: neither side's suite names match (names both lists).
    """
    if baseline.schema_version != SCHEMA_VERSION:
        raise BaselineUnreadable(
            f"schema_version {baseline.schema_version} is not {SCHEMA_VERSION}"
        )
    base_names = {s.name for s in baseline.suites}
    head_names = {s.name for s in head.suites}
    if head_names and not base_names & head_names:
        raise BaselineUnreadable(
            "its suites (" + (", ".join(sorted(base_names)) or "none") + ") are not the head's ("
            + ", ".join(sorted(head_names)) + ")"
        )

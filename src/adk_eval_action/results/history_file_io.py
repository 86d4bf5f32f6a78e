"""Reading and writing the default branch's history file (:mod:`.history_file`).

The history is input like any results file: it may come from an artifact, a cache or a
hand-edited file. It is read at most :data:`~.history.MAX_HISTORY_BYTES` and refused, with
a message that says why and what happens next, when it is not JSON or not a history, when
a newer version of this tool wrote it (``schema_version`` above
:data:`~.history.HISTORY_SCHEMA_VERSION`), or when it was recorded in another repository
than the one reading it. A refused history never costs the reading run anything: the run
goes on without it and a recording run starts a new history with its own run.

Each recorded run is then checked as a results file's runs are (docs/baselines.md, "The
default branch's history"), and what fails is left out, said in the log
(a warning naming the file, the commits and why) and kept on the history
(:attr:`~.history.History.left_out`, for the comment's history line):

* a run stamped more than a day in the future (a clock or a forgery; it would sort as the
  newest);
* a run recorded on another branch than the history's (its ``ref`` is not the history's
  ``branch``, else the newest run's ref): its failures are not the default branch's flaky
  record, its scores not the default branch's;
* a run repeated (the same commit, time and run link as a run before it): one recording
  counts once, not as independent runs;
* a suite of a run holding a score no run records: not finite, or outside its metric's
  value range (``min_value``..``max_value``, ``results.model.out_of_range``), as a run
  score or as a metric's mean; the run keeps its other suites (a run left with none is
  left out).
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import FileLimitError, read_bytes, write_atomic
from adk_eval_action.results.history_file import (
    HISTORY_SCHEMA_VERSION,
    MAX_HISTORY_BYTES,
    MAX_HISTORY_RUNS,
    History,
    RecordedRun,
    RecordedSuite,
    history_json,
)
from adk_eval_action.results.model import out_of_range

log = logging.getLogger(__name__)

#: How far in the future a recorded run's time may lie (clock skew between runners).
FUTURE_SLACK = dt.timedelta(days=1)


class HistoryUnusable(AdkEvalActionError):
    """A history file that cannot be used; ``str()`` says why (for the log and the
    comment), naming the file."""


class _Header(BaseModel):
    """What is read of a history before the rest: its version and repository."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int
    repository: str | None = None


def recorded_time(text: str | None) -> dt.datetime | None:
    """An ISO 8601 time as a results or history file records it (``Z`` allowed; no zone
    means UTC); None if absent or unreadable."""
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.timezone.utc)


def history_from_bytes(
    data: bytes, label: str, *, repository: str | None = None,
    now: dt.datetime | None = None, limit: int = MAX_HISTORY_BYTES,
) -> History:
    """The history in ``data`` (the bytes of ``label``, a file or an artifact member),
    checked as the module docstring says. ``repository`` is the one reading it (None:
    unknown, not checked).

    Raises:
        HistoryUnusable: too large, not JSON, not a history, from a newer version, or from
            another repository.
    """
    if len(data) > limit:
        raise HistoryUnusable(f"{label} is too large ({len(data):,} bytes; a history is at "
                              f"most {limit:,})")
    try:
        header = _Header.model_validate_json(data)
    except (ValidationError, ValueError, RecursionError) as e:
        raise HistoryUnusable(f"{label} is not a history file ({_first_problem(e)})") from e
    if header.schema_version > HISTORY_SCHEMA_VERSION:
        raise HistoryUnusable(
            f"{label} was written by a newer adk-eval-action (history schema_version "
            f"{header.schema_version}; this version reads {HISTORY_SCHEMA_VERSION}): "
            "upgrade the action to keep it")
    if header.schema_version < 1:
        raise HistoryUnusable(f"{label} has schema_version {header.schema_version}, not a "
                              f"history version (1 to {HISTORY_SCHEMA_VERSION})")
    if repository and header.repository and header.repository.lower() != repository.lower():
        raise HistoryUnusable(
            f"{label} was recorded in another repository ({header.repository}, not "
            f"{repository}): not used")
    try:
        history = History.model_validate_json(data)
    except (ValidationError, ValueError, RecursionError) as e:
        raise HistoryUnusable(f"{label} is malformed ({_first_problem(e)})") from e
    return checked_runs(history, label, now)


def _first_problem(error: Exception) -> str:
    """The first problem pydantic names (where and what), cut short; else the error's
    type."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        return f"{where}: {first['msg']}"[:200]
    return type(error).__name__


def checked_runs(history: History, label: str, now: dt.datetime | None = None) -> History:
    """``history`` (read from ``label``) without the recorded runs and suites the module
    docstring leaves out, at most :data:`MAX_HISTORY_RUNS` runs (the newest); each kind
    left out is a warning naming ``label`` and a line of the returned history's
    ``left_out``. ``now``: the time runs may not lie beyond (default: the clock)."""
    limit = (now or dt.datetime.now(dt.timezone.utc)) + FUTURE_SLACK
    branch = _branch(history)
    left: dict[str, list[RecordedRun]] = {}
    others: set[str] = set()
    seen: set[tuple[str | None, str | None, str | None] | str] = set()
    kept: list[RecordedRun] = []
    for run in history.runs:
        when = recorded_time(run.recorded_at)
        ref = _branch_name(run.ref)
        identity = _identity(run)
        if when is not None and when > limit:
            left.setdefault("recorded in the future", []).append(run)
        elif branch is not None and ref is not None and ref != branch:
            left.setdefault("of another branch", []).append(run)
            others.add(ref)
        elif identity in seen:
            left.setdefault("repeated", []).append(run)
        else:
            seen.add(identity)
            suites = [s for s in run.suites if _impossible(s) is None]
            if len(suites) < len(run.suites):
                left.setdefault("impossible", []).append(run)
                if not suites:
                    continue
                run = run.model_copy(update={"suites": suites})
            kept.append(run)
    checked = history.model_copy(update={"runs": kept[-MAX_HISTORY_RUNS:]})
    checked._left_out = [_said(kind, runs, label, branch, others)
                         for kind, runs in left.items()]
    return checked


def _branch_name(ref: str | None) -> str | None:
    """A recorded ref as a branch name (``refs/heads/`` dropped); None for none or a
    detached ``HEAD``."""
    if not ref or ref == "HEAD":
        return None
    return ref.removeprefix("refs/heads/")


def _branch(history: History) -> str | None:
    """The branch a history is of: its own ``branch``, else its newest run's ref."""
    if history.branch:
        return _branch_name(history.branch)
    refs = [_branch_name(r.ref) for r in reversed(history.runs)]
    return next((r for r in refs if r is not None), None)


def _identity(run: RecordedRun) -> tuple[str | None, str | None, str | None] | str:
    """What makes one recording one: its commit, time and run link; its whole JSON when
    it has none of them."""
    if run.commit or run.recorded_at or run.run_url:
        return run.commit, run.recorded_at, run.run_url
    return run.model_dump_json()


def _impossible(suite: RecordedSuite) -> str | None:
    """Why ``suite`` of a recorded run holds a score no run records (module docstring),
    or None."""
    for index, metric in enumerate(suite.metrics):
        scores: Iterable[float | None] = (
            s for case in suite.cases if index < len(case.scores)
            for s in case.scores[index])
        for score in [metric.mean, *scores]:
            if score is None:
                continue
            if not math.isfinite(score):
                return f"metric `{metric.name}`: non-finite score {score!r}"
            beyond = out_of_range(score, metric.min_value, metric.max_value)
            if beyond:
                return f"metric `{metric.name}`: {beyond}"
    return None


def _said(kind: str, runs: list[RecordedRun], label: str, branch: str | None,
          others: set[str]) -> str:
    """Logs what was left out of ``label`` (one warning per kind); returns it as a short
    line for the comment."""
    count = f"{len(runs)} recorded run{'s' if len(runs) != 1 else ''}"
    commits = ", ".join(dict.fromkeys((r.commit or "unknown")[:12] for r in runs[:5]))
    commits += "…" if len(runs) > 5 else ""
    if kind == "recorded in the future":
        short = f"{count} recorded in the future"
        why = "a time more than a day ahead of the clock"
    elif kind == "of another branch":
        names = ", ".join(sorted(others)[:3]) + ("…" if len(others) > 3 else "")
        short = f"{count} of another branch ({names})"
        why = f"not the history's branch {branch}: not its record"
    elif kind == "repeated":
        short = f"{count} repeated"
        why = "the same commit, time and run link as a run before: counted once"
    else:
        problems = [p for r in runs for s in r.suites if (p := _impossible(s))]
        short = f"{count} with impossible scores"
        why = (f"a suite's {problems[0]}" if problems else "impossible scores") + \
            ": such suites left out"
    log.warning("history: %s: %s left out (commits %s): %s", label, short, commits, why)
    return short


def load_history(path: Path, *, repository: str | None = None,
                 now: dt.datetime | None = None) -> History:
    """The history file at ``path`` (:func:`history_from_bytes`).

    Raises:
        HistoryUnusable: it cannot be read or used (names the file).
    """
    try:
        data = read_bytes(path, MAX_HISTORY_BYTES)
    except FileLimitError as e:  # names the file and the limit
        raise HistoryUnusable(f"{e} (a history is at most that large)") from e
    except OSError as e:
        raise HistoryUnusable(f"{path}: cannot be read ({e.strerror or e})") from e
    return history_from_bytes(data, str(path), repository=repository, now=now)


def save_history(history: History, path: Path) -> None:
    """Writes ``history`` to ``path`` whole or not at all (``files.write_atomic``).

    Raises:
        OSError: it cannot be written.
    """
    write_atomic(path, history_json(history))

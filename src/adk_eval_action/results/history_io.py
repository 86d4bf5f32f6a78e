"""Reading and writing the default branch's history file (:mod:`.history`).

The history is input like any results file: it may come from an artifact, a cache or a
hand-edited file. It is read at most :data:`~.history.MAX_HISTORY_BYTES` and refused, with
a message that says why and what happens next, when it is not JSON or not a history, when
a newer version of this tool wrote it (``schema_version`` above
:data:`~.history.HISTORY_SCHEMA_VERSION`), or when it was recorded in another repository
than the one reading it. Recorded runs stamped more than a day in the future are dropped
(a clock or a forgery; they would sort as the newest). A refused history never costs the
reading run anything: the run goes on without it and a recording run starts a new history
with its own run.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import FileLimitError, read_bytes, write_atomic
from adk_eval_action.results.history import (
    HISTORY_SCHEMA_VERSION,
    MAX_HISTORY_BYTES,
    MAX_HISTORY_RUNS,
    History,
    history_json,
)

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
    return _without_future_runs(history, label, now)


def _first_problem(error: Exception) -> str:
    """The first problem pydantic names (where and what), cut short; else the error's
    type."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        return f"{where}: {first['msg']}"[:200]
    return type(error).__name__


def _without_future_runs(history: History, label: str, now: dt.datetime | None) -> History:
    """``history`` without runs recorded after ``now`` + :data:`FUTURE_SLACK`, and at most
    :data:`MAX_HISTORY_RUNS` runs (the newest)."""
    limit = (now or dt.datetime.now(dt.timezone.utc)) + FUTURE_SLACK
    kept = []
    for run in history.runs:
        when = recorded_time(run.recorded_at)
        if when is not None and when > limit:
            log.warning("history: %s: a run recorded at %s (commit %s) lies in the future; "
                        "left out", label, run.recorded_at[:40] if run.recorded_at else "",
                        (run.commit or "unknown")[:12])
            continue
        kept.append(run)
    return history.model_copy(update={"runs": kept[-MAX_HISTORY_RUNS:]})


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

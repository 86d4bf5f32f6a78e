"""Reading and writing results files: ours (``schema_version`` 1, :mod:`.model`) and, through
a reader the caller passes, google-adk's eval_history files.

The eval_history reader lives in :mod:`adk_eval_action.adk.history` (it needs google-adk,
which this package must not import: ``compare`` and ``render`` never pay for it unless a
file is ADK's).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.results.model import SCHEMA_VERSION, RunResults

HistoryReader = Callable[[Path], RunResults]
"""Reads an ADK eval_history file or folder (``adk.history.read_eval_history``)."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for the duration (loading, compare, gate,
    render).

    Loading a results file makes millions of small acyclic objects, and the allocation
    bursts trigger full collections that re-scan every object made so far: loading one
    148 MB results file (10,000 cases x 8 metrics x 3 runs) took 16 s instead of 3 s, and
    compare, gate and render re-scanned the loaded results for 2-13 s more. Nothing made
    there forms a cycle worth collecting early, so pausing loses nothing; the previous
    state is restored on exit (nested uses are fine).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def save_results(results: RunResults, path: Path) -> None:
    """Writes ``results`` as indented JSON to ``path``, creating parent folders, with
    ``complete`` set (:meth:`RunResults.is_complete`; a file marked incomplete stays so)."""
    results.complete = results.is_complete()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(results.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")


def load_results(path: Path, history: HistoryReader | None = None) -> RunResults:
    """Reads a results file of ours, or ADK eval_history file(s) through ``history``, into
    :class:`RunResults`.

    ``path`` may be our ``results.json``, one ADK ``*.evalset_result.json`` file, or a folder
    holding such files (``history`` picks the newest file per app and eval set). Callers
    that accept ADK's files pass ``adk.history.read_eval_history`` (or call
    ``adk.history.load_any_results``); without it an ADK file is refused by name.

    Raises:
        ResultsFileError: unreadable JSON, unknown shape, or an unsupported schema_version.
    """
    with gc_paused():
        return _load_results(path, history)


_OURS = re.compile(rb'\s*\{\s*"schema_version"\s*:\s*%d\s*,' % SCHEMA_VERSION)
"""The start of a results file of this schema version, as :func:`save_results` writes it."""


def _adk_history(path: Path, history: HistoryReader | None) -> RunResults:
    if history is None:
        raise ResultsFileError(
            path, "an ADK eval_history file or folder is not accepted here; give a results.json"
        )
    return history(path)


def _load_results(path: Path, history: HistoryReader | None) -> RunResults:
    if path.is_dir():
        return _adk_history(path, history)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as e:
        raise ResultsFileError(path, "file not found") from e
    except OSError as e:
        raise ResultsFileError(path, f"not valid JSON: {e}") from e
    if _OURS.match(raw):
        # Our own file (save_results writes schema_version first): pydantic parses and
        # validates the bytes in one pass, ~40% faster than json.loads + model_validate and
        # without the intermediate dicts. Anything wrong falls through to the path below,
        # whose errors say what is wrong.
        try:
            return RunResults.model_validate_json(raw)
        except ValidationError:
            pass
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultsFileError(path, f"not valid JSON: {e}") from e
    # ADK before 1.x wrote the result JSON as a JSON string, so it may be encoded twice.
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise ResultsFileError(path, f"not valid JSON: {e}") from e
    if isinstance(data, dict) and "schema_version" in data:
        if data["schema_version"] != SCHEMA_VERSION:
            raise ResultsFileError(
                path,
                f"schema_version {data['schema_version']!r} is not supported by this version "
                f"(expects {SCHEMA_VERSION}); re-run the evaluation with this version",
            )
        try:
            return RunResults.model_validate(data)
        except ValidationError as e:
            raise ResultsFileError(path, f"not a valid results file: {e}") from e
    if isinstance(data, dict) and ("eval_case_results" in data or "evalCaseResults" in data):
        return _adk_history(path, history)
    raise ResultsFileError(
        path,
        "not a results file: expected an adk-eval-action results.json (with schema_version) "
        "or an ADK eval_history *.evalset_result.json file",
    )

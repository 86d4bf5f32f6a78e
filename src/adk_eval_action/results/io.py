"""Reading and writing results files: ours (``schema_version`` 2, :mod:`.model`; files of
version 1 are read and brought to version 2) and, through a reader the caller passes,
google-adk's eval_history files.

The eval_history reader lives in :mod:`adk_eval_action.adk.files.eval_history` (it needs google-adk,
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
from pydantic_core import PydanticSerializationError

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.files import MAX_DATA_BYTES, FileLimitError, read_bytes, write_atomic
from adk_eval_action.redaction import Redactor
from adk_eval_action.results.agentdetails import shared_results
from adk_eval_action.results.answers import within_run_noise
from adk_eval_action.results.input_checks import check_results
from adk_eval_action.results.model import (
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    ErrorRecord,
    RunResults,
)
from adk_eval_action.text import without_surrogates

HistoryReader = Callable[[Path], RunResults]
"""Reads an ADK eval_history file or folder (``adk.files.eval_history.read_eval_history``)."""


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


_UNSTORABLE = (PydanticSerializationError, UnicodeError, RecursionError, ValueError, TypeError)


def _dump(results: RunResults) -> tuple[str, bool]:
    """``(JSON text, whether anything had to be replaced)``: lone surrogates become U+FFFD,
    and a run whose agent output cannot be stored at all (nested past every serializer's
    depth limit) loses that output (:func:`_trim_unstorable`)."""
    try:
        return results.model_dump_json(indent=2, exclude_none=True), False
    except _UNSTORABLE:
        pass
    _trim_unstorable(results)
    data = results.model_dump(mode="python", exclude_none=True)
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return without_surrogates(text), True


def _trim_unstorable(results: RunResults) -> None:
    """Drop the agent output (``actual_invocations``, metric ``details``) of each run that
    cannot be written as JSON, in place, recording an internal error that names the eval
    set file and the eval case; the run's scores and statuses stay."""
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    try:
                        json.dumps(run.model_dump(mode="python"), default=str)
                        continue
                    except _UNSTORABLE as e:
                        reason = f"{type(e).__name__}: {str(e)[:200]}"
                    run.actual_invocations = None
                    for metric in run.metrics:
                        metric.details = {}
                    results.errors.append(ErrorRecord(
                        kind="internal", suite=suite.name, file=eval_set.file,
                        eval_set_id=eval_set.eval_set_id, eval_id=case.eval_id,
                        message=f"internal error: the agent output of eval case {case.eval_id} "
                        f"(run {run.run}) in {eval_set.file} could not be stored and was "
                        f"dropped ({reason})",
                        hint="please report this as a bug"))


def results_json(results: RunResults) -> str:
    """``results`` as indented JSON text that can always be written as UTF-8: a lone
    surrogate from agent text or an eval id (valid in JSON and Python, not in UTF-8)
    becomes U+FFFD (``text.without_surrogates``)."""
    return _dump(results)[0]


def clean_results(results: RunResults, redact: Redactor | None = None) -> RunResults:
    """``results`` with lone surrogates replaced and known secret values redacted in every
    string (eval ids, agent text, reasons, errors); the same object when nothing changed.

    Everything later (the results file, the comment, the summary, the log) is made from
    the cleaned results, so no secret and no unwritable character reaches any of them.
    """
    text, replaced = _dump(results)
    cleaned = redact(text) if redact else text
    if cleaned == text and not replaced:
        return results
    return RunResults.model_validate_json(cleaned)


def save_results(results: RunResults, path: Path) -> None:
    """Writes ``results`` as indented JSON to ``path`` whole or not at all
    (``files.write_atomic``: a full disk leaves no cut file), creating parent folders,
    with ``complete`` set (:meth:`RunResults.is_complete`; a file marked incomplete stays
    so) and ``judge_noise`` (:func:`.answers.within_run_noise`: how often each judge
    disagreed with itself across the runs of an eval case that answered alike).

    Raises:
        OSError: the file cannot be written.
    """
    results.complete = results.is_complete()
    results.judge_noise = within_run_noise(
        c for s in results.suites for e in s.eval_sets for c in e.eval_cases)
    write_atomic(path, results_json(results) + "\n")


def load_results(path: Path, history: HistoryReader | None = None) -> RunResults:
    """Reads a results file of ours, or ADK eval_history file(s) through ``history``, into
    :class:`RunResults`.

    ``path`` may be our ``results.json``, one ADK ``*.evalset_result.json`` file, or a folder
    holding such files (``history`` picks the newest result of each eval case). Callers
    that accept ADK's files pass ``adk.files.eval_history.read_eval_history`` (or call
    ``adk.files.eval_history.load_any_results``); without it an ADK file is refused by name.

    Raises:
        ResultsFileError: unreadable JSON, nested too deeply, not a regular file or larger
            than ``files.MAX_DATA_BYTES``, unknown shape, an unsupported schema_version, or
            a file of ours that holds what no run records (:mod:`.input_checks`: a score outside
            its value range, a status that contradicts score versus threshold; a non-finite
            score is made a ``metric_code`` error, as the run makes one).
    """
    with gc_paused():
        try:
            return _load_results(path, history)
        except RecursionError as e:
            raise ResultsFileError(path, "not a results file: JSON nested too deeply") from e


_OURS = re.compile(rb'\s*\{\s*"schema_version"\s*:\s*(%s)\s*,' % "|".join(
    str(v) for v in READABLE_SCHEMA_VERSIONS).encode())
"""The start of a results file of a version this one reads, as :func:`save_results` writes
it."""


def _current(results: RunResults) -> RunResults:
    """Results of an older ``schema_version`` as this version's: version 1 repeated each
    agent's details in every invocation, version 2 keeps them once per suite
    (:mod:`.agentdetails`)."""
    if results.schema_version < SCHEMA_VERSION:
        shared_results(results).schema_version = SCHEMA_VERSION
    return results


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
        raw = read_bytes(path, MAX_DATA_BYTES)
    except FileNotFoundError as e:
        raise ResultsFileError(path, "file not found") from e
    except FileLimitError as e:
        raise ResultsFileError(path, str(e).removeprefix(f"{path}: ")) from e
    except OSError as e:
        raise ResultsFileError(path, f"not valid JSON: {e}") from e
    if _OURS.match(raw):
        # Our own file (save_results writes schema_version first): pydantic parses and
        # validates the bytes in one pass, ~40% faster than json.loads + model_validate and
        # without the intermediate dicts. Anything wrong falls through to the path below,
        # whose errors say what is wrong.
        try:
            return _current(check_results(RunResults.model_validate_json(raw), path))
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
        if data["schema_version"] not in READABLE_SCHEMA_VERSIONS:
            raise ResultsFileError(
                path,
                f"schema_version {data['schema_version']!r} is not supported by this version "
                f"(reads {', '.join(map(str, READABLE_SCHEMA_VERSIONS))}); re-run the "
                "evaluation with this version",
            )
        try:
            results = RunResults.model_validate(data)
        except ValidationError as e:
            raise ResultsFileError(path, f"not a valid results file: {e}") from e
        return _current(check_results(results, path))
    if isinstance(data, dict) and ("eval_case_results" in data or "evalCaseResults" in data):
        return _adk_history(path, history)
    raise ResultsFileError(
        path,
        "not a results file: expected an adk-eval-action results.json (with schema_version) "
        "or an ADK eval_history *.evalset_result.json file",
    )

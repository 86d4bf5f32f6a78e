"""google-adk's eval_history files (``.adk/eval_history/*.evalset_result.json``, written by
``LocalEvalSetResultsManager`` for ``adk eval``) as :class:`RunResults`, so an ``adk eval``
history can be a baseline or a head.

google-adk is imported only when such a file is read: ``compare`` and ``render`` on our own
results files never pay for it (seconds of start-up).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from adk_eval_action.errors import ResultsFileError
from adk_eval_action.files import MAX_DATA_BYTES, FileLimitError, read_text
from adk_eval_action.results.agentdetails import shared_results
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import (
    EvalCaseRecord,
    EvalSetRecord,
    RunMetadata,
    RunResults,
    SuiteRecord,
)

if TYPE_CHECKING:
    from google.adk.evaluation.eval_result import EvalSetResult


def load_any_results(path: Path) -> RunResults:
    """A results file of ours, or ADK eval_history file(s) or folder (:func:`read_eval_history`).

    Raises:
        ResultsFileError: as :func:`adk_eval_action.results.io.load_results`.
    """
    return load_results(path, history=read_eval_history)


def read_eval_history(path: Path) -> RunResults:
    """One ADK ``*.evalset_result.json`` file, or the newest result of each eval case in
    such files under a folder (:func:`load_eval_history_dir`), as :class:`RunResults`.

    Raises:
        ResultsFileError: not an ADK EvalSetResult, or a folder without one.
    """
    if path.is_dir():
        return load_eval_history_dir(path)
    return load_eval_history_files([path])


def _read_eval_set_result(path: Path) -> EvalSetResult:
    from google.adk.evaluation.eval_result import EvalSetResult

    try:
        data: Any = json.loads(read_text(path, MAX_DATA_BYTES))
        if isinstance(data, str):  # older ADK wrote the JSON as a JSON string
            data = json.loads(data)
        return EvalSetResult.model_validate(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, FileLimitError) as e:
        raise ResultsFileError(path, f"not valid JSON: {e}") from e
    except RecursionError as e:
        raise ResultsFileError(path, "not valid JSON: nested too deeply") from e
    except ValidationError as e:
        raise ResultsFileError(path, f"not an ADK EvalSetResult: {e}") from e


def _app_name(path: Path, eval_set_result: EvalSetResult) -> str:
    """The suite name of an eval_history file: the agent folder that holds ``.adk``."""
    parts = path.resolve().parts
    if ".adk" in parts:
        index = len(parts) - 1 - parts[::-1].index(".adk")
        if index >= 1:
            return parts[index - 1]
    suffix = f"_{eval_set_result.eval_set_id}_"
    name = eval_set_result.eval_set_result_id
    return name.split(suffix)[0] if suffix in name else "default"


def load_eval_history_files(paths: Iterable[Path]) -> RunResults:
    """Loads ADK ``*.evalset_result.json`` files as one :class:`RunResults`.

    Each file is one run of an eval set; files of the same app and eval set become runs
    1..N of its cases, oldest first (a file holding several results of an eval case, as
    ``adk eval --num_runs`` writes it, gives several runs). Value ranges and directions are
    not in these files: each metric gets the ones the installed google-adk's registry
    declares for it (:func:`~adk_eval_action.adk.files.evalconfig.declared_metric_metas`),
    none for a metric it does not know (a custom metric).

    Raises:
        ResultsFileError: a file is not an ADK EvalSetResult.
    """
    return _as_run_results([(p, _read_eval_set_result(p)) for p in paths])


def _as_run_results(loaded: list[tuple[Path, EvalSetResult]]) -> RunResults:
    """Eval set results (and the files they came from) as :class:`RunResults`: a case's
    results become its runs, oldest first."""
    from adk_eval_action.adk.files.convert import expected_from_result, run_record_from_adk
    from adk_eval_action.adk.files.evalconfig import declared_metric_metas

    metas = declared_metric_metas()
    suites: dict[str, SuiteRecord] = {}
    for path, eval_set_result in sorted(loaded, key=lambda x: x[1].creation_timestamp):
        name = _app_name(path, eval_set_result)
        suite = suites.setdefault(name, SuiteRecord(name=name))
        eval_set = next(
            (s for s in suite.eval_sets if s.eval_set_id == eval_set_result.eval_set_id), None
        )
        if eval_set is None:
            eval_set = EvalSetRecord(eval_set_id=eval_set_result.eval_set_id, shape="adk-history")
            suite.eval_sets.append(eval_set)
        for case_result in eval_set_result.eval_case_results:
            case = next((c for c in eval_set.eval_cases if c.eval_id == case_result.eval_id), None)
            if case is None:
                case = EvalCaseRecord(
                    eval_id=case_result.eval_id,
                    expected_invocations=expected_from_result(case_result),
                )
                eval_set.eval_cases.append(case)
            case.runs.append(run_record_from_adk(case_result, len(case.runs) + 1, metas))
    for suite in suites.values():
        suite.num_runs = max(
            (len(c.runs) for s in suite.eval_sets for c in s.eval_cases), default=1
        )
    results = RunResults(metadata=RunMetadata(source="adk-eval-history"),
                         suites=list(suites.values()))
    return shared_results(results)  # each agent's details once per suite, as in ours


def load_eval_history_dir(folder: Path) -> RunResults:
    """Loads the newest results of each eval case (per app and eval set) found in the
    ``*.evalset_result.json`` files under ``folder``: every result of that case in the newest
    file that holds it, each one run.

    Per eval case, not per file: google-adk 1.x's ``LocalEvalService.evaluate`` saves one
    file per eval case as each finishes (``save_eval_set_result`` with
    ``eval_case_results=[eval_case_result]``), 2.x one file per eval set at the end of an
    ``adk eval``; the newest result of each case is the last ``adk eval`` in both. An
    ``adk eval --num_runs N`` (google/adk-python#4411: the inference requests repeated N
    times, evaluated and saved together) writes N results of each eval case into one file,
    each run's own invocations and scores: they are that case's runs 1..N, never one run
    (its mean would be averaged again with the other cases' runs) nor only the first.

    Raises:
        ResultsFileError: no such file under the folder, or one is unreadable.
    """
    newest: dict[tuple[str, str, str], tuple[float, Path, EvalSetResult, list[Any]]] = {}
    for path in sorted(folder.rglob("*.evalset_result.json")):
        result = _read_eval_set_result(path)
        for case_result in result.eval_case_results:
            key = (_app_name(path, result), result.eval_set_id, case_result.eval_id)
            found = newest.get(key)
            if found is None or result.creation_timestamp > found[0]:
                newest[key] = (result.creation_timestamp, path, result, [case_result])
            elif found[1] == path:  # another run of the case in the same file
                found[3].append(case_result)
    if not newest:
        raise ResultsFileError(folder, "no ADK *.evalset_result.json files in this folder")
    return _as_run_results([
        (path, result.model_copy(update={"eval_case_results": runs}))
        for _, path, result, runs in newest.values()
    ])

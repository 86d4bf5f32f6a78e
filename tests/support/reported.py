"""Running ``adk-eval-action run`` on a copy of a reported-problem folder, and reading its
results: shared by ``tests/integration/test_reported.py`` (the project's own fixtures) and
``tests/integration/test_reported_shared.py`` (the reference copies in ``../shared``)."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., tuple[int, str, dict[str, Any] | None]]
"""``run(folder, *args)`` -> (exit code, console output, the results file's JSON or None
when none was written)."""


def reported_runner(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any],
    prepare: Callable[[Path], None] | None = None,
) -> Run:
    """A :data:`Run` that copies ``folder`` of ``source`` to a fresh directory (without
    ``__pycache__``), lets ``prepare`` edit the copy, and runs ``adk-eval-action run ARGS
    --baseline none`` there."""
    calls = itertools.count()

    def run(folder: str, *args: str) -> tuple[int, str, dict[str, Any] | None]:
        root = tmp_path / str(next(calls)) / folder
        shutil.copytree(source / folder, root, ignore=shutil.ignore_patterns("__pycache__"))
        if prepare is not None:
            prepare(root)
        monkeypatch.chdir(root)
        result = cli("run", *args, "--baseline", "none", "--results-out", "results.json",
                     "--comment-out", "comment.md")
        written = root / "results.json"
        results = json.loads(written.read_text(encoding="utf-8")) if written.exists() else None
        return result.exit_code, result.output, results

    return run


def case_runs(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of every eval case of a results file's JSON, in file order."""
    return [run for suite in results["suites"] for eval_set in suite["eval_sets"]
            for case in eval_set["eval_cases"] for run in case["runs"]]


def only_metric(results: dict[str, Any], name: str) -> dict[str, Any]:
    """Metric ``name`` of the results' one and only run."""
    (run,) = case_runs(results)
    (found,) = [m for m in run["metrics"] if m["metric_name"] == name]
    return found

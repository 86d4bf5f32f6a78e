"""Which files are eval sets: by name (``*.evalset.json``, ``*.test.json``) or, whatever
their name (``*_eval.json``, ``*_evalset.json``, ``smoke.json``), by what they hold.

ADK itself never looks at a file's name: ``adk eval AGENT FILE`` and
``AgentEvaluator.evaluate`` load whatever file they are given. A JSON file is an eval set
when its first :data:`HEAD_BYTES` show one of the shapes the loader accepts
(:mod:`adk_eval_action.adk.files.evalsets`): an object with ``eval_cases`` / ``evalCases``
or ``eval_set_id`` / ``evalSetId`` at its top level (and none of an eval set *result*'s
keys: ADK's ``*.evalset_result.json`` name the eval set they scored), or a legacy list whose
first item has ``query`` with ``expected_tool_use`` or ``reference`` (turns), or ``name``
with ``data`` (cases). Only the first bytes are read: a repository's other JSON files (data,
fixtures, lock files) cost a short read each, and folders of vendored or generated files
(:data:`CONTENT_SKIP_DIRS`) are not read at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adk_eval_action.files import FileLimitError, read_head

__all__ = [
    "CONTENT_SKIP_DIRS", "EVAL_SET_SUFFIXES", "HEAD_BYTES", "SKIP_DIRS", "holds_eval_set",
    "is_virtualenv", "named_as_eval_set", "walk",
]

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "env",
        ".env",
        "node_modules",
        ".adk",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        "dist",
        "build",
    }
)
"""Folders never searched: version control, virtualenvs, caches, build output."""
EVAL_SET_SUFFIXES = (".evalset.json", ".test.json")
HEAD_BYTES = 16 * 1024
#: Folders whose JSON files are never read for an eval set (vendored or generated files).
CONTENT_SKIP_DIRS = frozenset({
    "vendor", "third_party", "bower_components", "coverage", "htmlcov", "target", ".next",
    ".nuxt", ".cache", "eval_history", ".ipynb_checkpoints",
})
_SET_KEYS = frozenset({"eval_cases", "evalCases", "eval_set_id", "evalSetId"})
_RESULT_KEYS = frozenset({"eval_set_result_id", "evalSetResultId", "eval_case_results",
                          "evalCaseResults"})
_DECODER = json.JSONDecoder()


def is_virtualenv(folder: Path) -> bool:
    """Whether ``folder`` is a virtualenv (it has ``pyvenv.cfg``), whatever its name."""
    return (folder / "pyvenv.cfg").is_file()


def walk(root: Path) -> Iterator[tuple[Path, list[str]]]:
    """Each folder under ``root`` (itself first) with its file names, sorted, less
    :data:`SKIP_DIRS` and virtualenvs."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not is_virtualenv(Path(folder, d)))
        yield Path(folder), sorted(files)


def named_as_eval_set(name: str) -> bool:
    """Whether a file name is ADK's eval set naming (:data:`EVAL_SET_SUFFIXES`)."""
    return name.endswith(EVAL_SET_SUFFIXES)


def _skip_blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _top_keys(text: str, at: int) -> tuple[list[str], bool]:
    """The keys of the JSON object starting at ``text[at]`` (``{``), as far as ``text``
    holds them whole; and whether the object was read to its end."""
    keys: list[str] = []
    at = _skip_blank(text, at + 1)
    while at < len(text) and text[at] != "}":
        try:
            key, at = _DECODER.raw_decode(text, at)
            at = _skip_blank(text, at)
            if not isinstance(key, str) or text[at:at + 1] != ":":
                return keys, False
            keys.append(key)
            _, at = _DECODER.raw_decode(text, _skip_blank(text, at + 1))
        except (ValueError, RecursionError):
            return keys, False  # cut by the head, or not JSON
        at = _skip_blank(text, at)
        if text[at:at + 1] == ",":
            at = _skip_blank(text, at + 1)
    return keys, at < len(text)


def _first_item(text: str, at: int) -> Any:
    at = _skip_blank(text, at + 1)
    if text[at:at + 1] != "{":
        return None
    keys, _ = _top_keys(text, at)
    return keys


def holds_eval_set(path: Path) -> bool:
    """Whether the JSON file ``path`` holds an eval set in a shape ADK's loaders accept
    (module docstring), judged from its first :data:`HEAD_BYTES`. A file that cannot be
    read, or whose start is not such JSON, says no."""
    try:
        head = read_head(path, HEAD_BYTES)
    except (OSError, FileLimitError):
        return False
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    at = _skip_blank(text, 0)
    if text[at:at + 1] == "{":
        keys, _ = _top_keys(text, at)
        return bool(_SET_KEYS & set(keys)) and not _RESULT_KEYS & set(keys)
    if text[at:at + 1] == "[":
        first = set(_first_item(text, at) or ())
        return ("query" in first and bool({"expected_tool_use", "reference"} & first)) or {
            "name", "data"} <= first
    return False

"""Every suite a repository's own commands and tests name (:mod:`.commands`,
:mod:`.evaluator_calls`), found by walking it once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adk_eval_action.files import MAX_CONFIG_BYTES, FileLimitError, read_bytes
from adk_eval_action.project.commands import (
    COMMAND_NAMES,
    COMMAND_SUFFIXES,
    MARKDOWN_SUFFIXES,
    DeclaredSuite,
    command_suites,
)
from adk_eval_action.project.evalset_files import walk
from adk_eval_action.project.evaluator_calls import evaluator_suites

__all__ = ["claimed_eval_sets", "declared_suites"]


def _kind(path: Path) -> str | None:
    """``command``, ``markdown``, ``python`` (a test or eval module) or None: how a file
    is read for suites."""
    name = path.name
    if name in COMMAND_NAMES or name.endswith(COMMAND_SUFFIXES):
        return "command"
    if ".github" in path.parts and path.suffix in (".yml", ".yaml"):
        return "command"
    if name.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    if name.endswith(".py") and ("test" in name or "eval" in name):
        return "python"
    return None


#: How each kind ranks as a suite's source: what runs in CI first, prose last.
_RANK = {"command": 0, "python": 1, "markdown": 2}


def declared_suites(root: Path) -> list[DeclaredSuite]:
    """Every suite the repository's own commands and tests name (module docstring), each
    (agent, eval sets, eval config) once, from its first source: Makefiles, scripts,
    workflows and task files, then tests, then Markdown."""
    found: list[tuple[int, DeclaredSuite]] = []
    for folder, names in walk(root):
        for name in names:
            path = folder / name
            kind = _kind(path)
            if kind is None:
                continue
            try:
                text = read_bytes(path, MAX_CONFIG_BYTES).decode("utf-8", "replace")
            except (OSError, FileLimitError):
                continue
            if kind == "python":
                suites = evaluator_suites(path, text, root) if "AgentEvaluator" in text else []
            elif "adk" in text and "eval" in text:
                suites = command_suites(path, text, root)
            else:
                suites = []
            found += [(_RANK[kind], s) for s in suites]
    unique: dict[tuple[Path, tuple[Path, ...], Path | None], DeclaredSuite] = {}
    for _, suite in sorted(found, key=lambda pair: pair[0]):
        unique.setdefault((suite.agent_dir, tuple(suite.eval_sets), suite.eval_config), suite)
    return list(unique.values())


def _under(path: Path, paths: list[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved == p or p in resolved.parents for p in (q.resolve() for q in paths))


def claimed_eval_sets(
    paths: list[Path], root: Path, skip: Callable[[Path], bool],
) -> dict[Path, tuple[Path, Path | None, str]]:
    """Each eval set under ``paths`` that the repository's own commands and tests name
    (:func:`declared_suites`; the first that names it), less those ``skip`` says, with its
    agent, eval config and how it was named (``as Makefile:12 runs it``), by its real
    path."""
    claimed: dict[Path, tuple[Path, Path | None, str]] = {}
    for declared in declared_suites(root):
        for path in declared.eval_sets:
            if path not in claimed and _under(path, paths) and not skip(path):
                claimed[path] = (declared.agent_dir, declared.eval_config,
                                 f"as {declared.source} runs it")
    return claimed

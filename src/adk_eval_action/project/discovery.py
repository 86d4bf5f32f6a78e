"""Finding suites: agents, their eval sets and eval configs, by ADK's conventions.

Without ``adk-eval.yaml``: every ``*.evalset.json`` and legacy ``*.test.json`` under the given
paths (skipping ``.git``, virtualenvs, ``node_modules``, ``.adk``). The agent of an eval set
is the nearest ancestor folder that ADK can load as an agent module, as ``adk eval AGENT_DIR``
does (google.adk.cli.cli_eval: a folder with ``__init__.py`` that exposes ``agent``, i.e. an
``agent.py``, an ``agent/`` package, or a ``root_agent.yaml``). The eval config is the
``test_config.json`` beside the eval set, as ``AgentEvaluator.find_config_for_test_file``
finds it, else ADK's default criteria. Eval sets sharing an agent and eval config form one
suite named after the agent folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pathspec
from pydantic import BaseModel, Field

from adk_eval_action.errors import ConfigError
from adk_eval_action.files import FileLimitError, expand_glob
from adk_eval_action.project.config import ProjectConfig

EVAL_SET_SUFFIXES = (".evalset.json", ".test.json")
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


class Suite(BaseModel):
    """An agent evaluated on eval sets under one eval config.

    ``agent_dir`` is None when no agent module was found (``agent_error`` says why); such a
    suite reports an error and the other suites still run.
    """

    name: str
    agent_dir: Path | None
    agent_error: str | None = None
    eval_set_paths: list[Path]
    eval_config_path: Path | None = None
    num_runs: int | None = None
    thresholds: dict[str, float] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def is_agent_dir(folder: Path) -> bool:
    """True when ADK can load ``folder`` as an agent module (see module docstring)."""
    return (folder / "__init__.py").is_file() and (
        (folder / "agent.py").is_file()
        or (folder / "agent" / "__init__.py").is_file()
        or (folder / "root_agent.yaml").is_file()
    )


def _ancestors(eval_set: Path, stop: Path) -> list[Path]:
    stop = stop.resolve()
    folders = []
    # The folder the eval set is in (a link's, not its target's): the agent it belongs to.
    here = eval_set.parent.resolve()
    for folder in [here, *here.parents]:
        folders.append(folder)
        if folder == stop or stop not in folder.parents:
            break
    return folders


def find_agent_dir(eval_set: Path, stop: Path) -> Path | None:
    """The agent of an eval set: the nearest folder at or above the eval set's folder (not
    above ``stop``) that is an agent module; else, for the layout of google/adk-samples
    (``my_agent/`` beside ``eval/data/x.test.json``), the only agent-module child of the
    nearest ancestor that has exactly one. None when neither exists."""
    folders = _ancestors(eval_set, stop)
    for folder in folders:
        if is_agent_dir(folder):
            return folder
    for folder in folders:
        children = [c for c in sorted(folder.iterdir()) if c.is_dir() and is_agent_dir(c)]
        if len(children) == 1:
            return children[0]
        if len(children) > 1:
            return None
    return None


def _no_agent_hint(eval_set: Path, stop: Path, root: Path) -> str:
    near = [f for f in _ancestors(eval_set, stop) if (f / "agent.py").is_file()]
    if near:
        return (
            f"{relative_path(near[0], root)} has agent.py but no __init__.py; ADK loads an agent "
            "folder as a package: add __init__.py with `from . import agent`"
        )
    return (
        f"no agent module found at or above {relative_path(eval_set.parent, root)}: ADK loads a "
        "folder with __init__.py and agent.py (as `adk eval AGENT_DIR`); name the agent of "
        "these eval sets in adk-eval.yaml"
    )


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def excluded(exclude: Iterable[str], root: Path) -> Callable[[Path], bool]:
    """Whether a path is excluded by ``exclude``: gitignore-style patterns (pathspec's
    ``GitIgnoreSpec``, git's own wildmatch rules: ``dir/**``, ``**/x``, ``!keep``) matched
    against the path relative to ``root`` (as POSIX); a path outside ``root`` is matched
    as it is, absolute."""
    spec = pathspec.GitIgnoreSpec.from_lines(list(exclude))

    def test(path: Path) -> bool:
        try:
            shown = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = path.resolve().as_posix()
        return spec.match_file(shown)

    return test


def find_eval_sets(
    paths: Iterable[Path], exclude: Iterable[str] = (), root: Path | None = None
) -> list[Path]:
    """Every eval set file under ``paths`` (files are taken as given), sorted, without
    duplicates, less those ``exclude`` names (:func:`excluded`, relative to ``root``,
    default the current folder).

    Each is absolute but named where it was found, a symbolic link as the link (two names
    of one file count once): its suite is the link's folder's, and a link out of the
    repository is refused under the name the user sees (``run.evaluation.check_inside``).
    Of two names of one file, the first in sorted order is kept."""
    found: dict[Path, Path] = {}

    def add(path: Path) -> None:  # of two names of one file, the first in sorted order
        name, key = Path(os.path.abspath(path)), path.resolve()
        found[key] = min(found.get(key, name), name)

    skip = excluded(exclude, root if root is not None else Path("."))
    for path in paths:
        if path.is_file():
            add(path)
            continue
        if not path.is_dir():
            raise ConfigError(path, "no such file or folder")
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d for d in dirs if d not in SKIP_DIRS and not _is_virtualenv(Path(folder, d))
            )
            for name in files:
                if name.endswith(EVAL_SET_SUFFIXES):
                    add(Path(folder, name))
    return sorted(p for p in found.values() if not skip(p))


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as given (for messages and records)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def discover_suites(
    paths: list[Path], root: Path, exclude: Iterable[str] = (), exclude_root: Path | None = None,
) -> list[Suite]:
    """Suites found by ADK's conventions under ``paths`` (see the module docstring), less
    the eval sets ``exclude`` names (relative to ``exclude_root``, default ``root``: the
    folder of adk-eval.yaml).

    Raises:
        ConfigError: a path does not exist.
    """
    groups: dict[tuple[Path | None, Path | None], list[Path]] = {}
    for eval_set in find_eval_sets(paths, exclude, exclude_root or root):
        agent = find_agent_dir(eval_set, root)
        config = eval_set.parent / "test_config.json"
        key = (agent, config if config.is_file() else None)
        groups.setdefault(key, []).append(eval_set)
    suites: list[Suite] = []
    for (agent, config_path), eval_sets in groups.items():
        name = agent.name if agent else "no-agent:" + relative_path(eval_sets[0].parent, root)
        notes = [
            f"{relative_path(p, root)}: no test_config.json beside it but `{c.name}` "
            f"exists; using ADK's default criteria (name it in adk-eval.yaml to use it)"
            for p in eval_sets
            for c in (p.parent / "eval_config.json", p.parent.parent / "test_config.json")
            if config_path is None and c.is_file()
        ]
        suites.append(
            Suite(
                name=name,
                agent_dir=agent,
                agent_error=None if agent else _no_agent_hint(eval_sets[0], root, root),
                eval_set_paths=eval_sets,
                eval_config_path=config_path,
                notes=notes,
            )
        )
    names = [s.name for s in suites]
    for suite in suites:
        if names.count(suite.name) > 1 and suite.agent_dir is not None:
            # Same-named agents in different folders: the path tells them apart.
            suite.name = relative_path(suite.agent_dir, root)
    names = [s.name for s in suites]
    for suite in suites:
        if names.count(suite.name) > 1 and suite.eval_config_path is not None:
            suite.name = f"{suite.name}:{relative_path(suite.eval_config_path.parent, root)}"
    return suites


def suites_from_config(config: ProjectConfig, config_path: Path) -> list[Suite]:
    """Suites named in ``adk-eval.yaml``; paths are relative to its folder.

    Raises:
        ConfigError: a suite's agent folder is missing, an eval set glob matches nothing, or
            its eval config does not exist (each naming the file and field).
    """
    suites = []
    for index, spec in enumerate(config.suites):
        agent = (config.root / spec.agent).resolve()
        where = f"suites[{index}]"
        if not agent.is_dir():
            raise ConfigError(config_path, f"agent folder {spec.agent} not found", f"{where}.agent")
        eval_sets: list[Path] = []
        for pattern in spec.eval_sets:
            try:
                matches = expand_glob(str(config.root / pattern))
            except FileLimitError as e:
                raise ConfigError(config_path, str(e), f"{where}.eval_sets") from e
            if not matches:
                raise ConfigError(
                    config_path, f"eval set glob {pattern!r} matches no file", f"{where}.eval_sets"
                )
            eval_sets.extend(Path(m).resolve() for m in matches)
        eval_config = (config.root / spec.eval_config).resolve() if spec.eval_config else None
        if eval_config is None:
            # As AgentEvaluator: the test_config.json beside the eval sets, when they share one.
            beside = {p.parent / "test_config.json" for p in eval_sets}
            if len(beside) == 1 and next(iter(beside)).is_file():
                eval_config = next(iter(beside))
        if eval_config is not None and not eval_config.is_file():
            raise ConfigError(
                config_path, f"eval config {spec.eval_config} not found", f"{where}.eval_config"
            )
        suites.append(
            Suite(
                name=spec.name,
                agent_dir=agent,
                eval_set_paths=sorted(set(eval_sets)),
                eval_config_path=eval_config,
                num_runs=spec.num_runs,
                thresholds=spec.thresholds,
                higher_is_better=spec.higher_is_better,
            )
        )
    return suites

"""Finding suites: agents, their eval sets and eval configs, by ADK's conventions.

Without ``adk-eval.yaml``: every ``*.evalset.json`` and legacy ``*.test.json`` under the given
paths (skipping ``.git``, virtualenvs, ``node_modules``, ``.adk``). The agent of an eval set
is the nearest ancestor folder that google-adk's loader loads as an agent
(:mod:`adk_eval_action.project.agent_shapes`: a package with ``agent.py``, an ``agent/``
package or ``root_agent.yaml``, or whose ``__init__.py`` exposes ``root_agent``); for the layouts of
google/adk-samples and agent-starter-pack, where the agent package sits beside the folder
of the eval sets, the only agent module in the nearest folder above them that has one. The
eval config is found by :mod:`adk_eval_action.project.layout` (``test_config.json`` beside
the eval set, as ``AgentEvaluator.find_config_for_test_file``; agent-starter-pack's
``tests/eval/eval_config.json``), else ADK's default criteria, with a warning when a file
that looks like an eval config is near. Eval sets sharing an agent and eval config form one
suite, named by :mod:`adk_eval_action.project.names`.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pathspec
from pydantic import BaseModel, Field

from adk_eval_action.errors import ConfigError
from adk_eval_action.files import FileLimitError, expand_glob
from adk_eval_action.project.agent_shapes import ACCEPTED_SHAPES, is_agent_dir, typescript_adk
from adk_eval_action.project.config import ProjectConfig
from adk_eval_action.project.declared import claimed_eval_sets
from adk_eval_action.project.dependencies import dependency_file
from adk_eval_action.project.evalset_files import (
    CONTENT_SKIP_DIRS,
    SKIP_DIRS,
    holds_eval_set,
    is_virtualenv,
    named_as_eval_set,
)
from adk_eval_action.project.layout import (
    defaults_warning,
    eval_config_for,
    nearby_configs,
    shared_eval_config,
)
from adk_eval_action.project.names import eval_set_folder, short_names
from adk_eval_action.text import visible

log = logging.getLogger(__name__)


class Suite(BaseModel):
    """An agent evaluated on eval sets under one eval config.

    ``agent_dir`` is None when no agent module was found (``agent_error`` says why); such a
    suite reports an error and the other suites still run. ``requirements`` are the agent's
    own dependency files (adk-eval.yaml's ``requirements`` of the suite, else the one
    :func:`adk_eval_action.project.dependencies.dependency_file` finds); ``agent_error_file``
    is the file an ``agent_error`` is about when it is not the agent's (a dependency file
    that did not install). ``nearby_configs`` are the files
    that look like an eval config near the eval sets of a suite left on ADK's default
    criteria (:func:`adk_eval_action.project.layout.nearby_configs`); ``warnings`` say so
    (they go into the suite's record, the comment and the console).
    """

    name: str
    agent_dir: Path | None
    agent_error: str | None = None
    eval_set_paths: list[Path]
    eval_config_path: Path | None = None
    num_runs: int | None = None
    thresholds: dict[str, float] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    nearby_configs: list[Path] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    #: Where ``thresholds`` and ``higher_is_better`` were written: adk-eval.yaml and the
    #: suite's field in it (``suites[0]``); errors in them name that place.
    declared_in: Path | None = None
    declared_field: str | None = None
    #: How a discovered suite was found, when not by layout: ``as Makefile:12 runs it``
    #: (the repository's own command or test, :mod:`adk_eval_action.project.commands`), or
    #: how ``init`` chose its agent.
    source: str | None = None
    requirements: list[Path] = Field(default_factory=list)
    agent_error_file: Path | None = None
    #: The shard (matrix job) that evaluates the whole suite with ``--shard K/N``
    #: (adk-eval.yaml's ``shard``); None: its eval cases are spread by weight.
    shard: int | None = None


class Discovery(BaseModel):
    """What discovery found: the suites, and ``unplaced``, the JSON files of other names
    than ADK's that hold an eval set but have no agent near them and no command naming
    them (not suites: candidates ``init`` names)."""

    suites: list[Suite]
    unplaced: list[Path] = Field(default_factory=list)


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
    typescript = typescript_adk(eval_set.parent, root)
    if typescript is not None:
        return (
            f"{relative_path(typescript, root)} makes this an ADK for TypeScript project "
            "(`@google/adk`), which is not supported: adk-eval-action runs google-adk "
            "(Python) agents and their eval sets"
        )
    near = [f for f in _ancestors(eval_set, stop) if (f / "agent.py").is_file()]
    if near:
        return (
            f"{relative_path(near[0], root)} has agent.py but no __init__.py; ADK loads an agent "
            "folder as a package: add __init__.py with `from . import agent`"
        )
    return (
        f"no agent found at or above {relative_path(eval_set.parent, root)} ({ACCEPTED_SHAPES}); "
        "name the agent of these eval sets in adk-eval.yaml (`adk-eval-action init --agent "
        "PATH` writes it)"
    )


class Exclusion:
    """adk-eval.yaml's ``exclude``: gitignore-style patterns (pathspec's ``GitIgnoreSpec``,
    git's own wildmatch rules: ``dir/**``, ``**/x``, ``!keep``) matched against a path
    relative to ``root`` (as POSIX; a path outside ``root`` is matched as it is, absolute).
    Calling it says whether a path is excluded; it remembers which patterns excluded a
    file, so that :meth:`unused` names those that excluded none (a typo, or a file gone)."""

    def __init__(self, patterns: Iterable[str] = (), root: Path = Path(".")) -> None:
        self.patterns = list(patterns)
        self.root = root.resolve()
        self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)
        self._each = {p: pathspec.GitIgnoreSpec.from_lines([p]) for p in self.patterns
                      if p.strip() and not p.lstrip().startswith(("!", "#"))}
        self._used: set[str] = set()
        self._seen: dict[Path, bool] = {}  # many suites name one eval set: matched once

    def __call__(self, path: Path) -> bool:
        if path not in self._seen:
            self._seen[path] = self._match(path)
        return self._seen[path]

    def _match(self, path: Path) -> bool:
        resolved = Path(os.path.realpath(path))  # a loop of links too (no RuntimeError)
        try:
            shown = resolved.relative_to(self.root).as_posix()
        except ValueError:
            shown = resolved.as_posix()
        if not self._spec.match_file(shown):
            return False
        self._used.update(p for p, spec in self._each.items() if spec.match_file(shown))
        return True

    def unused(self) -> list[str]:
        """The patterns (but ``!`` ones and comments) that excluded no path so far."""
        return [p for p in self._each if p not in self._used]


def excluded(exclude: Iterable[str] | Exclusion, root: Path) -> Exclusion:
    """``exclude`` as an :class:`Exclusion` relative to ``root`` (itself when it is one)."""
    return exclude if isinstance(exclude, Exclusion) else Exclusion(exclude, root)


def find_eval_sets(
    paths: Iterable[Path], exclude: Iterable[str] | Exclusion = (), root: Path | None = None
) -> list[Path]:
    """Every eval set file under ``paths`` (files are taken as given), sorted, without
    duplicates, less those ``exclude`` names (:func:`excluded`, relative to ``root``,
    default the current folder): named as ADK names them, or a JSON file of another name
    that holds one (:mod:`adk_eval_action.project.evalset_files`).

    Each is absolute but named where it was found, a symbolic link as the link (two names
    of one file count once): its suite is the link's folder's, and a link out of the
    repository is refused under the name the user sees (``run.evaluation.check_inside``).
    Of two names of one file, the first in sorted order is kept. A link to nothing is
    listed as found (:func:`missing_links` sets it apart)."""
    found: dict[Path, Path] = {}

    def add(path: Path) -> None:  # of two names of one file, the first in sorted order
        # realpath, not resolve(): a loop of links is a name like any other here
        # (:func:`missing_links` says what is wrong with it), not a RuntimeError.
        name, key = Path(os.path.abspath(path)), Path(os.path.realpath(path))
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
                d for d in dirs if d not in SKIP_DIRS and not is_virtualenv(Path(folder, d))
            )
            by_content = not CONTENT_SKIP_DIRS & set(Path(folder).relative_to(path).parts)
            for name in files:
                if named_as_eval_set(name) or (
                        by_content and name.endswith(".json")
                        and holds_eval_set(Path(folder, name))):
                    add(Path(folder, name))
    return sorted(p for p in found.values() if not skip(p))


def missing_links(eval_sets: Iterable[Path], root: Path) -> tuple[list[Path], list[str]]:
    """``eval_sets`` without the symbolic links to nothing (a target that does not exist,
    or links that loop: a link left behind when its eval set moved), and a warning naming
    each one left out, as shown relative to ``root`` with its target (control and bidi
    characters escaped: :func:`adk_eval_action.text.visible`). There is nothing in such a
    file to evaluate, and ``adk eval`` would stop at it; the suite's other eval sets are
    evaluated."""
    kept: list[Path] = []
    said: list[str] = []
    for path in eval_sets:
        if not os.path.islink(path) or os.path.exists(path):
            kept.append(path)
            continue
        try:
            target = os.readlink(path)
        except OSError as e:
            target = f"? ({e.strerror})"
        shown = visible(Path(relative_path(path.parent, root), path.name).as_posix(), keep="")
        why = ("a loop of links" if os.path.lexists(os.path.realpath(path))
               else f"a link to {visible(target, keep='')}, which does not exist")
        said.append(f"eval set `{shown}` left out: it is {why}")
    return kept, said


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as given (for messages and records)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def discover_suites(
    paths: list[Path], root: Path, exclude: Iterable[str] | Exclusion = (),
    exclude_root: Path | None = None,
) -> list[Suite]:
    """The suites of :func:`discover`."""
    return discover(paths, root, exclude, exclude_root).suites


Group = tuple[Path | None, Path | None]
"""A suite's (agent folder, eval config) in discovery."""


def _grouped(
    found: list[Path], claimed: dict[Path, tuple[Path, Path | None, str]], root: Path,
    agent: Path | None, agent_source: str | None, unplaced_suites: bool,
) -> tuple[dict[Group, list[Path]], dict[Group, str], list[Path]]:
    """The eval sets ``found`` and ``claimed`` (by the repository's commands, with their
    agent, eval config and source) by (agent, eval config), each group's first source, and
    the eval sets left unplaced (:func:`discover`)."""
    seen = {Path(os.path.realpath(p)) for p in found}
    groups: dict[Group, list[Path]] = {}
    sources: dict[Group, str] = {}
    unplaced: list[Path] = []
    for eval_set in sorted([*found, *(p for p in claimed if p not in seen)]):
        real = Path(os.path.realpath(eval_set))
        owner: Path | None
        layout = find_agent_dir(eval_set, root)
        if real in claimed:
            owner, config, source = claimed[real]
            if (owner, config) != (layout, eval_config_for(eval_set)):  # the command's own
                sources.setdefault((owner, config), source)
            groups.setdefault((owner, config), []).append(eval_set)
            continue
        owner = layout
        if owner is None and agent is not None:
            owner = agent
            sources.setdefault((owner, eval_config_for(eval_set)), agent_source or "")
        if owner is None and not named_as_eval_set(eval_set.name) and not unplaced_suites:
            unplaced.append(eval_set)  # an eval set by content alone: named, not run
            continue
        groups.setdefault((owner, eval_config_for(eval_set)), []).append(eval_set)
    return groups, sources, unplaced


def discover(
    paths: list[Path], root: Path, exclude: Iterable[str] | Exclusion = (),
    exclude_root: Path | None = None, *, agent: Path | None = None,
    agent_source: str | None = None, unplaced_suites: bool = False,
) -> Discovery:
    """Suites found under ``paths`` (see the module docstring), less the eval sets
    ``exclude`` names (relative to ``exclude_root``, default ``root``: the folder of
    adk-eval.yaml). An eval set that the repository's own ``adk eval`` commands or
    ``AgentEvaluator`` tests name has their agent and eval config, one of another the
    layout's; eval sets of one agent and eval config are one suite. ``agent``: the agent
    of the eval sets that have none (``init --agent``), their ``source`` then
    ``agent_source``. A JSON eval set of another name than ADK's with no agent is
    ``unplaced``, or with ``unplaced_suites`` (``init``) in a suite without an agent.

    Raises:
        ConfigError: a path does not exist.
    """
    skip = excluded(exclude, exclude_root or root)
    claimed = claimed_eval_sets(paths, root, skip)
    found = find_eval_sets(paths, skip, exclude_root or root)
    groups, sources, unplaced = _grouped(found, claimed, root, agent, agent_source,
                                         unplaced_suites)
    suites = []
    for (owner, config), eval_sets_found in groups.items():
        eval_sets, left_out = missing_links(eval_sets_found, root)
        for warning in left_out if not eval_sets else ():
            log.warning("%s", warning)  # no suite to carry it: its only eval sets
        if eval_sets:
            suites.append(Suite(
                name="", agent_dir=owner, eval_set_paths=eval_sets, eval_config_path=config,
                agent_error=None if owner else _no_agent_hint(eval_sets[0], root, root),
                warnings=left_out, source=sources.get((owner, config)) or None,
                requirements=_found_requirements(owner, root)))
    used = {s.eval_config_path for s in suites}
    for suite, name in zip(suites, _names(suites, root), strict=True):
        suite.name = name
        suite.warnings = [f"suite `{name}`: {w}" for w in suite.warnings]
        _warn_of_defaults(suite, root, used, "name it as the suite's `eval_config:` in "
                          "adk-eval.yaml (`adk-eval-action init` writes one naming every suite)")
    return Discovery(suites=suites, unplaced=unplaced)


def _found_requirements(agent: Path | None, stop: Path,
                        find: Callable[[Path, Path], Path | None] = dependency_file,
                        ) -> list[Path]:
    """The agent's own dependency file, as a list (project.dependencies)."""
    found = find(agent, stop) if agent is not None else None
    return [found] if found is not None else []


def _declared_requirements(
    declared: list[str] | None, agent: Path, config: ProjectConfig, config_path: Path,
    where: str, find: Callable[[Path, Path], Path | None] = dependency_file,
) -> list[Path]:
    """A suite's ``requirements`` of adk-eval.yaml (relative to it), else the file found
    beside its agent (:func:`_found_requirements`, with ``find``).

    Raises:
        ConfigError: a named file does not exist (naming the suite's field).
    """
    if declared is None:
        return _found_requirements(agent, config.root, find)
    paths = [(config.root / r).resolve() for r in declared]
    for name, path in zip(declared, paths, strict=True):
        if not path.is_file():
            raise ConfigError(config_path, f"requirements file {name} not found",
                              f"{where}.requirements")
    return paths


def _names(suites: list[Suite], root: Path) -> list[str]:
    """The suites' short names (project.names), from paths relative to ``root``'s parent
    so that an agent at the root itself is named after the root's folder, as before (an
    agentless suite: after its eval set folder, relative to ``root``)."""

    def folder(suite: Suite, base: Path) -> str:
        return _eval_set_folder(suite.eval_set_paths, base)

    parent = root.resolve().parent
    return short_names([
        (Path(relative_path(s.agent_dir, parent)).as_posix(), folder(s, parent))
        if s.agent_dir else (None, folder(s, root))
        for s in suites
    ])


def _eval_set_folder(eval_sets: list[Path], base: Path) -> str:
    """The folder holding every one of ``eval_sets`` relative to ``base`` (POSIX), a linked
    eval set taken where the link is (its folder's, not its target's)."""
    files = (Path(relative_path(p.parent, base), p.name).as_posix() for p in eval_sets)
    return eval_set_folder(files) or "."


def _warn_of_defaults(suite: Suite, root: Path, used: set[Path | None], how: str) -> None:
    """When ``suite`` has no eval config, its eval config-like neighbours (project.layout)
    that no suite uses (``used``: another suite's is not this one's), and the warning that
    names them."""
    if suite.eval_config_path is not None:
        return
    taken = {p.resolve() for p in used if p is not None}
    suite.nearby_configs = [
        p for p in nearby_configs(suite.eval_set_paths, root) if p.resolve() not in taken
    ]
    if suite.nearby_configs:
        folder = _eval_set_folder(suite.eval_set_paths, root)
        suite.warnings.append(defaults_warning(
            suite.name, folder, [relative_path(p, root) for p in suite.nearby_configs], how))


def _suite_eval_sets(
    config: ProjectConfig, config_path: Path, index: int, skip: Exclusion,
    matched: Callable[[str], tuple[list[Path], list[str]]],
) -> tuple[list[Path], list[str]]:
    """The eval set files the globs of suite ``index`` match, less those ``skip``
    excludes and the links to nothing (:func:`missing_links`), and the warnings naming
    those links. ``matched`` gives a glob's files and links to nothing (each glob of
    adk-eval.yaml expanded once, however many suites name it).

    Raises:
        ConfigError: a glob matches no file (or too many, or only links to nothing), or
            ``exclude`` leaves none.
    """
    spec, where = config.suites[index], f"suites[{index}].eval_sets"
    eval_sets: list[Path] = []
    said: list[str] = []
    for pattern in spec.eval_sets:
        try:
            found, left_out = matched(pattern)
        except FileLimitError as e:
            raise ConfigError(config_path, str(e), where) from e
        if not found:
            why = f"only links to nothing: {'; '.join(left_out)}" if left_out else "no file"
            raise ConfigError(config_path, f"eval set glob {pattern!r} matches {why}", where)
        eval_sets.extend(p.resolve() for p in found if not skip(p))
        said += left_out
    if not eval_sets:
        raise ConfigError(config_path, f"`exclude` leaves suite `{spec.name}` no eval set",
                          where)
    return eval_sets, [f"suite `{spec.name}`: {w}" for w in said]


def suites_from_config(
    config: ProjectConfig, config_path: Path, exclude: Exclusion | None = None,
) -> list[Suite]:
    """Suites named in ``adk-eval.yaml``; paths are relative to its folder. The eval sets
    its ``exclude`` names are left out of every suite's globs (as out of discovery);
    ``exclude`` is the caller's :class:`Exclusion` of them, to ask what it excluded.

    Raises:
        ConfigError: a suite's agent folder is missing, an eval set glob matches nothing,
            ``exclude`` leaves a suite no eval set, or its eval config does not exist (each
            naming the file and field).
    """
    skip = exclude if exclude is not None else Exclusion(config.exclude, config.root)
    suites: list[Suite] = []
    # What many suites name alike is looked up once (5,000 suites of one agent: seconds).
    folder = functools.cache(lambda name: (config.root / name).resolve())
    matched = functools.cache(lambda pattern: missing_links(
        (Path(m) for m in expand_glob(str(config.root / pattern))), config.root))
    shared = functools.cache(shared_eval_config)
    is_dir = functools.cache(Path.is_dir)
    is_file = functools.cache(Path.is_file)
    find = functools.cache(dependency_file)
    for index, spec in enumerate(config.suites):
        agent = folder(spec.agent)
        where = f"suites[{index}]"
        if not is_dir(agent):
            raise ConfigError(config_path, f"agent folder {spec.agent} not found", f"{where}.agent")
        eval_sets, left_out = _suite_eval_sets(config, config_path, index, skip, matched)
        eval_config = folder(spec.eval_config) if spec.eval_config else None
        if eval_config is None:
            # As discovery (project.layout): the one the eval sets share, when they do.
            eval_config = shared(tuple(eval_sets))
        if eval_config is not None and not is_file(eval_config):
            raise ConfigError(
                config_path, f"eval config {spec.eval_config} not found", f"{where}.eval_config"
            )
        requirements = _declared_requirements(spec.requirements, agent, config, config_path,
                                              where, find)
        suite = Suite(
            name=spec.name,
            agent_dir=agent,
            eval_set_paths=sorted(set(eval_sets)),
            eval_config_path=eval_config,
            num_runs=spec.num_runs,
            thresholds=spec.thresholds,
            higher_is_better=spec.higher_is_better,
            declared_in=config_path,
            declared_field=where,
            warnings=left_out,
            requirements=requirements,
            shard=spec.shard,
        )
        suites.append(suite)
    used = {s.eval_config_path for s in suites}
    for suite in suites:
        how = f"name it as `eval_config:` of suite `{suite.name}` in {config_path.name}"
        _warn_of_defaults(suite, config.root, used, how)
    return suites


def suites_under(
    suites: list[Suite], paths: list[Path], workdir: Path, config: Path,
) -> list[Suite]:
    """The suites of adk-eval.yaml (``config``) that ``paths`` (the ``run``/``plan`` PATHS,
    absolute) select: those whose agent folder or one of whose eval sets is a path or lies
    under one; all of them when a path is ``workdir`` itself (the default ``.``).

    Raises:
        ConfigError: there are suites, and the paths select none (naming the suites
            and their agents).
    """
    targets = [p.resolve() for p in paths]
    if not suites or workdir.resolve() in targets:
        return suites

    def under(path: Path) -> bool:
        resolved = path.resolve()
        return any(resolved == t or t in resolved.parents for t in targets)

    chosen = [s for s in suites if (s.agent_dir is not None and under(s.agent_dir))
              or any(under(e) for e in s.eval_set_paths)]
    if not chosen:
        given = ", ".join(relative_path(p, workdir) for p in paths)
        named = "; ".join(f"{s.name} (agent {relative_path(s.agent_dir, workdir)})"
                          for s in suites if s.agent_dir is not None)
        raise ConfigError(given, f"no suite of {relative_path(config, workdir)} has its agent "
                          f"or an eval set under it ({named}): pass one of their folders, or "
                          "no path for all")
    return chosen

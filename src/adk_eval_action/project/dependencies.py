"""An agent's own dependencies: the file that declares them, the requirements it holds, and
the dependencies of several agents that cannot live together in one environment.

Where a monorepo keeps them (google/adk-samples: ``python/agents/<name>/pyproject.toml``
beside the ``<name>/`` agent package; agent-starter-pack: a ``pyproject.toml`` per project;
an app with a ``requirements.txt`` beside ``agent.py``): :func:`dependency_file` looks in
the agent folder, then in each folder above it up to (not including) the folder of
``adk-eval.yaml``, whose own files are the workflow's ``requirements`` input; the first
folder with a ``requirements.txt`` or a ``pyproject.toml`` is the agent's project, and its
``requirements.txt`` is preferred (a file of pins), else the ``[project].dependencies`` of
its ``pyproject.toml`` (PEP 621; the project itself is never built).

What cannot live together (:func:`dependency_conflicts`), read from the requirements as
``packaging`` parses them (PEP 440/508), before anything is installed: two suites whose
specifiers for one package no version satisfies at once (``a==1.0`` and ``a==2.0``,
``a<2`` and ``a>=2``), and a suite whose google-adk specifier excludes the range this
action supports or the google-adk it runs (installing it would replace google-adk for
every suite of the job). Versions are compared on the ones the specifiers name (and the
next release of each), so a conflict is only claimed when those show one.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, Field

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import MAX_CONFIG_BYTES, FileLimitError, read_text
from adk_eval_action.text import visible

__all__ = [
    "DEPENDENCY_FILES", "DependencyConflict", "DependencyFailure", "RequirementsError",
    "declared_requirements", "dependency_conflicts", "dependency_file", "pyproject_requirements",
]

REQUIREMENTS_TXT = "requirements.txt"
PYPROJECT = "pyproject.toml"
#: The files an agent's dependencies are read from, in the order preferred.
DEPENDENCY_FILES = (REQUIREMENTS_TXT, PYPROJECT)
#: ``-r``/``-c`` includes of a requirements file followed at most this deep.
MAX_INCLUDE_DEPTH = 5
ADK = "google-adk"


class RequirementsError(AdkEvalActionError):
    """A dependency file cannot be read, the installer failed, or google-adk moved out of
    the supported range."""


def _load_toml(path: Path, shown: str) -> Any:
    """The parsed TOML of ``path`` (Python's ``tomllib``, 3.11+; ``tomli`` on 3.10), at
    most ``files.MAX_CONFIG_BYTES``.

    Raises:
        RequirementsError: unreadable, too large, or not valid TOML (naming ``shown``).
    """
    try:
        toml = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        toml = importlib.import_module("tomli")
    try:
        return toml.loads(read_text(path, MAX_CONFIG_BYTES))
    except (OSError, FileLimitError, UnicodeDecodeError, ValueError) as e:
        raise RequirementsError(f"requirements: {shown}: cannot read it as TOML: {e}") from e


def pyproject_requirements(path: Path, shown: str) -> list[str]:
    """The requirement strings of a ``pyproject.toml``'s ``[project].dependencies`` (PEP
    621), each checked and normalised by ``packaging`` (as pip parses them), so that the
    installer gets the agent's dependencies without building the project itself (an app's
    pyproject often has no ``[build-system]`` and a flat layout setuptools refuses to
    build). ``[project.optional-dependencies]`` are not installed.

    Raises:
        RequirementsError: no ``[project]`` table, dependencies declared ``dynamic`` or
            only in Poetry's ``[tool.poetry.dependencies]`` (google/adk-samples' agents), or
            an entry that is not a requirement (an installer option such as
            ``--index-url`` too), each naming ``shown``.
    """
    data = _load_toml(path, shown)
    project = data.get("project")
    poetry = ((data.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    listed = isinstance(project, dict) and "dependencies" in project
    if not listed and isinstance(poetry, dict) and set(poetry) - {"python"}:
        raise RequirementsError(f"requirements: {shown} declares its dependencies in "
                                "[tool.poetry.dependencies] (Poetry), which are not read "
                                "without Poetry: export them (`poetry export -f "
                                "requirements.txt -o requirements.txt`) and name that file")
    if not isinstance(project, dict):
        raise RequirementsError(f"requirements: {shown} has no [project] table: list the "
                                "agent's dependencies in [project].dependencies or in a "
                                "requirements file")
    if "dependencies" in (project.get("dynamic") or []):
        raise RequirementsError(f"requirements: {shown} declares its dependencies dynamic, "
                                "so they cannot be read without building the project: name "
                                "a requirements file instead")
    entries = project.get("dependencies") or []
    if not isinstance(entries, list):
        raise RequirementsError(f"requirements: {shown}: [project].dependencies is not a list")
    found = []
    for entry in entries:
        try:
            found.append(str(Requirement(str(entry))))
        except InvalidRequirement as e:
            raise RequirementsError(f"requirements: {shown}: {visible(str(entry), keep='')!r} "
                                    f"in [project].dependencies is not a requirement: {e}") from e
    return found


_INCLUDE = re.compile(r"^(?:-r|--requirement|-c|--constraint)(?:\s+|=)(?P<file>\S+)")


def _requirements_txt(path: Path, shown: str, depth: int = 0) -> list[str]:
    """The requirements a requirements file names (pip's format): one per line, comments
    and line continuations as pip reads them, ``-r``/``-c`` includes followed relative to
    the file (at most :data:`MAX_INCLUDE_DEPTH` deep); installer options, editable
    installs, paths and URLs name no version to compare and are left out here (the
    installer still gets the whole file).

    Raises:
        RequirementsError: the file (or an include) cannot be read.
    """
    try:
        text = read_text(path, MAX_CONFIG_BYTES)
    except (OSError, FileLimitError, UnicodeDecodeError) as e:
        raise RequirementsError(f"requirements: {shown}: cannot read it: {e}") from e
    found: list[str] = []
    for line in text.replace("\\\n", "").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        include = _INCLUDE.match(line)
        if include and depth < MAX_INCLUDE_DEPTH:
            name = include.group("file")
            found += _requirements_txt(path.parent / name, f"{shown} -> {name}", depth + 1)
            continue
        if not line or line.startswith(("-", ".", "/")) or "://" in line:
            continue
        try:
            found.append(str(Requirement(line)))
        except InvalidRequirement:
            continue  # pip says what is wrong when it installs; nothing to compare here
    return found


def declared_requirements(path: Path, shown: str) -> list[str]:
    """The requirement strings of a dependency file: a ``pyproject.toml``'s
    ``[project].dependencies`` (:func:`pyproject_requirements`), else a requirements file's
    lines (:func:`_requirements_txt`).

    Raises:
        RequirementsError: the file cannot be read, or a pyproject has no usable
            ``[project].dependencies``.
    """
    if path.name == PYPROJECT:
        return pyproject_requirements(path, shown)
    return _requirements_txt(path, shown)


def dependency_file(agent_dir: Path, stop: Path) -> Path | None:
    """The agent's own dependency file (module docstring): in ``agent_dir``, else in the
    nearest folder above it below ``stop`` (the folder of adk-eval.yaml) that holds one of
    :data:`DEPENDENCY_FILES`; None when there is none. Symlinks are not followed out: a
    file must be a regular file."""
    stop = stop.resolve()
    folder = agent_dir.resolve()
    while folder != stop and stop in folder.parents:
        for name in DEPENDENCY_FILES:
            candidate = folder / name
            if candidate.is_file() and not candidate.is_symlink():
                return candidate
        folder = folder.parent
    return None


class DependencyFailure(BaseModel):
    """A suite's own dependencies that did not install: the ``file`` (relative to the
    working directory) and why (``message``, naming the file)."""

    file: str
    message: str


class DependencyConflict(BaseModel):
    """Dependencies that cannot live together in one job: ``package`` (its canonical
    name), the suites and what each requires of it (``{"suite": "a==1.0 (agents/a/
    requirements.txt)"}``), ``why`` in words, and the pairs of those suites that may not
    share a job (``apart``; empty: each suite alone, a google-adk of its own)."""

    package: str
    suites: dict[str, str] = Field(default_factory=dict)
    why: str
    apart: list[tuple[str, str]] = Field(default_factory=list)

    def line(self) -> str:
        """One line for ``init``, ``plan`` and the run's log, with what to do."""
        who = "; ".join(f"suite {name}: {said}" for name, said in self.suites.items())
        return (f"dependencies that cannot live together: {self.why} ({who}); evaluate them in "
                "separate jobs (the matrix workflow `init` writes puts each in its own group)")


def _candidates(specifiers: Iterable[SpecifierSet]) -> list[Version]:
    """The versions the specifiers name, and the next micro, minor and major release of
    each: enough to tell whether some version satisfies them all."""
    named: set[Version] = set()
    for spec in specifiers:
        for one in spec:
            try:
                version = Version(one.version.replace(".*", ""))
            except InvalidVersion:
                continue
            major, minor, micro = (list(version.release) + [0, 0])[:3]
            named |= {version, Version(f"{major}.{minor}.{micro + 1}"),
                      Version(f"{major}.{minor + 1}.0"), Version(f"{major + 1}.0.0")}
    return sorted(named)


def _satisfiable(specifiers: list[SpecifierSet]) -> bool:
    """Whether some version satisfies every specifier (on :func:`_candidates`; a set of
    specifiers naming no version, ``a`` alone, is satisfiable)."""
    candidates = _candidates(specifiers)
    if not candidates:
        return True
    return any(all(s.contains(v, prereleases=True) for s in specifiers) for v in candidates)


def _by_package(declared: Mapping[str, tuple[str, list[str]]]
                ) -> dict[str, dict[str, SpecifierSet]]:
    """Each package's specifier per suite (``declared``: suite -> (file shown, requirement
    strings)); requirements with an environment marker or an unparsable specifier are
    left out."""
    found: dict[str, dict[str, SpecifierSet]] = {}
    for suite, (_, strings) in declared.items():
        for text in strings:
            try:
                requirement = Requirement(text)
                spec = SpecifierSet(str(requirement.specifier))
            except (InvalidRequirement, InvalidSpecifier):
                continue
            if requirement.marker is not None:
                continue
            name = canonicalize_name(requirement.name)
            mine = found.setdefault(name, {})
            mine[suite] = mine[suite] & spec if suite in mine else spec
    return found


def _said(name: str, spec: SpecifierSet, shown: str) -> str:
    return f"{name}{spec or ''} ({shown})"


def dependency_conflicts(
    declared: Mapping[str, tuple[str, list[str]]],
    adk_version: str | None = None, adk_range: str | None = None,
) -> list[DependencyConflict]:
    """The dependencies of ``declared`` (suite -> (its dependency file as shown, its
    requirement strings)) that cannot live together (module docstring): per package, the
    pairs of suites whose specifiers no version satisfies at once (one conflict naming
    every suite of such a pair, and the pairs); per suite, a google-adk
    specifier that excludes ``adk_range`` (the supported range) entirely, or the running
    ``adk_version``. In package order."""
    out = []
    for name, specs in sorted(_by_package(declared).items()):
        shown = {suite: _said(name, spec, declared[suite][0]) for suite, spec in specs.items()}
        suites = list(specs)
        pairs = [(a, b) for i, a in enumerate(suites) for b in suites[i + 1:]
                 if not _satisfiable([specs[a], specs[b]])]
        if pairs:
            named = [s for s in suites if any(s in pair for pair in pairs)]
            out.append(DependencyConflict(
                package=name, suites={s: shown[s] for s in named}, apart=pairs,
                why=f"no version of {name} satisfies {'both' if len(named) == 2 else 'all'} "
                    "of them"))
        if name != ADK:
            continue
        for suite, spec in specs.items():
            out += _adk_conflict(suite, spec, shown[suite], adk_version, adk_range)
    return out


def _adk_conflict(suite: str, spec: SpecifierSet, shown: str, adk_version: str | None,
                  adk_range: str | None) -> list[DependencyConflict]:
    """A suite's google-adk specifier that excludes the supported range, or the google-adk
    this action runs."""
    if adk_range and not _satisfiable([spec, SpecifierSet(adk_range)]):
        why = f"google-adk{spec} is outside the range this action supports ({adk_range})"
    elif adk_version and str(spec) and not spec.contains(adk_version, prereleases=True):
        why = (f"google-adk{spec} is not the google-adk {adk_version} this action runs: "
               "installing it replaces google-adk for every suite of the job")
    else:
        return []
    return [DependencyConflict(package=ADK, suites={suite: shown}, why=why)]

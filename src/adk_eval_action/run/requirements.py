"""Installing the user's agent requirements into the action's environment (the ``requirements``
input), and refusing a google-adk that moved out of the range this package supports.

The container image carries this package and google-adk, not the agent's own dependencies;
the action installs them first and then starts itself again so that the evaluation imports
what was installed (``action.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import inside_root
from adk_eval_action.github.logs import annotation
from adk_eval_action.project.dependencies import (
    DependencyConflict,
    DependencyFailure,
    RequirementsError,
    declared_requirements,
    dependency_conflicts,
    pyproject_requirements,
)
from adk_eval_action.project.discovery import Suite
from adk_eval_action.results.model import package_version

__all__ = [
    "RequirementsError", "install_requirements", "install_suite_requirements",
    "pyproject_requirements", "read_install_failures", "suite_conflicts",
    "restart_without_requirements", "supported_adk_range",
]

log = logging.getLogger(__name__)


def _pip_args(specs: Sequence[str], workdir: Path, root: Path) -> list[str]:
    """The installer's arguments: ``-r FILE`` per requirements file, and the requirement
    strings of each ``pyproject.toml`` (or folder holding one: :func:`pyproject_requirements`).

    Raises:
        OutsideRoot: a spec resolves outside ``root``.
        RequirementsError: a spec is neither, or its pyproject cannot be read.
    """
    args: list[str] = []
    for spec in specs:
        path = workdir / spec
        inside_root(path, root, "requirements")
        if path.is_dir() and (path / "pyproject.toml").is_file():
            path, spec = path / "pyproject.toml", f"{spec.rstrip('/')}/pyproject.toml"
        if path.name == "pyproject.toml" and path.is_file():
            args += pyproject_requirements(path, spec)
        elif path.is_file():
            args += ["-r", spec]
        else:
            raise RequirementsError(f"requirements: {spec} is not a file or a project folder")
    return args


def installer_command() -> list[str]:
    """``uv pip install --python <this python>`` when a ``uv`` lies beside this Python
    (the image's virtualenv), else ``<this python> -m pip install`` when this Python has
    pip, else the ``uv`` on ``PATH`` (a virtualenv ``uv venv`` made carries no pip)."""
    uv = Path(sys.executable).with_name("uv")
    if not uv.is_file() and importlib.util.find_spec("pip") is None:
        uv = Path(shutil.which("uv") or uv)
    if uv.is_file():
        return [str(uv), "pip", "install", "--python", sys.executable]
    return [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]


def install_requirements(
    specs: Sequence[str], workdir: Path,
    run: Callable[..., subprocess.CompletedProcess[str]] | None = None,
    root: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Install the user's agent dependencies into this environment.

    Each spec (relative to ``workdir``) is a requirements file (``-r``), a
    ``pyproject.toml``, or a folder holding one, whose ``[project].dependencies`` are
    installed (:func:`pyproject_requirements`; the project itself is not built). The
    installer is the ``uv`` beside this Python when there is one (our image carries uv and
    no pip; ``uv pip install --python`` installs into this interpreter's environment), else
    this Python's pip. ``run`` is
    ``subprocess.run`` unless given. Every spec must lie inside ``root`` (the repository
    root; default ``workdir``). ``env`` is the installer's environment (default: this
    process's); the action gives it one without its token, as the agent gets.

    Raises:
        OutsideRoot: a spec resolves outside ``root``.
        RequirementsError: a spec is missing, the installer fails, or google-adk ends
            outside the range this package supports (:func:`supported_adk_range`).
    """
    args = _pip_args(specs, workdir, root or workdir)
    if not args:
        log.info("requirements: %s list no dependency: nothing to install", ", ".join(specs))
        return
    before = package_version("google-adk")
    command = installer_command() + args
    log.info("$ %s", " ".join(command))
    completed = (run or subprocess.run)(
        command, check=False, cwd=workdir, env=None if env is None else dict(env))
    if completed.returncode != 0:
        raise RequirementsError(f"{Path(command[0]).name} could not install "
                                f"{', '.join(specs)} (exit {completed.returncode}); see the "
                                "log above")
    importlib.invalidate_caches()
    after = package_version("google-adk")
    if after != before:
        supported = supported_adk_range()
        if after is None or (supported is not None and not _in_range(after, supported)):
            raise RequirementsError(
                f"Installing {', '.join(specs)} changed google-adk from {before} to {after}, "
                f"outside the range this action supports ({supported}). Pin google-adk to a "
                "supported version in your requirements, or remove it from them."
            )
        log.info("Your requirements changed google-adk from %s to %s.", before, after,
                 extra=annotation("notice"))


def install_suite_requirements(
    suites: Sequence[Suite], workdir: Path, root: Path,
    run: Callable[..., subprocess.CompletedProcess[str]] | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, DependencyFailure]:
    """Installs each suite's own dependency files (``Suite.requirements``,
    project.dependencies) into this environment, one installer call per distinct set of
    files, run in the folder of each file so that the paths inside it resolve as ``pip
    install -r`` run there would. A file whose google-adk specifier excludes the supported
    range is not installed (it would move google-adk for every suite). A failure is the
    suite's (and every suite's with the same files), never the run's: returned, suite name
    to the file (relative to ``workdir``) and why; the log says it as it happens.
    ``run``, ``root`` and ``env`` are :func:`install_requirements`'."""
    failures: dict[str, DependencyFailure] = {}
    done: dict[tuple[Path, ...], DependencyFailure | None] = {}
    for suite in suites:
        files = tuple(suite.requirements)
        if not files:
            continue
        if files not in done:
            log.info("requirements of suite %s: %s", suite.name,
                     ", ".join(_shown(f, workdir) for f in files))
            done[files] = _install_files(files, workdir, root, run, env)
        failure = done[files]
        if failure is not None:
            log.error("suite %s: %s", suite.name, failure.message)
            failures[suite.name] = failure
    return failures


def _shown(path: Path, workdir: Path) -> str:
    try:
        return path.resolve().relative_to(workdir.resolve()).as_posix()
    except ValueError:
        return str(path)


def _install_files(
    files: Sequence[Path], workdir: Path, root: Path,
    run: Callable[..., subprocess.CompletedProcess[str]] | None,
    env: Mapping[str, str] | None,
) -> DependencyFailure | None:
    """One suite's files installed (:func:`install_suite_requirements`); why not, or None."""
    for path in files:
        shown = _shown(path, workdir)
        try:
            refused = _adk_out_of_range(path, shown)
            if refused is not None:
                return DependencyFailure(file=shown, message=refused)
            install_requirements([path.name], path.parent, run=run, root=root, env=env)
        except AdkEvalActionError as e:
            said = str(e).replace(f"requirements: {path.name}", f"requirements: {shown}")
            return DependencyFailure(file=shown, message=f"{shown} did not install: {said}")
    return None


def _adk_out_of_range(path: Path, shown: str) -> str | None:
    """Why ``path`` is not installed: its google-adk specifier excludes the supported
    range (project.dependencies.dependency_conflicts); None when it does not."""
    found = dependency_conflicts({"-": (shown, declared_requirements(path, shown))},
                                 adk_range=supported_adk_range())
    refused = [c.why for c in found if c.package == "google-adk"]
    return (f"{shown} was not installed: {refused[0]}; pin google-adk within it, or remove "
            "it from the file" if refused else None)


def supported_adk_range() -> str | None:
    """The google-adk specifier this package declares (its pyproject dependencies, read
    from the installed metadata and parsed with ``packaging``, as pip reads them)."""
    for line in importlib.metadata.requires("adk-eval-action") or []:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "google-adk" and requirement.marker is None:
            return str(requirement.specifier)
    return None


def _in_range(version: str, specifier: str) -> bool:
    return SpecifierSet(specifier).contains(version, prereleases=True)


def suite_conflicts(suites: Sequence[Suite], workdir: Path) -> list[DependencyConflict]:
    """The own dependencies of ``suites`` that cannot live together in this environment
    (project.dependencies.dependency_conflicts, against the google-adk installed here and
    the range this package supports); a file that cannot be read is left out here (its
    install says why)."""
    declared: dict[str, tuple[str, list[str]]] = {}
    for suite in suites:
        found: list[str] = []
        for path in suite.requirements:
            try:
                found += declared_requirements(path, _shown(path, workdir))
            except RequirementsError:
                continue
        if found:
            declared[suite.name] = (", ".join(_shown(p, workdir) for p in suite.requirements),
                                    found)
    return dependency_conflicts(declared, package_version("google-adk"), supported_adk_range())


def read_install_failures(path: Path | None) -> dict[str, DependencyFailure] | None:
    """The suites whose own dependencies did not install, as the process before the
    restart wrote them (:func:`restart_without_requirements`); the file is removed. None
    without a file; an unreadable one is none (the restart's own file, never input)."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
        return {str(k): DependencyFailure.model_validate(v) for k, v in data.items()}
    except (OSError, ValueError, AttributeError):
        return None


def restart_without_requirements(
    start_dir: Path, failures: Mapping[str, DependencyFailure] | None = None,
) -> None:
    """Start this command again, in a process that sees the freshly installed packages,
    from `start_dir`, where this process started (it applies working_directory again);
    the suites whose own dependencies did not install (``failures``) go to it in a file
    of the system's temporary folder (``--install-failures``)."""
    argv = [sys.executable, "-c", "from adk_eval_action.cli import entry; entry()",
            *sys.argv[1:], "--skip-requirements"]
    if failures:
        handle, name = tempfile.mkstemp(prefix="adk-eval-install-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({k: v.model_dump() for k, v in failures.items()}, out)
        argv += ["--install-failures", name]
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(start_dir)
    os.execv(sys.executable, argv)

"""Installing the user's agent requirements into the action's environment (the ``requirements``
input), and refusing a google-adk that moved out of the range this package supports.

The container image carries this package and google-adk, not the agent's own dependencies;
the action installs them first and then starts itself again so that the evaluation imports
what was installed (``action.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import MAX_CONFIG_BYTES, FileLimitError, inside_root, read_text
from adk_eval_action.github.logs import annotation
from adk_eval_action.results.model import package_version
from adk_eval_action.text import visible

__all__ = [
    "RequirementsError", "install_requirements", "pyproject_requirements",
    "restart_without_requirements", "supported_adk_range",
]

log = logging.getLogger(__name__)


class RequirementsError(AdkEvalActionError):
    """The user's requirements could not be installed, or moved google-adk out of range."""


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
        RequirementsError: no ``[project]`` table, dependencies declared ``dynamic``, or an
            entry that is not a requirement (an installer option such as ``--index-url``
            too), each naming ``shown``.
    """
    project = _load_toml(path, shown).get("project")
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
    (the image's virtualenv), else ``<this python> -m pip install``."""
    uv = Path(sys.executable).with_name("uv")
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


def restart_without_requirements(start_dir: Path) -> None:
    """Start this command again, in a process that sees the freshly installed packages,
    from `start_dir`, where this process started (it applies working_directory again)."""
    argv = [sys.executable, "-c", "from adk_eval_action.cli import entry; entry()",
            *sys.argv[1:], "--skip-requirements"]
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(start_dir)
    os.execv(sys.executable, argv)

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

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import inside_root
from adk_eval_action.github.logs import annotation
from adk_eval_action.results.model import package_version

__all__ = [
    "RequirementsError", "install_requirements", "restart_without_requirements",
    "supported_adk_range",
]

log = logging.getLogger(__name__)


class RequirementsError(AdkEvalActionError):
    """The user's requirements could not be installed, or moved google-adk out of range."""


def _pip_args(specs: Sequence[str], workdir: Path, root: Path) -> list[str]:
    args: list[str] = []
    for spec in specs:
        path = workdir / spec
        inside_root(path, root, "requirements")
        if path.name == "pyproject.toml" and path.is_file():
            args.append(str(path.parent.resolve()))
        elif path.is_dir() and (path / "pyproject.toml").is_file():
            args.append(str(path.resolve()))
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
    ``pyproject.toml``, or a folder holding one. The installer is the ``uv`` beside this
    Python when there is one (our image carries uv and no pip; ``uv pip install --python``
    installs into this interpreter's environment), else this Python's pip. ``run`` is
    ``subprocess.run`` unless given. Every spec must lie inside ``root`` (the repository
    root; default ``workdir``). ``env`` is the installer's environment (default: this
    process's); the action gives it one without its token, as the agent gets.

    Raises:
        OutsideRoot: a spec resolves outside ``root``.
        RequirementsError: a spec is missing, the installer fails, or google-adk ends
            outside the range this package supports (:func:`supported_adk_range`).
    """
    args = _pip_args(specs, workdir, root or workdir)
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

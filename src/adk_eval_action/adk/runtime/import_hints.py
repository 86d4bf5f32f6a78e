"""What to do about an agent that does not import, from the exception it raised.

The fix depends on what failed, not on the agent module:

* a module that is not in the repository (``ModuleNotFoundError`` for ``firestore``): a
  third-party package the evaluation's environment lacks; install the agent's
  dependencies (its ``requirements.txt`` or ``pyproject.toml``, named in the action's
  ``requirements`` input);
* a module of the repository's own that is not importable (``No module named 'src'`` for
  ``backend/src/``): the package root is not on ``sys.path``. google-adk puts the agent's
  parent folder there (google.adk.cli.utils.agent_loader), adk-eval-action the repository
  root too; anything else comes from ``PYTHONPATH``;
* anything else: the agent's own code raised while it was imported.
"""

from __future__ import annotations

import re
from pathlib import Path

from adk_eval_action.adk.runtime.behaviour import exception_chain
from adk_eval_action.adk.runtime.user_exits import unwrapped
from adk_eval_action.files import FileLimitError, read_bytes

__all__ = ["DEPENDENCY_FILES", "dependency_file", "import_hint", "missing_module"]

#: The files that list an agent's dependencies, as the action's `requirements` input takes them.
DEPENDENCY_FILES = ("requirements.txt", "pyproject.toml")


def missing_module(error: BaseException) -> str | None:
    """The dotted name of the module a ``ModuleNotFoundError`` in ``error``'s chain could
    not find, or None."""
    for link in exception_chain(unwrapped(error)):
        if isinstance(link, ModuleNotFoundError) and link.name:
            return link.name
    return None


def _up_to(folder: Path, root: Path) -> list[Path]:
    """``folder`` and its parents up to ``root`` (only ``folder`` when it is outside)."""
    folder, root = folder.resolve(), root.resolve()
    if folder != root and root not in folder.parents:
        return [folder]
    return [folder, *(p for p in folder.parents if p == root or root in p.parents)]


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def dependency_file(agent_dir: Path, root: Path) -> Path | None:
    """The agent's dependency file: the first :data:`DEPENDENCY_FILES` in the agent folder
    or a folder above it, up to ``root``."""
    for folder in _up_to(agent_dir, root):
        for name in DEPENDENCY_FILES:
            if (folder / name).is_file():
                return folder / name
    return None


def _names(path: Path, module: str) -> bool:
    """Whether the dependency file ``path`` mentions the distribution of ``module`` (names
    compared as PEP 503 normalizes them, so ``notes-store-client`` is ``notes_store_client``)."""
    try:
        text = read_bytes(path).decode("utf-8", "replace").lower()
    except (OSError, FileLimitError):
        return False
    wanted = re.sub(r"[-_.]+", "-", module.lower())
    return wanted in re.sub(r"[-_.]+", "-", text)


def _own_package(top: str, agent_dir: Path, root: Path) -> Path | None:
    """The folder (package) or ``.py`` file named ``top`` in the agent folder's parents up to
    ``root``: code of the repository's own."""
    for folder in _up_to(agent_dir.parent, root):
        for candidate in (folder / top, folder / f"{top}.py"):
            if candidate.is_dir() or candidate.is_file():
                return candidate
    return None


def import_hint(error: BaseException, agent_dir: Path, root: Path) -> str:
    """What to do about ``error``, raised importing the agent ``agent_dir`` (paths shown
    relative to the repository ``root``); see the module docstring."""
    missing = missing_module(error)
    if missing is None:
        return "fix the agent's code that raised while it was imported (`adk eval` would fail " \
               "the same way)"
    top = missing.split(".")[0]
    own = _own_package(top, agent_dir, root)
    on_path = {agent_dir.parent.resolve(), root.resolve()}
    if own is not None and own.parent.resolve() not in on_path:
        holder = _shown(own.parent, root)
        return (f"`{top}` is this repository's own code ({_shown(own, root)}), imported from "
                f"the folder that holds it ({holder}), which is not on the import path: "
                "google-adk puts the agent's parent folder there and adk-eval-action the "
                f"repository root; add {holder} to PYTHONPATH (in the workflow step's `env:`, "
                f"`PYTHONPATH: ${{{{ github.workspace }}}}/{holder}`), or import it from a "
                "folder on the path")
    if own is not None:
        return (f"`{missing}` is not in this repository's `{top}` ({_shown(own, root)}): "
                "check the import's spelling and that the module exists")
    found = dependency_file(agent_dir, root)
    what = f"`{missing}` is not installed where the evaluation runs: install the agent's " \
           "dependencies"
    if found is None:
        return (f"{what} (list them in a requirements.txt beside the agent and name it as "
                "the suite's `requirements` in adk-eval.yaml, or in the action's "
                "`requirements` input)")
    listed = ", which lists it," if _names(found, missing) or _names(found, top) else ""
    shown = _shown(found, root)
    local = (f"pip install -r {shown}" if found.name == "requirements.txt"
             else f"pip install -e {_shown(found.parent, root)}")
    return (f"{what}: name {shown}{listed} as the suite's `requirements` in adk-eval.yaml "
            f"(`adk-eval-action init` does), or in the action's `requirements` input "
            f"(locally: `{local}`)")

"""The shapes of agent folder google-adk loads, and the ADK repositories it does not.

google-adk's agent loader (google.adk.cli.utils.agent_loader.AgentLoader, and ``adk eval``'s
``get_app_or_root_agent`` in google.adk.cli.cli_eval) loads a folder ``<name>/`` whose
package exposes the agent as ``root_agent`` (or an ``App`` as ``app``, or a
``get_agent_async`` factory):

* in ``<name>/agent.py`` (or an ``agent/`` package), which ``__init__.py`` imports;
* in ``<name>/__init__.py`` itself (``agents_dir/{agent_name}/__init__.py`` "with
  root_agent in the package");
* or as ``<name>/root_agent.yaml``, an agent config.

The checks here read file names and, for the second shape, the first bytes of
``__init__.py``: discovery decides what is an agent folder without importing anything.
ADK for TypeScript (npm ``@google/adk``, an ``agent.ts``) is another framework with its own
runner; its repositories are named as not supported rather than sent into a Python import.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from adk_eval_action.files import FileLimitError, read_bytes, read_head
from adk_eval_action.project.evalset_files import walk

__all__ = ["ACCEPTED_SHAPES", "agent_folders", "exports_agent", "is_agent_dir", "typescript_adk"]

ACCEPTED_SHAPES = (
    "google-adk loads an agent folder whose `__init__.py` exposes `root_agent` (or `app`, "
    "or `get_agent_async`) itself or from `agent.py` (or an `agent/` package), or that "
    "holds `root_agent.yaml`"
)
#: What of ``__init__.py`` is read to see whether it exposes an agent itself.
INIT_HEAD_BYTES = 64 * 1024
_EXPORTS = re.compile(
    r"^\s*(?:from\s+\S+\s+import\s+[^#\n]*\b(?:root_agent|app|get_agent_async)\b"
    r"|(?:root_agent|app)\s*(?::[^=\n]*)?=[^=]"
    r"|(?:async\s+)?def\s+get_agent_async\b)",
    re.MULTILINE,
)
#: How a Node package depends on ADK for TypeScript.
TYPESCRIPT_PACKAGE = "@google/adk"


def exports_agent(init_file: Path) -> bool:
    """Whether ``__init__.py`` (its first :data:`INIT_HEAD_BYTES`) assigns or imports
    ``root_agent`` or ``app``, or defines ``get_agent_async``: the package exposes the
    agent itself. A file that cannot be read says no."""
    try:
        head = read_head(init_file, INIT_HEAD_BYTES)
    except (OSError, FileLimitError):
        return False
    return bool(_EXPORTS.search(head.decode("utf-8", "replace")))


def is_agent_dir(folder: Path) -> bool:
    """True when google-adk can load ``folder`` as an agent (module docstring): a package
    with ``agent.py``, an ``agent/`` package or ``root_agent.yaml``, or whose
    ``__init__.py`` exposes the agent itself."""
    init = folder / "__init__.py"
    if not init.is_file():
        return False
    return (
        (folder / "agent.py").is_file()
        or (folder / "agent" / "__init__.py").is_file()
        or (folder / "root_agent.yaml").is_file()
        or exports_agent(init)
    )


def _node_package_uses_adk(package_json: Path) -> bool:
    try:
        data = json.loads(read_bytes(package_json, INIT_HEAD_BYTES).decode("utf-8", "replace"))
    except (OSError, FileLimitError, ValueError, RecursionError):
        return False
    if not isinstance(data, dict):
        return False
    return any(isinstance(deps, dict) and TYPESCRIPT_PACKAGE in deps
               for key in ("dependencies", "devDependencies", "peerDependencies")
               for deps in [data.get(key)])


def typescript_adk(folder: Path, root: Path) -> Path | None:
    """The file that makes ``folder`` (or a folder above it, up to ``root``) an ADK for
    TypeScript project: an ``agent.ts`` in ``folder``, or a ``package.json`` that depends
    on ``@google/adk``; None when there is neither."""
    if (folder / "agent.ts").is_file():
        return folder / "agent.ts"
    root = root.resolve()
    here = folder.resolve()
    for current in [here, *here.parents]:
        package = current / "package.json"
        if package.is_file() and _node_package_uses_adk(package):
            return package
        if current == root or root not in current.parents:
            break
    return None


def agent_folders(root: Path, limit: int = 20) -> list[Path]:
    """The agent folders under ``root`` (:func:`is_agent_dir`), sorted, at most ``limit``:
    the candidates ``init`` names for eval sets without an agent."""
    found = []
    for folder, _ in walk(root):
        if folder != root and is_agent_dir(folder):
            found.append(folder)
            if len(found) >= limit:
                break
    return sorted(found)

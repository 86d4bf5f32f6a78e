"""What a suite's scores depend on in the repository besides its eval sets and eval config:
the files of its agent folder, as one digest (the history's suite inputs hash,
:func:`adk_eval_action.results.history_file.inputs_hash`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: Files of an agent folder digested at most; a larger folder has no digest (unknown).
MAX_AGENT_FILES = 5_000
#: Bytes of an agent folder read at most for its digest.
MAX_AGENT_BYTES = 256 * 1024 * 1024
_SKIPPED_FOLDERS = ("__pycache__", "node_modules")
_CHUNK = 1024 * 1024


def folder_digest(folder: Path) -> str | None:
    """A SHA-256 over every file under ``folder`` (relative name and content), in name
    order: equal digests mean equal files. Hidden entries (``.adk``, where ``adk eval``
    writes its eval history; ``.git``), ``__pycache__``, ``node_modules`` and compiled
    ``.pyc`` files are left out, as is a symlink's target (its text is digested instead).
    None when ``folder`` is not a folder, holds more than :data:`MAX_AGENT_FILES` files
    or :data:`MAX_AGENT_BYTES` bytes, or a file cannot be read."""
    if not folder.is_dir():
        return None
    digest, files, total = hashlib.sha256(), 0, 0
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS)
        for name in sorted(names):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            path = Path(top, name)
            files += 1
            if files > MAX_AGENT_FILES:
                return None
            digest.update(path.relative_to(folder).as_posix().encode("utf-8", "replace") + b"\0")
            try:
                total += _digest_file(path, digest, MAX_AGENT_BYTES - total)
            except (OSError, ValueError):
                return None
    return "sha256:" + digest.hexdigest()


def _digest_file(path: Path, digest: hashlib._Hash, room: int) -> int:
    """Adds ``path`` (a symlink: its target's name) to ``digest``; the bytes read.

    Raises:
        ValueError: more than ``room`` bytes.
        OSError: it cannot be read.
    """
    if path.is_symlink():
        digest.update(b"link:" + os.readlink(path).encode("utf-8", "replace") + b"\0")
        return 0
    if not path.is_file():
        return 0
    read = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            read += len(chunk)
            if read > room:
                raise ValueError("agent folder too large to digest")
            digest.update(chunk)
    digest.update(b"\0")
    return read

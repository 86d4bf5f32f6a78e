"""A small real file system for full-disk tests: a tmpfs of a few kilobytes mounted on a
folder (root only, as the machines that run the tests are; elsewhere the test is
skipped, saying why). Nothing is simulated: writes past its size fail with ENOSPC as they
would on a full runner disk."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "64k", free_bytes: int | None = None) -> Iterator[Path]:
    """``folder`` (created) as a tmpfs of ``size``, filled so that about ``free_bytes``
    are left when given; unmounted on exit.

    Raises:
        pytest.skip.Exception: the tmpfs cannot be mounted here (not root, no mount).
    """
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {done.stderr.strip() or done.returncode}")
    try:
        if free_bytes is not None:
            _fill(folder, free_bytes)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path, free_bytes: int) -> None:
    """Writes a filler file until at most ``free_bytes`` are free."""
    import os

    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with contextlib.suppress(OSError):
        (folder / "filler").write_bytes(b"\0" * max(0, free - free_bytes))

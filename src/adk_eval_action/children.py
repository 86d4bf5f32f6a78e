"""Child processes that never outlive the run: each starts in its own process group and
is ended with its own children when the run stops (a signal, a timeout, an error), so a
cancelled job leaves no evaluation of the base commit calling models as an orphan.

The children alive are the one process-wide record here (:func:`terminate_all`): the
baseline re-run waits on its child in a worker thread, which a signal in the main thread
cannot interrupt, so the signal handler ends the children themselves
(``run.signals.interrupt_on_signals``) and the waiting thread then returns at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["ChildTimeout", "end_process_group", "run_child", "terminate_all"]

#: Seconds a child gets to exit after SIGTERM before it is killed.
TERM_GRACE_S = 5.0


_ALIVE: set[subprocess.Popen[str]] = set()
_ALIVE_LOCK = threading.Lock()


def terminate_all() -> int:
    """SIGTERM to the process group of every child :func:`run_child` started and that is
    still running (without waiting: safe in a signal handler); returns how many."""
    with _ALIVE_LOCK:
        alive = [p for p in _ALIVE if p.poll() is None]
    for process in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
    return len(alive)


class ChildTimeout(Exception):  # noqa: N818 - a plain outcome of a child, named as such
    """A child ran past its time limit and was ended."""


def end_process_group(process: subprocess.Popen[Any], grace: float = TERM_GRACE_S) -> None:
    """SIGTERM to the child's process group, SIGKILL after ``grace`` seconds; reaped."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_child(
    command: list[str], cwd: Path, env: Mapping[str, str] | None = None,
    on_line: Callable[[str], None] | None = None, timeout: float | None = None,
) -> int:
    """Runs ``command`` in its own session (process group) with stdout and stderr merged,
    passing each line to ``on_line``; returns its exit code.

    Whatever stops this function early (``Interrupted`` by a signal, KeyboardInterrupt, an
    exception of ``on_line``, the ``timeout`` in seconds) ends the child's whole process
    group first.

    Raises:
        OSError: the command cannot be started.
        ChildTimeout: it ran longer than ``timeout``.
    """
    process = subprocess.Popen(
        command, cwd=cwd, env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        start_new_session=True,
    )
    with _ALIVE_LOCK:
        _ALIVE.add(process)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if on_line is not None:
                on_line(line.rstrip("\n"))
            if deadline is not None and time.monotonic() > deadline:
                raise ChildTimeout(f"{command[0]} ran longer than {timeout:.0f} s")
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return process.wait(timeout=remaining)
        except subprocess.TimeoutExpired as e:
            raise ChildTimeout(f"{command[0]} ran longer than {timeout:.0f} s") from e
    finally:
        end_process_group(process)
        with _ALIVE_LOCK:
            _ALIVE.discard(process)
        if process.stdout is not None:
            process.stdout.close()

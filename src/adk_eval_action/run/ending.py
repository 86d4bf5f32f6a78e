"""The process's end: once a command has written what it writes (results, comment, job
summary, outputs), the process ends with the command's exit code, whatever threads the
agent's code left running.

CPython waits for every non-daemon thread before it exits, without a limit
(``threading._shutdown``, called by ``Py_FinalizeEx``: https://docs.python.org/3/library/threading.html#thread-objects,
"The entire Python program exits when no alive non-daemon threads are left"). A thread an
agent starts and never joins (a database driver's keep-alive, an API client's background
flusher) would keep a finished run alive until the CI job's timeout, and its exit code
would be lost. :func:`end_process` lets the interpreter end as usual (idle
``concurrent.futures`` workers and threads that finish by themselves are waited for, exit
handlers run) and, when non-daemon threads are still alive after :data:`LINGER_GRACE_S`,
names them once in a warning and ends the process with the exit code.

Only a process entry point calls this (``cli.entry``: the console script, the action's
container entry point and the process the action restarts into after installing the
``requirements`` input), never a function of the stages: in-process callers keep their
threads.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NoReturn

from adk_eval_action.github.logs import GitHubFormatter, PlainFormatter, annotation, log_to
from adk_eval_action.redaction import Redactor, secret_values
from adk_eval_action.text import visible

log = logging.getLogger(__name__)

__all__ = ["LINGER_GRACE_S", "console_warning", "end_process", "end_when_left",
           "lingering_threads", "threads_warning"]

LINGER_GRACE_S = 2.0
"""How long, in seconds, the interpreter's own exit may wait for the non-daemon threads
left running before the process ends without them."""


def lingering_threads() -> list[threading.Thread]:
    """The non-daemon threads alive besides the calling one: those CPython's exit waits for."""
    current = threading.current_thread()
    return [t for t in threading.enumerate()
            if t is not current and not t.daemon and t.is_alive()]


def threads_warning(names: Sequence[str], code: int) -> str:
    """The one warning naming the threads (``names``, each on one line, control and bidi
    characters as their escapes) a run ended without, and how the agent can end them."""
    counts = Counter(names)  # an agent imported twice (preflight, run) starts its threads twice
    shown = ", ".join(f"`{visible(name, keep='')}`" + (f" ({n}x)" if n > 1 else "")
                      for name, n in counts.items())
    return (f"{len(names)} thread(s) the agent's code started were still running when the "
            f"run had written its results: {shown}; the process ended without waiting for "
            f"them (exit code {code}). Stop or join them when the agent is done, or start "
            "them with daemon=True, so the agent's process ends by itself")


def end_when_left(
    threads: Sequence[threading.Thread], code: int, warn: Callable[[str], None],
    grace_s: float = LINGER_GRACE_S, exit_process: Callable[[int], object] = os._exit,
) -> bool:
    """Wait up to ``grace_s`` seconds for ``threads`` to end; if any is still alive, say
    which (``warn``, once; :func:`threads_warning`), flush stdout and stderr, and end the
    process with ``code`` (``exit_process``: ``os._exit``, which waits for no thread).
    Returns whether it ended the process (with another ``exit_process`` than ``os._exit``)."""
    deadline = time.monotonic() + grace_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    left = [t for t in threads if t.is_alive()]
    if not left:
        return False
    try:
        warn(threads_warning([t.name for t in left], code))
    finally:
        _flush()
        exit_process(code)
    return True


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: the code counts
            stream.flush()


def end_process(
    code: int, warn: Callable[[str], None], grace_s: float | None = None,
) -> NoReturn:
    """End the process with ``code`` once everything is written: stdout and stderr are
    flushed; when non-daemon threads besides this one are alive, a daemon thread gives the
    interpreter's exit ``grace_s`` seconds (default :data:`LINGER_GRACE_S`) to see them
    end, and otherwise ends the process itself (:func:`end_when_left`). ``warn`` prints
    the warning that names them (the entry point's console format).

    Raises:
        SystemExit: always, with ``code`` (the interpreter's own exit).
    """
    _flush()
    left = lingering_threads()
    if left:
        wait = LINGER_GRACE_S if grace_s is None else grace_s
        threading.Thread(target=end_when_left, args=(left, code, warn, wait),
                         name="adk-eval-action-end", daemon=True).start()
    raise SystemExit(code)


def console_warning(args: list[str]) -> Callable[[str], None]:
    """How the process's last warning (threads left running) is printed for the command
    line ``args`` (``sys.argv[1:]``): as the command printed its log (the runner's format
    on stdout for ``action`` and ``comment``, an annotation; plain lines on stderr
    otherwise), redacted of the environment's secrets."""
    command = next((a for a in args if not a.startswith("-")), "")
    runner = command in ("action", "comment")
    redact = Redactor(secret_values(os.environ))

    def warn(message: str) -> None:
        formatter = GitHubFormatter(redact) if runner else PlainFormatter(redact)
        extra = annotation("warning", title="adk-eval-action") if runner else None
        with log_to(sys.stdout if runner else sys.stderr, formatter):
            log.warning("%s", message, extra=extra)

    return warn

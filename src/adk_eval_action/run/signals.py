"""SIGINT and SIGTERM as :class:`~adk_eval_action.errors.Interrupted`, for the duration of
a command only (the handlers in force before are restored when it ends).

A cancelled job, ``timeout`` and ``docker stop`` send SIGTERM (the runner sends SIGKILL
some seconds later); Ctrl-C sends SIGINT. The first signal raises ``Interrupted`` in the
main thread: the evaluation stops scheduling, ``finally`` blocks end child processes and
remove the baseline worktree, and the partial results, comment, summary and outputs are
written (exit 130/143). Further signals while that happens are ignored, so the run can
finish writing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from adk_eval_action.children import terminate_all
from adk_eval_action.errors import Interrupted

__all__ = ["SignalScope", "interrupt_on_signals"]


class SignalScope:
    """What :func:`interrupt_on_signals` saw: ``received`` is the first signal's number."""

    def __init__(self) -> None:
        self.received: int | None = None


@contextmanager
def interrupt_on_signals(
    signals: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM),
) -> Iterator[SignalScope]:
    """Within the block, the first of ``signals`` raises ``Interrupted``; later ones are
    ignored. Outside the main thread (signal handlers cannot be set there) nothing changes.
    """
    scope = SignalScope()
    if threading.current_thread() is not threading.main_thread():
        yield scope
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if scope.received is not None:
            return
        scope.received = signum
        terminate_all()  # children waited on by worker threads end now, not at their end
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield scope
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)

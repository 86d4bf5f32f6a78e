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

import asyncio
import logging
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from adk_eval_action.children import terminate_all
from adk_eval_action.errors import Interrupted

__all__ = ["SignalScope", "interrupt_on_signals", "run_loop"]

LOGGER = logging.getLogger(__name__)
T = TypeVar("T")

CANCEL_GRACE_S = 10.0
"""How long, in seconds, the tasks left when a run's coroutine ends may take to finish
after they are cancelled."""


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


def run_loop(main: Coroutine[Any, Any, T], cancel_grace_s: float = CANCEL_GRACE_S) -> T:
    """``asyncio.run(main)`` whose clean-up is bounded: the tasks still pending when ``main``
    ends (returns, raises, or is left by ``Interrupted``) are cancelled and given
    ``cancel_grace_s`` seconds, then the loop is closed whatever they do.

    ``asyncio.run`` waits for them without a limit (``asyncio.runners._cancel_all_tasks``,
    CPython 3.11-3.13). A signal raises ``Interrupted`` wherever the main thread is, which can
    leave a task of google-adk or httpx waiting on a lock or a future nobody completes; that
    wait must not keep a stopped run from writing its results.

    Returns:
        ``main``'s result.

    Raises:
        Whatever ``main`` raises (``Interrupted`` included).
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_pending(loop, cancel_grace_s)
            loop.run_until_complete(
                asyncio.wait_for(loop.shutdown_asyncgens(), cancel_grace_s))
            loop.run_until_complete(
                asyncio.wait_for(loop.shutdown_default_executor(), cancel_grace_s))
        except (asyncio.TimeoutError, Interrupted):
            LOGGER.debug("the event loop's clean-up was cut short", exc_info=True)
        finally:
            loop.close()


def _cancel_pending(loop: asyncio.AbstractEventLoop, grace_s: float) -> None:
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=grace_s))
    left = [task for task in pending if not task.done()]
    if left:
        LOGGER.debug("%d task(s) still running after cancellation: %s", len(left), left)

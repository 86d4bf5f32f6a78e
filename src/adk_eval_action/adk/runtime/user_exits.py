"""``sys.exit()`` and ``KeyboardInterrupt`` raised by the repository's own code (the agent,
its tools and callbacks, a custom metric), made ordinary exceptions where that code is called.

Both are ``BaseException``: ADK's ``except Exception`` (LocalEvalService's inference and
metric steps) lets them through, and asyncio re-raises them out of the event loop from the
task they reach (``Task.__step``: "SystemExit and KeyboardInterrupt propagate"), which
ended the whole run with the user's exit code and no results. As :class:`UserExit` (an
``Exception`` chained to the original) they take the path of any other exception of that
code: a failed case run with file and line, the suite's agent import error, the metric's
error.

A real Ctrl-C is not one of them: while the run's signal handlers are in force
(``run.signals.interrupt_on_signals``) SIGINT raises ``Interrupted``, never
``KeyboardInterrupt``; a ``KeyboardInterrupt`` is taken as raised by code only while
Python's default SIGINT handler is not installed (:func:`raised_by_code`).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine, Generator, Iterator
from contextlib import contextmanager
from typing import Any


class UserExit(Exception):  # noqa: N818 - named for what the user's code did
    """The repository's code raised ``SystemExit`` or ``KeyboardInterrupt`` (``__cause__``,
    also :attr:`raised`); the message is ``SystemExit: 0`` (the type, then its text)."""

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised
        super().__init__(described(raised))


def described(error: BaseException) -> str:
    """``ValueError: bad city``: the exception's type, then its text when it has one
    (``KeyboardInterrupt`` alone); for a :class:`UserExit`, the exit it stands for."""
    error = unwrapped(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def raised_by_code(error: BaseException) -> bool:
    """Whether ``error`` is a ``SystemExit``, or a ``KeyboardInterrupt`` that no SIGINT can
    have raised (Python's default SIGINT handler, which raises it, is not installed)."""
    if isinstance(error, SystemExit):
        return True
    return (
        isinstance(error, KeyboardInterrupt)
        and signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    )


def unwrapped(error: BaseException) -> BaseException:
    """The exception the user's code raised: ``error``, or the one a :class:`UserExit`
    stands for."""
    return error.raised if isinstance(error, UserExit) else error


@contextmanager
def exits_as_errors() -> Iterator[None]:
    """Within the block, an exit raised by code (:func:`raised_by_code`) becomes a
    :class:`UserExit` raised from it; anything else passes unchanged."""
    try:
        yield
    except (SystemExit, KeyboardInterrupt) as e:
        if not raised_by_code(e):
            raise
        raise UserExit(e) from e


class _Contained(Coroutine[Any, Any, Any]):
    """A task's coroutine stepped under :func:`exits_as_errors`. A class, not a wrapping
    ``async def``: a task cancelled before its first step closes this, which closes the
    coroutine it holds (else that one is left "never awaited")."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro

    def send(self, value: Any) -> Any:
        try:
            return self._coro.send(value)
        except (SystemExit, KeyboardInterrupt) as e:
            if not raised_by_code(e):
                raise
            raise UserExit(e) from e

    def throw(self, *args: Any) -> Any:
        try:
            return self._coro.throw(*args)
        except (SystemExit, KeyboardInterrupt) as e:
            if not raised_by_code(e):
                raise
            raise UserExit(e) from e

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._coro.__await__()



@contextmanager
def exits_as_errors_in_tasks() -> Generator[None, None, None]:
    """Within the block, every task created on the running event loop (ADK's, and the
    ones running the case runs) runs its coroutine under :func:`exits_as_errors`, so an
    exit raised by code inside it never leaves the event loop. The loop's task factory
    in force before is used to make the tasks and is restored on exit.

    Raises:
        RuntimeError: no event loop is running.
    """
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        wrapped = _Contained(coro) if asyncio.iscoroutine(coro) else coro
        if previous is not None:
            return previous(loop, wrapped, **kwargs)
        return asyncio.Task(wrapped, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    try:
        yield
    finally:
        loop.set_task_factory(previous)

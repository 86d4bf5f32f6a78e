"""The run's event loop (run.signals.run_loop): a task that does not end when cancelled,
as one a signal interrupted in the middle of a lock can be, never keeps a stopped run from
going on to write its results."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from adk_eval_action.errors import Interrupted
from adk_eval_action.run.signals import run_loop


async def _stuck_forever(started: asyncio.Event) -> None:
    never = asyncio.Event()
    started.set()
    while True:
        try:
            await never.wait()
        except asyncio.CancelledError:
            continue  # what a task waiting on a lock that nobody will release amounts to


async def _main_left_by(error: BaseException) -> None:
    started = asyncio.Event()
    asyncio.get_running_loop().create_task(_stuck_forever(started))
    await started.wait()
    raise error


@pytest.mark.parametrize("error", [Interrupted(15), RuntimeError("boom")])
def test_a_task_that_ignores_cancellation_is_given_up_after_the_grace(
    error: BaseException,
) -> None:
    started = time.monotonic()
    with pytest.raises(type(error)):
        run_loop(_main_left_by(error), cancel_grace_s=0.3)
    assert 0.3 <= time.monotonic() - started < 5


def test_asyncio_run_would_wait_for_it_without_end() -> None:
    """The same coroutine under asyncio.run is still waiting after 2 s (the loop runs in a
    daemon thread, left behind)."""
    done = threading.Event()

    def target() -> None:
        try:
            asyncio.run(_main_left_by(RuntimeError("boom")))
        except RuntimeError:
            done.set()

    threading.Thread(target=target, daemon=True).start()
    assert not done.wait(2.0)


def test_the_result_and_well_behaved_tasks_are_kept() -> None:
    finished: list[str] = []

    async def polite() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            finished.append("polite")

    async def main() -> int:
        asyncio.get_running_loop().create_task(polite())
        await asyncio.sleep(0)
        return 7

    assert run_loop(main(), cancel_grace_s=5) == 7
    assert finished == ["polite"]

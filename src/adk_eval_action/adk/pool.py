"""The one work pool of an evaluation: every (suite, eval set, eval case, run) is one job.

Jobs start in the order given (the engine puts the longest eval cases first, so the last
jobs to finish are short ones) and at most ``parallelism`` run at once, whatever suite,
eval set or run they belong to. A job is one eval case run (its inference, then its
metrics, judge calls included), so a case's metrics are evaluated as soon as its inference
ends. Results come back in the order the jobs were given, whatever order they finish in.

While jobs run, a progress snapshot (jobs done / total, jobs with errors, seconds elapsed,
seconds left at the pace so far) goes to ``on_progress`` every ``interval_s`` seconds, and
once at the end of each batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ProgressSnapshot:
    """Where a pool stands: ``done`` of ``total`` jobs finished, ``errors`` of them with an
    error, ``elapsed_s`` seconds since the pool started its first job."""

    done: int
    total: int
    errors: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (``elapsed_s / done * (total - done)``), or None
        before the first job ends."""
        if self.done == 0:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)

    def line(self) -> str:
        """``progress: 120/600 eval case runs (20%), 2 with errors, 45 s elapsed, about
        3 min left``."""
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        eta = self.eta_s
        left = "" if eta is None or self.done == self.total else f", about {_span(eta)} left"
        return (
            f"progress: {self.done}/{self.total} eval case runs{share}, {self.errors} with "
            f"errors, {_span(self.elapsed_s)} elapsed{left}"
        )


def _span(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


ProgressSink = Callable[[ProgressSnapshot], None]


def _never_failed(result: object) -> bool:
    return False


@dataclass(frozen=True)
class Job(Generic[T]):
    """One unit of work: ``start`` makes its coroutine (called once a slot is free);
    ``failed`` tells whether its result counts as an error in the progress."""

    start: Callable[[], Awaitable[T]]
    failed: Callable[[T], bool] = field(default=_never_failed)


class WorkPool:
    """Runs jobs with at most ``parallelism`` at once (module docstring). Batches run one
    after another share the progress counts.

    Args:
        parallelism: Jobs in flight at once (>= 1).
        total: Jobs expected over all batches, for the progress.
        on_progress: Receives a :class:`ProgressSnapshot` every ``interval_s`` seconds
            while jobs run, and one at the end of each batch (None: no progress).
        interval_s: Seconds between progress snapshots.
        clock: Seconds, monotonic (``time.monotonic``).

    Raises:
        ValueError: ``parallelism`` below 1.
    """

    def __init__(
        self,
        parallelism: int,
        total: int = 0,
        on_progress: ProgressSink | None = None,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {parallelism}")
        self.parallelism = parallelism
        self.total = total
        self._on_progress = on_progress
        self._interval_s = interval_s
        self._clock = clock
        self._start: float | None = None
        self.done = 0
        self.errors = 0

    def snapshot(self) -> ProgressSnapshot:
        """The progress now."""
        elapsed = 0.0 if self._start is None else self._clock() - self._start
        return ProgressSnapshot(self.done, max(self.total, self.done), self.errors, elapsed)

    async def run(self, jobs: Sequence[Job[T]]) -> list[T]:
        """Runs ``jobs`` (started in order) and returns their results in that order.

        Raises:
            Exception: the first exception a job raised (the others are cancelled); jobs
                are expected to turn their failures into results.
        """
        slots = asyncio.Semaphore(self.parallelism)
        if self._start is None:
            self._start = self._clock()

        async def one(job: Job[T]) -> T:
            async with slots:
                result = await job.start()
            self.done += 1
            self.errors += bool(job.failed(result))
            return result

        reporter = asyncio.create_task(self._report()) if self._on_progress else None
        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            results = await asyncio.gather(*tasks)
        finally:
            for task in [*tasks, *([reporter] if reporter else [])]:
                task.cancel()
        if self._on_progress is not None:
            self._on_progress(self.snapshot())
        return list(results)

    async def _report(self) -> None:
        while self._on_progress is not None:
            await asyncio.sleep(self._interval_s)
            self._on_progress(self.snapshot())

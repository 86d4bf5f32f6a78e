"""The one work pool of an evaluation: every (suite, eval set, eval case, run) is one job.

Jobs start in the order given (the engine puts the longest eval cases first, so the last
jobs to finish are short ones) and at most ``parallelism`` run at once, whatever suite,
eval set or run they belong to. A job is one eval case run (its inference, then its
metrics, judge calls included), so a case's metrics are evaluated as soon as its inference
ends. Results come back in the order the jobs were given, whatever order they finish in.

While jobs run, a progress snapshot (jobs done / total, jobs with errors, seconds elapsed,
seconds left at the pace so far, and the jobs running longer than :data:`STUCK_INTERVALS`
intervals, by name) goes to ``on_progress`` every ``interval_s`` seconds, and once at the
end of each batch. The snapshots come from a thread of their own, not from the event loop:
a tool that blocks the loop (a sync ``time.sleep``, a request without a timeout) stops
every job, and the progress lines are what says so, naming the case runs that hang.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

STUCK_INTERVALS = 3
"""A job running longer than this many progress intervals is named in the progress line."""
MAX_NAMED = 3
"""Long-running jobs a progress line names (the longest first); the others are counted."""


@dataclass(frozen=True)
class ProgressSnapshot:
    """Where a pool stands: ``done`` of ``total`` jobs finished, ``errors`` of them with an
    error, ``elapsed_s`` seconds since the pool started its first job."""

    done: int
    total: int
    errors: int
    elapsed_s: float
    #: The jobs running longer than the pool's stuck limit: (name, seconds), longest first.
    long_running: tuple[tuple[str, float], ...] = ()

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
            f"errors, {_span(self.elapsed_s)} elapsed{left}{self._long_running()}"
        )

    def _long_running(self) -> str:
        """``; running for long: suite/set/case run 1 (5 min), ...``, or ""."""
        if not self.long_running:
            return ""
        named = ", ".join(f"{name} ({_span(s)})" for name, s in self.long_running[:MAX_NAMED])
        more = len(self.long_running) - MAX_NAMED
        return f"; running for long: {named}" + (f" and {more} more" if more > 0 else "")


def _span(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


ProgressSink = Callable[[ProgressSnapshot], None]


def _never_failed(result: object) -> bool:
    return False


@dataclass(frozen=True)
class Job(Generic[T]):
    """One unit of work: ``start`` makes its coroutine (called once a slot is free);
    ``failed`` tells whether its result counts as an error in the progress; ``name`` is how
    a progress line names it while it runs long (e.g. ``suite/eval set/eval case run 1``)."""

    start: Callable[[], Awaitable[T]]
    failed: Callable[[T], bool] = field(default=_never_failed)
    name: str = ""


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
        self._running: dict[int, tuple[str, float]] = {}
        self._running_lock = threading.Lock()  # the reporter thread reads what the loop sets
        self._ids = itertools.count()

    def snapshot(self) -> ProgressSnapshot:
        """The progress now (safe from any thread)."""
        now = self._clock()
        elapsed = 0.0 if self._start is None else now - self._start
        with self._running_lock:
            running = list(self._running.values())
        limit = STUCK_INTERVALS * self._interval_s
        long = sorted(((n, now - t) for n, t in running if now - t >= limit and n),
                      key=lambda x: -x[1])
        return ProgressSnapshot(self.done, max(self.total, self.done), self.errors, elapsed,
                                tuple(long))

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
                key = next(self._ids)
                with self._running_lock:
                    self._running[key] = (job.name, self._clock())
                try:
                    result = await job.start()
                finally:
                    with self._running_lock:
                        del self._running[key]
            self.done += 1
            self.errors += bool(job.failed(result))
            return result

        stop = threading.Event()
        reporter = self._reporter(stop)
        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            results = await asyncio.gather(*tasks)
        finally:
            stop.set()
            for task in tasks:
                task.cancel()
            if reporter is not None:
                reporter.join()
        if self._on_progress is not None:
            self._on_progress(self.snapshot())
        return list(results)

    def _reporter(self, stop: threading.Event) -> threading.Thread | None:
        """A started thread that hands a snapshot to ``on_progress`` every interval until
        ``stop`` is set (None without ``on_progress``). A daemon: a process that ends while
        the loop is blocked is not held by it."""
        sink = self._on_progress
        if sink is None:
            return None

        def report() -> None:
            while not stop.wait(self._interval_s):
                sink(self.snapshot())

        thread = threading.Thread(target=report, name="adk-eval-progress", daemon=True)
        thread.start()
        return thread

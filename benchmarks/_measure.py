"""Measuring helpers shared by the benchmark scripts (run them as
``python benchmarks/bench_*.py``; this folder is then first on sys.path)."""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from collections.abc import Callable


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def traced_peak_mb(fn: Callable[[], object]) -> float:
    """Peak traced Python/numpy allocation during one call, in MB (10**6 bytes)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def maxrss_mb() -> float:
    """Process high-water resident set size in MB (ru_maxrss is KiB on Linux, B on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1e6 if sys.platform == "darwin" else rss * 1024 / 1e6

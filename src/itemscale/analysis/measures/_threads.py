"""Threads for independent pieces of an analysis (one model's measures, one column's codes).

Numpy releases the GIL, so two models run at once on two cores; every piece is computed alone
from the same inputs and seeded resamples and gathered in input order, so the results do not
depend on the thread count (a test compares them byte for byte).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)


def thread_count(workers: int | None, pieces: int) -> int:
    """`workers` threads (None: one per usable core), never more than `pieces`."""
    wanted = usable_cores() if workers is None else workers
    return max(1, min(wanted, pieces))


def thread_map(fn: Callable[[T], R], items: Sequence[T], workers: int | None) -> list[R]:
    """`[fn(x) for x in items]`, on up to `workers` threads (in the calling thread when one
    suffices); the first exception of a piece is raised as it would be without threads."""
    threads = thread_count(workers, len(items))
    if threads == 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="itemscale-analyze") as pool:
        return list(pool.map(fn, items))

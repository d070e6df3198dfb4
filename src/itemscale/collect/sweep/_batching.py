"""Batches across videos: a real benchmark's video holds one to three questions, so the local
executor fills each model call with cells of one batch key from as many videos as it takes. Each
video is decoded once (ahead, in background threads), its cells join the pool, and a full batch
runs; past `VideoJobRunner.frames_held_bytes` the oldest partial batch runs as it is. Each
batch's rows are committed as its call returns."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from ._context import SweepContext
from ._execute import BatchKey, JobStats, PreparedJob, VideoJob, VideoJobRunner, failure_row
from ._plan import Cell

if TYPE_CHECKING:
    from ..video import FrameSet

    #: A cell waiting for a model call, with its frames (None: text-only).
    Pending = tuple[Cell, FrameSet | None]


def decode_threads() -> int:
    """Videos decoded at once ahead of the model (decoders release the GIL): one per four cores,
    1 to 4."""
    return max(1, min(4, (os.cpu_count() or 1) // 4))


class BatchPool:
    """Cells waiting for a model call, by batch key, in the order they arrived."""

    def __init__(self, runner: VideoJobRunner) -> None:
        self._runner = runner
        self._groups: dict[BatchKey, list[Pending]] = {}

    def add(self, cell: Cell, frame_set: FrameSet | None) -> None:
        key = self._runner.batch_key(cell, frame_set)
        self._groups.setdefault(key, []).append((cell, frame_set))

    def _size(self, key: BatchKey) -> int:
        return self._runner.size_for(key, self._groups[key][0][1])

    def _take(self, key: BatchKey, size: int) -> list[Pending]:
        group = self._groups[key]
        batch, self._groups[key] = group[:size], group[size:]
        if not self._groups[key]:
            del self._groups[key]
        return batch

    def full(self) -> Iterator[list[Pending]]:
        """Every batch that is full now."""
        for key in list(self._groups):
            while key in self._groups and len(self._groups[key]) >= self._size(key):
                yield self._take(key, self._size(key))

    def held_bytes(self) -> int:
        """A frame set shared by several cells counts once."""
        arrays = {
            id(frame_set.array): int(getattr(frame_set.array, "nbytes", 0))
            for group in self._groups.values()
            for _, frame_set in group
            if frame_set is not None
        }
        return sum(arrays.values())

    def over_bound(self) -> Iterator[list[Pending]]:
        """The oldest partial batches, until the frames held are within the bound."""
        while self._groups and self.held_bytes() > self._runner.frames_held_bytes:
            key = next(iter(self._groups))
            yield self._take(key, self._size(key))

    def rest(self) -> Iterator[list[Pending]]:
        """Everything left, in batches (the end of a model's cells)."""
        while self._groups:
            key = next(iter(self._groups))
            yield self._take(key, self._size(key))


def run_across_videos(
    context: SweepContext, runner: VideoJobRunner, jobs: Sequence[VideoJob]
) -> None:
    """Run a model's jobs with batches across videos, committing each; stops between calls on the
    sweep's stop (the cells not run stay pending)."""
    if not jobs:
        return
    pool = BatchPool(runner)
    stats = JobStats()  # the model's time; each job's decode time goes with its job

    def run(batches: Iterator[list[Pending]]) -> bool:
        for batch in batches:
            if context.stop.is_set():
                return False
            for rows in runner.run_batch(batch, stats):
                context.record(rows)
        return True

    depth = decode_threads()
    with ThreadPoolExecutor(max_workers=depth, thread_name_prefix="itemscale-decode") as decoder:
        # the next `depth` videos decode at once while the model runs or the batches fill
        ahead: deque[Future[PreparedJob]] = deque(
            decoder.submit(runner.prepare, job) for job in jobs[:depth]
        )
        going = True
        for position, job in enumerate(jobs):
            if context.stop.is_set():
                going = False
                break
            prepared = ahead.popleft().result()
            if position + depth < len(jobs):
                ahead.append(decoder.submit(runner.prepare, jobs[position + depth]))
            context.record_stats(job, prepared.stats)
            failed = prepared.failed
            if failed:
                context.record(
                    [failure_row(c, *failed[c.cell_id]) for c in job.cells if c.cell_id in failed]
                )
            for cell in job.cells:
                if cell.cell_id not in failed:
                    pool.add(cell, runner.frames_of(cell, prepared.frame_sets))
            if not (run(pool.full()) and run(pool.over_bound())):
                going = False
                break
        if going:
            run(pool.rest())
        for future in ahead:
            future.cancel()
    context.record_model_time(stats)

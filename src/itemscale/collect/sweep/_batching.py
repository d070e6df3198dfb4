"""Batches across videos: the local executor fills each model call with cells of one
configuration, task kind, decoding settings and frame geometry from as many videos as it takes.

A video of a real benchmark holds one to three questions, so batching the cells of one video
alone sends one to three rows per call whatever `--batch-size` says. Here each video is decoded
once (the next ones in background threads while the model runs), its cells join the pool of
batches waiting to fill, and a batch runs as soon as it is full. The decoded frames the pool
holds are bounded (`VideoJobRunner.frames_held_bytes`): past the bound, the oldest partial batch
runs as it is. Every batch's rows are committed as its call returns, so an interrupted sweep
loses only the calls in flight and a resume runs exactly the cells not stored.
"""

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
    """Videos decoded at once ahead of the model: a batch across videos waits for several, so
    they decode side by side (each decoder is threaded too, and its work releases the GIL):
    one per four cores, 1 to 4 (one on a small machine, where threads would only compete)."""
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
        """Bytes of the decoded frames the waiting cells hold (a frame set shared by several
        cells counted once)."""
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
    """Run a model's jobs with batches across videos, committing each batch as it returns.
    Stops between calls when the sweep's stop is set (the cells not run stay pending)."""
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

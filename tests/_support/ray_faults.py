"""Faults for the Ray executor's tests (imported by them and by the Ray workers): a pixel
backend that kills its own process on a poison video or while loading, a thread that SIGKILLs
the actor process that last answered, and the workers' import path."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import itemscale
from _support.paths import TESTS
from _support.sweep import PixelBackend, read_log
from itemscale.collect.models import BackendSpec, BaseVideoLM, VideoRequest, VideoResponse
from itemscale.collect.protocol import ModelEntry


def worker_env() -> dict[str, Any]:
    """Ray's `runtime_env` for the tests: workers import this checkout's itemscale (not
    whatever an installed copy points at) and the tests' helpers."""
    src = Path(itemscale.__file__).resolve().parents[1]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join([str(src), str(TESTS)])}}


def _die(log: str | None, what: str) -> None:
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "what": what}) + "\n")
    os.kill(os.getpid(), signal.SIGKILL)


class PoisonBackend(BaseVideoLM):
    """The pixel backend, except that a request with frames of `poison_video` kills the
    process (as a segfaulting decoder or a GPU out of memory would), after touching `marker`,
    and requests of `broken_video` get `None` for replies (a backend bug, which the reply check
    at the backend boundary stores as a `model_error` per cell)."""

    def __init__(self, inner: PixelBackend, options: dict[str, Any]) -> None:
        self._inner = inner
        self._poison = options.get("poison_video")
        self._deaths = options.get("deaths")
        self._marker = options.get("marker")
        self._broken = options.get("broken_video")

    @property
    def spec(self) -> BackendSpec:
        return self._inner.spec

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        if any(r.item.video_id == self._broken for r in requests):
            return [None] * len(requests)  # type: ignore[list-item]  # a backend bug
        for request in requests:
            if request.frames is not None and request.item.video_id == self._poison:
                if self._marker:
                    Path(self._marker).touch()
                _die(self._deaths, f"poison {self._poison}")
        return self._inner.generate(requests)

    def close(self) -> None:
        self._inner.close()


def fault_factory(entry: ModelEntry, device: str, batch_size: int) -> PoisonBackend:
    """Options: those of `pixel_factory`, `poison_video`, `deaths` (a log of every death),
    `marker` (touched by the poison) and `die_at_load_if` (a path: the process dies while
    loading when it exists)."""
    options = dict(entry.options)
    gate = options.get("die_at_load_if")
    if gate and Path(gate).exists():
        _die(options.get("deaths"), "load")
    if options.get("nodes"):  # which Ray node each actor process runs on
        import ray

        node = ray.get_runtime_context().get_node_id()
        with open(options["nodes"], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "node": node}) + "\n")
    inner = PixelBackend(options.get("log"), float(options.get("delay_s", 0.0)), name=entry.name)
    return PoisonBackend(inner, options)


class KillLastAnswering(threading.Thread):
    """Waits until the call log holds `calls` lines, then SIGKILLs the process that wrote the
    last one (an actor in the middle of a video job) and records which video it was on."""

    def __init__(self, log: Path, calls: int, timeout_s: float = 120.0) -> None:
        super().__init__(daemon=True)
        self.log, self.calls, self.timeout_s = log, calls, timeout_s
        self.killed: dict[str, Any] | None = None

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            lines = read_log(self.log)
            if len(lines) >= self.calls:
                last = lines[-1]
                os.kill(int(last["pid"]), signal.SIGKILL)
                self.killed = {"pid": last["pid"], "item": last["item"], "after": len(lines)}
                return
            time.sleep(0.05)


def computed_twice(log: Path) -> dict[tuple[str, int], int]:
    """(item, frames) -> times computed, for the cells the model computed more than once."""
    counts = Counter((c["item"], int(c["frames"])) for c in read_log(log))
    return {cell: n for cell, n in counts.items() if n > 1}

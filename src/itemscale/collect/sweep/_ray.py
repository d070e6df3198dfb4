"""The Ray executor: one actor per GPU (or CPU slot) holds a model; the driver owns the store and
commits each job's rows as they arrive, as the local executor does.

A lost actor costs only the jobs it held: they go back in the driver's queue, a replacement
starts, and the job it was running is charged one try; after `JOB_TRIES` its cells become
`model_error` rows and the sweep goes on. Ray's own restarts and retries are not used: they would
charge every job the actor held alike (docs/sweep.md). Each actor honours `requests_in_flight`,
sends no probe first, and keeps its backend's `usage()` (a Ray sweep records no `served` counts).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.responses import Status
from ..models import BackendSpec, DecodingSettings, Serving, serving_of
from ..protocol import ModelEntry
from ..store import CellRow
from ._context import RayActorsLostError, RayUnreachableError, VideoNotOnNodeError
from ._execute import JobStats, VideoJob, VideoJobRunner, failure_row
from ._records import ActorSpec


def _ray() -> Any:
    """The `ray` module, untyped: its stubs do not cover dynamic actor options."""
    return importlib.import_module("ray")


if TYPE_CHECKING:
    from ..video import FrameCache
    from ._context import BackendFactory, SweepContext

#: Jobs queued per actor beyond the one running, so an actor never waits on the driver.
JOBS_AHEAD_PER_ACTOR = 1
#: How long the first jobs wait for the other first actors to load once one is ready (spreading).
FIRST_JOBS_WAIT_S = 30.0
#: Tries of a video job whose actor is lost while running it; then its cells are `model_error`.
JOB_TRIES = 3
#: An actor slot whose actor is lost this many times in a row while loading is given up.
LOAD_TRIES = 3
#: With no actor alive after a loss, how long the driver waits for one (`RayActorsLostError`).
ACTOR_WAIT_S = 900.0

#: Ray's errors that mean the actor, its node or its result is gone (not `RayTaskError`).
_LOST_ERRORS = (
    "RayActorError",  # ActorDiedError, ActorUnavailableError
    "ObjectLostError",  # OwnerDiedError, ObjectReconstructionFailedError, ...
    "WorkerCrashedError",
    "NodeDiedError",
    "OutOfMemoryError",
    "LocalRayletDiedError",
)


@dataclass
class JobResult:
    """An actor's rows and timings for one job, or the name of its node when the video is not
    readable there."""

    rows: list[CellRow]
    stats: JobStats
    unreadable_on: str | None = None


def _node_name() -> str:
    try:
        ip = _ray().util.get_node_ip_address()
    except Exception:  # pragma: no cover - outside a Ray worker
        ip = "?"
    return f"{socket.gethostname()} ({ip})"


class SweepActor:
    """Holds one loaded backend; runs video jobs on it."""

    def __init__(
        self,
        factory: BackendFactory,
        entry: ModelEntry,
        device: str,
        batch_size: int,
        decoding_base: DecodingSettings,
        frame_cache: FrameCache | None = None,
    ) -> None:
        if device == "cpu":
            try:
                import torch

                torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
            except ImportError:  # pragma: no cover - a served model needs no torch
                pass
        self._backend = factory(entry, device, batch_size)
        self._serving = serving_of(self._backend)
        self._runner = VideoJobRunner(
            self._backend,
            batch_size=max(batch_size, self._serving.requests_in_flight),
            cache=frame_cache,
            decoding_base=decoding_base,
        )

    def spec(self) -> ActorSpec:
        spec = self._backend.spec
        return {
            "spec_id": spec.spec_id,
            "spec": spec.model_dump(mode="json"),
            "serving": self._serving.model_dump(mode="json"),
        }

    def run(self, job: VideoJob, readable_on_driver: bool = False) -> JobResult:
        if readable_on_driver and job.video_path and not os.access(job.video_path, os.R_OK):
            return JobResult([], JobStats(), unreadable_on=_node_name())
        stats = JobStats()
        rows: list[CellRow] = []
        for batch in self._runner.run(job, stats):
            rows.extend(batch)
        return JobResult(rows, stats)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self._backend.close()


def _slots(device: str, workers: int | None) -> tuple[int, dict[str, float]]:
    ray = _ray()

    resources = ray.cluster_resources()
    if device.startswith("cuda"):
        gpus = int(resources.get("GPU", 0))
        if gpus < 1:
            raise RuntimeError(f"--device {device} with --executor ray: the Ray cluster has no GPU")
        return (min(gpus, workers) if workers else gpus), {"num_gpus": 1, "num_cpus": 1}
    cpus = max(1, int(resources.get("CPU", 1)))
    return (min(cpus, workers) if workers else cpus), {"num_cpus": 1}


#: seconds to wait for a TCP connection to a named Ray head before calling it unreachable
REACH_TIMEOUT_S = 10.0


def check_reachable(address: str | None, timeout: float = REACH_TIMEOUT_S) -> None:
    """Refuse a `HOST:PORT` (or `ray://HOST:PORT`) nothing answers on, before `ray.init` waits
    there for minutes without a word; `auto`, `local` and none are Ray's own rules."""
    if address is None or address in ("auto", "local"):
        return
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    host = host.strip("[]")  # an IPv6 literal
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise RayUnreachableError(
            f"cannot reach the Ray cluster at {address!r} ({reason} within {timeout:g} s); "
            "check --ray-address (the head's HOST:PORT, as `ray start --head` prints it) or "
            "RAY_ADDRESS, and that the head is running"
        ) from None


def run_ray(context: SweepContext) -> None:
    """Run every model on actors of the Ray cluster at `context.ray_address`, else Ray's own
    choice (a local one is started here and stopped after)."""
    ray = _ray()

    entries = [e for e in context.protocol.models if not context.finished_without_loading(e)]
    if not entries:
        return  # a no-op resume: no cluster, no model
    started_here = False
    if not ray.is_initialized():
        address = context.ray_address or os.environ.get("RAY_ADDRESS") or None
        check_reachable(address)
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started_here = True
    figures = context.result.ray
    for key in ("actors", "actors_lost", "jobs_retried", "cells_failed_actor_lost"):
        figures.setdefault(key, 0)
    figures["nodes"] = sum(1 for n in ray.nodes() if n.get("Alive"))
    try:
        for entry in entries:
            if context.stop.is_set():
                return
            context.expect(entry)
            count, options = _slots(context.device, context.workers)
            _ModelRun(context, entry, count, options).run()
    finally:
        if started_here:
            ray.shutdown()


@dataclass
class _Slot:
    """One actor place: its actor, the spec call while it loads, its jobs (the first one
    running)."""

    actor: Any
    loading: Any | None
    jobs: list[tuple[Any, VideoJob]] = field(default_factory=list)
    load_losses: int = 0
    given_up: bool = False

    @property
    def alive(self) -> bool:
        return self.loading is None and not self.given_up


class _ModelRun:
    """One model's jobs on a pool of actors that replaces the ones it loses."""

    def __init__(
        self, context: SweepContext, entry: ModelEntry, count: int, options: dict[str, float]
    ) -> None:
        self.context = context
        self.entry = entry
        self.actor_class = _ray().remote(**options)(SweepActor)
        self.lost_errors = tuple(getattr(_ray().exceptions, n) for n in _LOST_ERRORS)
        self.spec_id: str | None = None
        self.queue: list[VideoJob] = []  # popped from the end
        self.pending: dict[Any, tuple[_Slot, VideoJob | None]] = {}  # None: a spec call
        self.tries: dict[str, int] = {}
        self.figures = context.result.ray
        self.slots = [self._start(_Slot(None, None)) for _ in range(count)]
        self.shown = ""
        self.losses = 0  # this model's actors lost
        self.started = False
        self.first_ready: float | None = None
        self.last_alive = time.monotonic()

    def _start(self, slot: _Slot) -> _Slot:
        s = self.context
        slot.actor = self.actor_class.remote(
            s.factory, self.entry, s.device, s.batch_size, s.protocol.decoding, s.frame_cache
        )
        slot.loading = slot.actor.spec.remote()
        self.pending[slot.loading] = (slot, None)
        self.figures["actors"] += 1
        return slot

    def run(self) -> None:
        ray = _ray()
        try:
            while self.spec_id is None or self.queue or any(s.jobs for s in self.slots):
                if self.context.stop.is_set():
                    break  # abandon the jobs in flight: they are simply not recorded
                if not self.pending:
                    raise self._all_lost()
                ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=0.5)
                for ref in ready:
                    if ref in self.pending:  # a loss handled earlier may have taken it
                        self._handle(ref)
                self._submit()
                self._watch()
            for slot in self.slots:
                for ref, _ in slot.jobs:
                    ray.cancel(ref, force=False)
        finally:
            for slot in self.slots:
                self._kill(slot)
            self._show()

    def _handle(self, ref: Any) -> None:
        ray = _ray()
        slot, job = self.pending.pop(ref)
        if job is None:
            try:
                spec = ray.get(ref)
            except self.lost_errors as exc:
                self._lose(slot, exc)
                return
            slot.loading, slot.load_losses = None, 0
            self.first_ready = self.first_ready or time.monotonic()
            self._loaded(spec)
            return
        try:
            done: JobResult = ray.get(ref)
        except self.lost_errors as exc:
            self._lose(slot, exc)
            return
        except ray.exceptions.RayTaskError as exc:  # the job raised: it would again
            slot.jobs.remove((ref, job))
            self._fail(job, f"job_error: {_reason(exc)}")
            return
        slot.jobs.remove((ref, job))
        self._record(job, done)

    def _record(self, job: VideoJob, done: JobResult) -> None:
        if done.unreadable_on is not None:
            raise VideoNotOnNodeError(
                f"video {job.video_id!r}: {job.video_path} is readable where the sweep runs "
                f"({socket.gethostname()}) but not on Ray node {done.unreadable_on}; every node "
                "must see the benchmark's videos at the same paths (a shared filesystem, or a "
                "copy at the same path: docs/sweep.md, Ray). The cells stored so far are kept."
            )
        self.context.record(done.rows)
        self.context.record_stats(job, done.stats)

    def _loaded(self, spec: ActorSpec) -> None:
        s = self.context
        if self.spec_id is not None:
            if spec["spec_id"] != self.spec_id:
                raise RuntimeError(
                    f"model {self.entry.name!r}: actors loaded different specs "
                    f"{ {self.spec_id, spec['spec_id']} }"
                )
            return
        self.spec_id = spec["spec_id"]
        s.loaded(self.entry, BackendSpec.model_validate(spec["spec"]))
        if Serving.model_validate(spec.get("serving", {})).probes_first:
            s.result.warnings.append(
                f"model {self.entry.name!r}: its backend asks for a probe first, which the Ray "
                "executor does not send: a server that refuses every request fails every cell, "
                "and no budget probe checked that the server shows the model the frames it is "
                "sent (run it with --executor local for both; docs/backends.md)"
            )
        s.bar.set_description_str(self.entry.name, refresh=bool(s.bar.total))
        s.bar.unpause()  # the loading time is no cell's: keep it out of the rate and ETA
        _, jobs = s.plan(self.entry, spec["spec_id"])
        self.queue = list(reversed(jobs))

    def _submit(self) -> None:
        if not self.started:  # the first jobs wait for every first actor: spread, not piled
            waited = time.monotonic() - (self.first_ready or time.monotonic())
            loading = any(s.loading is not None for s in self.slots)
            if loading and not self.losses and waited < FIRST_JOBS_WAIT_S:
                return
            self.started = True
        alive = [s for s in self.slots if s.alive]
        while self.queue and alive and not self.context.stop.is_set():
            slot = min(alive, key=lambda s: len(s.jobs))
            if len(slot.jobs) > JOBS_AHEAD_PER_ACTOR:
                return
            job = self.queue.pop()
            readable = job.video_path is not None and os.access(job.video_path, os.R_OK)
            ref = slot.actor.run.remote(job, readable)
            slot.jobs.append((ref, job))
            self.pending[ref] = (slot, job)

    def _lose(self, slot: _Slot, exc: BaseException) -> None:
        """The slot's actor is gone: keep what it returned, requeue its other jobs (the running
        one charged a try), start a replacement."""
        ray = _ray()
        self.figures["actors_lost"] += 1
        self.losses += 1
        reason = _reason(exc)
        self._kill(slot)
        jobs, slot.jobs = slot.jobs, []
        charged = False
        for ref, job in jobs:
            self.pending.pop(ref, None)
            if not charged:  # a result that came back before the loss is kept
                ready, _ = ray.wait([ref], timeout=0)
                if ready:
                    try:
                        self._record(job, ray.get(ref))
                        continue
                    except ray.exceptions.RayTaskError as raised:  # it raised before the loss
                        self._fail(job, f"job_error: {_reason(raised)}")
                        continue
                    except self.lost_errors:
                        pass
            if charged:
                self.queue.append(job)  # innocent: next in line
                self.figures["jobs_retried"] += 1
                continue
            charged = True
            self.tries[job.video_id] = self.tries.get(job.video_id, 0) + 1
            if self.tries[job.video_id] >= JOB_TRIES:
                self._fail(
                    job,
                    f"actor_lost: the Ray actor running this video's job was lost "
                    f"{self.tries[job.video_id]} times (last: {reason})",
                    counted="cells_failed_actor_lost",
                )
            else:
                self.queue.insert(0, job)  # charged: tried again after the others
                self.figures["jobs_retried"] += 1
        if slot.loading is not None:
            self.pending.pop(slot.loading, None)
            slot.load_losses += 1
        if slot.load_losses >= LOAD_TRIES:
            slot.given_up = True
            return
        self._start(slot)

    def _fail(self, job: VideoJob, reason: str, counted: str | None = None) -> None:
        rows = [failure_row(cell, Status.MODEL_ERROR, reason) for cell in job.cells]
        self.context.record(rows)
        if counted:
            self.figures[counted] += len(rows)

    def _kill(self, slot: _Slot) -> None:
        if slot.actor is not None:
            with contextlib.suppress(Exception):  # already gone
                _ray().kill(slot.actor, no_restart=True)

    def _watch(self) -> None:
        """The progress line's actor count; an error when none came back for too long."""
        self._show()
        now = time.monotonic()
        if any(s.alive for s in self.slots) or not self.losses:
            self.last_alive = now
        elif now - self.last_alive > ACTOR_WAIT_S:
            raise self._all_lost(f"no actor could be started in {ACTOR_WAIT_S:.0f} s")

    def _show(self) -> None:
        alive = sum(s.alive for s in self.slots)
        text = f"{alive}/{len(self.slots)} actors alive"
        if self.losses:
            text += f", {self.losses} lost"
        if text != self.shown:
            self.shown = text
            self.context.bar.set_postfix_str(text, refresh=bool(self.context.bar.total))

    def _all_lost(self, why: str = "") -> RayActorsLostError:
        detail = why or (
            f"every actor slot lost its actor {LOAD_TRIES} times in a row while loading the model"
        )
        return RayActorsLostError(
            f"model {self.entry.name!r}: {detail} ({self.losses} actors lost in "
            "all); the cells stored so far are kept: rerun the same command to resume"
        )


def _reason(exc: BaseException) -> str:
    """The first line of a Ray error, with its class (for a `RayTaskError`, the exception
    raised)."""
    cause = getattr(exc, "cause", None)
    if isinstance(exc, _ray().exceptions.RayTaskError) and isinstance(cause, BaseException):
        exc = cause
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()

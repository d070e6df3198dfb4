"""The Ray executor: one actor per GPU (or CPU slot) holds a model; the driver owns the store.

Actors receive whole video jobs (decode once, run every pending cell of that video) and return
rows; the driver commits each job's rows as it arrives, so killing the driver loses at most the
jobs in flight, exactly as with the local executor.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from ..models import BackendSpec, DecodingSettings
from ..protocol import ModelEntry
from ..store import CellRow
from ._execute import JobStats, VideoJob, VideoJobRunner


def _ray() -> Any:
    """The `ray` module, untyped: its stubs do not cover dynamic actor options."""
    return importlib.import_module("ray")


if TYPE_CHECKING:
    from ._session import BackendFactory, Session

#: Jobs queued per actor beyond the one running, so an actor never waits on the driver.
JOBS_AHEAD_PER_ACTOR = 1


class SweepActor:
    """Holds one loaded backend; runs video jobs on it."""

    def __init__(
        self,
        factory: BackendFactory,
        entry: ModelEntry,
        device: str,
        batch_size: int,
        decoding_base: DecodingSettings,
        frame_cache: Any = None,
    ) -> None:
        if device == "cpu":
            try:
                import torch

                torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
            except ImportError:  # pragma: no cover - a served model needs no torch
                pass
        self._backend = factory(entry, device, batch_size)
        self._runner = VideoJobRunner(
            self._backend, batch_size=batch_size, cache=frame_cache, decoding_base=decoding_base
        )

    def spec(self) -> dict[str, Any]:
        spec = self._backend.spec
        return {"spec_id": spec.spec_id, "spec": spec.model_dump(mode="json")}

    def run(self, job: VideoJob) -> tuple[list[CellRow], JobStats]:
        stats = JobStats()
        rows: list[CellRow] = []
        for batch in self._runner.run(job, stats):
            rows.extend(batch)
        return rows, stats

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self._backend.close()


def _slots(device: str, num_workers: int | None) -> tuple[int, dict[str, float]]:
    ray = _ray()

    resources = ray.cluster_resources()
    if device.startswith("cuda"):
        gpus = int(resources.get("GPU", 0))
        if gpus < 1:
            raise RuntimeError(f"--device {device} with --executor ray: the Ray cluster has no GPU")
        return (min(gpus, num_workers) if num_workers else gpus), {"num_gpus": 1, "num_cpus": 1}
    cpus = max(1, int(resources.get("CPU", 1)))
    return (min(cpus, num_workers) if num_workers else cpus), {"num_cpus": 1}


def run_ray(session: Session) -> None:
    """Run every model of the session on actors of the Ray cluster (started locally if none)."""
    ray = _ray()

    entries = [e for e in session.protocol.models if not session.finished_without_loading(e)]
    if not entries:
        return  # a no-op resume: no cluster, no model
    started_here = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        for entry in entries:
            if session.stop.is_set():
                return
            _run_model(session, entry)
    finally:
        if started_here:
            ray.shutdown()


def _run_model(session: Session, entry: ModelEntry) -> None:
    ray = _ray()

    session.expect(entry)
    count, options = _slots(session.device, session.num_workers)
    actor_class = ray.remote(**options)(SweepActor)
    actors = [
        actor_class.remote(
            session.factory,
            entry,
            session.device,
            session.batch_size,
            session.protocol.decoding,
            session.frame_cache,
        )
        for _ in range(count)
    ]
    try:
        specs = ray.get([a.spec.remote() for a in actors])
        spec_ids = {s["spec_id"] for s in specs}
        if len(spec_ids) != 1:
            raise RuntimeError(f"model {entry.name!r}: actors loaded different specs {spec_ids}")
        spec = specs[0]
        session.loaded(entry, BackendSpec.model_validate(spec["spec"]))
        session.bar.set_description_str(entry.name, refresh=bool(session.bar.total))
        session.bar.unpause()  # the loading time is no cell's: keep it out of the rate and ETA
        _, jobs = session.plan(entry, spec["spec_id"])
        queue = list(reversed(jobs))
        in_flight: dict[Any, tuple[int, VideoJob]] = {}
        load = [0] * len(actors)

        def submit() -> None:
            while queue and not session.stop.is_set():
                slot = min(range(len(actors)), key=lambda i: load[i])
                if load[slot] > JOBS_AHEAD_PER_ACTOR:
                    return
                job = queue.pop()
                in_flight[actors[slot].run.remote(job)] = (slot, job)
                load[slot] += 1

        submit()
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
            if not ready:
                if session.stop.is_set():
                    break  # abandon the jobs in flight: they are simply not recorded
                continue
            for ref in ready:
                slot, job = in_flight.pop(ref)
                load[slot] -= 1
                rows, stats = ray.get(ref)
                session.record(rows)
                session.record_stats(job, stats)
            submit()
        for ref in in_flight:
            ray.cancel(ref, force=False)
    finally:
        for actor in actors:
            ray.kill(actor)

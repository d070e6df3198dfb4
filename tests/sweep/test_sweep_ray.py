"""The Ray executor on a real local Ray instance: one actor per CPU slot, each holding its model;
the driver owns the store; the table equals the local executor's."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from _support.ray_faults import worker_env
from _support.sweep import pixel_factory, read_log, write_benchmark, write_protocol
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import SweepStop, run_sweep
from itemscale.core.responses import read_run


class StopOnceStored(SweepStop):
    """Asks the sweep to stop as soon as its store holds `rows` cells (as Ctrl-C would)."""

    def __init__(self, run_dir: Path, rows: int) -> None:
        super().__init__()
        self._store = run_dir / "store.sqlite"
        self._rows = rows

    def is_set(self) -> bool:
        if not super().is_set() and self._store.exists():
            db = sqlite3.connect(self._store, timeout=5)
            try:
                if db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] >= self._rows:
                    self.set()
            finally:
                db.close()
        return super().is_set()


@pytest.mark.slow
@pytest.mark.ray
def test_ray_executor_matches_local_and_resumes(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    suite = write_benchmark(tmp_path / "suite", 3, corrupt=["v2"])
    ray_log = tmp_path / "ray.jsonl"
    local_log = tmp_path / "local.jsonl"

    def protocol(name: str, log: Path, delay_s: float = 0.0) -> object:
        return load_protocol(
            write_protocol(
                tmp_path / f"{name}.toml",
                suite,
                output=tmp_path / name,
                models=[
                    {
                        "name": "pixel",
                        "backend": "hf",
                        "model": "x",
                        "options": {"log": str(log), "delay_s": delay_s},
                    }
                ],
            )
        )

    local = run_sweep(
        protocol("local", local_log),
        backend_factory=pixel_factory,  # type: ignore[arg-type]
        progress=False,
    )
    proto = protocol("ray", ray_log)
    # Half the run done locally; Ray resumes the same store (the store is executor-agnostic).
    first = run_sweep(proto, backend_factory=pixel_factory, progress=False, limit=2)  # type: ignore[arg-type]
    assert first.ran == 8
    ray_log.unlink()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env=worker_env(),
    )
    try:
        result = run_sweep(
            proto,
            executor="ray",
            backend_factory=pixel_factory,  # type: ignore[arg-type]
            progress=False,
            batch_size=2,
        )
        # Ctrl-C under Ray: jobs already returned are recorded, the others are abandoned.
        # One actor, 0.3 s per cell: the first video's job (8 cells) is recorded, the second
        # is still running 0.5 s later (it needs 2.4 s: a wide margin on a loaded machine)
        # and is abandoned, the third was never sent.
        stop = StopOnceStored(tmp_path / "ray-stop", rows=1)
        stopped = run_sweep(
            protocol("ray-stop", tmp_path / "stop.jsonl", delay_s=0.3),
            executor="ray",
            backend_factory=pixel_factory,  # type: ignore[arg-type]
            progress=False,
            stop=stop,
            workers=1,
        )
    finally:
        ray.shutdown()
    assert stopped.interrupted and stopped.exit_code == 130
    stop_df, stop_prov = read_run(tmp_path / "ray-stop")
    assert len(stop_df) == stopped.ran == 8
    assert set(stop_df["video_id"]) == {"v0"}
    assert stop_prov["sessions"][-1]["outcome"] == "interrupted"
    # 6 items x 4 configurations; the first 2 items (video v0) were done by the first call.
    assert result.planned == 24 and result.skipped == 8 and result.ran == 16
    calls = read_log(ray_log)
    # Actors (one per CPU slot) did the work, in processes other than this driver.
    pids = {c["pid"] for c in calls}
    # Two jobs (videos v1, v2) went to the two actors.
    assert len(pids) == 2 and os.getpid() not in pids
    # Only the 16 remaining cells ran; media errors (v2's video cells) never reached the model.
    assert result.by_status == {"ok": 10, "media_error": 6}
    expected = {(f"v1-q{q}", f) for q in (0, 1) for f in (0, 2, 4, 8)}
    expected |= {("v2-q0", 0), ("v2-q1", 0)}
    assert {(c["item"], c["frames"]) for c in calls} == expected
    assert len(calls) == 10
    ray_df, prov = read_run(tmp_path / "ray")
    local_df, _ = read_run(tmp_path / "local")
    key = ["item_id", "config_id"]
    a = ray_df.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    b = local_df.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    assert a.equals(b)
    assert local.ran == 24
    assert set(prov["video_content_hashes"]) == {"v0", "v1", "v2"}
    assert prov["video_content_hashes"]["v2"] is None
    assert prov["sweep"]["executor"] == "ray"

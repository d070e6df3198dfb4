"""The Ray executor when actors die, on a real local Ray instance: an actor killed with SIGKILL
mid-sweep costs only its job in flight; a poison video that kills its actor every time becomes
typed failures of its cells and the sweep goes on; a model that dies while loading stops the
sweep with a typed error; a video the actors cannot read stops it before false media errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _support.ray_faults import KillLastAnswering, computed_twice, fault_factory, worker_env
from _support.sweep import make_items, pixel_factory, read_log, write_benchmark, write_protocol
from itemscale.collect.protocol import Protocol, load_protocol
from itemscale.collect.sweep import RayActorsLostError, VideoNotOnNodeError, run_sweep
from itemscale.collect.sweep._ray import JOB_TRIES, LOAD_TRIES
from itemscale.core.responses import read_run

pytestmark = [pytest.mark.slow, pytest.mark.ray]

#: 6 videos x 2 items x (text-only + 2, 4, 8 frames): 48 cells, 8 per video job.
VIDEOS, CELLS, PER_JOB = 6, 48, 8


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 2**20,
        runtime_env=worker_env(),
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def _protocol(tmp: Path, suite: Path, name: str, **options: Any) -> Protocol:
    model = {"name": "pixel", "backend": "hf", "model": "x", "options": options}
    return load_protocol(
        write_protocol(tmp / f"{name}.toml", suite, output=tmp / name, models=[model])
    )


def _video_of(item_id: str) -> str:
    return item_id.split("-")[0]


def _local_table(tmp: Path, suite: Path) -> Any:
    run_sweep(_protocol(tmp, suite, "local"), backend_factory=pixel_factory, progress=False)  # type: ignore[arg-type]
    table, _ = read_run(tmp / "local")
    return table


def _same(a: Any, b: Any) -> bool:
    key = ["item_id", "config_id"]
    a = a.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    b = b.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    return bool(a.equals(b))


def test_actor_killed_mid_sweep_costs_only_its_job(ray_local: Any, tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", VIDEOS)
    log = tmp_path / "calls.jsonl"
    proto = _protocol(tmp_path, suite, "ray", log=str(log), delay_s=0.15)
    # 12 cells answered: the actors are on their second job each, mid-video
    killer = KillLastAnswering(log, calls=12)
    killer.start()
    result = run_sweep(
        proto,
        executor="ray",
        backend_factory=fault_factory,  # type: ignore[arg-type]
        progress=False,
    )
    killer.join(timeout=1)
    assert killer.killed is not None, "the actor was never killed"
    # finished by itself, every cell stored once, exit 0
    assert result.exit_code == 0 and not result.interrupted
    assert result.by_status == {"ok": CELLS} and result.ran == CELLS
    table, prov = read_run(tmp_path / "ray")
    assert len(table) == CELLS and table["cell_id"].is_unique
    # at most the lost job computed twice: every repeated cell is of the killed actor's video
    twice = computed_twice(log)
    assert len(twice) <= PER_JOB and set(twice.values()) <= {2}
    # (one video: the one it was answering when killed, or, if that job's last cell ended in
    # the instant before the kill, the next one it had started)
    assert len({_video_of(item) for item, _ in twice}) <= 1
    # every cell reached the model (nothing lost, nothing skipped)
    calls = read_log(log)
    assert len({(c["item"], c["frames"]) for c in calls}) == CELLS
    assert len(calls) == CELLS + len(twice)
    # one actor lost; its running job (and the one queued behind it, if any) went back
    figures = prov["sweep"]["ray"]
    assert figures == result.ray
    assert figures["actors_lost"] == 1 and figures["cells_failed_actor_lost"] == 0
    assert 1 <= figures["jobs_retried"] <= 2 and figures["actors"] == 3
    # the killed actor's pid never answered again; the table is a local run's
    assert killer.killed["pid"] not in {c["pid"] for c in calls[killer.killed["after"] + 2 :]}
    assert _same(table, _local_table(tmp_path, suite))
    print(f"SIGKILL mid-sweep: killed {killer.killed}; {figures}; computed twice: {len(twice)}")


def test_poison_video_becomes_typed_failures(ray_local: Any, tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", VIDEOS)
    log, deaths = tmp_path / "calls.jsonl", tmp_path / "deaths.jsonl"
    proto = _protocol(tmp_path, suite, "ray", log=str(log), poison_video="v1", deaths=str(deaths))
    result = run_sweep(
        proto,
        executor="ray",
        backend_factory=fault_factory,  # type: ignore[arg-type]
        progress=False,
    )
    # the poison job killed an actor on each of its tries, then its cells became failures
    assert len(read_log(deaths)) == JOB_TRIES
    assert result.exit_code == 0
    assert result.by_status == {"ok": CELLS - PER_JOB, "model_error": PER_JOB}
    table, prov = read_run(tmp_path / "ray")
    assert len(table) == CELLS
    failed = table[table["status"] == "model_error"]
    assert set(failed["video_id"]) == {"v1"} and len(failed) == PER_JOB
    assert all(e.startswith("actor_lost: ") for e in failed["error"])
    assert all(f"lost {JOB_TRIES} times" in e and "ActorDiedError" in e for e in failed["error"])
    figures = prov["sweep"]["ray"]
    assert figures["actors_lost"] == JOB_TRIES
    assert figures["cells_failed_actor_lost"] == PER_JOB
    assert figures["jobs_retried"] >= JOB_TRIES - 1
    # every other video's cell reached the model exactly once
    others = [c for c in read_log(log) if _video_of(c["item"]) != "v1"]
    assert len(others) == CELLS - PER_JOB
    assert len({(c["item"], c["frames"]) for c in others}) == CELLS - PER_JOB
    # the failures are stored: a rerun runs nothing; --retry-errors tries v1 again
    again = run_sweep(proto, executor="ray", backend_factory=fault_factory, progress=False)  # type: ignore[arg-type]
    assert again.ran == 0 and again.skipped == CELLS
    print(f"poison video: {figures}; {result.by_status}; wall {result.wall_s:.1f} s")


def test_a_backend_bug_becomes_typed_failures(ray_local: Any, tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", VIDEOS)
    proto = _protocol(tmp_path, suite, "ray", broken_video="v1")
    result = run_sweep(proto, executor="ray", backend_factory=fault_factory, progress=False)  # type: ignore[arg-type]
    # 8 of 48 cells failed: under the failed-share limit, exit 0
    assert result.by_status == {"ok": CELLS - PER_JOB, "model_error": PER_JOB}
    assert result.exit_code == 0
    table, _ = read_run(tmp_path / "ray")
    failed = table[table["status"] == "model_error"]
    assert set(failed["video_id"]) == {"v1"}
    # the backend's bug named per cell by the reply check at the backend boundary (before
    # it, the job raised on the first reply and the error was the job's AttributeError)
    expected = "backend returned NoneType None, not a VideoResponse"
    assert set(failed["error"]) == {expected}
    assert result.ray["actors_lost"] == 0 and result.ray["jobs_retried"] == 0


def test_model_dying_while_loading_stops_with_typed_error(ray_local: Any, tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", VIDEOS)
    deaths, marker = tmp_path / "deaths.jsonl", tmp_path / "poisoned"
    proto = _protocol(
        tmp_path,
        suite,
        "ray",
        poison_video="v2",
        deaths=str(deaths),
        marker=str(marker),
        die_at_load_if=str(marker),
    )
    with pytest.raises(RayActorsLostError, match="while loading the model") as info:
        run_sweep(
            proto,
            executor="ray",
            backend_factory=fault_factory,  # type: ignore[arg-type]
            progress=False,
            workers=1,
        )
    assert info.value.exit_code == 1
    assert f"{1 + LOAD_TRIES} actors lost" in str(info.value)
    what = [d["what"] for d in read_log(deaths)]
    assert what == ["poison v2"] + ["load"] * LOAD_TRIES
    # one actor, jobs in order v0, v1, v2: the first two videos' cells are kept
    table, _ = read_run(tmp_path / "ray")
    assert sorted(set(table["video_id"])) == ["v0", "v1"] and len(table) == 2 * PER_JOB


def test_video_not_readable_on_a_node_is_a_clear_error(
    ray_local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)

    @ray_local.remote(num_cpus=0)
    def worker_cwd() -> str:
        return os.getcwd()

    monkeypatch.chdir(tmp_path)
    assert ray_local.get(worker_cwd.remote()) != os.getcwd()
    # /proc/self/cwd is this process's folder here and the actor's own folder there: the
    # path names a file the driver can read and the actor's node cannot
    items = [
        i.model_copy(update={"video_path": f"/proc/self/cwd/suite/videos/{i.video_id}.mp4"})
        for i in make_items(2)
    ]
    with pytest.raises(VideoNotOnNodeError, match="not on Ray node") as info:
        run_sweep(
            _protocol(tmp_path, suite, "ray"),
            executor="ray",
            items=items,
            backend_factory=fault_factory,  # type: ignore[arg-type]
            progress=False,
            workers=1,
        )
    assert "/proc/self/cwd/suite/videos/v0.mp4" in str(info.value)
    assert "same paths" in str(info.value) and info.value.exit_code == 2
    table, _ = read_run(tmp_path / "ray")
    assert "media_error" not in set(table["status"])  # nothing stored as a false media error


def test_ray_address_needs_the_ray_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli import main

    suite = write_benchmark(tmp_path / "suite", 1)
    proto = write_protocol(tmp_path / "p.toml", suite)
    assert main(["sweep", str(proto), "--ray-address", "127.0.0.1:6379"]) == 2
    assert "--ray-address needs --executor ray" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before a store exists

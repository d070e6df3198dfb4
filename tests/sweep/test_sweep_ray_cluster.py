"""The Ray executor on a real two-node Ray cluster started on this machine (`ray.cluster_utils`:
a head node and a worker node, one CPU each, so one actor lands on each): one node's raylet is
killed with SIGKILL mid-sweep; the sweep finishes by itself, every cell stored exactly once,
only the lost node's jobs in flight computed twice, and the table equals a local run's."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from _support.openai_server import ChatServer
from _support.ray_faults import computed_twice, fault_factory, worker_env
from _support.sweep import pixel_factory, read_log, write_benchmark, write_protocol
from itemscale.collect.protocol import Protocol, load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import read_run

pytestmark = [pytest.mark.slow, pytest.mark.ray]

VIDEOS, CELLS, PER_JOB = 6, 48, 8
NODE_ARGS = {"num_cpus": 1, "object_store_memory": 80 * 2**20, "include_dashboard": False}


def _protocol(tmp: Path, suite: Path, name: str, **options: Any) -> Protocol:
    model = {"name": "pixel", "backend": "hf", "model": "x", "options": options}
    return load_protocol(
        write_protocol(tmp / f"{name}.toml", suite, output=tmp / name, models=[model])
    )


class KillNode(threading.Thread):
    """SIGKILLs `node`'s raylet once the call log holds `calls` lines, at least one of them
    answered on that node (so the node's actor is mid-job)."""

    def __init__(self, node: Any, log: Path, nodes_log: Path, calls: int) -> None:
        super().__init__(daemon=True)
        self.node, self.log, self.nodes_log, self.calls = node, log, nodes_log, calls
        self.killed_after: int | None = None

    def run(self) -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            pids = {n["pid"] for n in read_log(self.nodes_log) if n["node"] == self.node.node_id}
            lines = read_log(self.log)
            if len(lines) >= self.calls and any(c["pid"] in pids for c in lines):
                self.node.kill_raylet()
                self.killed_after = len(lines)
                return
            time.sleep(0.05)


def _cli_on_cluster(tmp: Path, suite: Path, address: str) -> str:
    """`itemscale sweep --executor ray --ray-address ADDRESS` in a process of its own, with a
    served model (a real HTTP server on 127.0.0.1) so the CLI's own backend loader runs."""
    with ChatServer() as server:
        model = {"name": "served", "backend": "openai", "model": "m"}
        model["options"] = {"base_url": server.base_url}  # type: ignore[assignment]
        proto = write_protocol(
            tmp / "served.toml", suite, frames=(2,), output=tmp / "served", models=[model]
        )
        argv = ["sweep", str(proto), "--executor", "ray", "--ray-address", address]
        done = subprocess.run(
            [sys.executable, "-m", "itemscale", *argv],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(server.received) == 2 * VIDEOS * 2  # text-only and 2 frames, every item
    # the progress line counts the actors alive
    assert "2/2 actors alive" in done.stderr, done.stderr[-3000:]
    return done.stdout


@pytest.mark.extended  # 15-27 s; .ci/run runs it
def test_sweep_survives_a_lost_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    suite = write_benchmark(tmp_path / "suite", VIDEOS)
    log, nodes_log = tmp_path / "calls.jsonl", tmp_path / "nodes.jsonl"
    # the nodes' workers (and the CLI's driver) import this checkout's itemscale
    monkeypatch.setenv("PYTHONPATH", worker_env()["env_vars"]["PYTHONPATH"])
    cluster = Cluster(initialize_head=True, head_node_args=NODE_ARGS)
    try:
        worker = cluster.add_node(**NODE_ARGS)
        ray.init(address=cluster.address, log_to_driver=False, runtime_env=worker_env())
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        # the command line reaches the cluster by its address: one actor per node
        out = _cli_on_cluster(tmp_path, suite, cluster.address)
        assert "ray: 2 node(s), 2 actor(s) started, 0 lost, 0 job(s) retried" in out
        killer = KillNode(worker, log, nodes_log, calls=12)
        killer.start()
        started = time.perf_counter()
        result = run_sweep(
            _protocol(tmp_path, suite, "ray", log=str(log), delay_s=0.15, nodes=str(nodes_log)),
            executor="ray",
            backend_factory=fault_factory,  # type: ignore[arg-type]
            progress=False,
        )
        wall = time.perf_counter() - started
        killer.join(timeout=1)
        alive_after = len([n for n in ray.nodes() if n["Alive"]])
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert killer.killed_after is not None, "the node was never killed"
    on_node = {n["pid"]: n["node"] for n in read_log(nodes_log)}
    # both nodes ran actors before the loss
    assert set(on_node.values()) >= {worker.node_id}
    assert len({on_node[c["pid"]] for c in read_log(log)}) == 2
    assert result.exit_code == 0 and result.by_status == {"ok": CELLS}
    # every cell stored exactly once
    db = sqlite3.connect(tmp_path / "ray" / "store.sqlite")
    try:
        stored = db.execute("SELECT COUNT(*), COUNT(DISTINCT cell_id), MAX(attempts) FROM cells")
        assert stored.fetchone() == (CELLS, CELLS, 1)
    finally:
        db.close()
    figures = result.ray
    assert figures["nodes"] == 2 and figures["actors_lost"] == 1
    assert figures["cells_failed_actor_lost"] == 0 and 1 <= figures["jobs_retried"] <= 2
    # cells computed twice: no more than the lost jobs' cells
    twice = computed_twice(log)
    assert len(twice) <= figures["jobs_retried"] * PER_JOB and set(twice.values()) <= {2}
    assert len(read_log(log)) == CELLS + len(twice)
    # the table equals a local run's
    run_sweep(_protocol(tmp_path, suite, "local"), backend_factory=pixel_factory, progress=False)  # type: ignore[arg-type]
    key = ["item_id", "config_id"]
    ray_table, _ = read_run(tmp_path / "ray")
    local_table, _ = read_run(tmp_path / "local")
    a = ray_table.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    b = (
        local_table.drop(columns=["latency_s", "session_id"])
        .sort_values(key)
        .reset_index(drop=True)
    )
    assert a.equals(b)
    print(
        f"two-node sweep: {CELLS} cells in {wall:.1f} s; raylet killed after "
        f"{killer.killed_after} calls; nodes alive after: {alive_after}; {figures}; "
        f"computed twice: {len(twice)}"
    )

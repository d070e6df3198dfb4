"""A Ray sweep of the built-in model whose actor is SIGKILLed mid-sweep, run as a user runs it.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/ray_faults.py --videos 24 --kill-after 20

It writes the demo's synthetic suite (focus layout, seed 2026) and the demo's protocol (the
built-in model at 2, 4, 8, 16, 32 frames x 56, 112 px plus text-only: 22 cells per video), then
runs `itemscale sweep PROTOCOL --executor ray --workers 2` in a process of its own (a local Ray
started by the sweep), and `--kill-after` seconds after the first cell is stored SIGKILLs one
actor process (found by its process title, `ray::SweepActor`, among the sweep's descendants).
It prints the sweep's exit status, its summary (cells run, by status, the `ray` figures), the
cells in the store against the plan, and the wall time; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def descendants(root: int) -> list[int]:
    """Every live process below `root`, read from /proc (Linux)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found


def actor_pids(root: int) -> list[int]:
    pids = []
    for pid in descendants(root):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if title.startswith(b"ray::SweepActor"):
            pids.append(pid)
    return sorted(pids)


def stored_cells(store: Path) -> int:
    if not store.exists():
        return 0
    db = sqlite3.connect(store, timeout=5)
    try:
        return int(db.execute("SELECT COUNT(*) FROM cells").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        db.close()


class Killer(threading.Thread):
    """SIGKILLs one actor of the sweep `kill_after` seconds after the first cell is stored (so
    the models are loaded and the actors are mid-job, whatever the machine's load)."""

    def __init__(self, sweep: subprocess.Popen[str], store: Path, kill_after: float) -> None:
        super().__init__(daemon=True)
        self.sweep, self.store, self.kill_after = sweep, store, kill_after
        self.killed: dict[str, Any] | None = None

    def run(self) -> None:
        first_stored = None
        while self.sweep.poll() is None:
            if first_stored is None and stored_cells(self.store):
                first_stored = time.monotonic()
            if first_stored is not None and time.monotonic() - first_stored >= self.kill_after:
                actors = actor_pids(self.sweep.pid)
                if actors:
                    os.kill(actors[0], signal.SIGKILL)
                    self.killed = {
                        "pid": actors[0],
                        "actors_seen": len(actors),
                        "cells_stored_before": stored_cells(self.store),
                    }
                    return
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--videos", type=int, default=24, help="synthetic videos (2 items each)")
    parser.add_argument(
        "--kill-after",
        type=float,
        default=20.0,
        help="seconds after the first stored cell (0: no kill)",
    )
    parser.add_argument("--workers", type=int, default=2, help="Ray actors")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workdir", type=Path, help="keep the suite and the run here")
    args = parser.parse_args(argv)

    from itemscale.cli.cmd_demo import DEMO_FOCUS_KINDS, demo_protocol
    from itemscale.collect.synth import ensure_suite

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="itemscale-ray-faults-"))
    suite, run_dir = workdir / "suite", workdir / "run"
    ensure_suite(
        suite,
        n_videos=args.videos,
        seed=2026,
        test_fraction=1.0,
        layout="focus",
        focus_kinds=DEMO_FOCUS_KINDS,
    )
    protocol = workdir / "protocol.toml"
    protocol.write_text(demo_protocol(run_dir, suite), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "itemscale",
        "sweep",
        str(protocol),
        "--executor",
        "ray",
        "--workers",
        str(args.workers),
        "--batch-size",
        str(args.batch_size),
        "--no-progress",
        "--json",
    ]
    started = time.perf_counter()
    sweep = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killer = Killer(sweep, run_dir / "store.sqlite", args.kill_after)
    if args.kill_after > 0:
        killer.start()
    out, err = sweep.communicate()
    wall = time.perf_counter() - started
    db = sqlite3.connect(run_dir / "store.sqlite")
    try:
        stored, distinct = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT cell_id) FROM cells"
        ).fetchone()
    finally:
        db.close()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    summary = json.loads(lines[-1]) if lines else None
    report = {
        "benchmark": "ray_faults",
        "videos": args.videos,
        "workers": args.workers,
        "kill_after_s": args.kill_after,
        "killed": killer.killed,
        "exit_status": sweep.returncode,
        "wall_s": round(wall, 1),
        "stored_cells": stored,
        "distinct_cells": distinct,
        "summary": summary,
    }
    if sweep.returncode != 0:
        print(err[-3000:], file=sys.stderr)
    print(
        f"exit {sweep.returncode} in {wall:.0f} s; killed {killer.killed}; {stored} cells stored "
        f"({distinct} distinct) of {summary['planned'] if summary else '?'} planned"
    )
    print(json.dumps(report), flush=True)
    return report


if __name__ == "__main__":
    main()

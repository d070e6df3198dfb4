"""Benchmark: a served sweep at `--concurrency 1` against `--concurrency 8`, both at the default
`--batch-size 1`, against a real `transformers serve` on 127.0.0.1 serving the built-in model.

    .venv/bin/python benchmarks/served.py [--videos 6] [--frames 2,4,8]

It starts the server (CPU, one thread per process), sweeps the same suite into two fresh run
folders, and prints, per concurrency, the requests in flight that the backend saw, the wall
time and cells per second; the last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=6)
    parser.add_argument("--frames", default="2,4,8")
    args = parser.parse_args()

    from _support.sweep import write_benchmark, write_protocol
    from itemscale.collect.models import builtin_model_dir
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import RuntimeBackendFactory, run_sweep

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    serve = Path(sys.executable).with_name("transformers")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    argv = [str(serve), "serve", str(builtin_model_dir()), "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*argv, "--port", str(port), "--device", "cpu"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    root = Path(tempfile.mkdtemp(prefix="served-bench-"))
    figures: dict[str, object] = {"videos": args.videos, "frames": args.frames}
    try:
        for _ in range(360):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        suite = write_benchmark(root / "suite", args.videos)
        frames = tuple(int(f) for f in args.frames.split(","))
        for concurrency in (1, 8):
            proto = write_protocol(
                root / f"c{concurrency}.toml",
                suite,
                frames=frames,
                output=root / f"run{concurrency}",
                models=[
                    {
                        "name": "served",
                        "backend": "openai",
                        "model": str(builtin_model_dir()),
                        "options": {"base_url": f"http://127.0.0.1:{port}/v1"},
                    }
                ],
            )
            t = time.perf_counter()
            result = run_sweep(
                load_protocol(proto),
                progress=False,
                backend_factory=RuntimeBackendFactory(concurrency=concurrency),
            )
            wall = time.perf_counter() - t
            seen = result.served["served"]
            print(
                f"concurrency {concurrency}: {result.ran} cells in {wall:.1f} s "
                f"({result.ran / wall:.2f} cells/s), up to {seen['max_in_flight']} in flight; "
                f"{result.by_status}"
            )
            figures[f"c{concurrency}"] = {
                "cells": result.ran,
                "wall_s": round(wall, 2),
                "cells_per_s": round(result.ran / wall, 3),
                "max_in_flight": seen["max_in_flight"],
            }
        c1, c8 = figures["c1"], figures["c8"]
        figures["speedup"] = round(c8["cells_per_s"] / c1["cells_per_s"], 2)  # type: ignore[index]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

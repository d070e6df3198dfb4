"""Benchmark: generating the synthetic video suite (render, BT.601 conversion, x264 encode).

Figures: seconds per video with one process and with `--workers` processes, the speed-up, and
the suite's size on disk per video. Defaults are the suite's (160x120, 10 fps, 12 s).

    .venv/bin/python benchmarks/synth_suite.py [--n 40] [--workers 2]

The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from itemscale.collect.synth import generate_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    figures: dict[str, float | int] = {"n_videos": args.n, "workers": args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        for label, workers in (("one_process", 1), ("workers", args.workers)):
            out = Path(tmp) / label
            start = time.perf_counter()
            manifest = generate_suite(out, n_videos=args.n, seed=0, workers=workers)
            elapsed = time.perf_counter() - start
            figures[f"{label}_s_per_video"] = round(elapsed / args.n, 3)
            size = sum(p.stat().st_size for p in (out / "videos").iterdir())
            figures["kb_per_video"] = round(size / 1024 / args.n, 1)
            figures["items"] = manifest.n_items
    figures["speedup"] = round(
        float(figures["one_process_s_per_video"]) / float(figures["workers_s_per_video"]), 2
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

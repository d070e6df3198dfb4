"""Benchmark: a frame-cache hit against the shared decode, for comparing two trees.

`benchmarks/decode.py`'s video and 20-configuration grid; `decode_for_configs` is timed without
a cache (best of `--repeats`) and with a warm `FrameCache` (best and median of `--hits`), wall
and CPU time of each call. It imports only what the video package had when the 29.1x figure
was measured (67d97f6), so `PYTHONPATH=OTHER_TREE/src` times that tree's hit path on the same
video, alternating with this one's: on a shared machine the wall-clock ratio measures the
other work as much as the code, and the CPU ratio is what a tree's hit costs.

    .venv/bin/python benchmarks/decode_hit.py --video bench.mp4 --cache /tmp/cache-a

The video is made as `benchmarks/decode.py` makes it when `--video` does not exist. The last
line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from decode import grid, make_video

from itemscale.collect.video import FrameCache, _media, decode_for_configs


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call, the frame index built again as in decode.py."""
    _media._INDEX_MEMO.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--video", type=Path, required=True, help="reuse or create it here")
    parser.add_argument("--cache", type=Path, required=True, help="the frame cache's folder")
    parser.add_argument("--repeats", type=int, default=3, help="shared decodes (best of N)")
    parser.add_argument("--hits", type=int, default=7, help="cache hits (best and median)")
    args = parser.parse_args()
    if not args.video.exists():
        make_video(args.video)
    configs = grid()
    shared = [timed(lambda: decode_for_configs(args.video, configs)) for _ in range(args.repeats)]
    cache = FrameCache(args.cache, max_bytes=4 << 30)
    decode_for_configs(args.video, configs, cache=cache)  # warm (a no-op when it already is)
    hits = [
        timed(lambda: decode_for_configs(args.video, configs, cache=cache))
        for _ in range(args.hits)
    ]
    shared_wall, shared_cpu = min(s[0] for s in shared), min(s[1] for s in shared)
    hit_wall, hit_cpu = min(h[0] for h in hits), min(h[1] for h in hits)
    figures = {
        "shared_wall": round(shared_wall, 3),
        "shared_cpu": round(shared_cpu, 3),
        "hit_wall_best": round(hit_wall, 4),
        "hit_wall_median": round(float(np.median([h[0] for h in hits])), 4),
        "hit_cpu_best": round(hit_cpu, 4),
        "hit_cpu_median": round(float(np.median([h[1] for h in hits])), 4),
        "ratio_wall_best": round(shared_wall / hit_wall, 1),
        "ratio_cpu_best": round(shared_cpu / hit_cpu, 1),
    }
    print(json.dumps({"benchmark": "decode_hit", **figures}))


if __name__ == "__main__":
    main()

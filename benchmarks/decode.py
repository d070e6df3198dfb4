"""Benchmark: decoding a budget grid once versus once per configuration, and the frame cache.

A generated 3-minute 640x360 H.264 video (30 fps, GOP 250), and a grid of 8/16/32/64/128 frames
x 2 resolutions x 2 sampling policies (20 configurations). Figures:

- independent_s: every configuration decoded on its own the way lmms-eval's PyAV reader does
  (decode from the start, keep the sampled frames, stop after the last one), then resized;
- raw_s: itemscale's `raw` pipeline (per configuration, with keyframe seeks);
- shared_s: `decode_for_configs`, one pass over the union of all indices, then every
  configuration served from it (resizing included);
- union_only_s: the decode of that union alone, each frame converted to RGB at native size (no
  resizing, no assembly);
- cache_hit_s: `decode_for_configs` again with a warm frame cache.

Targets: shared at least 5x faster than independent, within 1.25x of union only, cache hits at
least 20x faster than shared decoding.

    .venv/bin/python benchmarks/decode.py [--video PATH] [--repeats 3]

The video is generated once into a temporary folder (or at --video, kept for reuse). The last
line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import (
    FrameCache,
    FrameConverter,
    _media,
    decode_for_configs,
    decode_frames,
    decode_raw,
    encode_video,
    plan_frames,
    stream_index,
)

WIDTH, HEIGHT, FPS, SECONDS, GOP = 640, 360, 30, 180, 250


def make_video(path: Path) -> Path:
    """A moving scene (a drifting textured gradient, a sliding bar, fine grain that changes
    every frame) that H.264 codes at about 1 Mbit/s, like ordinary 360p web video: neither a
    near-still (~0.2 Mbit/s, too cheap to decode) nor pure noise (~5 Mbit/s)."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    base = np.stack([(x * 255 // WIDTH), (y * 255 // HEIGHT), ((x + y) % 256)], axis=-1)
    texture = np.kron(rng.integers(0, 48, (HEIGHT // 20, WIDTH // 20, 3)), np.ones((20, 20, 1)))
    base = (base + texture).astype(np.int64)
    grain = [
        np.kron(rng.integers(0, 5, (HEIGHT // 4, WIDTH // 4, 1)), np.ones((4, 4, 3))).astype(
            np.int64
        )
        for _ in range(16)
    ]

    def frames():  # type: ignore[no-untyped-def]
        for i in range(FPS * SECONDS):
            frame = (np.roll(base, 2 * i, axis=1) + grain[i % 16]) % 256
            bar = (i * 4) % WIDTH
            frame[:, bar : bar + 40] = 255 - frame[:, bar : bar + 40]
            yield frame.astype(np.uint8)

    return encode_video(path, frames(), fps=FPS, gop=GOP, options={"preset": "veryfast"})


def grid() -> list[Configuration]:
    return [
        Configuration(frames=k, sampling=SamplingPolicy(name=policy), **resolution)  # type: ignore[arg-type]
        for policy in ("linspace", "interior")
        for resolution in ({"short_side": 224}, {"max_pixels": 448 * 448})
        for k in (8, 16, 32, 64, 128)
    ]


def lmms_eval_style(path: Path, config: Configuration) -> np.ndarray:
    """Decode from the first frame, keep the sampled ones, stop after the last (lmms-eval's
    PyAV reader), converting each kept frame to the configuration's size as the shared pass
    does."""
    import av

    index = stream_index(path)
    plan = plan_frames(index, config)
    wanted = set(plan.indices.tolist())
    last = int(plan.indices[-1])
    frames = []
    convert = FrameConverter()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for i, frame in enumerate(container.decode(stream)):
            if i > last:
                break
            if i in wanted:
                frames.append(np.ascontiguousarray(convert(frame, plan.height, plan.width)))
    return np.stack(frames)


def best_of(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        _media._INDEX_MEMO.clear()  # every timing includes building the frame index
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--video", type=Path, help="reuse or create the test video here")
    parser.add_argument("--repeats", type=int, default=3, help="timings keep the best of N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.video or Path(tmp) / "bench.mp4"
        if not path.exists():
            start = time.perf_counter()
            make_video(path)
            print(f"generated {path} in {time.perf_counter() - start:.1f}s")
        configs = grid()
        index = stream_index(path)
        mbps = path.stat().st_size * 8 / index.info.duration_s / 1e6
        print(
            f"video: {index.info.video_frames} frames, {index.info.width}x{index.info.height}, "
            f"{index.info.duration_s:.0f}s, {mbps:.2f} Mbit/s, {len(index.keyframe_pts)} "
            f"keyframes; {len(configs)} configurations"
        )
        union = sorted({i for c in configs for i in plan_frames(index, c).indices.tolist()})
        print(f"union of indices: {len(union)} frames")

        shared_s = best_of(args.repeats, lambda: decode_for_configs(path, configs))
        union_only_s = best_of(args.repeats, lambda: decode_frames(stream_index(path), union))
        raw_s = best_of(1, lambda: [decode_raw(path, c) for c in configs])
        independent_s = best_of(1, lambda: [lmms_eval_style(path, c) for c in configs])

        cache = FrameCache(Path(tmp) / "cache", max_bytes=4 << 30)
        cold = decode_for_configs(path, configs, cache=cache)
        cache_hit_s = best_of(args.repeats, lambda: decode_for_configs(path, configs, cache=cache))
        warm = decode_for_configs(path, configs, cache=cache)
        for config in configs:  # the cache serves the very same pixels
            assert np.array_equal(cold[config.config_id].array, warm[config.config_id].array)

        print(f"independent (lmms-eval style): {independent_s:.2f}s")
        print(f"raw pipeline (per config, seeks): {raw_s:.2f}s")
        print(f"shared pass: {shared_s:.2f}s")
        print(f"union only: {union_only_s:.2f}s")
        print(f"cache hits: {cache_hit_s:.3f}s")
        print(
            f"shared vs independent: {independent_s / shared_s:.1f}x (target >= 5x); "
            f"shared / union only: {shared_s / union_only_s:.2f} (target <= 1.25); "
            f"cache hit vs shared: {shared_s / cache_hit_s:.1f}x (target >= 20x)"
        )
        print(
            json.dumps(
                {
                    "benchmark": "decode",
                    "shared_s": round(shared_s, 3),
                    "independent_s": round(independent_s, 3),
                    "union_only_s": round(union_only_s, 3),
                    "cache_hit_s": round(cache_hit_s, 4),
                    "raw_s": round(raw_s, 3),
                    "configurations": len(configs),
                    "union_frames": len(union),
                    "video_mbps": round(mbps, 2),
                }
            )
        )


if __name__ == "__main__":
    main()

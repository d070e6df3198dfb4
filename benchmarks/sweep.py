"""Sweep overhead: itemscale's own time per cell (planning, store, decode, batching, export)
against the model's time, with a tiny transformers Video LLM at 32 frames.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sweep.py [--videos 8] [--frames 32]

Builds a tiny random-weight Qwen2.5-VL from config (tests/_support/models_tiny.py) and a suite of real
H.264 videos, runs `run_sweep` on the local executor, and splits the wall time into model load
(excluded: paid once per run), the model's own time (inside `generate`), and everything else
(itemscale's overhead). Target: overhead < 5% of model time at 32 frames. The last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=8)
    parser.add_argument("--items-per-video", type=int, default=2)
    parser.add_argument("--frames", type=int, default=32)
    parser.add_argument("--video-frames", type=int, default=250, help="frames per video (25 fps)")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--batch-size", type=int, default=1)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from _support.models_tiny import build_qwen2_vl
    from _support.sweep import make_video, write_protocol
    from itemscale.collect.items import Item, write_items_jsonl
    from itemscale.collect.models import VideoLM
    from itemscale.collect.protocol import ModelEntry, load_protocol
    from itemscale.collect.sweep import default_backend_factory, run_sweep

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = build_qwen2_vl(root / "model", version="2.5")
        items = []
        for v in range(args.videos):
            make_video(
                root / "suite" / "videos" / f"v{v}.mp4",
                n_frames=args.video_frames,
                seed=v,
                width=args.width,
                height=args.height,
                fps=25,
            )
            for q in range(args.items_per_video):
                items.append(
                    Item(
                        item_id=f"v{v}-q{q}",
                        video_id=f"v{v}",
                        question=f"Which colour is shown in clip {v} part {q}?",
                        options=("red", "green", "blue", "grey"),
                        answer="A",
                    )
                )
        write_items_jsonl(root / "suite" / "items.jsonl", items)
        protocol_file = write_protocol(
            root / "protocol.toml",
            root / "suite",
            frames=(args.frames,),
            models=[{"name": "tiny", "backend": "hf", "model": str(model_dir)}],
            extra="text_only = false",
        )
        protocol = load_protocol(protocol_file)
        load_s = 0.0

        def timed_factory(entry: ModelEntry, device: str, batch_size: int) -> VideoLM:
            nonlocal load_s
            t0 = time.perf_counter()
            backend = default_backend_factory(entry, device, batch_size)
            load_s += time.perf_counter() - t0
            return backend

        # Warm-up run (imports, first-call kernels) into a throwaway run directory.
        run_sweep(
            protocol,
            run_dir=root / "warmup",
            backend_factory=timed_factory,
            progress=False,
            batch_size=args.batch_size,
            limit=1,
        )
        load_s = 0.0
        t0 = time.perf_counter()
        result = run_sweep(
            protocol,
            run_dir=root / "run",
            backend_factory=timed_factory,
            progress=False,
            batch_size=args.batch_size,
        )
        wall = time.perf_counter() - t0
    overhead = wall - load_s - result.model_s
    figures: dict[str, Any] = {
        "benchmark": "sweep",
        "cells": result.ran,
        "frames": args.frames,
        "video": f"{args.width}x{args.height}, {args.video_frames} frames",
        "batch_size": args.batch_size,
        "wall_s": round(wall, 3),
        "model_load_s": round(load_s, 3),
        "model_s": round(result.model_s, 3),
        "decode_s": round(result.decode_s, 3),
        "overhead_s": round(overhead, 3),
        "overhead_per_cell_ms": round(1000 * overhead / max(result.ran, 1), 2),
        "overhead_fraction": round(overhead / result.model_s, 4) if result.model_s else None,
        "statuses": result.by_status,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

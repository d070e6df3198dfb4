"""Helpers for the sweep tests (imported by them, and by sweep subprocesses and Ray workers):
real H.264 test videos, a deterministic backend that answers from the frames' pixels, and
protocol files. tests/sweep/test_pixel_backend.py checks the helpers themselves."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from itemscale.collect.items import Item, write_items_jsonl
from itemscale.collect.models import BackendSpec, BaseVideoLM, VideoRequest, VideoResponse
from itemscale.collect.protocol import ModelEntry
from itemscale.core.responses import Status, TaskKind

#: An item whose question contains this makes the pixel backend produce an unparseable answer.
GARBLE = "[garble]"


def make_video(
    path: Path,
    *,
    n_frames: int = 40,
    seed: int = 0,
    width: int = 64,
    height: int = 48,
    fps: int = 10,
) -> Path:
    """A real H.264 MP4 whose frames have different flat colours (a seeded walk), so which
    frames a configuration samples changes the mean pixel value the backend answers from."""
    import av

    rng = np.random.default_rng(seed)
    levels = rng.integers(16, 240, size=(n_frames, 3))
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"g": "8", "crf": "18", "preset": "ultrafast"}
        for i in range(n_frames):
            img = np.empty((height, width, 3), dtype=np.uint8)
            img[:] = levels[i]
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


class PixelBackend(BaseVideoLM):
    """A deterministic stand-in model: the answer is a function of the frames' pixels.

    MCQA: option index = floor(mean pixel) mod number of options (text-only: question length).
    Open tasks: the mean pixel as words. Every request is appended to `log` (one JSON line),
    so tests count exactly which cells reached the model.
    """

    def __init__(self, log: str | None = None, delay_s: float = 0.0, name: str = "pixel") -> None:
        self._log = log
        self._delay = delay_s
        self._spec = BackendSpec(backend="hf", name=name, model="pixel-test", dtype="uint8")

    @property
    def spec(self) -> BackendSpec:
        return self._spec

    def _one(self, request: VideoRequest) -> VideoResponse:
        item = request.item
        if request.frames is None:
            value = len(item.question)
            tokens = None
        else:
            value = int(np.asarray(request.frames.array).mean())
            tokens = 4 * len(request.frames.indices)
        if item.task_kind == TaskKind.MCQA:
            letter = item.option_letters[value % len(item.options)]
            text = (
                "I cannot tell from this."
                if GARBLE in item.question
                else f"The answer is {letter}."
            )
            probs = {
                x: (0.7 if x == letter else 0.3 / (len(item.options) - 1))
                for x in item.option_letters
            }
            if GARBLE in item.question:
                probs = None
            return VideoResponse(
                raw_text=text,
                answer=None,
                option_probs=probs,
                confidence=None,
                visual_tokens=tokens,
                latency_s=0.001,
                status=Status.OK,
            )
        return VideoResponse(
            raw_text=f"mean {value}",
            answer=None,
            option_probs=None,
            confidence=None,
            visual_tokens=tokens,
            latency_s=0.001,
            status=Status.OK,
        )

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        out = []
        for request in requests:
            if self._delay:
                time.sleep(self._delay)
            out.append(self._one(request))
            if self._log:
                frames = request.frames
                entry = {
                    "item": request.item.item_id,
                    "frames": 0 if frames is None else len(frames.indices),
                    "indices": [] if frames is None else [int(i) for i in frames.indices],
                    "pid": os.getpid(),
                }
                with open(self._log, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")
                    fh.flush()
        return out

    def close(self) -> None:
        pass


def pixel_factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
    """Backend factory for `run_sweep`: options `log` (call log path) and `delay_s`."""
    return PixelBackend(
        entry.options.get("log"), float(entry.options.get("delay_s", 0.0)), name=entry.name
    )


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_items(n_videos: int, per_video: int = 2, *, garble: Sequence[str] = ()) -> list[Item]:
    items = []
    for v in range(n_videos):
        for q in range(per_video):
            item_id = f"v{v}-q{q}"
            question = f"Which colour is shown in clip {v} part {q}?"
            if item_id in garble:
                question += f" {GARBLE}"
            items.append(
                Item(
                    item_id=item_id,
                    video_id=f"v{v}",
                    question=question,
                    options=("red", "green", "blue", "grey"),
                    answer="ABCD"[(v + q) % 4],
                    attributes={"group": "even" if v % 2 == 0 else "odd"},
                    split="test",
                )
            )
    return items


def write_benchmark(
    root: Path,
    n_videos: int,
    per_video: int = 2,
    *,
    garble: Sequence[str] = (),
    corrupt: Sequence[str] = (),
) -> Path:
    """items.jsonl + videos/<id>.mp4 under `root` (a `synthetic`-layout suite); returns root."""
    items = make_items(n_videos, per_video, garble=garble)
    write_items_jsonl(root / "items.jsonl", items)
    for v in range(n_videos):
        path = root / "videos" / f"v{v}.mp4"
        if f"v{v}" in corrupt:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + os.urandom(2000))
        else:
            make_video(path, seed=v, n_frames=30 + 5 * v)
    return root


def write_protocol(
    path: Path,
    suite: Path,
    *,
    frames: Sequence[int] = (2, 4, 8),
    models: Sequence[dict[str, Any]] | None = None,
    output: Path | None = None,
    extra: str = "",
) -> Path:
    models = models or [{"name": "pixel", "backend": "hf", "model": "pixel-test"}]
    lines = []
    for m in models:
        lines.append("[[models]]")
        for key, value in m.items():
            if key == "options":
                continue
            lines.append(f"{key} = {json.dumps(value)}")
        if "options" in m:
            lines.append("[models.options]")
            for key, value in m["options"].items():
                lines.append(f"{key} = {json.dumps(value)}")
    text = "\n".join(
        [
            f"output = {json.dumps(str(output or path.parent / 'run'))}",
            extra,
            *lines,
            "[benchmark]",
            'kind = "synthetic"',
            f"path = {json.dumps(str(suite))}",
            "[grid]",
            f"frames = {json.dumps(list(frames))}",
            "[decoding]",
            "max_new_tokens = 8",
        ]
    )
    path.write_text(text + "\n")
    return path

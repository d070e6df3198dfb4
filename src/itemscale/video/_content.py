"""A built-in content-aware frame selector that needs no model: `change`.

Uniform spacing misses a short event that falls between two sampled frames (a flash of two
frames is missed by any grid whose gap is wider). `change` keeps uniform sampling's coverage (one
frame per equal segment of the video) but, inside each segment, takes the frame that differs
most from the rest of the segment: the frame of a short event, where there is one. It is
question-agnostic (every question of a video gets the same frames) and content-aware; its output
is an ordinary selection file, replayed by the `selection` sampling policy like any selector's.

Score of frame t in segment S: the mean absolute difference between the frame (grey, shrunk to
`CHANGE_SIZE`) and the per-pixel median of S's frames. Ties go to the earliest frame.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import numpy as np

from ..files import atomic_text_file
from ..items import Item
from ._media import decode_resized, stream_index

#: (height, width) every frame is shrunk to before scoring: enough to see a coloured flash,
#: small enough to decode a long video quickly.
CHANGE_SIZE: Final[tuple[int, int]] = (24, 32)
#: The built-in selectors `itemscale select --method` offers.
SELECTOR_METHODS: Final[tuple[str, ...]] = ("change",)


def segment_bounds(video_frames: int, frames: int) -> list[tuple[int, int]]:
    """`frames` equal segments [start, end) of a video `video_frames` long (fewer, one frame
    each, when the video is shorter than the budget)."""
    count = min(frames, video_frames)
    edges = np.floor(np.arange(count + 1) * video_frames / count).astype(np.int64)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def change_scores(stack: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
    """Per-frame score: mean absolute difference from its segment's per-pixel median frame."""
    grey = stack.astype(np.float32).mean(axis=-1) if stack.ndim == 4 else stack.astype(np.float32)
    scores = np.zeros(grey.shape[0], dtype=np.float64)
    for start, end in bounds:
        segment = grey[start:end]
        median = np.median(segment, axis=0)
        scores[start:end] = np.abs(segment - median).mean(axis=(1, 2))
    return scores


def pick_by_change(stack: np.ndarray, frames: int) -> np.ndarray:
    """The selected indices (sorted, one per segment) for a stack of every frame [n, H, W, 3]."""
    bounds = segment_bounds(stack.shape[0], frames)
    scores = change_scores(stack, bounds)
    picks = [start + int(np.argmax(scores[start:end])) for start, end in bounds]
    return np.asarray(picks, dtype=np.int64)


def change_selection(path: str | os.PathLike[str], frames: tuple[int, ...]) -> dict[int, list[int]]:
    """The `change` selector's frames of one video for each budget in `frames` (every frame
    decoded once, shrunk, then scored per budget). Raises `MediaError` for an unreadable video."""
    index = stream_index(path)
    n = index.info.video_frames
    height, width = CHANGE_SIZE
    decoded = decode_resized(index, {i: [(height, width)] for i in range(n)})
    stack = np.stack([decoded[(i, height, width)] for i in range(n)])
    return {k: pick_by_change(stack, k).tolist() for k in frames}


def write_selection_files(
    items: Sequence[Item],
    frames: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    name: str = "change",
    on_video: Callable[[int, int], None] | None = None,
) -> dict[int, Path]:
    """Run the `change` selector over the items' videos and write one selection file per budget,
    `OUT/NAME_K.jsonl` (the `table` format: one `{"item_id", "indices"}` line per item; every
    question of a video gets its video's frames). Returns the file of each budget.

    Raises `MediaError` naming the video when one cannot be decoded, and `ValueError` for an
    item without a video file: a selection must cover every item it will be replayed on.
    """
    budgets = tuple(dict.fromkeys(int(k) for k in frames))
    if not budgets or min(budgets) < 1:
        raise ValueError(f"frame budgets must be >= 1 (got {list(frames)})")
    by_video: dict[str, list[Item]] = {}
    for item in items:
        if item.video_path is None:
            raise ValueError(f"item {item.item_id!r} has no video file to select frames from")
        by_video.setdefault(item.video_path, []).append(item)
    lines: dict[int, list[str]] = {k: [] for k in budgets}
    for done, (path, group) in enumerate(by_video.items(), start=1):
        picked = change_selection(path, budgets)
        for item in group:
            for k in budgets:
                record = {"item_id": item.item_id, "indices": picked[k]}
                lines[k].append(json.dumps(record, separators=(",", ":")))
        if on_video is not None:
            on_video(done, len(by_video))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[int, Path] = {}
    for k in budgets:
        target = out / f"{name}_{k}.jsonl"
        with atomic_text_file(target) as fh:
            fh.writelines(line + "\n" for line in lines[k])
        files[k] = target
    return files

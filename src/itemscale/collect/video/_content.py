"""A built-in content-aware frame selector that needs no model: `change`.

Uniform spacing misses a short event that falls between two sampled frames. `change` keeps
uniform sampling's coverage (one frame per equal segment) but takes, inside each segment, the
frame whose grey, shrunk (`CHANGE_SIZE`) pixels differ most (mean absolute difference) from the
segment's per-pixel median, ties to the earliest. Every question of a video gets the same
frames; the output is an ordinary selection file, replayed by the `selection` policy.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from ...core.files import atomic_text_file
from ..items import Item
from ._media import decode_resized, stream_index

#: (height, width) every frame is shrunk to before scoring: enough to see a coloured flash,
#: small enough to decode a long video quickly.
CHANGE_SIZE: Final[tuple[int, int]] = (24, 32)
#: The built-in selectors `itemscale select --method` offers.
SELECTOR_METHODS: Final[tuple[str, ...]] = ("change",)
#: `--adaptive`'s default threshold: a segment's best frame is kept when it differs from its
#: segment's median frame by at least this much (mean absolute difference in grey levels,
#: 0-255, at `CHANGE_SIZE`). A static shot scores under 1 (compression noise); a coloured
#: flash or a cut scores tens.
DEFAULT_CHANGE_THRESHOLD: Final[float] = 8.0


@dataclass(frozen=True)
class Adaptive:
    """The adaptive `change` selector's setting: keep the segments whose best frame scores at
    least `threshold`, and at least `min_frames` of them (the highest-scoring ones)."""

    min_frames: int = 1
    threshold: float = DEFAULT_CHANGE_THRESHOLD

    def __post_init__(self) -> None:
        if self.min_frames < 1:
            raise ValueError(f"--min-frames must be at least 1 (got {self.min_frames})")
        if not np.isfinite(self.threshold) or self.threshold < 0:
            raise ValueError(f"--threshold must be a number >= 0 (got {self.threshold})")


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


def pick_adaptive(stack: np.ndarray, frames: int, adaptive: Adaptive) -> np.ndarray:
    """The adaptive selector's indices (sorted): of the `frames` segments' best frames, those
    scoring at least the threshold, or the `min_frames` highest-scoring ones when fewer do
    (ties to the earliest)."""
    bounds = segment_bounds(stack.shape[0], frames)
    scores = change_scores(stack, bounds)
    best = [(start + int(np.argmax(scores[start:end]))) for start, end in bounds]
    score = np.array([scores[i] for i in best])
    keep = [j for j in range(len(best)) if score[j] >= adaptive.threshold]
    if len(keep) < adaptive.min_frames:
        ranked = sorted(range(len(best)), key=lambda j: (-score[j], j))
        keep = ranked[: adaptive.min_frames]
    return np.asarray(sorted(best[j] for j in keep), dtype=np.int64)


def change_selection(
    path: str | os.PathLike[str], frames: tuple[int, ...], adaptive: Adaptive | None = None
) -> dict[int, list[int]]:
    """The `change` selector's frames of one video for each budget in `frames` (every frame
    decoded once); `adaptive`: up to each budget (`pick_adaptive`)."""
    stack = _small_frames(path)
    if adaptive is None:
        return {k: pick_by_change(stack, k).tolist() for k in frames}
    return {k: pick_adaptive(stack, k, adaptive).tolist() for k in frames}


def _small_frames(path: str | os.PathLike[str]) -> np.ndarray:
    index = stream_index(path)
    n = index.info.video_frames
    height, width = CHANGE_SIZE
    decoded = decode_resized(index, {i: [(height, width)] for i in range(n)})
    return np.stack([decoded[(i, height, width)] for i in range(n)])


def write_selection_files(
    items: Sequence[Item],
    frames: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    name: str = "change",
    on_video: Callable[[int, int], None] | None = None,
    adaptive: Adaptive | None = None,
) -> dict[int, Path]:
    """Run the `change` selector over the items' videos and write one selection file per budget,
    `OUT/NAME_K.jsonl` (the `table` format; every question of a video gets its video's frames).
    With `adaptive`, each budget is a cap and each line declares the selector's own cost,
    `frames_scored` (every frame of the video). Raises `MediaError` naming an undecodable video,
    `ValueError` for an item without a video file (a selection must cover every item)."""
    budgets = tuple(dict.fromkeys(int(k) for k in frames))
    if not budgets or min(budgets) < 1:
        raise ValueError(f"frame budgets must be >= 1 (got {list(frames)})")
    if adaptive is not None and adaptive.min_frames > min(budgets):
        raise ValueError(
            f"--min-frames {adaptive.min_frames} is more than the budget {min(budgets)}"
        )
    by_video: dict[str, list[Item]] = {}
    for item in items:
        if item.video_path is None:
            raise ValueError(f"item {item.item_id!r} has no video file to select frames from")
        by_video.setdefault(item.video_path, []).append(item)
    lines: dict[int, list[str]] = {k: [] for k in budgets}
    for done, (path, group) in enumerate(by_video.items(), start=1):
        picked = change_selection(path, budgets, adaptive)
        scored = {"frames_scored": stream_index(path).info.video_frames} if adaptive else {}
        for item in group:
            for k in budgets:
                record = {"item_id": item.item_id, "indices": picked[k], **scored}
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

"""From a video and a grid of configurations to the exact frames each configuration sees.

`decode_for_configs` decodes the union of every configuration's indices once and serves each
configuration from it (through the frame cache when one is given); `decode_raw` decodes one
configuration on its own, the way evaluation harnesses do, and exists so a test can prove the
two give the same pixels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..protocol import Configuration
from ._cache import FrameCache
from ._media import StreamIndex, decode_frames, stream_index, video_content_hash
from ._resize import target_size
from ._sampling import sample_indices


@dataclass(frozen=True)
class FrameSet:
    """The frames one configuration saw, with what was actually used: indices, stream
    timestamps (seconds since the first frame), and the size every frame was served at."""

    frames: np.ndarray  # uint8 [F, H, W, 3]
    indices: np.ndarray  # int64 [F]
    timestamps: np.ndarray  # float64 [F]
    width: int
    height: int
    effective_frames: int
    requested_frames: int = 0
    config_id: str = ""
    label: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)

    @property
    def pixels(self) -> int:
        """Pixels per frame actually used (0 for the text-only configuration)."""
        return self.width * self.height


@dataclass(frozen=True)
class FramePlan:
    """What a configuration needs from a video, before any decoding."""

    config: Configuration
    indices: np.ndarray
    height: int
    width: int


def plan_frames(
    index: StreamIndex,
    config: Configuration,
    *,
    item_key: str = "",
    repeat: int = 0,
) -> FramePlan:
    """Indices and output size for one configuration of one video. The `fps` policy counts
    frames as Qwen's utilities do, n_frames / fps * rate, which is the stream's duration."""
    info = index.info
    if config.is_text_only:
        return FramePlan(config, np.empty(0, dtype=np.int64), 0, 0)
    indices = sample_indices(
        config.sampling,
        info.n_frames,
        config.frames,
        fps=info.fps,
        item_key=item_key,
        repeat=repeat,
    )
    height, width = target_size(config, info.height, info.width)
    return FramePlan(config, indices, height, width)


def resize_frame(frame: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bicubic resize (Pillow), the one resize both pipelines use; native size is returned as is."""
    if frame.shape[0] == height and frame.shape[1] == width:
        return frame
    from PIL import Image

    image = Image.fromarray(frame).resize((width, height), Image.Resampling.BICUBIC)
    return np.asarray(image, dtype=np.uint8)


def _frameset(index: StreamIndex, plan: FramePlan, frames: list[np.ndarray]) -> FrameSet:
    config = plan.config
    if frames:
        stacked = np.stack(frames)
    else:
        stacked = np.empty((0, plan.height, plan.width, 3), dtype=np.uint8)
    stacked.setflags(write=False)
    indices = plan.indices.copy()
    indices.setflags(write=False)
    timestamps = index.timestamps(plan.indices)
    timestamps.setflags(write=False)
    return FrameSet(
        frames=stacked,
        indices=indices,
        timestamps=timestamps,
        width=plan.width,
        height=plan.height,
        effective_frames=int(plan.indices.size),
        requested_frames=config.frames,
        config_id=config.config_id,
        label=config.label,
    )


def decode_raw(
    path: str | os.PathLike[str],
    config: Configuration,
    *,
    item_key: str = "",
    repeat: int = 0,
) -> FrameSet:
    """The per-configuration pipeline: decode exactly this configuration's frames, no cache."""
    index = stream_index(path)
    plan = plan_frames(index, config, item_key=item_key, repeat=repeat)
    decoded = decode_frames(index, plan.indices)
    frames = [resize_frame(decoded[int(i)], plan.height, plan.width) for i in plan.indices]
    return _frameset(index, plan, frames)


def decode_for_configs(
    path: str | os.PathLike[str],
    configs: Iterable[Configuration],
    *,
    item_key: str = "",
    repeat: int = 0,
    cache: FrameCache | None = None,
) -> dict[str, FrameSet]:
    """Every configuration's frames from one pass over the video, keyed by config id.

    `cached` configurations share one decode of the union of their indices (frames already in
    `cache` are not decoded again, and new ones are stored); `raw` configurations are decoded on
    their own. Raises `MediaError` when the video cannot give the frames.
    """
    configs = list(configs)
    index = stream_index(path)
    plans = [plan_frames(index, c, item_key=item_key, repeat=repeat) for c in configs]
    video_hash = video_content_hash(path) if cache is not None else ""

    served: dict[tuple[int, int, int], np.ndarray] = {}
    shared = [p for p in plans if p.config.pipeline == "cached"]
    if cache is not None:
        for plan in shared:
            for i in plan.indices.tolist():
                key = (i, plan.height, plan.width)
                if key not in served:
                    hit = cache.get(video_hash, i, plan.height, plan.width)
                    if hit is not None:
                        served[key] = hit
    missing = sorted(
        {
            i
            for plan in shared
            for i in plan.indices.tolist()
            if (i, plan.height, plan.width) not in served
        }
    )
    decoded = decode_frames(index, missing)
    for plan in shared:
        for i in plan.indices.tolist():
            key = (i, plan.height, plan.width)
            if key not in served:
                frame = resize_frame(decoded[i], plan.height, plan.width)
                served[key] = frame
                if cache is not None:
                    cache.put(video_hash, i, frame)

    out: dict[str, FrameSet] = {}
    for plan in plans:
        if plan.config.pipeline == "raw":
            out[plan.config.config_id] = decode_raw(
                path, plan.config, item_key=item_key, repeat=repeat
            )
        else:
            frames = [served[(i, plan.height, plan.width)] for i in plan.indices.tolist()]
            out[plan.config.config_id] = _frameset(index, plan, frames)
    return out

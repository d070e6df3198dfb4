"""What differs between the video families the transformers backend runs: which model types are
families, how each is told the frames' true positions, and how our pixel budget becomes its
processor's resize bounds; adding a family changes this module and the backend not at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import renamed_keywords
from ._hf_wire import ResizeKwargs, VideoMetadataFields
from ._types import Frames, FramesLike, VideoRequest

#: model_type -> family name recorded in the spec.
FAMILIES: dict[str, str] = {
    "qwen2_vl": "qwen2-vl",
    "qwen2_5_vl": "qwen2.5-vl",
    "qwen3_vl": "qwen3-vl",
    "llava_onevision": "llava-onevision",
    "llava_next_video": "llava-next-video",
    "internvl": "internvl",
    "smolvlm": "smolvlm2",
}
#: Families whose processor resizes to a pixel-count range (our budget sets the range).
PIXEL_RANGE_FAMILIES = frozenset({"qwen2-vl", "qwen2.5-vl", "qwen3-vl"})


@renamed_keywords(frames="frame_set")
def source_fps(frame_set: FramesLike) -> float:
    """The video's frame rate implied by the frames' indices and timestamps (needed so a
    timestamp-aware processor computes each frame's true time from its index)."""
    indices = np.asarray(frame_set.indices, dtype=np.float64)
    times = np.asarray(frame_set.timestamps, dtype=np.float64)
    fps = getattr(frame_set, "fps", None)
    if isinstance(fps, int | float) and fps > 0:
        return float(fps)
    if len(indices) >= 2:
        di, dt = np.diff(indices), np.diff(times)
        ok = (di > 0) & (dt > 0)
        if ok.any():
            return float(np.median(di[ok] / dt[ok]))
    if len(indices) >= 1 and times[0] > 0 and indices[0] > 0:
        return float(indices[0] / times[0])
    return 1.0


@renamed_keywords(frames="frame_set")
def video_metadata(frame_set: FramesLike) -> VideoMetadataFields:
    """transformers' video metadata for frames we already chose: `frames_indices` with the
    source `fps` give each frame's true time (Qwen3-VL, SmolVLM2 print it into the prompt);
    `total_num_frames` makes the processor's "sampled fps" (frames / total * fps) the rate the
    frames were taken at, Qwen2.5-VL's temporal position step."""
    fps = source_fps(frame_set)
    indices = [int(i) for i in frame_set.indices]
    count = len(indices)
    span = indices[-1] - indices[0]
    step = span / (count - 1) if count >= 2 and span > 0 else 1.0
    total = max(count, round(count * step))
    height, width = int(frame_set.array.shape[1]), int(frame_set.array.shape[2])
    return {
        "total_num_frames": total,
        "fps": fps,
        "width": width,
        "height": height,
        "duration": (indices[-1] + 1) / fps,
        "frames_indices": indices,
    }


def qwen_factor(processor: Any) -> int:
    video = processor.video_processor
    return int(video.patch_size) * int(video.merge_size)


def fill_temporal_patch(family: str, processor: Any, frame_set: FramesLike) -> FramesLike:
    """Repeat the last frame up to one temporal patch for Qwen3-VL, whose processor refuses
    fewer frames; Qwen2/2.5-VL's processors do the same repetition themselves, so a
    one-frame budget means the same thing in all three."""
    if family != "qwen3-vl":
        return frame_set
    temporal = int(processor.video_processor.temporal_patch_size)
    missing = temporal - int(frame_set.array.shape[0])
    if missing <= 0:
        return frame_set
    indices = [int(i) for i in frame_set.indices]
    times = [float(t) for t in frame_set.timestamps]
    return Frames(
        np.concatenate([frame_set.array, np.repeat(frame_set.array[-1:], missing, axis=0)]),
        tuple(indices + [indices[-1]] * missing),
        tuple(times + [times[-1]] * missing),
    )


def resize_kwargs(
    family: str, processor: Any, request: VideoRequest, min_pixels_option: int | None
) -> ResizeKwargs | None:
    """The processor's resize bounds for a pixel-range family: our budget as the upper bound,
    `min_pixels` (or one patch) as the lower; None for the families that resize to a fixed
    size."""
    if family not in PIXEL_RANGE_FAMILIES or request.frames is None:
        return None
    height, width = request.frames.array.shape[1:3]
    factor = qwen_factor(processor)
    # Round up to the patch grid so the processor never shrinks frames already at budget.
    ceiling = int(-(-height // factor) * factor * -(-width // factor) * factor)
    max_pixels = ceiling if request.max_pixels is None else min(ceiling, request.max_pixels)
    min_pixels = min_pixels_option or factor * factor
    max_pixels = max(max_pixels, min_pixels)
    if family == "qwen3-vl":
        # Qwen3-VL bounds the whole clip (frames rounded to temporal patches x pixels).
        temporal = int(processor.video_processor.temporal_patch_size)
        frames = max(temporal, round(request.frames.array.shape[0] / temporal) * temporal)
        min_pixels, max_pixels = min_pixels * frames, max_pixels * frames
    return {
        "size": {"shortest_edge": min_pixels, "longest_edge": max_pixels},
        "cap_pixels_per_frame": False,
    }

"""The video pipeline: sampling formulas, one decode per video, resizing, and the frame cache."""

from ._cache import ENTRY_MAGIC, RESIZE_VERSION, CacheStats, FrameCache, frame_checksum
from ._encode import encode_video
from ._errors import MEDIA_ERROR_REASONS, MediaError, MediaErrorReason
from ._media import (
    FrameConverter,
    StreamIndex,
    VideoInfo,
    convert_frame,
    decode_frames,
    decode_resized,
    probe_video,
    stream_index,
    video_content_hash,
)
from ._pipeline import (
    FramePlan,
    FrameSet,
    decode_for_configs,
    decode_raw,
    plan_frames,
)
from ._resize import (
    FRAMES_PER_TEMPORAL_PATCH,
    IMAGE_FACTOR,
    MAX_PIXELS,
    MIN_PIXELS,
    PIXELS_PER_VISUAL_TOKEN,
    allocation_max_pixels,
    smart_resize,
    target_size,
)
from ._sampling import fps_frame_count, sample_indices
from ._sheet import render_contact_sheet, write_contact_sheet

__all__ = [
    "ENTRY_MAGIC",
    "FRAMES_PER_TEMPORAL_PATCH",
    "IMAGE_FACTOR",
    "MAX_PIXELS",
    "MEDIA_ERROR_REASONS",
    "MIN_PIXELS",
    "PIXELS_PER_VISUAL_TOKEN",
    "RESIZE_VERSION",
    "CacheStats",
    "FrameCache",
    "FrameConverter",
    "FramePlan",
    "FrameSet",
    "MediaError",
    "MediaErrorReason",
    "StreamIndex",
    "VideoInfo",
    "allocation_max_pixels",
    "convert_frame",
    "decode_for_configs",
    "decode_frames",
    "decode_raw",
    "decode_resized",
    "encode_video",
    "fps_frame_count",
    "frame_checksum",
    "plan_frames",
    "probe_video",
    "render_contact_sheet",
    "sample_indices",
    "smart_resize",
    "stream_index",
    "target_size",
    "video_content_hash",
    "write_contact_sheet",
]

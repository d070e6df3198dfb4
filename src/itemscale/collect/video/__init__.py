"""The video pipeline: sampling formulas, one decode per video, resizing, and the frame cache."""

from ..protocol import Selection, SelectionError, read_selection
from ._cache import CacheStats, FrameCache
from ._content import (
    DEFAULT_CHANGE_THRESHOLD,
    SELECTOR_METHODS,
    Adaptive,
    change_selection,
    pick_by_change,
    write_selection_files,
)
from ._encode import encode_video
from ._errors import MediaError, MediaErrorReason
from ._media import (
    FrameConverter,
    StreamIndex,
    VideoInfo,
    convert_frame,
    decode_frames,
    probe_video,
    stream_index,
    video_content_hash,
)
from ._pipeline import FramePlan, FrameSet, decode_for_configs, decode_raw, plan_frames
from ._resize import allocation_max_pixels, smart_resize, target_size
from ._sampling import sample_indices
from ._selection import (
    SelectedFrames,
    check_selection_count,
    policy_selection,
    remember_questions,
    selected_frames,
    selection_entry,
)
from ._sheet import write_contact_sheet

__all__ = [
    "DEFAULT_CHANGE_THRESHOLD",
    "SELECTOR_METHODS",
    "Adaptive",
    "CacheStats",
    "FrameCache",
    "FrameConverter",
    "FramePlan",
    "FrameSet",
    "MediaError",
    "MediaErrorReason",
    "SelectedFrames",
    "Selection",
    "SelectionError",
    "StreamIndex",
    "VideoInfo",
    "allocation_max_pixels",
    "change_selection",
    "check_selection_count",
    "convert_frame",
    "decode_for_configs",
    "decode_frames",
    "decode_raw",
    "encode_video",
    "pick_by_change",
    "plan_frames",
    "policy_selection",
    "probe_video",
    "read_selection",
    "remember_questions",
    "sample_indices",
    "selected_frames",
    "selection_entry",
    "smart_resize",
    "stream_index",
    "target_size",
    "video_content_hash",
    "write_contact_sheet",
    "write_selection_files",
]

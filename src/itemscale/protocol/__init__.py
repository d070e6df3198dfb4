"""Budget protocols: the protocol file and the typed configurations of a budget grid."""

from ._config import (
    FRAMES_PER_TEMPORAL_PATCH,
    IMAGE_FACTOR,
    MAX_FRAME_PIXELS,
    MIN_FRAME_PIXELS,
    PHASED_POLICIES,
    PIXELS_PER_VISUAL_TOKEN,
    Configuration,
    SamplingPolicy,
)
from ._protocol import (
    BenchmarkEntry,
    DecodingSettings,
    GridSpec,
    ModelEntry,
    Protocol,
    ProtocolError,
    load_protocol,
    parse_protocol,
)

__all__ = [
    "FRAMES_PER_TEMPORAL_PATCH",
    "IMAGE_FACTOR",
    "MAX_FRAME_PIXELS",
    "MIN_FRAME_PIXELS",
    "PHASED_POLICIES",
    "PIXELS_PER_VISUAL_TOKEN",
    "BenchmarkEntry",
    "Configuration",
    "DecodingSettings",
    "GridSpec",
    "ModelEntry",
    "Protocol",
    "ProtocolError",
    "SamplingPolicy",
    "load_protocol",
    "parse_protocol",
]

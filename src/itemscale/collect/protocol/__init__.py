"""Budget protocols: the protocol file and the typed configurations of a budget grid.

A model entry's `backend` is a name here, checked against the installed backends where the
protocol meets them (`backends=` of `load_protocol`).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ...core.configuration import (
    CONFIG_ID_VERSION,
    DEFAULT_FPS,
    FRAMES_PER_TEMPORAL_PATCH,
    IMAGE_FACTOR,
    MAX_FRAME_PIXELS,
    MIN_FRAME_PIXELS,
    PER_ITEM_SAMPLING_POLICIES,
    PHASED_SAMPLING_POLICIES,
    PIXELS_PER_VISUAL_TOKEN,
    SAMPLING_POLICY_NAMES,
    SELECTION_FORMATS,
    Configuration,
    Pipeline,
    SamplingPolicy,
    SamplingPolicyName,
    SelectionFormat,
)
from ...core.errors import renamed_attribute as _renamed_attribute
from ._decoding import DecodingSettings
from ._protocol import (
    BACKENDS_CONTEXT,
    PROTOCOL_MAX_NEW_TOKENS,
    PROTOCOL_VERSION,
    BenchmarkEntry,
    GridSpec,
    ModelEntry,
    Protocol,
    ProtocolError,
    SelectionEntry,
    load_protocol,
    not_one_of,
    one_of,
    parse_protocol,
    selection_file_digest,
)
from ._selection_file import (
    MAX_SELECTION_BYTES,
    ListedFrames,
    Selection,
    SelectionError,
    cached_selection,
    read_order,
    read_selection,
)

__all__ = [
    "BACKENDS_CONTEXT",
    "CONFIG_ID_VERSION",
    "DEFAULT_FPS",
    "FRAMES_PER_TEMPORAL_PATCH",
    "IMAGE_FACTOR",
    "MAX_FRAME_PIXELS",
    "MAX_SELECTION_BYTES",
    "MIN_FRAME_PIXELS",
    "PER_ITEM_SAMPLING_POLICIES",
    "PHASED_SAMPLING_POLICIES",
    "PIXELS_PER_VISUAL_TOKEN",
    "PROTOCOL_MAX_NEW_TOKENS",
    "PROTOCOL_VERSION",
    "SAMPLING_POLICY_NAMES",
    "SELECTION_FORMATS",
    "BenchmarkEntry",
    "Configuration",
    "DecodingSettings",
    "GridSpec",
    "ListedFrames",
    "ModelEntry",
    "Pipeline",
    "Protocol",
    "ProtocolError",
    "SamplingPolicy",
    "SamplingPolicyName",
    "Selection",
    "SelectionEntry",
    "SelectionError",
    "SelectionFormat",
    "cached_selection",
    "load_protocol",
    "not_one_of",
    "one_of",
    "parse_protocol",
    "read_order",
    "read_selection",
    "selection_file_digest",
]

#: Names renamed by issue 27 ("policy" alone named sampling, stopping and intervention), kept
#: for one release with a DeprecationWarning.
_RENAMED = {
    "POLICY_NAMES": "SAMPLING_POLICY_NAMES",
    "PolicyName": "SamplingPolicyName",
    "PHASED_POLICIES": "PHASED_SAMPLING_POLICIES",
}


if not _TYPE_CHECKING:  # mypy checks every name imported from this face, old ones refused

    def __getattr__(name: str) -> _Any:
        return _renamed_attribute(__name__, globals(), _RENAMED, name)

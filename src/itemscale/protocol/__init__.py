"""Budget protocols: the protocol file and the typed configurations of a budget grid.

`DecodingSettings` is the backends' own type (`itemscale.models`), re-exported here because a
protocol's `[decoding]` table is read into it.
"""

from ..models import DecodingSettings
from ._config import (
    CONFIG_ID_VERSION,
    DEFAULT_FPS,
    PHASED_POLICIES,
    POLICY_NAMES,
    Configuration,
    Pipeline,
    PolicyName,
    SamplingPolicy,
)
from ._protocol import (
    PROTOCOL_MAX_NEW_TOKENS,
    PROTOCOL_VERSION,
    BenchmarkEntry,
    GridSpec,
    ModelEntry,
    Protocol,
    ProtocolError,
    load_protocol,
    parse_protocol,
)

__all__ = [
    "CONFIG_ID_VERSION",
    "DEFAULT_FPS",
    "PHASED_POLICIES",
    "POLICY_NAMES",
    "PROTOCOL_MAX_NEW_TOKENS",
    "PROTOCOL_VERSION",
    "BenchmarkEntry",
    "Configuration",
    "DecodingSettings",
    "GridSpec",
    "ModelEntry",
    "Pipeline",
    "PolicyName",
    "Protocol",
    "ProtocolError",
    "SamplingPolicy",
    "load_protocol",
    "parse_protocol",
]

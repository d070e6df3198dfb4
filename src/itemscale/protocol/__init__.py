"""Budget protocols: the protocol file and the typed configurations of a budget grid."""

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
    PROTOCOL_VERSION,
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
    "CONFIG_ID_VERSION",
    "DEFAULT_FPS",
    "PHASED_POLICIES",
    "POLICY_NAMES",
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

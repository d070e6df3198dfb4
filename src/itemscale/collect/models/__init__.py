"""Model backends behind one `VideoLM` protocol: transformers (`hf`), OpenAI-compatible servers
(`openai`) and the built-in tiny model (`builtin`, the `hf` backend on packaged weights).
Heavy dependencies (torch, transformers, httpx) are imported only when a backend is loaded;
backends are registered in `BACKENDS` by plugins (docs/extending.md).
"""

from ...core.plugins import PluginError
from ..protocol import DecodingSettings
from ._answers import completed_response
from ._base import BaseVideoLM, serving_of, usage_of
from ._contract import BackendUsage, FrameTransport, Serving
from ._hf_families import source_fps, video_metadata
from ._hf_support import no_loading_bars, writable
from ._hf_wire import ChatTemplateMessage, ContentPart, VideoMetadataFields
from ._load import (
    BUILTIN_META_FILE,
    ModelEntryLike,
    builtin_backend_options,
    builtin_model_dir,
    check_backend_options,
    check_device,
    load_backend,
    load_fingerprint,
    saved_with_note,
    scoring_rule_of,
    transport_of,
)
from ._packages import ImportedPackage, ModuleRecord, imported_package
from ._prompts import (
    MCQA_INSTRUCTION,
    OPEN_QA_INSTRUCTION,
    PROMPT_TEMPLATE_VERSION,
    SUMMARY_INSTRUCTION,
    build_messages,
)
from ._types import (
    BACKENDS,
    Backend,
    BackendError,
    BackendLoader,
    BackendSpec,
    Frames,
    LoadSettings,
    ScoringRuleOf,
    TransportOf,
    VideoLM,
    VideoRequest,
    VideoResponse,
    lazy,
    parse_backend_options,
)

__all__ = [
    "BACKENDS",
    "BUILTIN_META_FILE",
    "MCQA_INSTRUCTION",
    "OPEN_QA_INSTRUCTION",
    "PROMPT_TEMPLATE_VERSION",
    "SUMMARY_INSTRUCTION",
    "Backend",
    "BackendError",
    "BackendLoader",
    "BackendSpec",
    "BackendUsage",
    "BaseVideoLM",
    "ChatTemplateMessage",
    "ContentPart",
    "DecodingSettings",
    "FrameTransport",
    "Frames",
    "ImportedPackage",
    "LoadSettings",
    "ModelEntryLike",
    "ModuleRecord",
    "PluginError",
    "ScoringRuleOf",
    "Serving",
    "TransportOf",
    "VideoLM",
    "VideoMetadataFields",
    "VideoRequest",
    "VideoResponse",
    "build_messages",
    "builtin_backend_options",
    "builtin_model_dir",
    "check_backend_options",
    "check_device",
    "completed_response",
    "imported_package",
    "lazy",
    "load_backend",
    "load_fingerprint",
    "no_loading_bars",
    "parse_backend_options",
    "saved_with_note",
    "scoring_rule_of",
    "serving_of",
    "source_fps",
    "transport_of",
    "usage_of",
    "video_metadata",
    "writable",
]

"""Model backends behind one `VideoLM` protocol: transformers (`hf`), OpenAI-compatible servers
(`openai`) and the built-in tiny model (`builtin`, the `hf` backend on packaged weights).

Heavy dependencies (torch, transformers, httpx) are imported only when a backend is loaded.
"""

from ._load import (
    ModelEntryLike,
    builtin_model_dir,
    check_backend_options,
    load_backend,
    load_fingerprint,
)
from ._prompts import PROMPT_TEMPLATE_VERSION, build_messages
from ._types import (
    SCORE_ONLY_MAX_NEW_TOKENS,
    BackendError,
    BackendName,
    BackendSpec,
    DecodingSettings,
    Frames,
    FramesLike,
    VideoLM,
    VideoRequest,
    VideoResponse,
)

__all__ = [
    "PROMPT_TEMPLATE_VERSION",
    "SCORE_ONLY_MAX_NEW_TOKENS",
    "BackendError",
    "BackendName",
    "BackendSpec",
    "DecodingSettings",
    "Frames",
    "FramesLike",
    "ModelEntryLike",
    "VideoLM",
    "VideoRequest",
    "VideoResponse",
    "build_messages",
    "builtin_model_dir",
    "check_backend_options",
    "load_backend",
    "load_fingerprint",
]

"""Model backends behind one `VideoLM` protocol: transformers (`hf`), OpenAI-compatible servers
(`openai`) and the built-in tiny model (`builtin`, the `hf` backend on packaged weights).
Making those weights needs the suite generator and the decoder, which no backend does, so it
lives above this package, in `itemscale.builtin`.

Heavy dependencies (torch, transformers, httpx) are imported only when a backend is loaded.
"""

from ._load import (
    ModelEntryLike,
    builtin_backend_options,
    builtin_model_dir,
    check_backend_options,
    check_device,
    load_backend,
    load_fingerprint,
)
from ._prompts import PROMPT_TEMPLATE_VERSION, build_messages
from ._types import (
    BACKENDS,
    SCORE_ONLY_MAX_NEW_TOKENS,
    Backend,
    BackendError,
    BackendLoader,
    BackendName,
    BackendSpec,
    DecodingSettings,
    Frames,
    FramesLike,
    LoadSettings,
    VideoLM,
    VideoRequest,
    VideoResponse,
    lazy,
)

__all__ = [
    "BACKENDS",
    "PROMPT_TEMPLATE_VERSION",
    "SCORE_ONLY_MAX_NEW_TOKENS",
    "Backend",
    "BackendError",
    "BackendLoader",
    "BackendName",
    "BackendSpec",
    "DecodingSettings",
    "Frames",
    "FramesLike",
    "LoadSettings",
    "ModelEntryLike",
    "VideoLM",
    "VideoRequest",
    "VideoResponse",
    "build_messages",
    "builtin_backend_options",
    "builtin_model_dir",
    "check_backend_options",
    "check_device",
    "lazy",
    "load_backend",
    "load_fingerprint",
]

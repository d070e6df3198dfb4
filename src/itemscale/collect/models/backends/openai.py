"""`openai`: a model behind an OpenAI-compatible server (docs/backends.md)."""

from __future__ import annotations

from .._contract import FrameTransport
from .._types import BACKENDS, Backend, LoadSettings, ModelEntryLike, VideoLM, lazy


def openai_transport(entry: ModelEntryLike) -> FrameTransport:
    """One video input with the `video_input` option, else one image part per frame."""
    video = bool(dict(entry.options or {}).get("video_input", False))
    return FrameTransport.VIDEO if video else FrameTransport.IMAGE_PARTS


def load_openai(entry: ModelEntryLike, settings: LoadSettings) -> VideoLM:
    from .._openai import OpenAIBackend

    return OpenAIBackend.create(
        name=entry.name,
        model=entry.model,
        revision=entry.revision,
        dtype=entry.dtype,
        options=dict(entry.options or {}),
        concurrency=settings.concurrency,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        rng=settings.rng,
    )


BACKENDS.declare(
    "openai",
    Backend(
        parse_options=lazy("itemscale.collect.models._openai:parse_options"),
        load=load_openai,
        transport=openai_transport,
    ),
    order=20,
)

"""The chat-completions request body the `openai` backend sends, as typed dictionaries named
after the OpenAI API objects (the openai SDK types its request params the same way).

These are what we build and serialise with `json=`; the reply is untrusted JSON and is read as
`Mapping[str, object]` and narrowed where the backend reads it (`_openai`), never cast to a
type here.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict


class ChatCompletionContentPartTextParam(TypedDict):
    type: Literal["text"]
    text: str


class ImageURL(TypedDict):
    #: a `data:image/jpeg;base64,...` (or png) URL holding one frame
    url: str


class ChatCompletionContentPartImageParam(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


class VideoURL(TypedDict):
    #: vLLM's `data:video/jpeg;base64,<frame>,<frame>,...` URL holding every frame
    url: str


class ChatCompletionContentPartVideoParam(TypedDict):
    """vLLM's video part (not in OpenAI's own API)."""

    type: Literal["video_url"]
    video_url: VideoURL


ChatCompletionContentPartParam = (
    ChatCompletionContentPartTextParam
    | ChatCompletionContentPartImageParam
    | ChatCompletionContentPartVideoParam
)


class ChatCompletionMessageParam(TypedDict):
    role: Literal["system", "user", "assistant"]
    #: plain text, or parts (the frames, then the text) in the first user message
    content: str | list[ChatCompletionContentPartParam]


class MediaIOVideoKwargs(TypedDict):
    """vLLM's `media_io_kwargs.video`: how it reads a `data:video/jpeg` frame list."""

    num_frames: int
    fps: float
    frames_indices: list[int]
    total_num_frames: int
    duration: float
    do_sample_frames: bool


class MediaIOKwargs(TypedDict):
    video: MediaIOVideoKwargs


class CompletionCreateParams(TypedDict):
    """The request body of `POST chat/completions`, in the order it is sent."""

    model: str
    messages: list[ChatCompletionMessageParam]
    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    #: vLLM's field, with the `frame_times` option
    media_io_kwargs: NotRequired[MediaIOKwargs]
    logprobs: NotRequired[bool]
    top_logprobs: NotRequired[int]


class ServedIdentity:
    """What a served model's replies say it is: model id, `system_fingerprint`, `server` and
    `*-version` headers, each value seen (a server that changed mid-sweep shows both)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, set[str]] = {}

    def note(self, payload: Mapping[str, object], headers: Mapping[str, str]) -> None:
        found = {
            "model": payload.get("model"),
            "system_fingerprint": payload.get("system_fingerprint"),
            **{
                f"header {k.lower()}": v
                for k, v in headers.items()
                if k.lower() == "server" or k.lower().endswith("-version")
            },
        }
        with self._lock:
            for key, value in found.items():
                if isinstance(value, str) and value:
                    self._seen.setdefault(key, set()).add(value[:200])

    def seen(self) -> dict[str, list[str]]:
        """Each field with every value seen, sorted."""
        with self._lock:
            return {k: sorted(v) for k, v in sorted(self._seen.items())}

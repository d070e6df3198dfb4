"""Served models (vLLM, SGLang, LMDeploy, ...) through the OpenAI chat-completions protocol.

Frames travel as base64 image parts, or, with `video_input`, as one vLLM `video_url` part whose
data URL holds the JPEG frames comma-separated (vLLM's `video/jpeg` input), so the server sees
exactly the frames we chose and does not resample a video file itself.

Failure handling is what keeps a sweep honest: 429, 5xx and connection errors are retried with
exponential backoff and seeded jitter (longer when the server's Retry-After asks, up to a cap);
any other 4xx is a request the server will never accept and fails at once; exhausted retries
become `model_error`. `timeout_s` is a deadline for a whole attempt (connect, send, every byte
of the reply; `_http`), past which the cell is `timeout`; a reply body past `max_reply_bytes` is
refused unread. Failures carry no answer. The API key is read from the environment variable
named in the options and is never part of the spec (which is stored in the run store and
provenance); an error body is redacted whole before it is cut to `ERROR_BODY_CHARS`.
"""

from __future__ import annotations

import base64
import io
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from ..files import loads_json
from ..items import Item
from ..responses import Status, TaskKind, excerpt, register_secret
from ._answers import completed_response, letter_probs_from_logprobs
from ._http import (
    DeadlineTransport,
    Reply,
    ReplyTooLarge,
    deadline,
    environment_proxy,
    read_reply,
    retry_after_s,
)
from ._prompts import build_messages
from ._types import (
    BackendError,
    BackendSpec,
    FramesLike,
    VideoRequest,
    VideoResponse,
    parse_backend_options,
)

RETRY_STATUS_CODES = frozenset({408, 429, 500, 502, 503, 504})
#: Default reply size cap: a chat completion with 20 top log-probabilities per token for
#: thousands of tokens stays well below it; with `concurrency` N, N replies at most are held.
DEFAULT_MAX_REPLY_BYTES = 16 * 2**20
#: What a stored error keeps of a server's error body (redacted whole first).
ERROR_BODY_CHARS = 300


class OpenAIOptions(BaseModel):
    """Options of an `openai` model entry (the protocol file's `options` table)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    video_input: bool = False
    image_format: Literal["jpeg", "png"] = "jpeg"
    jpeg_quality: int = Field(default=90, ge=1, le=100)
    top_logprobs: int = Field(default=20, ge=0, le=20)
    backoff_base_s: float = Field(default=0.5, gt=0.0)
    backoff_max_s: float = Field(default=30.0, gt=0.0)
    #: the longest wait a server's `Retry-After` may ask for before a retry (0: ignore it)
    retry_after_max_s: float = Field(default=60.0, ge=0.0)
    #: a reply body larger than this is refused unread (`model_error`), whatever its status
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=1024)


def parse_options(options: dict[str, Any], model_name: str) -> OpenAIOptions:
    return parse_backend_options(OpenAIOptions, options, model_name)


def encode_frame(frame: npt.NDArray[np.uint8], image_format: str, quality: int) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    image = Image.fromarray(frame, mode="RGB")
    if image_format == "png":
        image.save(buffer, format="PNG")
    else:
        image.save(buffer, format="JPEG", quality=quality)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def build_chat_messages(
    item: Item, frames: FramesLike | None, options: OpenAIOptions
) -> list[dict[str, Any]]:
    """OpenAI chat messages: the shared prompt, with the frames at the start of the first user
    message (that is where every open Video LLM's own chat template puts the video)."""
    messages: list[dict[str, Any]] = []
    for position, message in enumerate(build_messages(item)):
        if position == 0 and frames is not None:
            parts: list[dict[str, Any]] = []
            if options.video_input:
                encoded = [encode_frame(f, "jpeg", options.jpeg_quality) for f in frames.frames]
                url = "data:video/jpeg;base64," + ",".join(encoded)
                parts.append({"type": "video_url", "video_url": {"url": url}})
            else:
                mime = "image/png" if options.image_format == "png" else "image/jpeg"
                for frame in frames.frames:
                    data = encode_frame(frame, options.image_format, options.jpeg_quality)
                    parts.append(
                        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
                    )
            parts.append({"type": "text", "text": message["text"]})
            messages.append({"role": message["role"], "content": parts})
        else:
            messages.append({"role": message["role"], "content": message["text"]})
    return messages


def first_answer_position(content: list[dict[str, Any]]) -> list[tuple[str, float]] | None:
    """Top log-probabilities at the first generated token that is not whitespace."""
    for entry in content:
        token = entry.get("token")
        if not isinstance(token, str) or not token.strip():
            continue
        tops = entry.get("top_logprobs") or [{"token": token, "logprob": entry.get("logprob")}]
        pairs = []
        for top in tops:
            if isinstance(top.get("token"), str) and isinstance(top.get("logprob"), int | float):
                pairs.append((str(top["token"]), float(top["logprob"])))
        return pairs
    return None


class _RequestFailed(Exception):
    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


class OpenAIBackend:
    """A served model; thread-safe HTTP client, bounded concurrency."""

    def __init__(
        self,
        spec: BackendSpec,
        options: OpenAIOptions,
        *,
        api_key: str | None,
        concurrency: int,
        timeout_s: float,
        max_retries: int,
        rng: np.random.Generator,
    ) -> None:
        if concurrency < 1:
            raise BackendError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0:
            raise BackendError(f"max_retries must be >= 0, got {max_retries}")
        self._spec = spec
        self._options = options
        self._concurrency = concurrency
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._rng = rng
        self._rng_lock = threading.Lock()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=options.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            transport=DeadlineTransport(
                max_connections=concurrency, proxy=environment_proxy(options.base_url)
            ),
        )
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="itemscale-oai")

    @classmethod
    def create(
        cls,
        *,
        name: str,
        model: str,
        revision: str | None,
        dtype: str | None,
        options: dict[str, Any],
        concurrency: int,
        timeout_s: float,
        max_retries: int,
        rng: np.random.Generator,
    ) -> OpenAIBackend:
        parsed = parse_options(options, name)
        spec = BackendSpec(
            backend="openai",
            name=name,
            model=model,
            revision=revision,
            dtype=dtype,
            processor={
                "video_input": parsed.video_input,
                "image_format": "jpeg" if parsed.video_input else parsed.image_format,
                "jpeg_quality": parsed.jpeg_quality,
            },
        )
        api_key = os.environ.get(parsed.api_key_env) or None
        register_secret(api_key)  # never stored: redacted from error bodies and provenance
        return cls(
            spec,
            parsed,
            api_key=api_key,
            concurrency=concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
            rng=rng,
        )

    @property
    def spec(self) -> BackendSpec:
        return self._spec

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIBackend(name={self._spec.name!r}, base_url={self._options.base_url!r})"

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        return list(self._pool.map(self._one, requests))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._client.close()

    def _body(self, request: VideoRequest) -> dict[str, Any]:
        decoding = request.decoding
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": build_chat_messages(request.item, request.frames, self._options),
            "max_tokens": decoding.max_new_tokens,
            "temperature": decoding.temperature,
            "top_p": decoding.top_p,
            "seed": decoding.seed,
        }
        wants_scores = request.item.task_kind == TaskKind.MCQA and decoding.score_options
        if wants_scores and self._options.top_logprobs > 0:
            body["logprobs"] = True
            body["top_logprobs"] = self._options.top_logprobs
        return body

    def _backoff_s(self, attempt: int, asked_s: float | None = None) -> float:
        """The wait before retry `attempt + 1`: exponential backoff with seeded jitter, or what
        the server's Retry-After asked when that is longer, up to `retry_after_max_s`."""
        with self._rng_lock:
            jitter = float(self._rng.random())
        delay = self._options.backoff_base_s * (2.0**attempt) * (1.0 + jitter)
        delay = float(min(delay, self._options.backoff_max_s))
        if asked_s is not None and self._options.retry_after_max_s > 0:
            delay = max(delay, min(asked_s, self._options.retry_after_max_s))
        return delay

    def _attempt(self, body: dict[str, Any]) -> Reply:
        """One POST, whole (connect, send, every byte of the reply) within `timeout_s`."""
        with (
            deadline(self._timeout_s),
            self._client.stream("POST", "chat/completions", json=body) as response,
        ):
            return read_reply(response, self._options.max_reply_bytes)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        last_error = "no attempt made"
        asked_s: float | None = None
        for attempt in range(self._max_retries + 1):
            if attempt:
                time.sleep(self._backoff_s(attempt - 1, asked_s))
            asked_s = None
            try:
                reply = self._attempt(body)
            except httpx.TimeoutException as exc:
                raise _RequestFailed(
                    Status.TIMEOUT,
                    f"no whole reply within {self._timeout_s:g} s ({type(exc).__name__})",
                ) from exc
            except httpx.TransportError as exc:
                last_error = f"connection error: {type(exc).__name__}: {excerpt(str(exc), 200)}"
                continue
            except ReplyTooLarge as exc:
                raise _RequestFailed(Status.MODEL_ERROR, str(exc)) from exc
            if reply.status_code >= 400 or reply.status_code in RETRY_STATUS_CODES:
                # the whole body is redacted before it is cut (a key straddling the cut would
                # otherwise be stored in part)
                shown = f"HTTP {reply.status_code}: {excerpt(reply.text, ERROR_BODY_CHARS)}"
                if reply.status_code in RETRY_STATUS_CODES or reply.status_code >= 500:
                    last_error = shown
                    asked_s = retry_after_s(reply.headers)
                    continue
                raise _RequestFailed(Status.MODEL_ERROR, shown)
            try:  # a lone surrogate escape or a 5000-digit number is no completion either
                payload = loads_json(reply.content)
            except ValueError as exc:
                raise _RequestFailed(Status.MODEL_ERROR, "server reply is not JSON") from exc
            if not isinstance(payload, dict):
                raise _RequestFailed(Status.MODEL_ERROR, "server reply is not a JSON object")
            return payload
        raise _RequestFailed(
            Status.MODEL_ERROR, f"gave up after {self._max_retries + 1} attempts: {last_error}"
        )

    def _one(self, request: VideoRequest) -> VideoResponse:
        start = time.perf_counter()
        try:
            payload = self._post(self._body(request))
            choice = payload["choices"][0]
            text = choice["message"]["content"]
            if text is None:
                text = ""
            if not isinstance(text, str):
                raise _RequestFailed(Status.MODEL_ERROR, "message content is not a string")
        except _RequestFailed as failure:
            return VideoResponse.failure(failure.status, str(failure), time.perf_counter() - start)
        except (KeyError, IndexError, TypeError) as exc:
            return VideoResponse.failure(
                Status.MODEL_ERROR,
                f"malformed chat completion ({type(exc).__name__}: {exc})",
                time.perf_counter() - start,
            )
        item = request.item
        option_probs = None
        if item.task_kind == TaskKind.MCQA and request.decoding.score_options:
            logprobs = choice.get("logprobs") or {}
            content = logprobs.get("content") if isinstance(logprobs, dict) else None
            if isinstance(content, list):
                pairs = first_answer_position(content)
                if pairs:
                    option_probs = letter_probs_from_logprobs(pairs, item.option_letters)
        # The server's processor may resize or merge frames: its visual tokens and pixels are
        # unknown here.
        return completed_response(
            request,
            text,
            option_probs,
            latency_s=time.perf_counter() - start,
            visual_tokens=None,
            pixels=None,
        )

"""Served models (vLLM, SGLang, LMDeploy, ...) through the OpenAI chat-completions protocol.

Frames travel as base64 image parts, or, with `video_input`, as one vLLM `video_url` part whose
data URL holds the JPEG frames comma-separated (vLLM's `video/jpeg` input), so the server sees
exactly the frames we chose and does not resample a video file itself.

429, 5xx and connection errors are retried with exponential backoff and seeded jitter; any other
4xx fails at once; exhausted retries become `model_error`, a whole attempt past `timeout_s` is
`timeout` (docs/backends.md). The API key is read from the environment variable named in the
options and is never part of the spec; an error body is redacted whole before it is cut.
"""

from __future__ import annotations

import base64
import io
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import httpx
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from ...core.files import loads_json
from ...core.responses import Status, TaskKind, excerpt, register_secret
from ..items import Item
from ._answers import completed_response, letter_probs_from_logprobs
from ._base import BaseVideoLM
from ._contract import BackendUsage, Serving
from ._hf_families import video_metadata
from ._http import (
    DeadlineTransport,
    Reply,
    ReplyTooLarge,
    deadline,
    environment_proxy,
    read_reply,
    retry_after_s,
)
from ._openai_wire import (
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
    CompletionCreateParams,
    MediaIOKwargs,
    ServedIdentity,
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
#: Default stored reply text: a multiple-choice or open answer is far shorter; a server that
#: ignores `max_tokens` and sends megabytes of text would otherwise store all of it per cell.
DEFAULT_MAX_REPLY_CHARS = 32_768
#: What a stored error keeps of a server's error body (redacted whole first).
ERROR_BODY_CHARS = 300


class OpenAIOptions(BaseModel):
    """Options of an `openai` model entry (the protocol file's `options` table)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    video_input: StrictBool = False
    image_format: Literal["jpeg", "png"] = "jpeg"
    jpeg_quality: int = Field(default=90, ge=1, le=100)
    top_logprobs: int = Field(default=20, ge=0, le=20)
    backoff_base_s: float = Field(default=0.5, gt=0.0)
    backoff_max_s: float = Field(default=30.0, gt=0.0)
    #: the longest wait a server's `Retry-After` may ask for before a retry (0: ignore it)
    retry_after_max_s: float = Field(default=60.0, ge=0.0)
    #: a reply body larger than this is refused unread (`model_error`), whatever its status
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=1024)
    #: the characters of a reply's text that are stored and read; the rest is cut and counted
    max_reply_chars: int = Field(default=DEFAULT_MAX_REPLY_CHARS, ge=256)

    #: with `video_input`: send the frames' true times as vLLM's `media_io_kwargs.video`
    #: (docs/backends.md, "What travels")
    frame_times: StrictBool = False

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str) -> str:
        if not ENV_NAME.fullmatch(value):
            register_secret(value)  # a key typed in the name's place: redacted everywhere
            raise ValueError(
                "is not the name of an environment variable (letters, digits and '_', not "
                "starting with a digit); give the name of the variable that holds the key, not "
                "the key (the value is not shown)"
            )
        return value

    @model_validator(mode="after")
    def _frame_times_need_a_video(self) -> OpenAIOptions:
        if self.frame_times and not self.video_input:
            raise ValueError(
                "frame_times needs video_input = true: image parts carry no frame times"
            )
        return self


#: What an environment variable's name may be (POSIX's portable names).
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
#: A name printed in a message: one that cannot be a key typed in a name's place.
_SHOWN_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}")


def parse_options(options: Mapping[str, object], model_name: str) -> OpenAIOptions:
    """The typed options; an `api_key_env` the protocol sets must be set (the default may be
    unset: no key, no `Authorization` header)."""
    parsed = parse_backend_options(OpenAIOptions, options, model_name)
    name = parsed.api_key_env
    if "api_key_env" in parsed.model_fields_set and not os.environ.get(name):
        shown = f"${name}" if _SHOWN_NAME.fullmatch(name) else "the variable it names"
        if not _SHOWN_NAME.fullmatch(name):
            register_secret(name)
        raise BackendError(
            f"model {model_name!r}: option 'api_key_env': {shown} is not set (or empty); set "
            "it to the server's key, or drop the option to send no key"
        )
    return parsed


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
    item: Item, frame_set: FramesLike | None, options: OpenAIOptions
) -> list[ChatCompletionMessageParam]:
    """The shared prompt, the frames at the start of the first user message (where every open
    Video LLM's own chat template puts the video)."""
    messages: list[ChatCompletionMessageParam] = []
    for position, message in enumerate(build_messages(item)):
        if position == 0 and frame_set is not None:
            parts: list[ChatCompletionContentPartParam] = []
            if options.video_input:
                encoded = [encode_frame(f, "jpeg", options.jpeg_quality) for f in frame_set.array]
                url = "data:video/jpeg;base64," + ",".join(encoded)
                parts.append({"type": "video_url", "video_url": {"url": url}})
            else:
                mime = "image/png" if options.image_format == "png" else "image/jpeg"
                for frame in frame_set.array:
                    data = encode_frame(frame, options.image_format, options.jpeg_quality)
                    parts.append(
                        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
                    )
            parts.append({"type": "text", "text": message["text"]})
            messages.append({"role": message["role"], "content": parts})
        else:
            messages.append({"role": message["role"], "content": message["text"]})
    return messages


def frame_times_field(frame_set: FramesLike) -> MediaIOKwargs:
    """vLLM's `media_io_kwargs` for a `data:video/jpeg` frame list: transformers' video
    metadata, as the `hf` backend passes it, every frame kept (`num_frames = -1`: vLLM
    otherwise keeps the first 32 of a JPEG list) and no sampling again."""
    meta = video_metadata(frame_set)
    return {
        "video": {
            "num_frames": -1,
            "fps": float(meta["fps"]),
            "frames_indices": [int(i) for i in meta["frames_indices"]],
            "total_num_frames": int(meta["total_num_frames"]),
            "duration": float(meta["duration"]),
            "do_sample_frames": False,
        }
    }


def first_answer_position(content: Sequence[object]) -> list[tuple[str, float]] | None:
    """Top log-probabilities at the first generated token that is not whitespace, from a
    reply's untrusted `choices[0].logprobs.content` (ill-typed entries are passed over)."""
    for entry in content:
        if not isinstance(entry, Mapping):
            continue
        token = entry.get("token")
        if not isinstance(token, str) or not token.strip():
            continue
        tops: object = entry.get("top_logprobs") or [
            {"token": token, "logprob": entry.get("logprob")}
        ]
        pairs: list[tuple[str, float]] = []
        for top in tops if isinstance(tops, list) else ():
            if not isinstance(top, Mapping):
                continue
            name, logprob = top.get("token"), top.get("logprob")
            if isinstance(name, str) and isinstance(logprob, int | float):
                pairs.append((name, float(logprob)))
        return pairs
    return None


_TRANSPORT_WORDS: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ConnectError, "could not connect"),
    (httpx.RemoteProtocolError, "the server broke off or garbled its HTTP reply"),
    (httpx.ReadError, "the connection broke while reading the reply"),
    (httpx.WriteError, "the connection broke while sending the request"),
    (httpx.ProxyError, "the proxy refused the connection"),
    (httpx.UnsupportedProtocol, "base_url is not an http:// or https:// address"),
)


def _transport_words(exc: Exception) -> str:
    """What went wrong with the connection, in words (no exception class names)."""
    for kind, words in _TRANSPORT_WORDS:
        if isinstance(exc, kind):
            return words
    return "connection error"


def _choice_and_text(payload: Mapping[str, object]) -> tuple[Mapping[str, object], str]:
    """The first choice of a chat completion, as the untrusted object it is, and its
    `message.content`; a reply without them is a `model_error` saying what is missing."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        said = "no 'choices'" if choices is None else "'choices' is not a non-empty list"
        raise _malformed(said)
    choice: object = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise _malformed("the first choice has no 'message'")
    if "content" not in message:
        raise _malformed("the message has no 'content'")
    text = message["content"]
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise _malformed("the message's content is not text")
    return choice, text


def _malformed(said: str) -> _RequestFailed:
    return _RequestFailed(Status.MODEL_ERROR, f"malformed chat completion: {said}")


class _RequestFailed(Exception):
    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


class OpenAIBackend(BaseVideoLM):
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
        self._in_flight = 0
        #: the counts `usage()` reports (`BackendUsage`)
        self.max_in_flight = 0
        self.logprob_requests = 0
        self.logprob_missing = 0
        self.replies_cut = 0
        self.reply_chars_cut = 0
        #: prompt tokens of each item's text-only prompt: the rest of a reply's are the frames'
        self._text_tokens: dict[str, int | None] = {}
        self._text_lock = threading.Lock()
        self._identity = ServedIdentity()

    @classmethod
    def create(
        cls,
        *,
        name: str,
        model: str,
        revision: str | None,
        dtype: str | None,
        options: Mapping[str, object],
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
                # what the model sees changes with the frame times: part of the identity (only
                # when sent, so existing cells keep their ids)
                **({"frame_times": True} if parsed.frame_times else {}),
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

    @property
    def serving(self) -> Serving:
        """`concurrency` requests at once, whatever the local batch size; one request alone
        first, so a refusal stops the sweep with the server's own message."""
        return Serving(requests_in_flight=self._concurrency, probes_first=True)

    def usage(self) -> BackendUsage:
        with self._rng_lock:
            return BackendUsage(
                max_in_flight=self.max_in_flight,
                logprob_requests=self.logprob_requests,
                logprob_missing=self.logprob_missing,
                replies_cut=self.replies_cut,
                reply_chars_cut=self.reply_chars_cut,
            )

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIBackend(name={self._spec.name!r}, base_url={self._options.base_url!r})"

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        return list(self._pool.map(self._one, requests))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._client.close()

    def _body(self, request: VideoRequest) -> CompletionCreateParams:
        decoding = request.decoding
        body: CompletionCreateParams = {
            "model": self._spec.model,
            "messages": build_chat_messages(request.item, request.frames, self._options),
            "max_tokens": decoding.max_new_tokens,
            "temperature": decoding.temperature,
            "top_p": decoding.top_p,
            "seed": decoding.seed,
        }
        if self._options.frame_times and request.frames is not None:
            body["media_io_kwargs"] = frame_times_field(request.frames)
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

    def _attempt(self, body: CompletionCreateParams) -> Reply:
        """One POST, whole (connect, send, every byte of the reply), within `timeout_s`."""
        with (
            deadline(self._timeout_s),
            self._client.stream("POST", "chat/completions", json=body) as response,
        ):
            return read_reply(response, self._options.max_reply_bytes)

    def _post(self, body: CompletionCreateParams) -> Mapping[str, object]:
        last_error = "no attempt made"
        asked_s: float | None = None
        previous_failure: tuple[int, bytes] | None = None
        for attempt in range(self._max_retries + 1):
            if attempt:
                time.sleep(self._backoff_s(attempt - 1, asked_s))
            asked_s = None
            try:
                reply = self._attempt(body)
            except httpx.TimeoutException as exc:
                what = (
                    "could not connect"
                    if isinstance(exc, httpx.ConnectTimeout)
                    else "no whole reply"
                )
                raise _RequestFailed(
                    Status.TIMEOUT, f"{what} within {self._timeout_s:g} s"
                ) from exc
            except httpx.TransportError as exc:
                last_error = f"{_transport_words(exc)}: {excerpt(str(exc), 200)}"
                continue
            except ReplyTooLarge as exc:
                raise _RequestFailed(Status.MODEL_ERROR, str(exc)) from exc
            if 300 <= reply.status_code < 400:
                where = excerpt(reply.headers.get("location", "") or "no Location header", 200)
                raise _RequestFailed(
                    Status.MODEL_ERROR,
                    f"the server redirected the request (HTTP {reply.status_code} to {where}); "
                    "requests are not sent on to another address: set base_url to the one "
                    "the server names",
                )
            if reply.status_code >= 400 or reply.status_code in RETRY_STATUS_CODES:
                # the whole body is redacted before it is cut (a key straddling the cut would
                # otherwise be stored in part)
                shown = f"HTTP {reply.status_code}: {excerpt(reply.text, ERROR_BODY_CHARS)}"
                if reply.status_code in RETRY_STATUS_CODES or reply.status_code >= 500:
                    failure = (reply.status_code, reply.content)
                    if failure == previous_failure and reply.status_code not in (429, 503):
                        # the same error twice for the same request: the server will keep
                        # refusing it (an unsupported input, a server bug); waiting is no cure
                        raise _RequestFailed(
                            Status.MODEL_ERROR, f"{shown} (the same reply twice: not retried)"
                        )
                    previous_failure = failure
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
            self._identity.note(payload, reply.headers)
            return payload
        raise _RequestFailed(
            Status.MODEL_ERROR, f"gave up after {self._max_retries + 1} attempts: {last_error}"
        )

    def served_identity(self) -> dict[str, list[str]]:
        return self._identity.seen()

    def _counted_post(self, body: CompletionCreateParams) -> Mapping[str, object]:
        with self._rng_lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return self._post(body)
        finally:
            with self._rng_lock:
                self._in_flight -= 1

    def _text_prompt_tokens(self, request: VideoRequest) -> int | None:
        """`usage.prompt_tokens` of the item's prompt without frames (one short request per
        item, remembered), None when the server reports no usage."""
        key = request.item.item_id
        with self._text_lock:  # one request per item, however many of its cells are in flight
            if key in self._text_tokens:
                return self._text_tokens[key]
            body = self._body(
                VideoRequest(item=request.item, frames=None, decoding=request.decoding)
            )
            body["max_tokens"] = 1
            body.pop("logprobs", None)
            body.pop("top_logprobs", None)
            try:
                self._text_tokens[key] = _prompt_tokens(self._counted_post(body))
            except _RequestFailed:
                self._text_tokens[key] = None
            return self._text_tokens[key]

    def _one(self, request: VideoRequest) -> VideoResponse:
        start = time.perf_counter()
        try:
            payload = self._counted_post(self._body(request))
            choice, text = _choice_and_text(payload)
        except _RequestFailed as failure:
            return VideoResponse.failure(failure.status, str(failure), time.perf_counter() - start)
        latency = time.perf_counter() - start
        limit = self._options.max_reply_chars
        if len(text) > limit:  # a server ignoring max_tokens: keep the start, count the rest
            with self._rng_lock:
                self.replies_cut += 1
                self.reply_chars_cut += len(text) - limit
            text = excerpt(text, limit)  # redacted whole, then cut, with the excess counted
        item = request.item
        option_probs = None
        if item.task_kind == TaskKind.MCQA and request.decoding.score_options:
            logprobs = choice.get("logprobs") or {}
            content = logprobs.get("content") if isinstance(logprobs, dict) else None
            if isinstance(content, list):
                pairs = first_answer_position(content)
                if pairs:
                    option_probs = letter_probs_from_logprobs(pairs, item.option_letters)
            if self._options.top_logprobs > 0:
                with self._rng_lock:
                    self.logprob_requests += 1
                    self.logprob_missing += int(not content)
        # The frames' tokens: what they added to the same prompt without them; pixels unknown.
        visual_tokens = 0 if request.frames is None else None
        prompt = _prompt_tokens(payload)
        if request.frames is not None and prompt is not None:
            text_only = self._text_prompt_tokens(request)
            if text_only is not None and prompt >= text_only:
                visual_tokens = prompt - text_only
        elif request.frames is None and prompt is not None:
            with self._text_lock:
                self._text_tokens.setdefault(item.item_id, prompt)
        return completed_response(
            request,
            text,
            option_probs,
            latency_s=latency,
            visual_tokens=visual_tokens,
            pixels=None,
        )


def _prompt_tokens(payload: Mapping[str, object]) -> int | None:
    """`usage.prompt_tokens` of a reply, when it is a count (`CompletionUsage`)."""
    usage = payload.get("usage")
    value = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

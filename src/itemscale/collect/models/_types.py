"""The one contract between the sweep and every model backend.

A backend turns requests (an item, the frames chosen for one configuration, decoding settings)
into responses that say what the model produced *and what it was actually shown*: the visual
token count the processor produced and the pixels per frame after the processor's own resizing.
Per-request failures are typed statuses on the response, never exceptions, so one bad cell
cannot stop a sweep.

The spec (`BackendSpec`) is the part of a backend that changes answers (weights, dtype, processor
settings) and so belongs in a cell's identity; runtime settings (batch size, concurrency,
timeouts, device) do not change answers and are deliberately left out of it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from ...core.errors import ItemscaleError, location_text, warn_renamed
from ...core.plugins import BACKENDS_GROUP, Registry
from ...core.responses import Status
from ..items import Item
from ..protocol import DecodingSettings, not_one_of
from ._contract import BackendUsage, FrameTransport, Serving

#: A backend's name: a key of `BACKENDS` (checked where an entry or a spec is read).
BackendName = str

#: Values a processor setting may take: JSON scalars only, so the spec hashes canonically.
SettingValue = str | int | float | bool | None


#: At or below this many new tokens, a scored multiple-choice answer is the argmax letter.
SCORE_ONLY_MAX_NEW_TOKENS = 1


@runtime_checkable
class FramesLike(Protocol):
    """What a backend needs from a decoded frame set (`itemscale.collect.video.FrameSet` fits):
    `array`, uint8 [F, H, W, 3] RGB, and where in the video each frame came from. (Until issue
    27 the array was `frames`; a frame set with only `frames` is still taken for one release,
    with a DeprecationWarning.)"""

    @property
    def array(self) -> npt.NDArray[np.uint8]: ...

    @property
    def indices(self) -> Any: ...

    @property
    def timestamps(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class Frames:
    """A plain frame set for callers that do not use `itemscale.collect.video` (tests, adapters)."""

    array: npt.NDArray[np.uint8]
    indices: tuple[int, ...]
    timestamps: tuple[float, ...]

    def __post_init__(self) -> None:
        check_frames(self)

    @property
    def frames(self) -> npt.NDArray[np.uint8]:
        """Deprecated: the pixel array is `array` (`frames` is the frame count elsewhere)."""
        warn_renamed("Frames.frames", "Frames.array")
        return self.array


def check_frames(frame_set: FramesLike) -> None:
    """Refuse a frame array a processor would silently misread (wrong dtype, layout, count)."""
    arr = frame_set.array
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8:
        raise ValueError("frames must be a numpy uint8 array")
    if arr.ndim != 4 or arr.shape[-1] != 3:
        raise ValueError(f"frames must have shape [F, H, W, 3], got {list(arr.shape)}")
    if arr.shape[0] < 1:
        raise ValueError("a frame set needs at least one frame (use frames=None for text-only)")
    if len(frame_set.indices) != arr.shape[0] or len(frame_set.timestamps) != arr.shape[0]:
        raise ValueError(
            f"{arr.shape[0]} frames but {len(frame_set.indices)} indices and "
            f"{len(frame_set.timestamps)} timestamps"
        )


@dataclass(frozen=True, slots=True)
class VideoRequest:
    """One cell's model call (docs/backends.md): `frames` None for the text-only baseline;
    `max_pixels`, the configuration's per-frame cap, which a resizing processor must not pass."""

    item: Item
    frames: FramesLike | None
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    max_pixels: int | None = None

    def __post_init__(self) -> None:
        if self.frames is not None:
            if not hasattr(self.frames, "array") and hasattr(self.frames, "frames"):
                legacy: Any = self.frames  # a frame set written against FramesLike.frames
                warn_renamed(f"{type(legacy).__name__}.frames", "a frame set's `array`")
                plain = Frames(legacy.frames, tuple(legacy.indices), tuple(legacy.timestamps))
                object.__setattr__(self, "frames", plain)
            check_frames(self.frames)
        if self.max_pixels is not None and self.max_pixels < 1:
            raise ValueError(f"max_pixels must be positive, got {self.max_pixels}")


@dataclass(frozen=True, slots=True)
class VideoResponse:
    """What came back for one request (docs/backends.md). `visual_tokens` and `pixels` (per
    frame) are what the processor gave the model, None when unknown (a served model); only
    `ok`/`noanswer` responses carry an answer, failures carry `error`. `latency_s` is the
    request's share of its batch's wall time, or a served request's round trip with retries."""

    raw_text: str | None
    answer: str | None
    option_probs: dict[str, float] | None
    confidence: float | None
    visual_tokens: int | None
    latency_s: float
    status: Status
    error: str | None = None
    pixels: int | None = None
    #: the frames the model was given (None when unknown); `frames_used` until 0.2.0
    effective_frames: int | None = None
    #: how a multiple-choice answer was chosen: `letter` or `likelihood`
    #: (`itemscale.core.responses.SCORING_RULES`); None for open-ended items and failures
    scoring_rule: str | None = None

    @classmethod
    def failure(cls, status: Status, error: str, latency_s: float = 0.0) -> VideoResponse:
        if status.answered:
            raise ValueError(f"{status} is an answer, not a failure")
        return cls(
            raw_text=None,
            answer=None,
            option_probs=None,
            confidence=None,
            visual_tokens=None,
            latency_s=latency_s,
            status=status,
            error=error,
        )

    @property
    def frames_used(self) -> int | None:
        """The retired name of `effective_frames` (docs/glossary.md, 'One name per concept')."""
        warn_renamed("VideoResponse.frames_used", "VideoResponse.effective_frames")
        return self.effective_frames


def _renamed_response_keywords(init: Callable[..., None]) -> Callable[..., None]:
    """`VideoResponse.__init__` taking the retired keyword `frames_used` for `effective_frames`
    for one more release, with a warning (a backend written before the rename keeps working)."""

    @functools.wraps(init)
    def __init__(self: VideoResponse, *args: Any, **kwargs: Any) -> None:
        if "frames_used" in kwargs:
            if "effective_frames" in kwargs:
                raise TypeError("VideoResponse() got both frames_used= and effective_frames=")
            warn_renamed("VideoResponse(frames_used=...)", "VideoResponse(effective_frames=...)")
            kwargs["effective_frames"] = kwargs.pop("frames_used")
        init(self, *args, **kwargs)

    return __init__


_init_taking_frames_used = _renamed_response_keywords(VideoResponse.__init__)
VideoResponse.__init__ = _init_taking_frames_used  # type: ignore[method-assign]


class SpecIdentity(TypedDict):
    """The fields of a `BackendSpec` that its `spec_id` hashes."""

    backend: str
    name: str
    revision: str | None
    dtype: str | None
    processor: dict[str, SettingValue]


class BackendSpec(BaseModel):
    """What a backend is, as far as answers depend on it: goes into cell identity and provenance.
    `model` (where the weights come from) is not part of `spec_id`, so moving a checkpoint
    folder does not invalidate finished cells. Secrets (API keys) never go here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: BackendName
    name: str = Field(min_length=1)
    model: str = Field(min_length=1)
    revision: str | None = None
    dtype: str | None = None
    processor: dict[str, SettingValue] = Field(default_factory=dict)

    @field_validator("processor")
    @classmethod
    def _json_scalars(cls, value: dict[str, SettingValue]) -> dict[str, SettingValue]:
        for key, setting in value.items():
            if isinstance(setting, float) and not np.isfinite(setting):
                raise ValueError(f"processor setting {key!r} is not finite")
        return value

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in BACKENDS:
            raise not_one_of(BACKENDS)
        return value

    def identity(self) -> SpecIdentity:
        """Every field but `model` (a moved checkpoint folder or a renamed served model keeps
        its cells), the processor settings sorted."""
        return {
            "backend": self.backend,
            "name": self.name,
            "revision": self.revision,
            "dtype": self.dtype,
            "processor": dict(sorted(self.processor.items())),
        }

    @property
    def spec_id(self) -> str:
        canonical = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


@runtime_checkable
class VideoLM(Protocol):
    """A loaded model: everything the sweep asks of one (docs/backends.md, "The backend
    contract"). `generate` never raises for one request's failure: it returns a response with a
    failure status in that request's position (same length and order as `requests`)."""

    @property
    def spec(self) -> BackendSpec: ...

    @property
    def serving(self) -> Serving: ...

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]: ...

    def usage(self) -> BackendUsage | None: ...

    def close(self) -> None: ...


class BackendError(ItemscaleError, RuntimeError):
    """A backend cannot be loaded (bad options, missing weights, unsupported family)."""


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def parse_backend_options(
    options_type: type[OptionsT], options: Mapping[str, object], model_name: str
) -> OptionsT:
    """Validate a model entry's `options` table with its backend's typed options; the error
    names the model and the offending key."""
    try:
        return options_type.model_validate(options)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = location_text(err["loc"], empty="(options)")
        msg = err["msg"]
        if err["type"] == "bool_type":
            msg = "must be true or false (a TOML boolean, unquoted)"
        raise BackendError(f"model {model_name!r}: option '{key}': {msg}") from exc


# -- the backend registry ------------------------------------------------------------------


class ModelEntryLike(Protocol):
    """What a backend reads from a model entry (`itemscale.collect.protocol.ModelEntry` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def revision(self) -> str | None: ...

    @property
    def dtype(self) -> str | None: ...

    @property
    def options(self) -> Any: ...


class OptionsParser(Protocol):
    """A backend's typed options (a pydantic model with `extra="forbid"`) from a protocol's
    `options` table; raises `BackendError` naming the model and the key. `dict[str, Any]`
    because plugins implement it so (docs/extending.md)."""

    def __call__(self, options: dict[str, Any], model_name: str, /) -> BaseModel: ...


@dataclass(frozen=True)
class LoadSettings:
    """The runtime settings a loader may use; none is part of a cell's identity, so they are
    never backend options."""

    device: str = "cpu"
    batch_size: int = 1
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 4
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))


class BackendLoader(Protocol):
    """Every loader gets the same `LoadSettings`, so `load_backend` has no per-backend branch."""

    def __call__(self, entry: ModelEntryLike, settings: LoadSettings, /) -> VideoLM: ...


class Fingerprinter(Protocol):
    """What the entry would load, known without loading it (see `load_fingerprint`)."""

    def __call__(self, entry: ModelEntryLike, *, device: str) -> str | None: ...


class TransportOf(Protocol):
    """How the entry's frames reach its model (`FrameTransport`), read from the entry alone."""

    def __call__(self, entry: ModelEntryLike, /) -> FrameTransport: ...


class ScoringRuleOf(Protocol):
    """(rule, why): how the entry's model answers a multiple-choice item
    (`itemscale.core.responses.SCORING_RULES`), read from the entry alone."""

    def __call__(self, entry: ModelEntryLike, /) -> tuple[str, str]: ...


@dataclass(frozen=True, slots=True)
class Backend:
    """One entry of `BACKENDS`: what the protocol, the sweep and the loader need to know about
    a backend before it is loaded. `fingerprint` is None where the loaded spec cannot be known
    in advance (a served model's server may change), so a resumed sweep always loads them."""

    parse_options: OptionsParser
    load: BackendLoader
    fingerprint: Fingerprinter | None = None
    #: runs on this machine's `--device` (checked before a sweep creates its store)
    on_device: bool = False
    transport: TransportOf | None = None
    scoring_rule: ScoringRuleOf | None = None

    def transport_of(self, entry: ModelEntryLike) -> FrameTransport:
        return FrameTransport.IN_PROCESS if self.transport is None else self.transport(entry)

    def scoring_rule_of(self, entry: ModelEntryLike) -> tuple[str, str]:
        if self.scoring_rule is None:
            why = f"the {entry.backend} backend reads the option letter the model generates"
            return "letter", why
        return self.scoring_rule(entry)


@dataclass(frozen=True, slots=True)
class _Lazy:
    target: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)(*args, **kwargs)


def lazy(target: str) -> Callable[..., Any]:
    """`"package.module:function"`, imported on its first call: a registry entry must not
    import torch or httpx just because `itemscale.collect.models` was imported."""
    if target.count(":") != 1 or not all(target.split(":")):
        raise ValueError(f"lazy target {target!r}: expected 'package.module:function'")
    return _Lazy(target)


#: Every backend a protocol's `models[].backend` may name: filled on the first lookup with
#: itemscale's own (`backends/`) and every entry point of `itemscale.backends`.
BACKENDS: Registry[Backend] = Registry(
    what="backend", group=BACKENDS_GROUP, kind=Backend, package=f"{__package__}.backends"
)

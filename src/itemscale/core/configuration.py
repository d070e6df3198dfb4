"""Sampling policies and configurations: one budget of the grid as typed, hashable data. Every
backend translates this one record, and its id hashes its canonical fields, so the same budget
gets the same id on every machine and run."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, Literal, NotRequired, Self, TypedDict

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .responses import TEXT_ONLY_LABEL

#: Bumped when the canonical fields (and therefore every config id) change meaning.
CONFIG_ID_VERSION: Final[int] = 1

SamplingPolicyName = Literal[
    "linspace", "interior", "centre", "left", "fps", "nested", "random", "selection"
]
#: The sampling formulas (`itemscale.collect.video.sample_indices`); the `selection` policy is not a
#: formula but a file of each item's frames.
SAMPLING_POLICY_NAMES: Final[tuple[str, ...]] = (
    "linspace",
    "interior",
    "centre",
    "left",
    "fps",
    "nested",
    "random",
)
#: Sampling policies whose frames differ per item (one decode pass per item, not per video).
PER_ITEM_SAMPLING_POLICIES: Final[frozenset[str]] = frozenset({"random", "selection"})
#: Selection file formats (`itemscale.collect.video.read_selection`); `auto` detects the format.
SelectionFormat = Literal["auto", "aks", "bolt", "table", "positional"]
SELECTION_FORMATS: Final[tuple[str, ...]] = ("auto", "aks", "bolt", "table", "positional")
#: Policies whose index grid can be shifted by a fraction of one spacing (issue 7's intervention).
PHASED_SAMPLING_POLICIES: Final[frozenset[str]] = frozenset(
    {"linspace", "interior", "centre", "left"}
)
#: Qwen utilities' default sampling rate (frames per second).
DEFAULT_FPS: Final[float] = 2.0

Pipeline = Literal["cached", "raw"]

# -- what a budget can plausibly be (a protocol grid outside these is refused, key named) --
#: The most frames one configuration may take (Qwen's utilities cap at 768): more is a typo that
#: would decode for hours.
MAX_FRAMES: Final[int] = 10_000
#: Frame sizes follow the Qwen processors' rounding: sides are multiples of 28 pixels.
IMAGE_FACTOR: Final[int] = 28
#: The fewest pixels a frame is served at: qwen-vl-utils' `MIN_PIXELS` (4 x 28 x 28), below
#: which `smart_resize` (and so the processor) scales the frame up again.
MIN_FRAME_PIXELS: Final[int] = 4 * IMAGE_FACTOR * IMAGE_FACTOR
#: The most pixels a frame is served at: qwen-vl-utils' `MAX_PIXELS` (16384 x 28 x 28).
MAX_FRAME_PIXELS: Final[int] = 16384 * IMAGE_FACTOR * IMAGE_FACTOR
#: A short side below one 28-pixel patch is rounded up to it; above 8K's short side, implausible.
MIN_SHORT_SIDE: Final[int] = IMAGE_FACTOR
MAX_SHORT_SIDE: Final[int] = 4320
#: Pixels of one visual token: a 28x28 patch after merge (Qwen2-VL's 14-pixel patches, 2x2).
PIXELS_PER_VISUAL_TOKEN: Final[int] = IMAGE_FACTOR * IMAGE_FACTOR
#: Frames one visual token spans: Qwen2-VL's temporal patch of 2 frames.
FRAMES_PER_TEMPORAL_PATCH: Final[int] = 2


class SamplingPolicy(BaseModel):
    """Which frame indices a budget of K frames picks; see
    `itemscale.collect.video.sample_indices`.

    `phase` shifts the grid by a fraction of one spacing (0 <= phase < 1); `fps` is the `fps`
    policy's rate; `seed` seeds `random` (per item and repeat on top). `keep_frames` keeps every
    frame the same formula picks at that smaller budget (the nested change); without it the id is
    unchanged.

    `selection` replays a frame selector's per-item frames from the protocol's
    `[selections.NAME]`. The protocol fills in per frame count the file (`selection_path`, not in
    the id: a moved file is the same selection), its SHA-256 (`selection_digest`, in the id: a
    changed file is new cells), its format, a positional file's order file
    (`selection_order_digest`, `selection_order_key`, in the id), and `selection_cap` when the
    records list fewer frames than the budget (the label shows `<=32f`; not in the id).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: SamplingPolicyName = "linspace"
    fps: float | None = Field(default=None, gt=0)
    seed: int | None = None
    phase: float = Field(default=0.0, ge=0.0, lt=1.0)
    keep_frames: int | None = Field(default=None, gt=0)
    selection: str | None = Field(default=None, min_length=1)
    selection_format: SelectionFormat | None = None
    selection_digest: str | None = None
    selection_path: str | None = None
    selection_order: str | None = None
    selection_order_key: str | None = None
    selection_order_digest: str | None = None
    selection_cap: bool | None = None

    @model_validator(mode="after")
    def _check_fields(self) -> Self:
        # One spelling per policy: otherwise two equal policies would get different config ids.
        if self.name == "fps" and self.fps is None:
            object.__setattr__(self, "fps", DEFAULT_FPS)
        if self.name != "fps" and self.fps is not None:
            raise ValueError(f"fps is only allowed with name='fps' (got name={self.name!r})")
        if self.name == "random" and self.seed is None:
            object.__setattr__(self, "seed", 0)
        if self.name != "random" and self.seed is not None:
            raise ValueError(f"seed is only allowed with name='random' (got name={self.name!r})")
        if self.name == "selection":
            if self.selection is None:
                raise ValueError(
                    "name='selection' needs `selection`, the name of a [selections.NAME] table"
                )
            if self.keep_frames is not None:
                raise ValueError("keep_frames is not allowed with name='selection'")
        elif any(getattr(self, f) is not None for f in _SELECTION_FIELDS):
            raise ValueError(
                f"selection fields are only allowed with name='selection' (got {self.name!r})"
            )
        if self.phase != 0.0 and self.name not in PHASED_SAMPLING_POLICIES:
            phased = sorted(PHASED_SAMPLING_POLICIES)
            raise ValueError(f"phase is only allowed with one of {phased} (got {self.name!r})")
        return self

    @property
    def tag(self) -> str:
        """Short, unique spelling: `linspace`, `interior+0.25`, `fps2`, `random#3`,
        `selection:aks`."""
        tag: str = self.name
        if self.name == "fps":
            tag = f"fps{_num(self.fps)}"
        elif self.name == "random":
            tag = f"random#{self.seed}"
        elif self.name == "selection":
            tag = f"selection:{self.selection}"
        if self.phase:
            tag += f"+{_num(self.phase)}"
        if self.keep_frames is not None:
            tag += f"+keep{self.keep_frames}"
        return tag


_SELECTION_FIELDS: Final[tuple[str, ...]] = tuple(
    f for f in SamplingPolicy.model_fields if f.startswith("selection")
)


def _num(value: float | None) -> str:
    """`2.0` -> `2`, `0.25` -> `0.25`: labels without trailing zeros."""
    assert value is not None
    return f"{value:g}"


class CanonicalSampling(TypedDict):
    """A policy's part of `Configuration.canonical()`: optional fields only when set (so older
    ids stay)."""

    name: str
    fps: float | None
    seed: int | None
    phase: float
    keep_frames: NotRequired[int]
    selection: NotRequired[str | None]
    selection_format: NotRequired[str | None]
    selection_digest: NotRequired[str | None]
    selection_order_key: NotRequired[str | None]
    selection_order_digest: NotRequired[str]


class CanonicalConfiguration(TypedDict):
    """`Configuration.canonical()`: the fields that define a budget, what its id hashes."""

    v: int
    frames: int
    max_pixels: int | None
    short_side: int | None
    token_budget: int | None
    sampling: CanonicalSampling
    pipeline: str


class Configuration(BaseModel):
    """One visual budget: frame count, resolution (or a total token budget), sampling, pipeline.
    `frames == 0` is the text-only baseline, normalised so there is exactly one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames: int = Field(ge=0)
    max_pixels: int | None = Field(default=None, gt=0)
    short_side: int | None = Field(default=None, gt=0)
    token_budget: int | None = Field(default=None, gt=0)
    sampling: SamplingPolicy = SamplingPolicy()
    pipeline: Pipeline = "cached"

    @model_validator(mode="before")
    @classmethod
    def _normalise_text_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("frames") == 0:
            data = dict(data)
            data["sampling"] = SamplingPolicy()
            data["pipeline"] = "cached"
        return data

    @model_validator(mode="after")
    def _check_resolution(self) -> Self:
        given = [
            key
            for key in ("max_pixels", "short_side", "token_budget")
            if getattr(self, key) is not None
        ]
        if len(given) > 1:
            raise ValueError(
                f"at most one of max_pixels, short_side, token_budget may be set (got {given})"
            )
        if self.frames == 0 and given:
            raise ValueError(f"the text-only configuration (frames=0) has no resolution ({given})")
        return self

    @classmethod
    def text_only(cls) -> Configuration:
        return cls(frames=0)

    @property
    def is_text_only(self) -> bool:
        return self.frames == 0

    def canonical(self) -> CanonicalConfiguration:
        """The fields that define the budget, in a fixed form (what the id hashes)."""
        sampling: CanonicalSampling = {
            "name": self.sampling.name,
            "fps": self.sampling.fps,
            "seed": self.sampling.seed,
            "phase": self.sampling.phase,
        }
        if self.sampling.keep_frames is not None:  # only when set: existing ids stay the same
            sampling["keep_frames"] = self.sampling.keep_frames
        if self.sampling.name == "selection":  # the file's bytes, not its place on disk
            sampling["selection"] = self.sampling.selection
            sampling["selection_format"] = self.sampling.selection_format
            sampling["selection_digest"] = self.sampling.selection_digest
            if self.sampling.selection_order_digest is not None:  # positional files only
                sampling["selection_order_digest"] = self.sampling.selection_order_digest
                sampling["selection_order_key"] = self.sampling.selection_order_key
        return {
            "v": CONFIG_ID_VERSION,
            "frames": self.frames,
            "max_pixels": self.max_pixels,
            "short_side": self.short_side,
            "token_budget": self.token_budget,
            "sampling": sampling,
            "pipeline": self.pipeline,
        }

    @property
    def config_id(self) -> str:
        """16 hex digits of SHA-256 over the canonical JSON: stable across runs and machines."""
        text = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def resolution_tag(self) -> str:
        """`@448` (short side), `@px200704` (max pixels), `@tok4096` (token budget), or ``."""
        if self.short_side is not None:
            return f"@{self.short_side}"
        if self.max_pixels is not None:
            return f"@px{self.max_pixels}"
        if self.token_budget is not None:
            return f"@tok{self.token_budget}"
        return ""

    @property
    def series(self) -> str:
        """The axis this configuration lies on: every field except frames and resolution (an
        allocation budget keeps its total token budget: frames and pixels move together at a
        fixed total)."""
        if self.is_text_only:
            return TEXT_ONLY_LABEL
        series = f"{self.sampling.tag}/{self.pipeline}"
        if self.token_budget is not None:
            series = f"tok{self.token_budget}/{series}"
        return series

    @property
    def label(self) -> str:
        """Short human label, unique within a protocol: `16f`, `16f@448`, `16f/interior/raw`;
        a selection whose records list up to (not exactly) K frames: `<=16f@448/selection:S`."""
        if self.is_text_only:
            return TEXT_ONLY_LABEL
        cap = "<=" if self.sampling.selection_cap else ""
        label = f"{cap}{self.frames}f{self.resolution_tag}"
        if self.sampling != SamplingPolicy():
            label += f"/{self.sampling.tag}"
        if self.pipeline != "cached":
            label += f"/{self.pipeline}"
        return label

    @property
    def pixel_key(self) -> int:
        """A resolution size for ordering (max pixels, short side squared, or the per-frame token
        share); native sorts above every explicit one."""
        if self.max_pixels is not None:
            return self.max_pixels
        if self.short_side is not None:
            return self.short_side * self.short_side
        if self.token_budget is not None:
            return self.token_budget * PIXELS_PER_VISUAL_TOKEN // max(self.frames, 1)
        return _NATIVE_PIXEL_KEY

    @property
    def axis_order(self) -> float:
        """Ordering key along the series: frames first, then pixels (as a fraction below 1)."""
        if self.is_text_only:
            return 0.0
        return float(self.frames) + min(self.pixel_key, _NATIVE_PIXEL_KEY) / (_NATIVE_PIXEL_KEY + 1)


_NATIVE_PIXEL_KEY: Final[int] = 10**9

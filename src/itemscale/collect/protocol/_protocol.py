"""The protocol file (`protocol.toml`): which models, which benchmark, which budget grid.

Validated into frozen records with `extra="forbid"`, so a misspelt key is an error that names its
key path and the allowed values, never a silently ignored setting.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import tomllib
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ...core.configuration import (
    FRAMES_PER_TEMPORAL_PATCH,
    MAX_FRAME_PIXELS,
    MAX_FRAMES,
    MAX_SHORT_SIDE,
    MIN_FRAME_PIXELS,
    MIN_SHORT_SIDE,
    PIXELS_PER_VISUAL_TOKEN,
    Configuration,
    Pipeline,
    SamplingPolicy,
    SelectionFormat,
)
from ...core.errors import ItemscaleError, validation_message
from ...core.files import InputFileError, MissingInputError, read_input_text
from ._decoding import DecodingRecord, DecodingSettings
from ._selection_file import cached_selection, read_bounded

#: The protocol file format's version (the `version` key; absent means this one).
PROTOCOL_VERSION: Final[int] = 1

#: Benchmark kinds the sweep reads as item files itself; every other kind is a benchmark
#: question file, read by its loader in `itemscale.collect.items.BENCHMARK_LOADERS`.
ITEM_FILE_KINDS: Final[tuple[str, ...]] = ("jsonl", "synthetic")
#: The most repeats a protocol may ask for: every repeat is a whole pass over the grid.
MAX_REPEATS: Final[int] = 1000
#: Seeds are 63-bit: torch, numpy and the served backends all take them.
MAX_SEED: Final[int] = 2**63 - 1
#: `max_new_tokens` of a protocol whose `[decoding]` table leaves it out: a sweep generates open
#: answers too, so more than the 16 a backend called directly defaults to (`DecodingSettings`).
PROTOCOL_MAX_NEW_TOKENS: Final[int] = 64

#: The validation context key of the backend names a protocol is checked against.
BACKENDS_CONTEXT: Final[str] = "backends"

#: A count in a protocol file (frames, repeats, a limit) is a positive TOML integer: `true` or
#: `"8"` is refused rather than read as 1 or 8 (pydantic's lax mode would convert both).
StrictPositiveInt = Annotated[StrictInt, Field(gt=0)]


def one_of(names: Iterable[str], *, quote: bool = True) -> str:
    """`'hf', 'openai' or 'builtin'`: a registry's names as pydantic lists a Literal's."""
    shown = [repr(n) if quote else str(n) for n in names]
    if len(shown) < 2:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def not_one_of(names: Iterable[str]) -> PydanticCustomError:
    """The error pydantic gives a value outside a Literal, for a choice read from a registry:
    registering a name changes the list, never the message's wording."""
    return PydanticCustomError(
        "literal_error", "Input should be {expected}", {"expected": one_of(names)}
    )


class ProtocolError(ItemscaleError, ValueError):
    """A protocol file that cannot be used: the message names the file and the key path."""


class ModelEntry(BaseModel):
    """One model to audit. `options` is checked later by the backend's own typed options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    backend: str
    model: str = Field(min_length=1)
    revision: str | None = None
    dtype: str | None = None
    options: dict[str, object] = Field(default_factory=dict)

    @field_validator("backend", mode="before")
    @classmethod
    def _registered_backend(cls, value: Any, info: ValidationInfo) -> Any:
        # The names the protocol is read with (`parse_protocol(backends=)`), not a Literal: the
        # backends sit above the protocol, named to it, never imported by it.
        context = info.context if isinstance(info.context, Mapping) else {}
        backends: Collection[str] | None = context.get(BACKENDS_CONTEXT)
        if backends is not None and (not isinstance(value, str) or value not in backends):
            raise not_one_of(backends)
        return value


class BenchmarkEntry(BaseModel):
    """Where the items come from. Relative paths are resolved against the protocol file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    path: str | None = None
    videos: str | None = None
    split: str | None = None
    limit: StrictPositiveInt | None = None
    #: A plain item list (one item id a line, `#` comments; what `itemscale anchors` writes):
    #: sweep only these items.
    items: str | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value: Any) -> Any:
        from ..items import BENCHMARK_LOADERS

        kinds = (*BENCHMARK_LOADERS, *ITEM_FILE_KINDS)
        if not isinstance(value, str) or value not in kinds:
            raise not_one_of(kinds)
        return value

    @model_validator(mode="after")
    def _path_needed(self) -> Self:
        if self.kind != "synthetic" and self.path is None:
            raise ValueError(f"benchmark kind {self.kind!r} needs a path")
        return self


class GridSpec(BaseModel):
    """The budget axes. Resolutions (`max_pixels`, `short_side`) cross with frames, sampling and
    pipelines; each `token_budgets` entry adds an allocation series over the same frame counts.
    With no resolution and no token budget, frames are served at native resolution."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames: tuple[StrictPositiveInt, ...] = Field(min_length=1)
    max_pixels: tuple[StrictPositiveInt, ...] = ()
    short_side: tuple[StrictPositiveInt, ...] = ()
    token_budgets: tuple[StrictPositiveInt, ...] = ()
    native: StrictBool | None = None
    sampling: tuple[SamplingPolicy, ...] = (SamplingPolicy(),)
    pipeline: tuple[Pipeline, ...] = ("cached",)

    @field_validator("sampling", mode="before")
    @classmethod
    def _policy_shorthand(cls, value: Any) -> Any:
        # `sampling = ["linspace", {name = "fps", fps = 1.0}]`: a bare string is a policy name.
        if isinstance(value, list | tuple):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("frames", "max_pixels", "short_side", "token_budgets")
    @classmethod
    def _positive_unique(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(v <= 0 for v in value):
            raise ValueError(f"every value must be > 0 (got {list(value)})")
        if len(set(value)) != len(value):
            raise ValueError(f"values must be unique (got {list(value)})")
        return value

    @field_validator("frames")
    @classmethod
    def _plausible_frames(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        over = [v for v in value if v > MAX_FRAMES]
        if over:
            raise ValueError(
                f"{over[0]} frames is more than the {MAX_FRAMES} a configuration may take "
                "(docs/protocol.md, 'What a grid may ask for')"
            )
        return value

    @field_validator("max_pixels")
    @classmethod
    def _plausible_pixels(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        for v in value:
            if v < MIN_FRAME_PIXELS:
                raise ValueError(
                    f"{v} pixels per frame is below the processor's minimum of "
                    f"{MIN_FRAME_PIXELS} (4 x 28 x 28): frames would be served at "
                    f"{MIN_FRAME_PIXELS} anyway"
                )
            if v > MAX_FRAME_PIXELS:
                raise ValueError(
                    f"{v} pixels per frame is above the processor's maximum of {MAX_FRAME_PIXELS}"
                )
        return value

    @field_validator("short_side")
    @classmethod
    def _plausible_sides(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        for v in value:
            if not MIN_SHORT_SIDE <= v <= MAX_SHORT_SIDE:
                raise ValueError(
                    f"a short side of {v} pixels is outside {MIN_SHORT_SIDE}..{MAX_SHORT_SIDE} "
                    f"(one {MIN_SHORT_SIDE}-pixel patch .. 8K)"
                )
        return value

    @field_validator("token_budgets")
    @classmethod
    def _plausible_token_budgets(
        cls, value: tuple[int, ...], info: ValidationInfo
    ) -> tuple[int, ...]:
        frames = info.data.get("frames") or (1,)
        most = max(frames)
        per_token = PIXELS_PER_VISUAL_TOKEN * FRAMES_PER_TEMPORAL_PATCH
        largest = MAX_FRAMES * MAX_FRAME_PIXELS // per_token
        for budget in value:
            share = budget * per_token // most
            if share < MIN_FRAME_PIXELS:
                needed = -(-MIN_FRAME_PIXELS * most // per_token)
                raise ValueError(
                    f"{budget} visual tokens over {most} frames is {share} pixels per frame, "
                    f"below the processor's minimum of {MIN_FRAME_PIXELS}; give at least "
                    f"{needed} tokens (or fewer frames)"
                )
            if budget > largest:
                raise ValueError(
                    f"{budget} visual tokens is more than {MAX_FRAMES} frames at the "
                    f"processor's largest size hold ({largest})"
                )
        return value

    @field_validator("sampling", "pipeline")
    @classmethod
    def _unique(cls, value: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(value) == 0:
            raise ValueError("at least one value is needed")
        if len(set(value)) != len(value):
            raise ValueError("values must be unique")
        return value

    @property
    def resolutions(self) -> list[dict[str, int | None]]:
        """Resolution settings crossed with frames: native (if on), then max pixels, short sides."""
        native = self.native
        if native is None:
            native = not (self.max_pixels or self.short_side or self.token_budgets)
        out: list[dict[str, int | None]] = [{}] if native else []
        out += [{"max_pixels": p} for p in self.max_pixels]
        out += [{"short_side": s} for s in self.short_side]
        return out


class SelectionEntry(BaseModel):
    """`[selections.NAME]`: a frame selector's per-item frames, one file per frame count
    (`paths`, `{8 = "aks_8.json"}`, or `path` for a grid with one frame count); the fields are
    described in docs/selectors.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(default=None, min_length=1)
    #: TOML keys are strings: `{8 = "a.json"}` arrives as {"8": ...} and is read as 8
    paths: dict[Annotated[int, Field(gt=0)], Annotated[str, Field(min_length=1)]] | None = None
    format: SelectionFormat = "auto"
    order: str | None = Field(default=None, min_length=1)
    order_key: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if (self.format == "positional") != (self.order is not None):
            raise ValueError(
                'format = "positional" and `order` (the file of question ids in the '
                "selection's order) go together"
            )
        if self.order_key is not None and self.order is None:
            raise ValueError("`order_key` names the id key of an `order` file: give `order`")
        if (self.path is None) == (self.paths is None):
            raise ValueError("give exactly one of `path` (one file) or `paths` (frames -> file)")
        if self.paths is not None and not self.paths:
            raise ValueError("`paths` is empty: give one file per frame count")
        return self

    def file_for(self, frames: int) -> str | None:
        """The file of a frame count (None when the table has none for it)."""
        if self.path is not None:
            return self.path
        assert self.paths is not None
        return self.paths.get(frames)


_DIGESTS: dict[tuple[str, int, int], str] = {}


def selection_file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a selection file's bytes: what a configuration's id and every cell's
    identity carry, so a changed file is never mistaken for the one that was run."""
    where = Path(path)
    stat = where.stat()
    key = (str(where.resolve()), stat.st_size, stat.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:  # a FIFO or a device is refused before it is opened; size is bounded
        digest = _DIGESTS[key] = hashlib.sha256(read_bounded(where)).hexdigest()
    return digest


class Protocol(BaseModel):
    """A whole audit: models x benchmark items x configurations x repeats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = PROTOCOL_VERSION
    models: tuple[ModelEntry, ...] = Field(min_length=1)
    benchmark: BenchmarkEntry
    grid: GridSpec
    repeats: StrictPositiveInt = 1
    seeds: tuple[Annotated[StrictInt, Field(ge=0, le=MAX_SEED)], ...] | None = None
    text_only: StrictBool = True
    output: str = "runs/itemscale"
    #: frame selections a `selection` sampling policy replays, by name
    selections: dict[str, SelectionEntry] = Field(default_factory=dict)
    #: every backend setting but `seed`, which is per repeat (`seeds`)
    decoding: DecodingSettings = DecodingSettings(max_new_tokens=PROTOCOL_MAX_NEW_TOKENS)

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != PROTOCOL_VERSION:
            raise ValueError(
                f"unsupported protocol version {value}; this itemscale reads version "
                f"{PROTOCOL_VERSION}"
            )
        return value

    @field_validator("decoding", mode="before")
    @classmethod
    def _protocol_decoding(cls, value: Any) -> Any:
        # The protocol's default for what the table leaves out; the seed is each repeat's.
        given = value.model_fields_set if isinstance(value, DecodingSettings) else value
        if not isinstance(given, Mapping | set):
            return value  # pydantic says what is wrong with it
        if "seed" in given:
            raise PydanticCustomError(
                "decoding_seed",
                "'seed' is not a protocol's decoding setting: each repeat's seed comes from "
                "`seeds` (default 0..repeats-1)",
            )
        if "max_new_tokens" in given:
            return value
        if isinstance(value, DecodingSettings):
            return value.model_copy(update={"max_new_tokens": PROTOCOL_MAX_NEW_TOKENS})
        return {**value, "max_new_tokens": PROTOCOL_MAX_NEW_TOKENS}

    # the JSON object as it is (pydantic would otherwise build a schema from the annotation)
    @field_serializer("decoding", return_type=dict)
    def _decoding_record(self, value: DecodingSettings) -> DecodingRecord:
        # run.json records every decoding setting but the seed: a sweep's seeds are the
        # repeats' (`seeds`), never the table's (a test checks these are all the others)
        return {
            "max_new_tokens": value.max_new_tokens,
            "temperature": value.temperature,
            "top_p": value.top_p,
            "score_options": value.score_options,
        }

    @field_validator("repeats")
    @classmethod
    def _plausible_repeats(cls, value: int) -> int:
        if value > MAX_REPEATS:
            raise ValueError(
                f"{value} repeats is more than the {MAX_REPEATS} a protocol may ask for (each "
                "repeat is a whole pass over the grid)"
            )
        return value

    @model_validator(mode="after")
    def _check(self) -> Self:
        names = [m.name for m in self.models]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must be unique (got {names})")
        if self.seeds is not None and len(self.seeds) != self.repeats:
            raise ValueError(
                f"seeds needs one seed per repeat: {self.repeats} repeats, {len(self.seeds)} seeds"
            )
        self._check_selections()
        return self

    def _check_selections(self) -> None:
        """Every `selection` policy names a `[selections.NAME]` table with a file for every
        frame count of the grid; the file fields are the protocol's to fill in."""
        frames = sorted(self.grid.frames)
        for policy in self.grid.sampling:
            if policy.name != "selection":
                continue
            filled = [
                key
                for key in SamplingPolicy.model_fields
                if key.startswith("selection_") and getattr(policy, key) is not None
            ]
            if filled:
                raise ValueError(
                    f"grid.sampling: {filled} are filled in from [selections.{policy.selection}]; "
                    "give only name = 'selection' and selection = NAME"
                )
            assert policy.selection is not None
            entry = self.selections.get(policy.selection)
            if entry is None:
                known = sorted(self.selections) or "none"
                raise ValueError(
                    f"grid.sampling: selection {policy.selection!r} has no "
                    f"[selections.{policy.selection}] table (defined: {known})"
                )
            where = f"selections.{policy.selection}"
            if entry.path is not None and len(frames) > 1:
                raise ValueError(
                    f"{where}: `path` is one file, but the grid has {len(frames)} frame counts "
                    f"{frames}; give `paths` = {{frames = file}} with one file per frame count"
                )
            if entry.paths is not None:
                missing = [f for f in frames if f not in entry.paths]
                extra = sorted(set(entry.paths) - set(frames))
                if missing or extra:
                    raise ValueError(
                        f"{where}.paths: the grid's frame counts are {frames}; "
                        + (f"no file for {missing}" if missing else "")
                        + ("; " if missing and extra else "")
                        + (f"files for counts not in the grid: {extra}" if extra else "")
                    )

    def selection_policy(self, policy: SamplingPolicy, frames: int) -> SamplingPolicy:
        """A `selection` policy with its file for `frames` filled in (`selection_cap` when it
        lists up to `frames`); any other policy as it is. `ProtocolError` for a missing file,
        `SelectionError` for an unreadable one."""
        if policy.name != "selection" or policy.selection is None:
            return policy
        entry = self.selections[policy.selection]
        path = entry.file_for(frames)
        assert path is not None  # `_check_selections` saw a file for every frame count
        digests: list[str] = []
        for file in (path, entry.order):
            if file is None:
                continue
            try:
                digests.append(selection_file_digest(file))
            except OSError as exc:
                reason = "file not found" if isinstance(exc, FileNotFoundError) else str(exc)
                raise ProtocolError(
                    f"[selections.{policy.selection}] ({frames} frames): {file}: {reason}"
                ) from None
        selection = cached_selection(path, entry.format, digests[0], entry.order, entry.order_key)
        return SamplingPolicy(
            name="selection",
            selection=policy.selection,
            selection_format=entry.format,
            selection_digest=digests[0],
            selection_path=path,
            selection_order=entry.order,
            selection_order_key=entry.order_key,
            selection_order_digest=digests[1] if entry.order is not None else None,
            selection_cap=None if selection.is_exact(frames) else True,
        )

    @property
    def repeat_seeds(self) -> tuple[int, ...]:
        """One seed per repeat: the `seeds` list, or 0..repeats-1."""
        return self.seeds if self.seeds is not None else tuple(range(self.repeats))

    def configurations(self) -> list[Configuration]:
        """The whole grid, text-only first when on, in a fixed order (series, then axis order)."""
        grid = self.grid
        out: list[Configuration] = [Configuration.text_only()] if self.text_only else []
        series = grid.resolutions  # a fresh list
        series += [{"token_budget": budget} for budget in grid.token_budgets]
        for pipeline, sampling in itertools.product(grid.pipeline, grid.sampling):
            for budget in series:
                for frames in sorted(grid.frames):
                    out.append(
                        Configuration(
                            frames=frames,
                            sampling=self.selection_policy(sampling, frames),
                            pipeline=pipeline,
                            **budget,
                        )
                    )
        labels = [c.label for c in out]
        if len(set(labels)) != len(labels):  # pragma: no cover - labels encode every field
            raise ProtocolError(f"duplicate configuration labels in the grid: {labels}")
        return out


def parse_protocol(
    data: Mapping[str, object],
    *,
    source: str = "<protocol>",
    backends: Collection[str] | None = None,
) -> Protocol:
    """Validate an already parsed protocol mapping; errors name `source` and the key path.
    With `backends` (`itemscale.collect.models.BACKENDS`), each model's `backend` is one of them."""
    context = None if backends is None else {BACKENDS_CONTEXT: backends}
    try:
        return Protocol.model_validate(data, context=context)
    except ValidationError as exc:
        problems = validation_message(
            exc.errors(), separator="\n", indent="  ", show_input=True, model=Protocol
        )
        raise ProtocolError(f"{source}: invalid protocol:\n{problems}") from None


def load_protocol(path: str | Path, *, backends: Collection[str] | None = None) -> Protocol:
    """Read and validate `protocol.toml`. Relative benchmark paths, video folders and the output
    folder are resolved against the file's folder, so a protocol runs the same from any cwd.
    `backends`: the backend names a model entry may use (`parse_protocol`)."""
    path = Path(path)
    try:
        text = read_input_text(path, what="a protocol file")
    except MissingInputError:
        raise ProtocolError(f"{path}: protocol file not found") from None
    except InputFileError as exc:
        raise ProtocolError(f"{path}: cannot read protocol file: {exc.reason}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProtocolError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ProtocolError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except ValueError as exc:  # an integer past Python's 4300-digit conversion limit
        said = (
            "an integer with more than 4300 digits (no setting takes one)"
            if "digits" in str(exc)
            else str(exc)
        )
        raise ProtocolError(f"{path}: not valid TOML: {said}") from None
    base = path.resolve().parent
    data = _resolved(data, base, ("output",))
    if "benchmark" in data:
        data["benchmark"] = _resolved(data["benchmark"], base, ("path", "videos", "items"))
    if isinstance(data.get("selections"), dict):
        data["selections"] = {
            name: _resolved(entry, base, ("path", "order", "paths"))
            for name, entry in data["selections"].items()
        }
    # selection files are read by `configurations()`: `itemscale select` writes them after
    return parse_protocol(data, source=str(path), backends=backends)


def _resolved(table: Any, base: Path, keys: tuple[str, ...]) -> Any:
    """A table with the paths under `keys` (and in its `paths` table) resolved against the
    protocol's folder."""
    if not isinstance(table, dict):
        return table  # pydantic says what is wrong with it
    table = dict(table)
    for key in keys:
        value = table.get(key)
        if isinstance(value, str):
            table[key] = str(base / Path(value).expanduser())
        elif key == "paths" and isinstance(value, dict):
            table[key] = {
                k: str(base / Path(v).expanduser()) if isinstance(v, str) else v
                for k, v in value.items()
            }
    return table

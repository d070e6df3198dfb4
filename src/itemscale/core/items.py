"""Item records: one question about one video, whatever benchmark it came from, so the sweep, the
importers and the audit see one type. The video is the bootstrap's resampling cluster, so
`video_id` is always set."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ItemscaleError, location_text
from .files import InputFileError, loads_json, open_input
from .responses import TaskKind

ITEMS_SCHEMA_VERSION = 1
#: The item file's name in a folder that holds items: a synthetic suite, a run folder, an artifact.
ITEMS_FILE: Final[str] = "items.jsonl"
OPTION_LETTERS = "ABCDEFGHIJ"


class DialogueTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    text: str


class EvidenceSpan(BaseModel):
    """A time span (seconds) of the video that holds the evidence for the answer, half-open:
    [start, end), so a frame at `end` is not evidence (docs/report.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: float = Field(ge=0)
    end: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> EvidenceSpan:
        if self.end < self.start:
            raise ValueError(f"evidence span ends ({self.end}) before it starts ({self.start})")
        return self


class Item(BaseModel):
    """One benchmark question. For `mcqa`, `answer` is the correct option letter; for the
    continuous kinds, `references` holds the accepted answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str = Field(min_length=1)
    video_id: str = Field(min_length=1)
    task_kind: TaskKind = TaskKind.MCQA
    question: str
    options: tuple[str, ...] = ()
    answer: str | None = None
    references: tuple[str, ...] = ()
    history: tuple[DialogueTurn, ...] = ()
    video_path: str | None = None
    duration_s: float | None = None
    evidence: tuple[EvidenceSpan, ...] = ()
    attributes: dict[str, str] = Field(default_factory=dict)
    split: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Item:
        if self.task_kind == TaskKind.MCQA:
            if len(self.options) < 2:
                raise ValueError("an mcqa item needs at least two options")
            if len(self.options) > len(OPTION_LETTERS):
                raise ValueError(f"at most {len(OPTION_LETTERS)} options are supported")
            letters = OPTION_LETTERS[: len(self.options)]
            if self.answer is not None and self.answer not in letters:
                raise ValueError(
                    f"answer {self.answer!r} is not one of the option letters {letters}"
                )
        return self

    @property
    def option_letters(self) -> str:
        return OPTION_LETTERS[: len(self.options)]

    def reference_text(self) -> str | None:
        """The reference answer as stored in the response table."""
        if self.task_kind == TaskKind.MCQA:
            return self.answer
        return self.references[0] if self.references else None


class ItemFileError(ItemscaleError, ValueError):
    """A bad line in an item file, named by file and line."""


def read_items_jsonl(path: str | os.PathLike[str]) -> list[Item]:
    """Read the generic JSONL item format: one `Item` per line, after an optional
    `{"itemscale_items": N}` version line (none: version 1)."""
    path = Path(path)
    items: list[Item] = []
    seen: set[str] = set()
    try:  # bytes: a binary file (a video) is refused at its first line
        fh = open_input(path)
    except InputFileError as exc:
        raise ItemFileError(f"{path}: cannot read the item file ({exc.reason})") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            item = _item_line(path, lineno, raw)
            if item is None:
                continue
            if item.item_id in seen:
                raise ItemFileError(f"{path}:{lineno}: duplicate item_id {item.item_id!r}")
            seen.add(item.item_id)
            items.append(item)
    return items


def _item_line(path: Path, lineno: int, raw: bytes) -> Item | None:
    """The item on one line (None for a blank line or the format-version line)."""
    try:
        line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise ItemFileError(
            f"{path}:{lineno}: not UTF-8 text (byte {exc.start + 1} of the line); an item file "
            "is JSON lines (is this a video or another binary file?)"
        ) from None
    if not line.strip():
        return None
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as exc:
        raise ItemFileError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
    if isinstance(obj, dict) and "itemscale_items" in obj:
        version = obj["itemscale_items"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise ItemFileError(
                f"{path}:{lineno}: key 'itemscale_items': the format version must be a whole "
                f"number, got {version!r}"
            )
        if version > ITEMS_SCHEMA_VERSION:
            raise ItemFileError(
                f"{path}:{lineno}: item format version {version} is newer than this itemscale "
                f"reads ({ITEMS_SCHEMA_VERSION})"
            )
        return None
    try:
        return Item.model_validate(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = location_text(err["loc"], empty="(item)")
        raise ItemFileError(f"{path}:{lineno}: key '{loc}': {err['msg']}") from exc


def write_items_jsonl(path: str | os.PathLike[str], items: Iterable[Item]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"itemscale_items": ITEMS_SCHEMA_VERSION}) + "\n")
        for item in items:
            fh.write(item.model_dump_json(exclude_defaults=True) + "\n")
    os.replace(tmp, path)

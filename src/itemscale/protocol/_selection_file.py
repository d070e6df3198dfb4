"""Frame selections: a frame selector's own per-item frames, read from the file it wrote.

A selector (AKS, BOLT, Q-Frame, ...) picks each question's frames and writes them to a file; the
`selection` sampling policy replays that file exactly. Three formats are read:

- `aks`: a JSON list of records, each with `question_id` and `frame_idx` (frame indices in the
  source video's numbering), as AKS's evaluation scripts write them;
- `bolt`: a JSON object `{video: [{question_id, frames: [seconds]}]}`, as BOLT writes them;
- `table`: CSV or JSON Lines with `item_id` and either `indices` or `timestamps` (seconds); in CSV
  a list is a JSON list (`[0, 12, 40]`) or numbers separated by spaces or semicolons.

Every problem is a `SelectionError` naming the file, the item and the value: a selection is
never replaced by a formula in silence.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from ..errors import ItemscaleError
from ..protocol import SamplingPolicy, selection_file_digest

SelectionUnit = Literal["index", "seconds"]
#: The formats a selection file can be read as (`auto` detects: `.csv`/`.jsonl` are tables, a
#: JSON list is AKS, a JSON object is BOLT).
READ_FORMATS: Final[tuple[str, ...]] = ("aks", "bolt", "table")


class SelectionError(ItemscaleError, ValueError):
    """A selection that cannot be replayed: the message names the file, the item and the value."""

    def __init__(self, path: str, message: str, *, item_id: str | None = None) -> None:
        self.path = path
        self.item_id = item_id
        where = f"{path}: item {item_id!r}: " if item_id is not None else f"{path}: "
        super().__init__(where + message)


@dataclass(frozen=True)
class SelectionEntry:
    """One item's frames as the file gives them, and where in the file they are."""

    values: tuple[float, ...]
    unit: SelectionUnit
    where: str


@dataclass(frozen=True)
class Selection:
    """A whole selection file: item id -> its frames, with the file's format and digest."""

    path: str
    format: str
    digest: str
    entries: Mapping[str, SelectionEntry]

    @property
    def unit(self) -> str:
        units = {e.unit for e in self.entries.values()}
        return units.pop() if len(units) == 1 else "mixed" if units else "none"


@dataclass(frozen=True)
class SelectedFrames:
    """The frames an item's selection gives one video: sorted unique indices, and how many
    frames the file repeated (removed, as every sampling policy never duplicates a frame)."""

    indices: np.ndarray
    duplicates: int
    listed: int


def _detect(path: Path, data: Any) -> str:
    if isinstance(data, list):
        return "aks"
    if isinstance(data, dict):
        return "bolt"
    raise SelectionError(
        str(path), "a JSON selection is a list of records (AKS) or an object of videos (BOLT)"
    )


def _numbers(path: Path, where: str, value: Any, unit: SelectionUnit) -> tuple[float, ...]:
    """A list of frame indices (integers >= 0) or timestamps (finite seconds >= 0)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise SelectionError(str(path), f"{where}: not a JSON list: {text!r}") from None
        else:
            value = [v for v in text.replace(";", " ").replace(",", " ").split() if v]
    if not isinstance(value, list | tuple):
        raise SelectionError(str(path), f"{where}: frames must be a list (got {value!r})")
    out: list[float] = []
    for v in value:
        try:
            number = float(v) if not isinstance(v, bool) else math.nan
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or number < 0:
            raise SelectionError(str(path), f"{where}: {v!r} is not a frame {unit} >= 0")
        if unit == "index" and number != int(number):
            raise SelectionError(str(path), f"{where}: frame index {v!r} is not a whole number")
        out.append(int(number) if unit == "index" else number)
    return tuple(out)


def _item_key(path: Path, where: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise SelectionError(str(path), f"{where}: no usable question/item id ({value!r})")
    return str(value)


def _aks(path: Path, data: Any) -> Iterator[tuple[str, SelectionEntry]]:
    if not isinstance(data, list):
        raise SelectionError(str(path), "an AKS selection is a JSON list of records")
    for n, record in enumerate(data):
        where = f"record {n}"
        if not isinstance(record, dict) or "frame_idx" not in record:
            raise SelectionError(str(path), f"{where}: needs `question_id` and `frame_idx`")
        key = _item_key(path, where, record.get("question_id"))
        values = _numbers(path, f"{where} ({key})", record["frame_idx"], "index")
        yield key, SelectionEntry(values, "index", where)


def _bolt(path: Path, data: Any) -> Iterator[tuple[str, SelectionEntry]]:
    if not isinstance(data, dict):
        raise SelectionError(str(path), "a BOLT selection is a JSON object of videos")
    for video, records in data.items():
        if not isinstance(records, list):
            raise SelectionError(str(path), f"video {video!r}: a list of question records")
        for n, record in enumerate(records):
            where = f"video {video!r} record {n}"
            if not isinstance(record, dict) or "frames" not in record:
                raise SelectionError(str(path), f"{where}: needs `question_id` and `frames`")
            key = _item_key(path, where, record.get("question_id"))
            values = _numbers(path, f"{where} ({key})", record["frames"], "seconds")
            yield key, SelectionEntry(values, "seconds", where)


def _table_record(path: Path, where: str, row: Mapping[str, Any]) -> tuple[str, SelectionEntry]:
    key = _item_key(path, where, row.get("item_id"))
    given = [c for c in ("indices", "timestamps") if row.get(c) not in (None, "")]
    if len(given) != 1:
        raise SelectionError(
            str(path), f"{where} ({key}): give exactly one of `indices` or `timestamps`"
        )
    unit: SelectionUnit = "index" if given[0] == "indices" else "seconds"
    return key, SelectionEntry(_numbers(path, f"{where} ({key})", row[given[0]], unit), unit, where)


def _table(path: Path, text: str) -> Iterator[tuple[str, SelectionEntry]]:
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        if reader.fieldnames is None or "item_id" not in reader.fieldnames:
            raise SelectionError(str(path), "a CSV selection needs an `item_id` column")
        for n, row in enumerate(reader, start=2):
            yield _table_record(path, f"line {n}", row)
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SelectionError(str(path), f"line {n}: not JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise SelectionError(str(path), f"line {n}: a JSON object per line")
        yield _table_record(path, f"line {n}", row)


def read_selection(path: str | Path, format: str = "auto") -> Selection:
    """Read a selection file (format named, or detected with `auto`); raises `SelectionError`
    naming the file and the record for anything it cannot read, including an item given twice."""
    where = Path(path)
    if format not in ("auto", *READ_FORMATS):
        raise SelectionError(str(where), f"unknown format {format!r} (one of {READ_FORMATS})")
    try:
        text = where.read_text(encoding="utf-8")
        digest = selection_file_digest(where)
    except FileNotFoundError:
        raise SelectionError(str(where), "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SelectionError(str(where), f"cannot read: {exc}") from None
    tabular = where.suffix.lower() in (".csv", ".jsonl")
    if format == "table" or (format == "auto" and tabular):
        chosen, records = "table", _table(where, text)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SelectionError(str(where), f"not JSON: {exc.msg} (line {exc.lineno})") from None
        chosen = _detect(where, data) if format == "auto" else format
        records = _aks(where, data) if chosen == "aks" else _bolt(where, data)
    entries: dict[str, SelectionEntry] = {}
    for key, entry in records:
        if key in entries:
            raise SelectionError(
                str(where), f"given twice ({entries[key].where} and {entry.where})", item_id=key
            )
        entries[key] = entry
    return Selection(str(where), chosen, digest, entries)


@lru_cache(maxsize=32)
def _cached(path: str, format: str, digest: str) -> Selection:
    selection = read_selection(path, format)
    if selection.digest != digest:
        raise SelectionError(
            path,
            f"the file changed since the protocol was read (SHA-256 {selection.digest[:12]}..., "
            f"expected {digest[:12]}...): reload the protocol to run the new selection",
        )
    return selection


def policy_selection(sampling: SamplingPolicy) -> Selection:
    """The selection a `selection` sampling policy (as the protocol filled it in) replays."""
    path, digest = sampling.selection_path, sampling.selection_digest
    if sampling.name != "selection" or path is None or digest is None:
        raise ValueError(
            "a selection policy needs its file: build configurations with "
            "Protocol.configurations(), which fills in the path and digest"
        )
    return _cached(path, sampling.selection_format or "auto", digest)


def check_selection_count(selection: Selection, item_id: str, frames: int) -> SelectionEntry:
    """The item's entry, refused when missing or when its count is not the budget's."""
    entry = selection.entries.get(item_id)
    if entry is None:
        raise SelectionError(
            selection.path,
            f"not in the selection ({len(selection.entries)} items there)",
            item_id=item_id,
        )
    if len(entry.values) != frames:
        raise SelectionError(
            selection.path,
            f"{len(entry.values)} frames listed ({entry.where}), but the configuration takes "
            f"{frames}",
            item_id=item_id,
        )
    return entry


def selected_frames(
    selection: Selection,
    item_id: str,
    frames: int,
    *,
    video_frames: int,
    frame_times: np.ndarray,
) -> SelectedFrames:
    """An item's selected frame indices for one video of `video_frames` frames whose frames
    start at `frame_times` (seconds since the first frame).

    A timestamp selects the frame on screen at that time (the last frame starting at or before
    it). Raises `SelectionError` for a missing item, a count other than `frames`, an index past
    the video's end or a timestamp past its duration (the last frame's start plus one frame).
    """
    entry = check_selection_count(selection, item_id, frames)
    values = np.asarray(entry.values, dtype=np.float64)
    if entry.unit == "index":
        past = values[values >= video_frames]
        if past.size:
            raise SelectionError(
                selection.path,
                f"frame index {int(past[0])} is past the video's end ({video_frames} frames: "
                f"0..{video_frames - 1})",
                item_id=item_id,
            )
        raw = values.astype(np.int64)
    else:
        step = float(np.median(np.diff(frame_times))) if frame_times.size > 1 else 0.0
        duration = float(frame_times[-1]) + step if frame_times.size else 0.0
        past = values[values > duration + 1e-6]
        if past.size:
            raise SelectionError(
                selection.path,
                f"timestamp {past[0]:g} s is past the video's duration ({duration:g} s)",
                item_id=item_id,
            )
        raw = np.searchsorted(frame_times, values + 1e-6, side="right") - 1
        raw = np.clip(raw, 0, video_frames - 1).astype(np.int64)
    indices = np.unique(raw)
    return SelectedFrames(indices, int(raw.size - indices.size), int(raw.size))

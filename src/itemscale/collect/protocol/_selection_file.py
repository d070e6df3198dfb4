"""Frame selection files: a frame selector's own per-item frames, read from the file it wrote
(`aks`, `bolt`, `table`, `positional`; docs/selectors.md), replayed by the `selection` policy.

The reader lives in the protocol box because a configuration's label says whether its file
lists exactly the budget's frames or up to it (`<=32f`), which the protocol must know when it
builds the grid. Every problem is a `SelectionError` naming the file, the item and the value.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Literal

from ...core.errors import ItemscaleError, shown_value
from ...core.files import InputFileError, loads_json, parse_decimal, read_input_bytes

SelectionUnit = Literal["index", "seconds"]
#: The formats a selection file can be read as (`auto` detects: `.csv`/`.jsonl` are tables, a
#: JSON list of records is AKS, a JSON object is BOLT; `positional` is never detected).
READ_FORMATS: Final[tuple[str, ...]] = ("aks", "bolt", "table", "positional")
#: The most bytes a selection file (or its order file) may hold: AKS's 2,700-question files
#: are under 1 MiB, so 64 MiB is room for any benchmark and a bound on what is read.
MAX_SELECTION_BYTES: Final[int] = 64 * 2**20
#: The largest frame index (or timestamp, or cost) a record may give: every whole number up to
#: it is exact as a float, and no video comes near it.
MAX_FRAME_VALUE: Final[int] = 2**53
#: A record's optional count of the frames the selector scored to choose (its own cost).
COST_KEY: Final[str] = "frames_scored"


class SelectionError(ItemscaleError, ValueError):
    """A selection that cannot be replayed: the message names the file, the item and the value."""

    def __init__(self, path: str, message: str, *, item_id: str | None = None) -> None:
        self.path = path
        self.item_id = item_id
        where = f"{path}: item {item_id!r}: " if item_id is not None else f"{path}: "
        super().__init__(where + message)


@dataclass(frozen=True)
class ListedFrames:
    """One item's frames as the file gives them, where in the file they are, and the frames the
    selector says it scored to choose them (None when the file does not say)."""

    values: tuple[float, ...]
    unit: SelectionUnit
    where: str
    frames_scored: float | None = None


@dataclass(frozen=True)
class Selection:
    """A whole selection file: item id -> its frames, with the file's format and digest;
    `by_question` holds a file whose ids repeat (BOLT on MLVU) by (id, question text)."""

    path: str
    format: str
    digest: str
    entries: Mapping[str, ListedFrames]
    by_question: Mapping[tuple[str, str], ListedFrames] = field(default_factory=dict)

    @property
    def listings(self) -> list[ListedFrames]:
        return [*self.entries.values(), *self.by_question.values()]

    @property
    def unit(self) -> str:
        units = {e.unit for e in self.listings}
        return units.pop() if len(units) == 1 else "mixed" if units else "none"

    @property
    def n_records(self) -> int:
        return len(self.entries) + len(self.by_question)

    def counts(self) -> tuple[int, int]:
        """(fewest, most) frames a record lists; (0, 0) for an empty file."""
        sizes = [len(e.values) for e in self.listings]
        return (min(sizes), max(sizes)) if sizes else (0, 0)

    def is_exact(self, frames: int) -> bool:
        """Whether every record lists exactly `frames` distinct frames (the configuration is
        then a fixed budget; otherwise its frame count is a cap, labelled `<=Kf`). A value
        listed twice is one frame (`[5, 5, 5, 5]` sends 1); timestamps that fall on one frame
        of a video are merged too, which only the sweep can see (`check_selections`)."""
        return all(len(set(e.values)) == frames for e in self.listings)


def read_bounded(path: Path) -> bytes:
    """A regular file's bytes, at most `MAX_SELECTION_BYTES` (a FIFO, a device or a directory
    is refused before it is opened)."""
    try:
        return read_input_bytes(path, limit=MAX_SELECTION_BYTES, what="a selection file")
    except InputFileError as exc:
        raise SelectionError(str(path), exc.reason) from None


def _text(path: Path, data: bytes) -> str:
    """UTF-8 text with a leading BOM dropped (as `import table` reads a CSV)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SelectionError(str(path), f"cannot read: not UTF-8 ({exc.reason})") from None


def _json(path: Path, text: str) -> Any:
    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "nested too deeply":
            raise SelectionError(str(path), "not JSON: nested too deeply") from None
        raise SelectionError(str(path), f"not JSON: {exc.msg} (line {exc.lineno})") from None


def _detect(path: Path, data: Any) -> str:
    if isinstance(data, list):
        if data and all(isinstance(r, list) for r in data):
            raise SelectionError(
                str(path),
                "a JSON list of lists has no question ids: it is a positional selection "
                '(one list per question in the benchmark\'s order): declare format = "positional"'
                ' and order = "FILE" (the question ids in that order)',
            )
        return "aks"
    if isinstance(data, dict):
        return "bolt"
    raise SelectionError(
        str(path), "a JSON selection is a list of records (AKS) or an object of videos (BOLT)"
    )


def _numbers(path: Path, where: str, value: Any, unit: SelectionUnit) -> tuple[float, ...]:
    """A list of frame indices (integers >= 0, `12.0` read as 12) or timestamps (finite
    seconds >= 0)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                raise SelectionError(str(path), f"{where}: not a JSON list: {text!r}") from None
        else:
            value = [v for v in text.replace(";", " ").replace(",", " ").split() if v]
    if not isinstance(value, list | tuple):
        raise SelectionError(str(path), f"{where}: frames must be a list (got {value!r})")
    if not value:
        raise SelectionError(str(path), f"{where}: no frames listed (a record lists 1 or more)")
    out: list[float] = []
    for v in value:
        number = _plain_number(v)
        if number is None or number < 0:
            raise SelectionError(str(path), f"{where}: {shown_value(v)} is not a frame {unit} >= 0")
        if number > MAX_FRAME_VALUE:
            raise SelectionError(
                str(path),
                f"{where}: frame {unit} {shown_value(v)} is past any video (at most "
                f"{MAX_FRAME_VALUE})",
            )
        if unit == "index" and number != int(number):
            raise SelectionError(
                str(path), f"{where}: frame index {shown_value(v)} is not a whole number"
            )
        out.append(int(number) if unit == "index" else float(number))
    return tuple(out)


def _plain_number(value: Any) -> int | float | None:
    """A listed frame as a number (a JSON integer kept exact, text read strictly: `1_6` is not
    16), or None for anything else (a bool, NaN, an infinity, a word)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        number = parse_decimal(value) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _cost(path: Path, where: str, record: Mapping[str, Any]) -> float | None:
    value = record.get(COST_KEY)
    if value is None or value == "":
        return None
    number = _plain_number(value)
    if number is None or not 0 <= number <= MAX_FRAME_VALUE:
        raise SelectionError(
            str(path), f"{where}: `{COST_KEY}` {shown_value(value)} is not a count >= 0"
        )
    return float(number)


def _item_key(path: Path, where: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise SelectionError(str(path), f"{where}: no usable question/item id ({value!r})")
    return str(value)


Keyed = tuple[str, str | None, ListedFrames]  # (id, question text or None, entry)


def _aks(path: Path, data: Any) -> Iterator[Keyed]:
    if not isinstance(data, list):
        raise SelectionError(str(path), "an AKS selection is a JSON list of records")
    for n, record in enumerate(data):
        yield _keyed_record(path, f"record {n}", record, "frame_idx", "index")


def _keyed_record(path: Path, where: str, record: Any, field: str, unit: SelectionUnit) -> Keyed:
    """One record of an AKS (`frame_idx`, native indices) or BOLT (`frames`, seconds) file:
    its id, its question text (for files whose ids repeat) and its entry."""
    if not isinstance(record, dict) or field not in record:
        raise SelectionError(str(path), f"{where}: needs `question_id` and `{field}`")
    key = _item_key(path, where, record.get("question_id"))
    values = _numbers(path, f"{where} ({key})", record[field], unit)
    cost = _cost(path, f"{where} ({key})", record)
    return key, _question(record), ListedFrames(values, unit, where, cost)


def _question(record: Mapping[str, Any]) -> str | None:
    value = record.get("question")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _bolt(path: Path, data: Any) -> Iterator[Keyed]:
    if not isinstance(data, dict):
        raise SelectionError(str(path), "a BOLT selection is a JSON object of videos")
    for video, records in data.items():
        if not isinstance(records, list):
            raise SelectionError(str(path), f"video {video!r}: a list of question records")
        for n, record in enumerate(records):
            yield _keyed_record(path, f"video {video!r} record {n}", record, "frames", "seconds")


def _table_record(path: Path, where: str, row: Mapping[str, Any]) -> Keyed:
    key = _item_key(path, where, row.get("item_id"))
    given = [c for c in ("indices", "timestamps") if row.get(c) not in (None, "")]
    if len(given) != 1:
        raise SelectionError(
            str(path), f"{where} ({key}): give exactly one of `indices` or `timestamps`"
        )
    unit: SelectionUnit = "index" if given[0] == "indices" else "seconds"
    values = _numbers(path, f"{where} ({key})", row[given[0]], unit)
    cost = _cost(path, f"{where} ({key})", row)
    return key, _question(row), ListedFrames(values, unit, where, cost)


def _table(path: Path, text: str) -> Iterator[Keyed]:
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
            row = loads_json(line)
        except json.JSONDecodeError as exc:
            raise SelectionError(str(path), f"line {n}: not JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise SelectionError(str(path), f"line {n}: a JSON object per line")
        yield _table_record(path, f"line {n}", row)


def read_order(path: str | Path, order_key: str | None = None) -> list[str]:
    """The question ids of an order file, in order: one id a line, or a JSON list of ids or of
    records whose `order_key` names the id (AKS's `datasets/videomme/videomme.json`)."""
    where = Path(path)
    text = _text(where, read_bounded(where))
    if text.lstrip().startswith("["):
        data = _json(where, text)
        if not isinstance(data, list):  # pragma: no cover - a '[' always parses as a list
            raise SelectionError(str(where), "an order file is a JSON list")
        ids: list[str] = []
        for n, record in enumerate(data):
            if isinstance(record, dict):
                if order_key is None or order_key not in record:
                    raise SelectionError(
                        str(where),
                        f"record {n}: a list of records needs `order_key` naming the id key"
                        + (f" (no key {order_key!r})" if order_key else ""),
                    )
                record = record[order_key]
            ids.append(_item_key(where, f"record {n}", record))
        return ids
    return [line.strip() for line in text.splitlines() if line.strip()]


def _positional(path: Path, data: Any, order: list[str], order_path: str) -> Iterator[Keyed]:
    if not isinstance(data, list):
        raise SelectionError(str(path), "a positional selection is a JSON list of frame lists")
    if len(data) != len(order):
        raise SelectionError(
            str(path),
            f"{len(data)} frame lists, but the order file {order_path} names {len(order)} "
            "questions: a positional file has one list per question, in that order",
        )
    for n, (values, key) in enumerate(zip(data, order, strict=True)):
        where = f"record {n}"
        yield (
            key,
            None,
            ListedFrames(_numbers(path, f"{where} ({key})", values, "index"), "index", where),
        )


def read_selection(
    path: str | Path,
    format: str = "auto",
    *,
    order: str | Path | None = None,
    order_key: str | None = None,
) -> Selection:
    """Read a selection file (format named, or detected with `auto`). An id given twice is an
    error unless every record carries its `question` text: its records are then matched by
    (id, question) (BOLT on MLVU names videos as ids)."""
    where = Path(path)
    if format not in ("auto", *READ_FORMATS):
        raise SelectionError(str(where), f"unknown format {format!r} (one of {READ_FORMATS})")
    if format == "positional" and order is None:
        raise SelectionError(str(where), 'a positional selection needs order = "FILE"')
    data = read_bounded(where)
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    text = _text(where, data)
    tabular = where.suffix.lower() in (".csv", ".jsonl")
    records: Iterator[Keyed]
    if format == "table" or (format == "auto" and tabular):
        chosen, records = "table", _table(where, text)
    else:
        parsed = _json(where, text)
        chosen = _detect(where, parsed) if format == "auto" else format
        if chosen == "positional":
            assert order is not None
            records = _positional(where, parsed, read_order(order, order_key), str(order))
        else:
            records = _aks(where, parsed) if chosen == "aks" else _bolt(where, parsed)
    entries, by_question = _collect(where, list(records))
    return Selection(str(where), chosen, digest, entries, by_question)


def _collect(
    where: Path, records: list[Keyed]
) -> tuple[dict[str, ListedFrames], dict[tuple[str, str], ListedFrames]]:
    entries: dict[str, ListedFrames] = {}
    repeated: str | None = None
    for key, _, entry in records:
        if key in entries and repeated is None:
            repeated = key
            first = entries[key]
        entries.setdefault(key, entry)
    if repeated is None:
        return entries, {}
    if any(question is None for _, question, _ in records):
        second = next(e for k, _, e in records if k == repeated and e is not first)
        raise SelectionError(
            str(where),
            f"given twice ({first.where} and {second.where}); ids may repeat only when every "
            "record carries its `question` text to match by",
            item_id=repeated,
        )
    by_question: dict[tuple[str, str], ListedFrames] = {}
    for key, question, entry in records:
        assert question is not None
        if (key, question) in by_question:
            raise SelectionError(
                str(where),
                f"question {question!r} given twice ({by_question[key, question].where} and "
                f"{entry.where})",
                item_id=key,
            )
        by_question[key, question] = entry
    return {}, by_question


@lru_cache(maxsize=64)
def cached_selection(
    path: str, format: str, digest: str, order: str | None = None, order_key: str | None = None
) -> Selection:
    """The selection a configuration names, read once per (file, digest); a file whose bytes
    no longer match the digest the configuration carries is refused."""
    selection = read_selection(path, format, order=order, order_key=order_key)
    if selection.digest != digest:
        raise SelectionError(
            path,
            f"the file changed since the protocol was read (SHA-256 {selection.digest[:12]}..., "
            f"expected {digest[:12]}...): reload the protocol to run the new selection",
        )
    return selection

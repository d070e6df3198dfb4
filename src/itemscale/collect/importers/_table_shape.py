"""Result tables as papers release them: renamed columns, wide tables, separate answer keys.

A paper's per-item release is rarely in `import table`'s long layout: the seed paper ships one
row per item with one column per configuration holding the predicted letter
(`sample_id,16f_151k,32f_151k,...,textonly`), and a long `per_item.csv` whose columns are called
`sample_id`, `frame_count`, `predicted_option`, `ground_truth_option`. This module turns both
into the long records `_table` parses, keeping for every value the column it came from, so an
error still names the file, the line and the column the user can see in the file.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, overload

from ...core.responses import NOANSWER, TaskKind
from ..items import Item
from ._common import ImportInputError
from ._jobs import load_benchmark_index
from ._table_records import Record, TableRecords, read_table_records

WideValues = Literal["answer", "correct", "score"]
EmptyCells = Literal["noanswer", "missing"]

#: Labels that mean the zero-frame, text-only baseline.
TEXT_ONLY_LABELS: Final[frozenset[str]] = frozenset(
    {"textonly", "text-only", "text_only", "text", "blind", "noframes", "no-frames", "0f"}
)
_FRAMES_LABEL = re.compile(r"^(?P<frames>\d+)\s*f(?:rames?)?(?=$|[^a-z])", re.IGNORECASE)
_PIXELS_LABEL = re.compile(r"[_@-](?P<kpx>\d+(?:\.\d+)?)k(?:px)?$", re.IGNORECASE)

#: Columns of a wide table that describe the item rather than name a configuration.
WIDE_ITEM_COLUMNS: Final[frozenset[str]] = frozenset(
    {"model", "video_id", "gold", "series", "task_kind", "repeat"}
)


@dataclass(frozen=True)
class TableOptions:
    """How to read one results table (`import table` options)."""

    wide: bool = False
    id_column: str | None = None
    model: str | None = None
    frames: Mapping[str, int] = field(default_factory=dict)
    rename: Mapping[str, str] = field(default_factory=dict)
    wide_values: WideValues = "answer"
    empty: EmptyCells = "noanswer"
    #: `--video-from-id`: a preset or regex naming the video inside an item id
    video_from_id: str | None = None


@overload
def parse_assignments(
    values: Sequence[str], option: str, *, integer: Literal[True]
) -> dict[str, int]: ...
@overload
def parse_assignments(
    values: Sequence[str], option: str, *, integer: Literal[False]
) -> dict[str, str]: ...
def parse_assignments(
    values: Sequence[str], option: str, *, integer: bool
) -> dict[str, int] | dict[str, str]:
    """`['A=B', ...]` -> {'A': 'B'} (or int values); a malformed one names the option."""
    out: dict[str, str] = {}
    for text in values:
        key, sep, value = str(text).partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ImportInputError(f"{option} {text!r}: expected NAME=VALUE")
        if key in out:
            raise ImportInputError(f"{option} {key!r} is given twice")
        if integer and not value.isdigit():
            raise ImportInputError(f"{option} {text!r}: {value!r} is not a whole number >= 0")
        out[key] = value
    return {k: int(v) for k, v in out.items()} if integer else out


def frames_from_label(label: str) -> int | None:
    """Frame count a label states: `16f_151k` -> 16, `textonly`/`blind` -> 0; None otherwise."""
    text = label.strip()
    if text.lower() in TEXT_ONLY_LABELS:
        return 0
    m = _FRAMES_LABEL.match(text)
    return int(m["frames"]) if m else None


def pixels_from_label(label: str) -> int | None:
    """Pixels per frame a label states to the thousand: `64f_235k` -> 235000; None otherwise.

    The seed paper's labels round the processor's max_pixels (151k for 150,528 = 192 x 28 x 28);
    the rounded figure still orders the resolutions correctly, which is what it is used for.
    """
    if frames_from_label(label) in (None, 0):
        return None
    m = _PIXELS_LABEL.search(label.strip())
    return round(float(m["kpx"]) * 1000) if m else None


def label_frames(label: str, options: TableOptions, loc: str) -> int:
    if label in options.frames:
        return int(options.frames[label])
    frames = frames_from_label(label)
    if frames is None:
        raise ImportInputError(
            f"{loc}: cannot tell the frame count of configuration {label!r} from its label "
            f"(expected a leading '<N>f' or one of {', '.join(sorted(TEXT_ONLY_LABELS))}); "
            f"give --frames {label}=N"
        )
    return frames


def renamed(src: TableRecords, rename: Mapping[str, str]) -> TableRecords:
    """The table with columns renamed (`--rename SRC=DST`); `aliases` remembers the originals."""
    if not rename:
        return src
    missing = [s for s in rename if s not in src.columns]
    if missing:
        raise ImportInputError(
            f"{src.path}:1: --rename {missing[0]}={rename[missing[0]]}: no column "
            f"{missing[0]!r} (the header has {', '.join(src.columns)})"
        )
    columns = tuple(rename.get(c, c) for c in src.columns)
    clash = [c for c in columns if columns.count(c) > 1]
    if clash:
        raise ImportInputError(
            f"{src.path}:1: after --rename, column {clash[0]!r} appears twice "
            f"(from {', '.join(repr(c) for c in src.columns if rename.get(c, c) == clash[0])})"
        )

    def stream() -> Iterator[Record]:
        for line, raw, aliases in src:
            yield line, {rename.get(k, k): v for k, v in raw.items()}, aliases

    aliases = {dst: s for s, dst in rename.items()}
    return TableRecords(src.path, src.fmt, columns, stream, aliases)


def suggested_pattern(file_name: str) -> str:
    """A `--model-from-name` pattern for files named like `file_name`, for a hint: its part up
    to the first `_` as the model (`Qwen3-VL-8B_V1_short_predictions_wide.csv` ->
    `{model}_V1_short_predictions_wide.csv`)."""
    _, sep, rest = file_name.partition("_")
    return "{model}" + (f"_{rest}" if sep else Path(file_name).suffix)


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or not str(value).strip()


def widened(src: TableRecords, options: TableOptions) -> TableRecords:
    """One long record per (item row, configuration column) of a wide table."""
    id_column = options.id_column or "item_id"
    if id_column not in src.columns:
        raise ImportInputError(
            f"{src.path}:1: no id column {id_column!r} (the header has "
            f"{', '.join(src.columns)}); name it with --id-column"
        )
    has_model = "model" in src.columns
    if not has_model and not options.model:
        raise ImportInputError(
            f"{src.path}: a wide table has one row per item; give the model with --model NAME "
            "(or a 'model' column), or, for several files of one model each, with "
            f"--model-from-name PATTERN (e.g. '{suggested_pattern(src.path.name)}')"
        )
    item_cols = [
        c for c in src.columns if c == id_column or c in WIDE_ITEM_COLUMNS or c.startswith("attr_")
    ]
    config_cols = [c for c in src.columns if c not in item_cols]
    if not config_cols:
        raise ImportInputError(f"{src.path}:1: no configuration columns besides {id_column!r}")
    unknown = [label for label in options.frames if label not in config_cols]
    if unknown:
        raise ImportInputError(
            f"--frames {unknown[0]}=...: no configuration column {unknown[0]!r} in {src.path} "
            f"(it has {', '.join(config_cols)})"
        )
    frames = {c: label_frames(c, options, f"{src.path}:1: column '{c}'") for c in config_cols}
    pixels = {c: pixels_from_label(c) for c in config_cols}
    value_col = options.wide_values
    base_alias = dict(src.aliases)
    cell_aliases = {
        col: {
            **base_alias,
            "item_id": base_alias.get(id_column, id_column),
            value_col: col,
            "config": col,
            "frames": col,
        }
        for col in config_cols
    }

    left_out: Counter[str] = Counter()
    empty_reason = (
        "empty answer cell, not run (--empty missing)"
        if value_col == "answer"
        else f"empty {value_col} cell, not run"
    )

    def stream() -> Iterator[Record]:
        left_out.clear()
        for line, raw, _ in src:
            item = {c: raw.get(c) for c in item_cols}
            if id_column != "item_id":
                item["item_id"] = item.pop(id_column)
            if not has_model:
                item["model"] = options.model
            for col in config_cols:
                value = raw.get(col)
                if _is_empty(value):
                    if options.empty == "missing" or value_col != "answer":
                        left_out[empty_reason] += 1
                        continue
                    value = NOANSWER
                row = {**item, "config": col, "frames": frames[col], value_col: value}
                if pixels[col] is not None:
                    row["pixels"] = pixels[col]
                yield line, row, cell_aliases[col]

    item_names = ["item_id" if c == id_column else c for c in item_cols]
    if not has_model:
        item_names.append("model")
    columns = (*dict.fromkeys([*item_names, "config", "frames", value_col, "pixels"]),)
    return TableRecords(src.path, src.fmt, columns, stream, base_alias, left_out)


def long_defaults(src: TableRecords, options: TableOptions) -> TableRecords:
    """A long table with `--model`, `--id-column` and label-derived frames filled in."""
    columns = list(src.columns)
    aliases = dict(src.aliases)
    id_column = options.id_column if options.id_column not in (None, "item_id") else None
    if id_column is not None:
        if id_column not in columns:
            raise ImportInputError(
                f"{src.path}:1: no id column {id_column!r} (the header has {', '.join(columns)})"
            )
        if "item_id" in columns:
            raise ImportInputError(
                f"{src.path}:1: --id-column {id_column}: the table also has an 'item_id' column"
            )
        columns = ["item_id" if c == id_column else c for c in columns]
        aliases["item_id"] = aliases.get(id_column, id_column)
    if options.model:
        if "model" in columns:
            raise ImportInputError(
                f"{src.path}:1: the table has a 'model' column; --model is for tables without one"
            )
        columns.append("model")
    fill_frames = "frames" not in columns and "config" in columns
    if fill_frames:
        columns.append("frames")
    fill_config = "config" not in columns and "frames" in columns
    if fill_config:
        columns.append("config")
    if id_column is None and not options.model and not fill_frames and not fill_config:
        return TableRecords(src.path, src.fmt, tuple(columns), src.stream, aliases)
    config_col = aliases.get("config", "config")
    known_frames: dict[str, int] = {}

    def stream() -> Iterator[Record]:
        for line, raw, record_aliases in src:
            row = raw
            if id_column is not None:
                row = {("item_id" if k == id_column else k): v for k, v in row.items()}
            if options.model:
                row = {**row, "model": options.model}
            if fill_frames:
                label = "" if _is_empty(row.get("config")) else str(row["config"]).strip()
                if label and label not in known_frames:
                    known_frames[label] = label_frames(
                        label, options, f"{src.path}:{line}: column '{config_col}'"
                    )
                row = {**row, "frames": known_frames.get(label) if label else None}
            if fill_config:
                row = {**row, "config": config_from_frames(row.get("frames"), row.get("pixels"))}
            yield line, row, record_aliases

    return TableRecords(src.path, src.fmt, tuple(columns), stream, aliases)


def config_from_frames(frames: object, pixels: object = None) -> str | None:
    """The configuration label of a long table without a `config` column: `text-only` for 0
    frames, else `<N>f`, or `<N>f@<pixels>` where the row states its pixels (None when frames
    is not a whole number: the row's frames error then names the column)."""
    if _is_empty(frames):
        return None
    try:
        n = float(str(frames).strip())
    except ValueError:
        return None
    if not n.is_integer():
        return None
    if n == 0:
        return "text-only"
    label = f"{int(n)}f"
    if not _is_empty(pixels):
        try:
            px = float(str(pixels).strip())
        except ValueError:
            return label
        if px.is_integer():
            label += f"@{int(px)}"
    return label


def shaped_records(
    source: str | os.PathLike[str] | TableRecords, options: TableOptions
) -> TableRecords:
    """Read a results table (a file, or records already read) and bring it into the long
    layout."""
    records = source if isinstance(source, TableRecords) else read_table_records(source)
    src = renamed(records, options.rename)
    if options.wide:
        return widened(src, options)
    return empty_answers(long_defaults(src, options), options)


#: Statuses under which an empty answer is the model's (an answered cell), not a failure's.
_ANSWERED = ("", "ok", "noanswer")


def empty_answers(src: TableRecords, options: TableOptions) -> TableRecords:
    """The one rule for an empty answer cell, as in a wide table: with `--empty noanswer` (the
    default) the model answered nothing, NOANSWER (counted wrong); with `--empty missing` the
    cell was never run, and the row is left out (the item then leaves the matched grid, counted
    by reason). Applies to rows whose answer and prediction are both empty and whose status,
    if any, is an answered one (a timeout's empty answer stays a timeout)."""
    if "answer" not in src.columns:
        return src
    inner = src.stream
    left_out: Counter[str] = Counter()

    def stream() -> Iterator[Record]:
        left_out.clear()
        for line, row, aliases in inner():
            status = "" if _is_empty(row.get("status")) else str(row["status"]).strip().lower()
            blank = _is_empty(row.get("answer")) and _is_empty(row.get("prediction"))
            if blank and status in _ANSWERED:
                if options.empty == "missing":
                    left_out["empty answer, not run (--empty missing)"] += 1
                    continue
                row = {**row, "answer": NOANSWER}
            yield line, row, aliases

    return TableRecords(src.path, src.fmt, src.columns, stream, src.aliases, left_out)


@dataclass(frozen=True)
class KeyEntry:
    """What an answer key or a benchmark file knows of one item: a multiple-choice item's gold
    letter, or an open-ended item's task kind and reference answers."""

    gold: str | None
    video_id: str | None = None
    options: tuple[str, ...] = ()
    attributes: Mapping[str, str] = field(default_factory=dict)
    task_kind: TaskKind = TaskKind.MCQA
    references: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerKey:
    """Gold answers, videos and attributes by item id, from `--answer-key` or `--benchmark`;
    `entries` keeps the file's order (the order absent items are listed in)."""

    path: Path
    entries: Mapping[str, KeyEntry]

    def get(self, item_id: str) -> KeyEntry | None:
        return self.entries.get(item_id)

    @classmethod
    def from_items(cls, path: str | os.PathLike[str], items: Iterable[Item]) -> AnswerKey:
        """A benchmark's items as a key (the item's own answer, options and attributes)."""
        entries = {
            item.item_id: KeyEntry(
                gold=item.answer if item.task_kind == TaskKind.MCQA else None,
                video_id=item.video_id,
                options=tuple(item.options),
                attributes=dict(item.attributes),
                task_kind=item.task_kind,
                references=tuple(item.references),
            )
            for item in items
        }
        return cls(path=Path(path), entries=entries)


def load_answer_key(path: str | os.PathLike[str]) -> AnswerKey:
    """An answer-key table: `item_id` and `gold` (an option letter), optionally `video_id` and
    `attr_<name>` columns. Any format `import table` reads."""
    src = read_table_records(path)
    for col in ("item_id", "gold"):
        if col not in src.columns:
            raise ImportInputError(
                f"{src.path}:1: an answer key needs columns 'item_id' and 'gold' "
                f"(the header has {', '.join(src.columns)})"
            )
    entries: dict[str, KeyEntry] = {}
    lines: dict[str, int] = {}
    for line, raw, _ in src:
        if _is_empty(raw.get("item_id")):
            raise ImportInputError(f"{src.at(line, 'item_id')}: empty value")
        item_id = str(raw["item_id"]).strip()
        if item_id in entries:
            raise ImportInputError(
                f"{src.at(line, 'item_id')}: item {item_id!r} appears twice (first on line "
                f"{lines[item_id]})"
            )
        gold = raw.get("gold")
        if _is_empty(gold) or not re.fullmatch(r"[A-Ja-j]", str(gold).strip()):
            raise ImportInputError(f"{src.at(line, 'gold')}: {gold!r} is not an option letter A-J")
        video = raw.get("video_id")
        attrs = {
            k[len("attr_") :]: str(v).strip()
            for k, v in raw.items()
            if k.startswith("attr_") and len(k) > len("attr_") and not _is_empty(v)
        }
        entries[item_id] = KeyEntry(
            gold=str(gold).strip().upper(),
            video_id=None if _is_empty(video) else str(video).strip(),
            attributes=attrs,
        )
        lines[item_id] = line
    if not entries:
        raise ImportInputError(f"{src.path}: no rows in the answer key")
    return AnswerKey(path=src.path, entries=entries)


def key_from_benchmark(path: str | os.PathLike[str]) -> AnswerKey:
    """A benchmark question file (any format of `itemscale.collect.items.BENCHMARK_LOADERS`, or items
    JSONL) as an answer key; items are matched by id (Video-MME's `question_id`)."""
    index = load_benchmark_index(path)
    assert index is not None
    return AnswerKey.from_items(path, index.ordered)

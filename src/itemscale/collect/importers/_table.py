"""The generic importer: any CSV, JSONL or Parquet table of per-item results.

Researchers who ran their own harness can export one row per (model, item, configuration,
repeat) and get the same audit as a native sweep. Every value is checked before anything is
written: each row by `_table_row` (its values, then the rules across its columns), then the
rows together here (duplicate keys, one frame count per configuration, one video and task kind
per item). An error names the file, the line (1-based, the CSV header is line 1; Parquet files
count rows from 1) and the column. See docs/importers.md for the column reference.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from ...core.responses import ANSWERED_STATUSES, NOANSWER, TaskKind, duplicated_keys
from ._common import ImportInputError, rows_frame_from
from ._config_ids import DEFAULT_SERIES
from ._table_records import TableRecords
from ._table_row import ATTRIBUTE_PREFIX, OPTIONAL, REQUIRED, ParsedFields, parse_row
from ._table_shape import AnswerKey, TableOptions, shaped_records
from ._video_ids import video_pattern, videos_from_ids


def delimiter_hint(columns: Sequence[str], fmt: str) -> str:
    """A hint when a CSV/TSV header is one column holding another separator (a ';'-separated
    file read as commas), '' otherwise."""
    if fmt not in ("csv", "tsv") or len(columns) != 1:
        return ""
    header = str(columns[0])
    for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars"), (",", "commas")):
        if sep in header:
            expected = "tabs (a .tsv file)" if fmt == "tsv" else "commas"
            return (
                f". The header is one column, {header[:60]!r}: the file looks separated by "
                f"{name}, but a .{fmt} file is read with {expected}; save it as "
                + ("a .tsv file" if sep == "\t" else "comma-separated CSV")
                + " (e.g. pandas.read_csv(path, sep="
                + repr(sep)
                + ").to_csv(out, index=False))"
            )
    return ""


def _first_conflict(
    frame: pd.DataFrame, group: list[str], column: str
) -> tuple[int, int, Any, Any] | None:
    """The first row (in file order) whose `column` differs from its group's first row:
    (its position, the first row's position, its value, the first row's value)."""
    if frame.empty:
        return None
    first = frame.groupby(group, sort=False)[column].transform("first")
    bad = np.flatnonzero(frame[column].to_numpy(dtype=object) != first.to_numpy(dtype=object))
    if bad.size == 0:
        return None
    pos = int(bad[0])
    keys = frame.iloc[pos][group]
    same = np.flatnonzero((frame[group] == keys.to_numpy()).all(axis=1).to_numpy())
    origin = int(same[0])
    return pos, origin, frame.iloc[pos][column], frame.iloc[origin][column]


def _check_consistency(src: TableRecords, rows: pd.DataFrame) -> pd.DataFrame:
    """Across rows: no duplicate key, one frame count and axis position per configuration,
    one video and one task kind per item; the first offending row (in file order) is named.
    Failure rows then inherit their item's kind, so they are counted in the right matrix."""
    lines = rows["_line"].to_numpy()
    found: list[tuple[int, int, str]] = []  # (row position, check order, message)
    # one label in two series is two configurations (a control and a selector at `16f`)
    key = ["model", "item_id", "series", "config_label", "repeat"]
    dup = np.flatnonzero(duplicated_keys(rows, key).to_numpy())
    if dup.size:
        pos = int(dup[0])
        r = rows.iloc[pos]
        same = np.flatnonzero((rows[key] == r[key].to_numpy()).all(axis=1).to_numpy())
        series = f"series={r['series']!r}, " if r["series"] != DEFAULT_SERIES else ""
        found.append(
            (
                pos,
                0,
                f"{src.at(int(lines[pos]))}: duplicate key (model={r['model']!r}, "
                f"item_id={r['item_id']!r}, {series}config={r['config_label']!r}, "
                f"repeat={r['repeat']}) first seen on line {int(lines[same[0]])}",
            )
        )
    for order, (group, column, shown, said, fmt) in enumerate(
        (
            (["series", "config_label"], "frames", "frames", "frames", "{}"),
            (["series", "config_label"], "axis_order", "order", "order", "{:g}"),
            (["model", "item_id"], "video_id", "video_id", "video", "{!r}"),
        ),
        start=1,
    ):
        hit = _first_conflict(rows, group, column)
        if hit:
            pos, origin, value, first = hit
            whose = f"{group[1].split('_')[0]} {rows.iloc[pos][group[1]]!r}"
            found.append(
                (
                    pos,
                    order,
                    f"{src.at(int(lines[pos]), shown)}: {whose} has {said} {fmt.format(value)} "
                    f"here but {fmt.format(first)} on line {int(lines[origin])}",
                )
            )
    answered = rows["status"].isin(list(ANSWERED_STATUSES)).to_numpy()
    decides = answered | rows["_explicit"].to_numpy(dtype=bool)
    deciding = rows.loc[decides]
    hit = _first_conflict(deciding, ["model", "item_id"], "task_kind")
    if hit:
        pos, origin, value, first = hit
        at = np.flatnonzero(decides)
        found.append(
            (
                int(at[pos]),
                4,
                f"{src.at(int(lines[at[pos]]))}: item {deciding.iloc[pos]['item_id']!r} is "
                f"{value} here but {first} on line {int(lines[at[origin]])} (mixing 'correct' "
                "and 'score')",
            )
        )
    if found:
        raise ImportInputError(min(found)[2])
    inherit = ~decides
    if inherit.any():
        kinds = deciding.groupby(["model", "item_id"], sort=False)["task_kind"].first()
        lookup = pd.MultiIndex.from_frame(rows.loc[inherit, ["model", "item_id"]])
        inherited = kinds.reindex(lookup).fillna(TaskKind.MCQA.value).to_numpy()
        rows.loc[inherit, "task_kind"] = inherited
    return rows


#: Rows parsed into one block of columns at a time: memory follows the table, not the lines.
_CHUNK_ROWS: Final[int] = 50_000


def _typed_block(chunk: list[ParsedFields], src: TableRecords) -> pd.DataFrame:
    """Parsed rows as a block in the response table's types (plus the line and kind flags)."""
    frame = pd.DataFrame(chunk)
    extra = frame[["_line", "_explicit"]]
    # keys are checked across all blocks later, with the lines that name the duplicate
    typed = rows_frame_from(
        frame.drop(columns=["_line", "_explicit"]), where_=str(src.path), check_keys=False
    )
    return typed.assign(_line=extra["_line"].to_numpy(), _explicit=extra["_explicit"].to_numpy())


def import_table(
    path: str | os.PathLike[str] | TableRecords,
    options: TableOptions | None = None,
    *,
    key: AnswerKey | None = None,
    left_out: Counter[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Parse a results table (a file, or `frame_records(df)`) into response rows (nothing
    written).

    `options` reads wide tables, renamed columns and label-derived frame counts; `key` (an
    answer key or a benchmark file) supplies gold answers, video ids and attributes by item id.
    Returns the rows and notes for the summary (e.g. ignored columns); rows the options leave
    out on purpose (an empty answer under `--empty missing`) are added to `left_out` by reason,
    so the summary counts them as read and not imported.
    """
    opts = options if options is not None else TableOptions()
    src = shaped_records(path, opts)
    missing = [c for c in REQUIRED if c not in src.columns]
    if missing:
        raise ImportInputError(
            f"{src.path}:1: missing required column(s) {', '.join(repr(m) for m in missing)}; "
            f"a table needs {', '.join(REQUIRED)} and 'correct' or 'score'"
            + ("" if opts.wide else " (one row per item and configuration? see --wide)")
            + delimiter_hint(src.columns, src.fmt)
        )
    cols = set(src.columns)
    scorable = bool({"correct", "score", "status"} & cols) or {"prediction", "reference"} <= cols
    gradable = ("gold" in cols or key is not None) and bool({"answer", "prediction"} & cols)
    if not (scorable or gradable):
        raise ImportInputError(
            f"{src.path}:1: missing column 'correct' or 'score' (or 'prediction' and "
            "'reference', or an 'answer' with a 'gold' column, --answer-key or --benchmark)"
        )
    known = set(REQUIRED) | set(OPTIONAL)
    ignored = [c for c in src.columns if c not in known and not c.startswith(ATTRIBUTE_PREFIX)]
    blocks: list[pd.DataFrame] = []
    chunk: list[ParsedFields] = []
    padded = empty = 0
    for line, raw, aliases in src:
        for col in ("model", "item_id", "config", "video_id"):
            value = raw.get(col)
            if isinstance(value, str) and value != value.strip() and value.strip():
                padded += 1
        if raw.get("answer") == NOANSWER and opts.wide:
            empty += 1
        parsed = parse_row(src, line, raw, aliases, key)
        parsed.row["_line"] = line
        parsed.row["_explicit"] = parsed.explicit_kind
        chunk.append(parsed.row)
        if len(chunk) >= _CHUNK_ROWS:
            blocks.append(_typed_block(chunk, src))
            chunk = []
    if chunk:
        blocks.append(_typed_block(chunk, src))
    if left_out is not None:
        left_out.update(src.left_out)
    if not blocks:
        gone = ", ".join(f"{n} {reason}" for reason, n in src.left_out.items())
        raise ImportInputError(
            f"{src.path}: no data rows" + (f" (left out: {gone})" if gone else "")
        )
    rows = pd.concat(blocks, ignore_index=True) if len(blocks) > 1 else blocks[0]
    del blocks, chunk
    rows = _check_consistency(src, rows)
    notes = []
    if ignored:
        notes.append(
            f"{src.path.name}: ignored column(s) {', '.join(ignored)} "
            f"(prefix a column with '{ATTRIBUTE_PREFIX}' to keep it as an item attribute, or "
            "--rename it)"
        )
    text_only = rows["frames"].to_numpy() == 0
    if text_only.any():
        labels = sorted(set(rows.loc[text_only, "config_label"]))
        notes.append(f"text-only baseline (frames 0): {', '.join(labels)}")
    if padded:
        notes.append(
            f"{src.path.name}: {padded} id or label value(s) had spaces around them, removed "
            "(' q1' and 'q1' are one item)"
        )
    if empty and opts.wide_values == "answer":
        notes.append(
            f"{src.path.name}: {empty} empty answer cell(s) read as NOANSWER (answered, "
            "wrong); --empty missing treats them as not run"
        )
    if key is not None:
        ids = set(rows["item_id"])
        found = sum(1 for i in ids if key.get(i) is not None)
        notes.append(
            f"{key.path.name}: {found} of the table's {len(ids)} items found "
            f"(it lists {len(key.entries)})"
        )
    if opts.video_from_id is not None:
        rows, note = videos_from_ids(rows, video_pattern(opts.video_from_id), opts.video_from_id)
        notes.append(f"{src.path.name}: {note}")
    elif "video_id" not in cols and (rows["video_id"] == rows["item_id"]).all():
        notes.append(
            f"{src.path.name}: no video ids (each item is its own bootstrap cluster); give a "
            "'video_id' column, --answer-key or --benchmark, or --video-from-id PATTERN "
            "(videomme: `001-1` is a question about video `001`)"
        )
    rows = rows.drop(columns=["_line", "_explicit"])
    return rows_frame_from(rows, where_=str(src.path)), notes

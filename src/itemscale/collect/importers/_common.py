"""What every importer shares: typed input errors, provenance records and the merge into a run
(the configuration ids of the rows are `_config_ids`).

Importers only ever add rows to a run directory. Re-importing a file is a no-op (same keys,
same answers); a different answer for a key that is already stored is a conflict the user must
resolve, never a silent overwrite. Everything is validated before anything is written, and the
write itself is atomic per file (see `responses.write_run`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Required, TypedDict, Unpack, cast

import numpy as np
import pandas as pd

from ...core.errors import ItemscaleError
from ...core.files import LOADS_JSON_LIMITS, loads_json, open_input, sha256_file
from ...core.responses import (
    COLUMNS,
    IMPORT_MARKER,
    RESPONSES_FILE,
    ROW_KEY,
    SchemaError,
    duplicated_keys,
    mark_import_started,
    normalise_responses,
    read_run,
    run_lock,
    write_run,
)
from ...core.version import __version__
from ..items import Item
from ._config_ids import adopt_stored_ids
from ._items_file import add_items

#: Columns that must agree when a key is imported again; anything else (source, provenance)
#: may differ between two imports of the same answers.
COMPARED_COLUMNS: Final[tuple[str, ...]] = (
    "correct",
    "score",
    "status",
    "answer",
    "raw_text",
    "video_id",
    "task_kind",
    "config_label",
    "frames",
)


class ImportInputError(ItemscaleError, ValueError):
    """Bad input to an importer, named by file, line and column where they are known."""


class ImportConflictError(ImportInputError):
    """A row key already stored in the run with a different answer."""


_TRUNCATED: Final[str] = "; is the line truncated?"


def jsonl_values(path: Path) -> Iterator[tuple[int, object]]:
    """(1-based line, decoded value) for each non-blank line; a bad line names file and line
    (usually the last one of a log cut off mid-write, hence the hint)."""
    with open_input(path) as fh:
        for line, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8-sig" if line == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise ImportInputError(f"{path}:{line}: {not_utf8_message(exc)}") from None
            if not text.strip():
                continue
            try:
                value = loads_json(text)
            except json.JSONDecodeError as exc:
                hint = "" if exc.pos == 0 and exc.msg in LOADS_JSON_LIMITS else _TRUNCATED
                raise ImportInputError(f"{path}:{line}: not valid JSON ({exc.msg}){hint}") from exc
            yield line, value


def not_utf8_message(exc: UnicodeDecodeError) -> str:
    bad = exc.object[exc.start : exc.start + 4]
    return (
        f"not UTF-8 text (byte {bad!r} at offset {exc.start}); save the file as UTF-8 "
        "(e.g. `iconv -f latin1 -t utf-8`)"
    )


#: A JSON object read from a foreign file (a log line, a results.json, a table record): untrusted,
#: so every value is narrowed where it is read.
JsonObject = Mapping[str, object]


def json_object(value: object) -> JsonObject:
    """`value` if it is a JSON object, else an empty one: a section of a foreign file that is
    missing, null or not an object reads as absent (as `value or {}` did for a missing one)."""
    return value if isinstance(value, Mapping) else {}


class SourceDetails(TypedDict, total=False):
    """What an importer records of one input file besides its identity (`source_record`)."""

    rows: int
    task: str
    #: where `task` came from: `results.json` (the task it scores) or `file name`
    task_from: str
    dataset: str
    config_label: str
    config_id: str
    series: str
    results_json: SourceRecord | None
    # lmms-eval's results.json, as logged (foreign values, kept verbatim)
    model_args: object
    generation_kwargs: object
    gen_kwargs: object
    seeds: dict[str, object]
    lmms_eval_git_hash: object
    lmms_eval_version: object
    #: package -> version, as results.json states them (`transformers_version`, ...): the part
    #: of the software stack an import knows; the rest stays unknown
    package_versions: dict[str, str]
    resolved_cli_args: object
    reported: object
    model: object
    task_version: object
    task_hash: object
    prompt: PromptRecord | None


class SourceRecord(SourceDetails, total=False):
    """Provenance of one input file: absolute path, size and SHA-256, then its details."""

    path: Required[str]
    bytes: Required[int]
    sha256: Required[str]


class PromptRecord(TypedDict, total=False):
    """What an lmms-eval log says of the prompt (`itemscale compare` diffs it)."""

    pre_prompt: str
    post_prompt: str
    example_input: str
    example_doc_id: object


class ImportOptions(TypedDict, total=False):
    """The options an import was run with, as run.json records them (None ones left out)."""

    model: str | None
    benchmark: str | SourceRecord | None
    extractor_version: str | None
    configs: list[str] | None
    absent: str | None
    video_from_id: str | None
    rerun_of: str | None
    wide: bool | None
    id_column: str | None
    frames: Mapping[str, int] | None
    rename: Mapping[str, str] | None
    wide_values: str | None
    empty: str | None
    answer_key: SourceRecord | None
    series: str | None
    model_from_name: str | None


class ImportRecord(TypedDict):
    """One import as run.json's `imports` lists it."""

    importer: str
    tool: str
    tool_version: str
    time: str
    sources: list[SourceRecord]
    options: ImportOptions


def source_record(path: str | os.PathLike[str], **extra: Unpack[SourceDetails]) -> SourceRecord:
    """Provenance of one input file: absolute path, size and SHA-256 (plus importer details)."""
    p = Path(path)
    return {"path": str(p.resolve()), "bytes": p.stat().st_size, "sha256": sha256_file(p), **extra}


def import_record(
    importer: str, sources: list[SourceRecord], **options: Unpack[ImportOptions]
) -> ImportRecord:
    given = cast(ImportOptions, {k: v for k, v in options.items() if v is not None})
    return {
        "importer": importer,
        "tool": "itemscale",
        "tool_version": __version__,
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "sources": sources,
        "options": given,
    }


def missing_value(value: object) -> bool:
    """None, NaN or blank text: a cell a foreign file left empty."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def attributes_json(attrs: Mapping[str, object]) -> str | None:
    """Item attributes as the response table stores them: a JSON object of plain strings."""
    clean: list[tuple[str, str]] = []
    for key, value in attrs.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        text = str(value).strip()
        if text:
            clean.append((str(key), text))
    return _attributes_text(tuple(sorted(clean))) if clean else None


@lru_cache(maxsize=65536)
def _attributes_text(pairs: tuple[tuple[str, str], ...]) -> str:
    # Items share few distinct attribute sets; encoding each once matters at 10^5 rows.
    return json.dumps(dict(pairs), sort_keys=True)


def rows_frame_from(df: pd.DataFrame, *, where_: str, check_keys: bool = True) -> pd.DataFrame:
    """Validate a frame of parsed rows as a response table (missing columns become null)."""
    try:
        return normalise_responses(df, where=where_, check_keys=check_keys)
    except SchemaError as exc:
        raise ImportInputError(str(exc)) from exc


def rows_frame(rows: Iterable[Mapping[str, object]], *, where_: str) -> pd.DataFrame:
    """Build and validate a response table from row dicts (missing columns become null)."""
    df = pd.DataFrame(list(rows))
    if df.empty:
        df = pd.DataFrame(columns=list(COLUMNS))
    return rows_frame_from(df, where_=where_)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _mismatch(new: pd.Series, old: pd.Series) -> np.ndarray:
    """Element-wise: the values differ (two nulls are equal; a null and a value are not)."""
    new_na = new.isna().to_numpy()
    old_na = old.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(new) and pd.api.types.is_numeric_dtype(old):
        equal = new.to_numpy(dtype=float, na_value=np.nan) == old.to_numpy(
            dtype=float, na_value=np.nan
        )
    else:
        a = new.astype(object).to_numpy(copy=True)
        b = old.astype(object).to_numpy(copy=True)
        a[new_na] = ""
        b[old_na] = ""
        equal = np.fromiter((x == y for x, y in zip(a, b, strict=True)), bool, len(a))
    both_na = new_na & old_na
    return np.asarray(~(both_na | (equal & ~new_na & ~old_na)), dtype=bool)


#: What no id may hold: C0 and C1 control characters (NUL, newline, ESC, ...), and the
#: invisible and bidirectional-text formatting characters (U+200B-U+200F, U+202A-U+202E,
#: U+2066-U+2069, U+FEFF, the line and paragraph separators), which make one id look like
#: another or reverse the text shown around it in a report.
ID_FORBIDDEN: Final[re.Pattern[str]] = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]"
)
#: The columns that hold ids or labels (shown in reports, joined on by every measure).
ID_COLUMNS: Final[tuple[str, ...]] = (
    "model",
    "item_id",
    "video_id",
    "config_id",
    "config_label",
    "series",
)


def forbidden_in_id(text: str) -> str | None:
    """How the first character `ID_FORBIDDEN` finds in `text` is named (`U+202E`), or None."""
    found = ID_FORBIDDEN.search(text)
    return None if found is None else f"U+{ord(found.group(0)):04X}"


def _id_values(df: pd.DataFrame) -> Iterator[tuple[str, pd.Series]]:
    for column in ID_COLUMNS:
        if column in df.columns:
            yield column, df[column].dropna().astype(str)


def _check_ids(df: pd.DataFrame, *, where_: str) -> None:
    """Refuse a control or bidirectional-text character in any id, whichever importer read it
    (one rule for all: docs/import.md)."""
    for column, values in _id_values(df):
        bad = values.str.contains(ID_FORBIDDEN.pattern, regex=True)
        if not bad.any():
            continue
        position = bad.to_numpy().nonzero()[0][0]
        value = values.iloc[position]
        source = df["source"].iloc[position] if "source" in df.columns else None
        origin = f"{source}: " if isinstance(source, str) and source else f"{where_}: "
        raise ImportInputError(
            f"{origin}column {column!r}: {value[:40]!r} contains {forbidden_in_id(value)}, a "
            "control or bidirectional-text character; ids may not hold them (they hide in "
            f"reports or reverse the text around them); {int(bad.sum())} value(s) like it"
        )


def _check_normal_forms(df: pd.DataFrame, *, where_: str) -> None:
    """Refuse two ids of one column that differ only in Unicode normalisation (`io\u0301` and
    `i\u00f3` both read "ió"): they would import as two items that every report shows as one
    name. Ids are kept as written, never normalised behind the user's back (a benchmark file,
    a selection file or another run may hold the same form): the user writes them one way.
    Only the distinct values are normalised, and ASCII ones (already NFC) not at all."""
    for column, values in _id_values(df):
        seen: dict[str, str] = {}
        for value in values.unique():
            key = value if value.isascii() else unicodedata.normalize("NFC", value)
            other = seen.setdefault(key, value)
            if other == value:
                continue
            sources = []
            if "source" in df.columns:
                for v in (other, value):
                    source = df["source"][values.index[values == v][0]]
                    sources.append(str(source) if isinstance(source, str) else where_)
            said = f" (from {sources[0]} and {sources[1]})" if sources else ""
            raise ImportInputError(
                f"{where_}: column {column!r}: {other!a} and {value!a} differ only in Unicode "
                f"normalisation (both read {key!r}){said}; they would count as two ids shown "
                "as one: write the id one way (NFC) in every file"
            )


def _first_with_several(df: pd.DataFrame, keys: list[str], column: str) -> tuple[Any, ...] | None:
    """The first group of `keys` (its key values) holding several `column` values, or None."""
    counts = df.groupby(keys, sort=False)[column].nunique()
    bad = counts[counts > 1]
    return None if bad.empty else bad.index[0]


def _check_item_videos(df: pd.DataFrame, *, where_: str) -> None:
    bad = _first_with_several(df, ["model", "item_id"], "video_id")
    if bad is not None:
        model, item = bad
        seen = sorted(df.loc[(df["model"] == model) & (df["item_id"] == item), "video_id"].unique())
        raise ImportInputError(
            f"{where_}: item {item!r} of model {model!r} has several video ids {seen}; "
            "an item belongs to one video (give --benchmark to map ids consistently)"
        )


def _check_item_kinds(df: pd.DataFrame, *, where_: str) -> None:
    """One item is multiple choice (`correct`) or continuous (`score`), across every import."""
    answered = df[df["status"].isin(["ok", "noanswer"])]
    bad = _first_with_several(answered, ["model", "item_id"], "task_kind")
    if bad is not None:
        model, item = bad
        rows = answered[(answered["model"] == model) & (answered["item_id"] == item)]
        seen = {str(k): str(s) for k, s in zip(rows["task_kind"], rows["source"], strict=True)}
        raise ImportInputError(
            f"{where_}: item {item!r} of model {model!r} would be both "
            + " and ".join(f"{k} (from {s})" for k, s in sorted(seen.items()))
            + "; an item is multiple choice ('correct') or continuous ('score'), not both"
        )


def _check_configs(df: pd.DataFrame, *, where_: str) -> None:
    """One config id has one label, one frame count and one axis position per (model, series)."""
    cols = ["model", "series", "config_id"]
    for col in ("config_label", "frames", "axis_order"):
        bad = _first_with_several(df, cols, col)
        if bad is not None:
            model, series, cid = bad
            vals = sorted(
                map(str, df.loc[(df["model"] == model) & (df["config_id"] == cid), col].unique())
            )
            raise ImportInputError(
                f"{where_}: configuration {cid} of model {model!r} (series {series!r}) has "
                f"different '{col}' values {vals}"
            )
    bad = _first_with_several(df, ["model", "series", "config_label"], "config_id")
    if bad is not None:
        model, series, label = bad
        raise ImportInputError(
            f"{where_}: label {label!r} names two different configurations of model {model!r} "
            f"(series {series!r}); give each configuration its own label"
        )


def _with_import(provenance: Mapping[str, object], record: ImportRecord) -> dict[str, object]:
    """run.json's provenance with this import's record appended to `imports`."""
    # run.json is read back from disk: `imports` is whatever list (iterable) it holds
    imports: list[object] = list(cast(Iterable[object], provenance.get("imports", [])))
    imports.append(dict(record))
    out = {k: v for k, v in provenance.items() if k != "schema_version"}
    out["imports"] = imports
    return out


class MergeResult:
    """What a merge did: the merged table and how many new rows were added or already there."""

    def __init__(self, table: pd.DataFrame, added: int, unchanged: int, written: bool) -> None:
        self.table = table
        self.added = added
        self.unchanged = unchanged
        self.written = written


def merge_into_run(
    run_dir: str | os.PathLike[str],
    new_rows: pd.DataFrame,
    record: ImportRecord,
    *,
    dry_run: bool = False,
    items: Sequence[Item] = (),
) -> MergeResult:
    """Add `new_rows` to the run in `run_dir` (created if absent) and record the import.

    Keys already stored with the same answers are skipped (re-import is idempotent: nothing is
    rewritten when nothing is new); a stored key with a different answer raises
    `ImportConflictError` and nothing is written. `items` (the questions an import's files
    asked) are added, under the same lock, to the run's items.jsonl where it lacks them.
    """
    run_path = Path(run_dir)
    if run_path.exists() and not run_path.is_dir():
        raise ImportInputError(f"{run_path}: exists and is not a directory")
    if dry_run:
        return _merge(run_path, new_rows, record, dry_run=True)
    # read-merge-write under the run's lock: a concurrent import waits instead of being lost
    created = not run_path.exists()
    try:
        with run_lock(run_path, what="import"):
            first = not (run_path / RESPONSES_FILE).exists()
            if first:  # killed before the table exists: every command says so (the marker)
                mark_import_started(run_path)
            merged = _merge(run_path, new_rows, record, dry_run=False)
            add_items(run_path, items)
            if first:
                (run_path / IMPORT_MARKER).unlink(missing_ok=True)
            return merged
    except BaseException:
        if created and not (run_path / RESPONSES_FILE).exists():
            _remove_empty_run(run_path)  # a refused first import leaves no folder behind
        raise


def _remove_empty_run(run_path: Path) -> None:
    from ...core.responses import LOCK_FILE

    with contextlib.suppress(OSError):  # something else is in it now: leave it
        (run_path / IMPORT_MARKER).unlink(missing_ok=True)
        (run_path / LOCK_FILE).unlink(missing_ok=True)
        run_path.rmdir()


def _merge(
    run_path: Path, new_rows: pd.DataFrame, record: ImportRecord, *, dry_run: bool
) -> MergeResult:
    key = list(ROW_KEY)
    dup = duplicated_keys(new_rows, key, keep=False)
    if dup.any():
        clash = new_rows.loc[dup].sort_values(key).head(2)
        ident = ", ".join(f"{k}={_plain(clash.iloc[0][k])!r}" for k in key)
        raise ImportInputError(
            f"({ident}) is imported twice: from {clash.iloc[0]['source']} and "
            f"{clash.iloc[1]['source']}"
        )
    new = rows_frame_from(new_rows, where_="imported rows")
    _check_ids(new, where_=str(run_path))
    _check_normal_forms(new, where_=str(run_path))
    provenance: Mapping[str, object] = {}
    if (run_path / RESPONSES_FILE).exists():
        try:
            existing, provenance = read_run(run_path, superseded=True)  # every row kept
        except (SchemaError, OSError, ValueError) as exc:
            raise ImportInputError(f"{run_path}: cannot read the existing run ({exc})") from exc
    else:
        existing = normalise_responses(pd.DataFrame(columns=list(COLUMNS)), where=str(run_path))

    new = adopt_stored_ids(new, existing)  # a run stored before a series was in the id
    if existing.empty:  # a first import: nothing to compare with, no copy of the table
        _check_item_videos(new, where_=str(run_path))
        _check_item_kinds(new, where_=str(run_path))
        _check_configs(new, where_=str(run_path))
        if len(new) and not dry_run:
            write_run(run_path, new, _with_import(provenance, record))
        return MergeResult(new, added=len(new), unchanged=0, written=len(new) > 0 and not dry_run)
    joined = new.merge(existing, on=key, how="left", suffixes=("", "__old"), indicator=True)
    present = (joined["_merge"] == "both").to_numpy()
    differs = np.zeros(len(joined), dtype=bool)
    first_col = np.full(len(joined), "", dtype=object)
    for col in COMPARED_COLUMNS:
        mismatch = _mismatch(joined[col], joined[f"{col}__old"]) & present & ~differs
        first_col[mismatch] = col
        differs |= mismatch
    conflicts: list[str] = []
    for pos in np.flatnonzero(differs)[:3]:
        row = joined.iloc[int(pos)]
        col = str(first_col[pos])
        ident = ", ".join(f"{k}={_plain(row[k])!r}" for k in key)
        conflicts.append(
            f"({ident}): '{col}' is {_plain(row[f'{col}__old'])!r} in the run "
            f"(from {row['source__old']}) but {_plain(row[col])!r} in {row['source']}"
        )
    n_conflicts = int(differs.sum())
    if n_conflicts:
        more = f" (and {n_conflicts - 3} more)" if n_conflicts > 3 else ""
        raise ImportConflictError(
            f"{run_path}: {n_conflicts} row(s) conflict with answers already in the run; "
            f"nothing was written: " + "; ".join(conflicts[:3]) + more
        )
    fresh = new.loc[~present]
    merged = pd.concat([existing, fresh], ignore_index=True) if len(existing) else fresh.copy()
    merged = rows_frame_from(merged, where_=str(run_path / RESPONSES_FILE))
    _check_normal_forms(merged, where_=str(run_path))
    _check_item_videos(merged, where_=str(run_path))
    _check_item_kinds(merged, where_=str(run_path))
    _check_configs(merged, where_=str(run_path))
    written = False
    if len(fresh) and not dry_run:
        write_run(run_path, merged, _with_import(provenance, record))
        written = True
    return MergeResult(merged, added=len(fresh), unchanged=int(present.sum()), written=written)

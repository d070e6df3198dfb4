"""Reading and writing the response table and run directories.

A run directory is `responses.parquet` (the table) plus `run.json` (provenance). Writes go to a
temporary file that is renamed into place, so a crash or a rejected input never leaves a
half-written table behind.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import ItemscaleError
from ..files import atomic_path, atomic_text_file, read_json, sha256_file
from ..files import replace_dir as replace_dir  # its old private path keeps importing
from ._safety import redact, redact_value, redaction_trigger
from ._schema import (
    ANSWERED_STATUSES,
    COLUMNS,
    REQUIRED_COLUMNS,
    RESPONSE_SCHEMA,
    ROW_KEY,
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    Status,
    option_margin,
)
from ._stack import repeated_sessions

RESPONSES_FILE = "responses.parquet"
RUN_FILE = "run.json"
RUN_SCHEMA_VERSION = 1


class SchemaError(ItemscaleError, ValueError):
    """A response table that does not follow the schema, named with its file and column."""


# Migrations from older table versions: version N -> N+1. Version 0 is the pre-release layout
# that had no `series` column and called the text `prediction`.
def _migrate_0_to_1(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    if "prediction" in df.columns and "raw_text" not in df.columns:
        df = df.rename(columns={"prediction": "raw_text"})
    if "series" not in df.columns:
        df["series"] = "default"
    return df


def _migrate_1_to_2(df: pd.DataFrame) -> pd.DataFrame:
    """A version-1 table that kept option probabilities has its `margin`."""
    df = df.copy()
    if "margin" not in df.columns:
        probs = df["option_probs"] if "option_probs" in df.columns else pd.Series([None] * len(df))
        df["margin"] = [
            option_margin(json.loads(p)) if isinstance(p, str) and p else None for p in probs
        ]
    return df


#: A version that only added nullable columns has no step (3 `scoring_rule`, 4 `session_id`):
#: `normalise_responses` fills them with null. A step is needed only when old rows can be
#: computed from what they kept, as `margin` can.
MIGRATIONS: dict[int, Callable[[pd.DataFrame], pd.DataFrame]] = {
    0: _migrate_0_to_1,
    1: _migrate_1_to_2,
}


def empty_responses() -> pd.DataFrame:
    frame: pd.DataFrame = RESPONSE_SCHEMA.empty_table().to_pandas()
    return frame


def duplicated_keys(
    df: pd.DataFrame, columns: list[str], *, keep: Literal["first", False] = "first"
) -> pd.Series:
    """`df.duplicated(columns, keep=keep)` through one 64-bit number per row (8 MB on 10^6 rows,
    not a tuple per row); rows whose number repeats are compared exactly."""
    if df.empty:
        return pd.Series(np.zeros(0, dtype=bool), index=df.index)
    hashed = _row_codes(df, columns)
    candidates = hashed.duplicated(keep=False).to_numpy()
    out = np.zeros(len(df), dtype=bool)
    if candidates.any():
        sub = df.loc[candidates, columns]
        out[np.flatnonzero(candidates)] = sub.duplicated(keep=keep).to_numpy()
    return pd.Series(out, index=df.index)


def _row_codes(df: pd.DataFrame, columns: list[str]) -> pd.Series:
    """The columns' factorized codes combined one column at a time (the hash of the copied
    columns peaked 300 MB above a 2 x 10^6-row table); exact while the product of the distinct
    counts fits 63 bits, a hash past that."""
    combined = np.zeros(len(df), dtype=np.uint64)
    span = 1
    for name in columns:
        codes, uniques = pd.factorize(df[name], use_na_sentinel=False)
        width = max(len(uniques), 1)
        if span * width < 2**63:
            combined = combined * np.uint64(width) + codes.astype(np.uint64)
            span *= width
        else:  # mix the codes in (a hash: collisions are checked exactly afterwards)
            mixed = pd.util.hash_array(codes.astype(np.int64))
            combined = (combined * np.uint64(0x9E3779B97F4A7C15)) ^ mixed
            span = 2**63
    return pd.Series(combined, index=df.index)


def _in_schema_types(df: pd.DataFrame) -> bool:
    """Exactly the schema's columns, in order, each in the dtype Arrow's conversion gives it."""
    if list(df.columns) != list(COLUMNS) or not isinstance(df.index, pd.RangeIndex):
        return False
    for field in RESPONSE_SCHEMA:
        dtype = df[field.name].dtype
        if pa.types.is_string(field.type):
            ok = (
                pd.api.types.is_string_dtype(dtype) and dtype != np.dtype(object)
            ) or _sorted_categories(dtype)
        elif pa.types.is_integer(field.type):
            ok = dtype in (np.dtype("int64"), np.dtype("float64"))
        elif pa.types.is_floating(field.type):
            ok = dtype == np.dtype("float64")
        else:  # a list column: None or a numpy array per cell, as Arrow gives them
            column = df[field.name]
            ok = dtype == np.dtype(object) and all(
                isinstance(v, np.ndarray) for v in column[column.notna()]
            )
        if not ok:
            return False
    return True


def _sorted_categories(dtype: Any) -> bool:
    """A string column as an unordered categorical with sorted string categories
    (`read_responses(..., categories=True)`): it sorts and compares as the strings."""
    if not isinstance(dtype, pd.CategoricalDtype) or dtype.ordered:
        return False
    cats = dtype.categories
    return bool(pd.api.types.is_string_dtype(cats.dtype) and cats.is_monotonic_increasing)


def _plain_strings(df: pd.DataFrame) -> pd.DataFrame:
    cats = {
        n: df[n].astype("str") for n in df.columns if isinstance(df[n].dtype, pd.CategoricalDtype)
    }
    return df.assign(**cats) if cats else df


def _to_schema_types(df: pd.DataFrame, where: str) -> pd.DataFrame:
    columns: dict[str, pd.Series] = {}
    n = len(df)
    for field in RESPONSE_SCHEMA:
        source = df[field.name] if field.name in df.columns else pd.Series([None] * n, dtype=object)
        try:
            array = pa.array(source, type=field.type, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            raise SchemaError(f"{where}: column '{field.name}': {exc}") from exc
        columns[field.name] = array.to_pandas()
    return pd.DataFrame(columns)


def normalise_responses(
    df: pd.DataFrame, *, where: str = "table", check_keys: bool = True
) -> pd.DataFrame:
    """Return `df` with every schema column present, in order, with the schema's types.

    Missing nullable columns are filled with nulls; a missing required column, an unknown
    status or a duplicated row key raises `SchemaError` naming `where` and the column.
    """
    missing = sorted(REQUIRED_COLUMNS - set(df.columns))
    if missing:
        raise SchemaError(f"{where}: missing required column(s) {', '.join(missing)}")
    extra = [c for c in df.columns if c not in COLUMNS]
    if extra:
        raise SchemaError(f"{where}: unknown column(s) {', '.join(sorted(extra))}")
    bad_status = set(df["status"].dropna().unique()) - {s.value for s in Status}
    if bad_status:
        raise SchemaError(
            f"{where}: column 'status' has unknown value(s) {sorted(bad_status)}; "
            f"allowed: {[s.value for s in Status]}"
        )
    for name in REQUIRED_COLUMNS:
        if df[name].isna().any():
            row = int(np.flatnonzero(df[name].isna().to_numpy())[0])
            raise SchemaError(f"{where}: column '{name}' is empty in row {row}")
    # the usual case between stages: no copy (else column by column, never held three times over)
    result = df.copy(deep=False) if _in_schema_types(df) else _to_schema_types(df, where)
    dup = (
        duplicated_keys(result, list(ROW_KEY), keep=False)
        if check_keys
        else pd.Series(False, index=result.index)
    )
    if dup.any():
        first = result.loc[dup, list(ROW_KEY)].iloc[0].to_dict()
        raise SchemaError(f"{where}: duplicate row key {first} ({int(dup.sum())} rows)")
    # status (a string look-up, 0.13 s at 5.5 x 10^6 rows) read only when some row holds both
    both = result["correct"].notna() & result["score"].notna()
    if both.any():
        both &= result["status"].isin(ANSWERED_STATUSES)
    if both.any():
        row = int(np.flatnonzero(both.to_numpy())[0])
        raise SchemaError(f"{where}: row {row} has both 'correct' and 'score'")
    return result


def write_responses(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Validate and atomically write the table with its schema version in the metadata."""
    path = Path(path)
    frame = redact_free_text(_plain_strings(normalise_responses(df, where=str(path))))
    table = pa.Table.from_pandas(frame, schema=RESPONSE_SCHEMA, preserve_index=False)
    write_parquet_atomic(
        table,
        path,
        {SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode()},
        temp_prefix=".responses-",
    )


#: Columns of text a model, a server or another tool wrote: redacted whole on every write.
FREE_TEXT_COLUMNS: Final[tuple[str, ...]] = (
    "error",
    "raw_text",
    "answer",
    "reference",
    "attributes",
)


def redact_free_text(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with `redact` applied to the free-text columns: one C++ scan per column for
    anything `redact` could change, then `redact` on the distinct matches only (10^6 replies: 0.9
    s, not 8)."""
    import pyarrow.compute as pc

    trigger = redaction_trigger()
    changes: dict[str, pd.Series] = {}
    for name in FREE_TEXT_COLUMNS:
        column = frame[name]
        present = column.dropna()
        if present.empty:
            continue
        values = pa.array(present.to_numpy(dtype=object), type=pa.string())
        hit = pc.match_substring_regex(values, trigger).to_numpy(zero_copy_only=False)
        if not hit.any():
            continue
        uniques = pd.unique(present.to_numpy(dtype=object)[hit])
        cleaned = {u: redact(u) for u in uniques if isinstance(u, str)}
        dirty = {u: c for u, c in cleaned.items() if c != u}
        if dirty:
            changes[name] = column.map(lambda v, d=dirty: d.get(v, v), na_action="ignore").astype(
                column.dtype
            )
    return frame.assign(**changes) if changes else frame


def write_parquet_atomic(
    table: pa.Table,
    path: str | os.PathLike[str],
    metadata: Mapping[bytes, bytes],
    *,
    temp_prefix: str | None = None,
) -> None:
    """Write a Parquet file whole or not at all (a temporary file beside it, then a rename), with
    `metadata` in place of pandas' own; the temporary name is `temp_prefix` (default `.{stem}-`)."""
    path = Path(path)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta.update(metadata)
    table = table.replace_schema_metadata(meta)
    prefix = temp_prefix if temp_prefix is not None else f".{path.stem}-"
    with atomic_path(path, prefix=prefix, suffix=".parquet") as tmp:
        pq.write_table(table, tmp)


#: Written into a run folder by an import before its first table, removed once it is written: a
#: folder holding it was left by a killed import.
IMPORT_MARKER: Final[str] = ".import-incomplete"
#: The sweep's store (the `store` package names it; the response layer sits below it).
_STORE_FILE: Final[str] = "store.sqlite"


class IncompleteRunError(ItemscaleError, FileNotFoundError):
    """A run folder without its response table because the command writing it was stopped
    (an import killed before its first write, a sweep not yet exported); says which."""


def mark_import_started(run_dir: Path) -> None:
    with atomic_text_file(run_dir / IMPORT_MARKER) as fh:
        fh.write(
            f"pid {os.getpid()}, started {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n"
        )


def _missing_table(path: Path) -> FileNotFoundError:
    folder = path.parent
    if (folder / IMPORT_MARKER).is_file():
        try:
            started = (folder / IMPORT_MARKER).read_text(errors="replace").strip()[:80]
        except OSError:
            started = "unknown"
        return IncompleteRunError(
            f"{folder}: an import into this folder was interrupted before it wrote the response "
            f"table ({started}); nothing was stored: run the import again"
        )
    if (folder / _STORE_FILE).is_file():
        return IncompleteRunError(
            f"{folder}: the sweep writing this run has not exported its response table yet (it "
            "was interrupted, or is still running); run the same `itemscale sweep` again to "
            "resume from its store and export the table"
        )
    try:
        names = {p.name for p in folder.iterdir()} if folder.is_dir() else None
    except OSError:
        names = None
    if names == {"run.lock"}:
        return IncompleteRunError(
            f"{folder}: holds only run.lock: an import or sweep into it was interrupted before "
            "it wrote anything; run it again"
        )
    return FileNotFoundError(f"{path}: no response table here")


def read_responses(
    path: str | os.PathLike[str], *, skip: Collection[str] = (), categories: bool = False
) -> pd.DataFrame:
    """Read a response table, refusing newer schema versions and migrating older ones.

    `skip`: nullable columns not read, left empty (`analyze` never reads the replies).
    `categories`: string columns as categoricals with sorted categories (2 x 10^6 rows: ~300 MB,
    not ~860).
    """
    path = Path(path)
    if not path.exists():
        raise _missing_table(path)
    try:
        table = _read_table(path, skip, categories)
    except (pa.ArrowInvalid, OSError) as exc:
        raise SchemaError(f"{path}: not a readable Parquet file ({exc})") from exc
    meta = table.schema.metadata or {}
    raw = meta.get(SCHEMA_VERSION_KEY)
    if raw is None:
        raise SchemaError(f"{path}: no '{SCHEMA_VERSION_KEY.decode()}' in the Parquet metadata")
    version = int(raw)
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{path}: written with response-table schema version {version}, this itemscale "
            f"reads up to {SCHEMA_VERSION}; upgrade itemscale to read it"
        )
    df = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
    if categories:
        _sort_categories(df)
    while version < SCHEMA_VERSION:
        if version in MIGRATIONS:
            df = MIGRATIONS[version](df)
        version += 1
    return normalise_responses(df, where=str(path))


def read_response_columns(path: str | os.PathLike[str], columns: Collection[str]) -> pd.DataFrame:
    """Only `columns` of a response table, in the schema's order, not validated again (the report
    page needs a few; each other column would take 16 MB at 2 x 10^6 rows). An older table is
    read whole and migrated."""
    path = Path(path)
    unknown = sorted(set(columns) - set(COLUMNS))
    if unknown:
        raise ValueError(f"not response-table columns: {', '.join(unknown)}")
    wanted = [c for c in COLUMNS if c in set(columns)]
    if not path.exists():
        raise _missing_table(path)
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise SchemaError(f"{path}: not a readable Parquet file ({exc})") from exc
    raw = (schema.metadata or {}).get(SCHEMA_VERSION_KEY)
    if raw is None or int(raw) != SCHEMA_VERSION or not set(wanted) <= set(schema.names):
        return read_responses(path)[wanted]  # refuses, or migrates, as it does
    table = pq.read_table(path, columns=wanted)
    df: pd.DataFrame = table.to_pandas(self_destruct=True, split_blocks=True)
    return df


def write_json_atomic(path: str | os.PathLike[str], payload: Any) -> None:
    """Write JSON atomically; every string goes through `redact` first (no secret is stored)."""
    with atomic_text_file(path) as fh:
        json.dump(redact_value(payload), fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def _read_table(path: Path, skip: Collection[str], categories: bool = False) -> pa.Table:
    if not skip and not categories:
        return pq.read_table(path)
    schema = pq.read_schema(path)
    dropped = [n for n in schema.names if n in skip and n not in REQUIRED_COLUMNS]
    strings = [
        f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]
    table = pq.read_table(
        path,
        columns=[n for n in schema.names if n not in dropped],
        read_dictionary=[n for n in strings if n not in dropped] if categories else None,
    )
    for name in dropped:
        field = schema.field(name)
        position = schema.get_field_index(name)
        table = table.add_column(position, field, pa.nulls(table.num_rows, field.type))
    return table.replace_schema_metadata(schema.metadata)


def _sort_categories(df: pd.DataFrame) -> None:
    """Arrow gives categories in the order first seen; sorted, codes order as the strings do."""
    for name in df.columns:
        column = df[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            cats = column.cat.categories
            if not cats.is_monotonic_increasing:
                df[name] = column.cat.reorder_categories(sorted(cats))


#: Columns no measure reads, most of a large table's memory: `read_run(..., slim=True)` leaves
#: them empty.
UNUSED_BY_ANALYSIS: Final[frozenset[str]] = frozenset(
    {"raw_text", "source", "cell_id", "option_probs", "frame_timestamps", "reference"}
)


def read_run(
    run_dir: str | os.PathLike[str], *, slim: bool = False, superseded: bool = False
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Read a run directory: (response table, provenance). `slim`: without `UNUSED_BY_ANALYSIS`
    and with string columns as sorted categoricals, for `analyze` on a large run.

    The cells of a selection configuration whose file changed since (run.json
    `sweep.superseded_selections`) are left out unless `superseded`: two configurations under one
    label would be measured as two budgets.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory")
    df = read_responses(
        run_dir / RESPONSES_FILE, skip=UNUSED_BY_ANALYSIS if slim else (), categories=slim
    )
    if slim:
        df = _with_repeat_texts(df, run_dir / RESPONSES_FILE)
    provenance = read_provenance(run_dir)
    gone = superseded_configs(provenance)
    if gone and not superseded:
        keep = ~df["config_id"].astype(str).isin(list(gone))
        df = df.loc[keep].reset_index(drop=True)
        if slim:  # the left-out labels are no category of the analysis
            df = df.assign(
                **{
                    c: df[c].cat.remove_unused_categories()
                    for c in ("config_id", "config_label")
                    if isinstance(df[c].dtype, pd.CategoricalDtype)
                }
            )
    return df, provenance


def _with_repeat_texts(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Put back the raw outputs the rerun floor compares (open-ended rows of cells with a repeat
    or a rerun), reading only those rows; nothing is read when there are none."""
    again = df["repeat"].to_numpy() != 0
    if not again.any():  # the common case, decided on the integer column alone
        return df
    open_ended = (df["task_kind"].astype(str) != "mcqa").to_numpy()
    if not (again & open_ended).any():
        return df
    keys = ["model", "item_id", "config_id"]
    cells = df.loc[again & open_ended, keys].astype(str).drop_duplicates()
    narrow = pq.read_table(
        path, columns=[*keys, "repeat", "raw_text"], filters=[("task_kind", "!=", "mcqa")]
    ).to_pandas()
    narrow = narrow.merge(cells, on=keys, how="inner")
    rows = df.loc[open_ended, keys].astype(str).assign(repeat=df.loc[open_ended, "repeat"])
    placed = rows.reset_index().merge(narrow, on=[*keys, "repeat"], how="inner")
    df["raw_text"] = df["raw_text"].astype(object)
    df.loc[placed["index"].to_numpy(), "raw_text"] = placed["raw_text"].to_numpy(dtype=object)
    return df


def superseded_configs(provenance: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """run.json's `sweep.superseded_selections` (config id -> what replaced it), {} when none."""
    sweep = provenance.get("sweep")
    found = sweep.get("superseded_selections") if isinstance(sweep, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): dict(v) for k, v in found.items() if isinstance(v, dict)}


def read_provenance(run_dir: str | os.PathLike[str]) -> dict[str, object]:
    """RUN_DIR/run.json ({} when there is none); a damaged one is a `SchemaError`, met by every
    writer of the run folder before it writes, so earlier provenance is never replaced."""
    run_file = Path(run_dir) / RUN_FILE
    if not run_file.exists():
        return {}
    damaged = (
        "the run's provenance is damaged (responses.parquet is intact: restore run.json from "
        "a copy or the run's artifact/run.json; nothing was written)"
    )
    try:
        provenance = read_json(run_file)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaError(f"{run_file}: not valid JSON ({exc}); {damaged}") from exc
    except ValueError as exc:  # the located JSON errors of `read_json` (too deep, too long)
        raise SchemaError(f"{exc}; {damaged}") from exc
    if not isinstance(provenance, dict):
        raise SchemaError(
            f"{run_file}: expected a JSON object, got {type(provenance).__name__}; {damaged}"
        )
    try:
        version = int(provenance.get("schema_version", RUN_SCHEMA_VERSION))
    except (TypeError, ValueError):
        raise SchemaError(f"{run_file}: key 'schema_version' is not a number; {damaged}") from None
    if version > RUN_SCHEMA_VERSION:
        raise SchemaError(
            f"{run_file}: run.json schema version {version} is newer than this itemscale "
            f"reads ({RUN_SCHEMA_VERSION})"
        )
    if (repeated := repeated_sessions(provenance)) is not None:
        raise SchemaError(f"{run_file}: {repeated}; {damaged}")
    return provenance


def write_run(
    run_dir: str | os.PathLike[str],
    responses: pd.DataFrame,
    provenance: Mapping[str, Any],
) -> None:
    """Write a run directory (table, then provenance, each atomically); a damaged run.json stops
    it first."""
    run_dir = Path(run_dir)
    read_provenance(run_dir)
    write_responses(responses, run_dir / RESPONSES_FILE)
    payload = {"schema_version": RUN_SCHEMA_VERSION, **dict(provenance)}
    write_json_atomic(run_dir / RUN_FILE, payload)


#: The key under which a file computed from a run's responses records the sha256 of the
#: responses.parquet it read, so `report` and `verify` can tell stale from edited.
RESPONSES_DIGEST_KEY: Final[str] = "responses_sha256"


def responses_digest(run_dir: str | os.PathLike[str]) -> str | None:
    """The sha256 of RUN_DIR/responses.parquet, or None when there is none."""
    path = Path(run_dir) / RESPONSES_FILE
    return sha256_file(path) if path.is_file() else None

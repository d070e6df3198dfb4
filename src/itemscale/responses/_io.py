"""Reading and writing the response table and run directories.

A run directory is `responses.parquet` (the table) plus `run.json` (provenance). Writes go to a
temporary file that is renamed into place, so a crash or a rejected input never leaves a
half-written table behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ._safety import redact, redact_value
from ._schema import (
    ANSWERED_STATUSES,
    COLUMNS,
    REQUIRED_COLUMNS,
    RESPONSE_SCHEMA,
    ROW_KEY,
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    Status,
)

RESPONSES_FILE = "responses.parquet"
RUN_FILE = "run.json"
RUN_SCHEMA_VERSION = 1


class SchemaError(ValueError):
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


MIGRATIONS: dict[int, Callable[[pd.DataFrame], pd.DataFrame]] = {0: _migrate_0_to_1}


def empty_responses() -> pd.DataFrame:
    frame: pd.DataFrame = RESPONSE_SCHEMA.empty_table().to_pandas()
    return frame


def normalise_responses(df: pd.DataFrame, *, where: str = "table") -> pd.DataFrame:
    """Return `df` with every schema column present, in order, with the schema's types.

    Missing nullable columns are filled with nulls; a missing required column, an unknown
    status or a duplicated row key raises `SchemaError` naming `where` and the column.
    """
    missing = sorted(REQUIRED_COLUMNS - set(df.columns))
    if missing:
        raise SchemaError(f"{where}: missing required column(s) {', '.join(missing)}")
    out = df.copy()
    for name in COLUMNS:
        if name not in out.columns:
            out[name] = None
    extra = [c for c in out.columns if c not in COLUMNS]
    out = out[list(COLUMNS)]
    if extra:
        raise SchemaError(f"{where}: unknown column(s) {', '.join(sorted(extra))}")
    bad_status = set(out["status"].dropna().unique()) - {s.value for s in Status}
    if bad_status:
        raise SchemaError(
            f"{where}: column 'status' has unknown value(s) {sorted(bad_status)}; "
            f"allowed: {[s.value for s in Status]}"
        )
    for name in REQUIRED_COLUMNS:
        if out[name].isna().any():
            row = int(np.flatnonzero(out[name].isna().to_numpy())[0])
            raise SchemaError(f"{where}: column '{name}' is empty in row {row}")
    try:
        table = pa.Table.from_pandas(out, schema=RESPONSE_SCHEMA, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"{where}: {exc}") from exc
    result: pd.DataFrame = table.to_pandas()
    dup = result.duplicated(list(ROW_KEY), keep=False)
    if dup.any():
        first = result.loc[dup, list(ROW_KEY)].iloc[0].to_dict()
        raise SchemaError(f"{where}: duplicate row key {first} ({int(dup.sum())} rows)")
    answered = result["status"].isin(ANSWERED_STATUSES)
    both = answered & result["correct"].notna() & result["score"].notna()
    if both.any():
        row = int(np.flatnonzero(both.to_numpy())[0])
        raise SchemaError(f"{where}: row {row} has both 'correct' and 'score'")
    return result


def write_responses(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Validate and atomically write the table with its schema version in the metadata."""
    path = Path(path)
    frame = normalise_responses(df, where=str(path))
    errors = frame["error"]
    if errors.notna().any():  # a server may echo a key in its error body: never store it
        frame = frame.assign(error=errors.map(lambda e: redact(e) if isinstance(e, str) else e))
    table = pa.Table.from_pandas(frame, schema=RESPONSE_SCHEMA, preserve_index=False)
    write_parquet_atomic(
        table,
        path,
        {SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode()},
        temp_prefix=".responses-",
    )


def write_parquet_atomic(
    table: pa.Table,
    path: str | os.PathLike[str],
    metadata: Mapping[bytes, bytes],
    *,
    temp_prefix: str | None = None,
) -> None:
    """Write a Parquet file whole or not at all (a temporary file beside it, then a rename).

    pandas' own schema metadata is dropped and `metadata` (the schema version and the like) is
    set in its place. The temporary file is named `temp_prefix` (default `.{stem}-`) plus a
    random part and `.parquet`.
    """
    path = Path(path)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta.update(metadata)
    table = table.replace_schema_metadata(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = temp_prefix if temp_prefix is not None else f".{path.stem}-"
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".parquet", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_responses(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a response table, refusing newer schema versions and migrating older ones."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no response table here")
    try:
        table = pq.read_table(path)
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
    df = table.to_pandas()
    while version < SCHEMA_VERSION:
        df = MIGRATIONS[version](df)
        version += 1
    return normalise_responses(df, where=str(path))


@contextmanager
def atomic_text_file(
    path: str | os.PathLike[str], *, newline: str | None = None
) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only once the block completes.

    It is written as `.{name}-<random>` beside `path` and renamed over it at the end; if the
    block raises, the temporary file is removed and `path` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_dir(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the fully written directory `tmp` in the place of `target`.

    Directories cannot be renamed over one another, so an existing `target` is first renamed
    aside (`.{name}-old-{pid}`) and removed once the new one is in place: a reader sees the old
    directory or the new one, never a half-written one.
    """
    tmp, target = Path(tmp), Path(target)
    if target.exists():
        old = target.with_name(f".{target.name}-old-{os.getpid()}")
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)


def write_json_atomic(path: str | os.PathLike[str], payload: Any) -> None:
    """Write JSON atomically; every string goes through `redact` first (no secret is stored)."""
    with atomic_text_file(path) as fh:
        json.dump(redact_value(payload), fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def read_run(run_dir: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a run directory: (response table, provenance)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not a run directory")
    df = read_responses(run_dir / RESPONSES_FILE)
    provenance: dict[str, Any] = {}
    run_file = run_dir / RUN_FILE
    if run_file.exists():
        provenance = json.loads(run_file.read_text(encoding="utf-8"))
        version = int(provenance.get("schema_version", RUN_SCHEMA_VERSION))
        if version > RUN_SCHEMA_VERSION:
            raise SchemaError(
                f"{run_file}: run.json schema version {version} is newer than this itemscale "
                f"reads ({RUN_SCHEMA_VERSION})"
            )
    return df, provenance


def write_run(
    run_dir: str | os.PathLike[str],
    responses: pd.DataFrame,
    provenance: Mapping[str, Any],
) -> None:
    """Write a run directory (table first, then provenance, each atomically)."""
    run_dir = Path(run_dir)
    write_responses(responses, run_dir / RESPONSES_FILE)
    payload = {"schema_version": RUN_SCHEMA_VERSION, **dict(provenance)}
    write_json_atomic(run_dir / RUN_FILE, payload)

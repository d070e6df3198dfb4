"""The run store: a SQLite file that makes a sweep resumable.

Every result is committed as it arrives (one transaction per batch), in WAL mode with
`synchronous=NORMAL`: a killed process loses at most the cells in flight, and readers never block
the writer. The response table is an export of this store, never the other way round.

The WAL is checkpointed past `WAL_CHECKPOINT_PAGES`, cut back to `WAL_LIMIT_BYTES` and truncated
to nothing on close (SQLite's defaults keep 4 MB, space a nearly full disk may not have). A full
disk is a `DiskFullError` naming the store (the batch rolled back, earlier commits intact).
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict

import pandas as pd

from ...core.errors import DiskFullError, ItemscaleError
from ...core.files import loads_json, no_space_message
from ...core.responses import (
    ANSWERED_STATUSES,
    COLUMNS,
    RESPONSE_COLUMNS,
    ROW_KEY,
    Status,
    empty_responses,
    normalise_responses,
    redact,
    redact_value,
    write_run,
)
from ._migrations import (
    MIGRATIONS,
    SCHEMA_VERSION,
    cells_layout,
    missing_migration_message,
    unmigrated_columns,
)

STORE_FILE = "store.sqlite"
#: WAL size (pages of 4 KiB) that triggers a checkpoint at commit (SQLite's default: 1000).
WAL_CHECKPOINT_PAGES = 128
#: What the WAL file is cut back to after a checkpoint (SQLite's `journal_size_limit`).
WAL_LIMIT_BYTES = 1 << 20


class StoreError(ItemscaleError, RuntimeError):
    """A store that cannot be opened or written (newer schema, not a store, corrupt)."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class CellRow:
    """One cell's result: the response-table row plus its cell key and backend spec, written from
    `RESPONSE_COLUMNS` by `python -m itemscale.core.responses._row_fields`."""

    # <row fields sequence=tuple defaults first=cell_id:str,spec_id:str>
    cell_id: str
    spec_id: str
    model: str
    item_id: str
    video_id: str
    task_kind: str
    series: str
    config_id: str
    config_label: str
    axis_order: float
    frames: int
    repeat: int
    status: str
    effective_frames: int | None = None
    pixels: int | None = None
    sampling: str | None = None
    pipeline: str | None = None
    error: str | None = None
    raw_text: str | None = None
    answer: str | None = None
    correct: float | None = None
    score: float | None = None
    token_f1: float | None = None
    rouge_l: float | None = None
    exact_match: float | None = None
    confidence: float | None = None
    option_probs: str | None = None
    margin: float | None = None
    scoring_rule: str | None = None
    reference: str | None = None
    visual_tokens: int | None = None
    frame_indices: tuple[int, ...] | None = None
    frame_timestamps: tuple[float, ...] | None = None
    latency_s: float | None = None
    attributes: str | None = None
    source: str | None = None
    session_id: int | None = None
    rerun_of: int | None = None
    # </row fields>

    def __post_init__(self) -> None:
        if self.status not in {s.value for s in Status}:
            raise StoreError(f"cell {self.cell_id}: unknown status {self.status!r}")

    @property
    def finished(self) -> bool:
        return self.status in ANSWERED_STATUSES


#: The columns `record` writes, in the table's order: `cells_layout()` but the two the store keeps
#: itself (`CellRow` has exactly these fields: tests/store/test_row_definition.py).
_ROW_FIELDS: tuple[str, ...] = tuple(
    name for name, _, _ in cells_layout() if name not in ("attempts", "finished_at")
)
_JSON_LIST_FIELDS = frozenset(c.name for c in RESPONSE_COLUMNS if c.kind.endswith("_list"))


def _to_sql(name: str, value: Any) -> Any:
    if name in _JSON_LIST_FIELDS:
        return None if value is None else json.dumps(list(value))
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def is_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL), whatever operation met it."""
    return isinstance(exc, sqlite3.DatabaseError) and (
        getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        or "database or disk is full" in str(exc)
    )


def full_store_error(path: Path, exc: BaseException) -> DiskFullError:
    return DiskFullError(
        no_space_message(
            path.parent,
            f"{path.name}: the last batch was rolled back, every cell committed before it is kept",
        )
    )


class StoredModel(TypedDict):
    """A backend spec the store holds (`RunStore.models()`): the model's name and the spec as
    `record_model` stored it."""

    name: str
    spec: dict[str, Any]


class RunStore:
    """An open run store. Use as a context manager, or call `close()`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
            self._db.execute("PRAGMA busy_timeout = 60000")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
            self._db.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
        except sqlite3.DatabaseError as exc:
            if is_full(exc):
                raise full_store_error(self.path, exc) from exc
            raise StoreError(f"{self.path}: not a readable run store ({exc})") from exc
        if str(mode).lower() != "wal":
            raise StoreError(f"{self.path}: the file system refused WAL mode (got {mode!r})")
        try:
            self._migrate()
            self._db.execute("SELECT count(*) FROM cells").fetchone()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if is_full(exc):
                raise full_store_error(self.path, exc) from exc
            raise StoreError(
                f"{self.path}: the run store is damaged ({exc}); nothing was changed. "
                "Keep a copy, then try `sqlite3 store.sqlite .recover` or sweep into a new "
                "run folder"
            ) from exc

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Checkpoint the WAL and cut it to zero bytes (without waiting long for a reader: the
        next open does it then), then close."""
        try:
            self._db.execute("PRAGMA busy_timeout = 1000")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.DatabaseError:
            pass  # a full disk or a busy reader: the WAL stays valid and is replayed on open
        self._db.close()

    def _autocommit(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        """One statement in its own transaction; a full disk is a `DiskFullError`."""
        try:
            return self._db.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            if is_full(exc):
                raise full_store_error(self.path, exc) from exc
            raise

    def _write(self, statements: Any) -> None:
        """SQLite's own rollback after a full disk leaves no transaction, so only an open one is
        rolled back."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            statements(self._db)
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if is_full(exc):
                raise full_store_error(self.path, exc) from exc
            raise

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a readable run store ({exc})") from exc
        try:
            version = self.schema_version
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: run store schema version {version} is newer than this "
                    f"itemscale writes ({SCHEMA_VERSION}); upgrade itemscale to resume it"
                )
            for number in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[number - 1].split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {number}")
            present = [r[1] for r in self._db.execute("PRAGMA table_info(cells)")]
            if missing := unmigrated_columns(present):
                raise StoreError(f"{self.path}: {missing_migration_message(missing)}")
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    # -- cells -----------------------------------------------------------------------------
    def record(self, rows: Iterable[CellRow]) -> int:
        """Insert or replace results in one transaction; returns how many were written. A stored
        cell is overwritten (a retried error) and its attempt count grows."""
        now = utc_now()
        batch = [(*(_to_sql(n, _clean(n, getattr(r, n))) for n in _ROW_FIELDS), now) for r in rows]
        if not batch:
            return 0
        columns = ", ".join((*_ROW_FIELDS, "finished_at"))
        marks = ", ".join("?" for _ in range(len(_ROW_FIELDS) + 1))
        updates = ", ".join(f"{n} = excluded.{n}" for n in (*_ROW_FIELDS[1:], "finished_at"))
        sql = (
            f"INSERT INTO cells ({columns}) VALUES ({marks}) ON CONFLICT(cell_id) DO UPDATE "
            f"SET {updates}, attempts = cells.attempts + 1"
        )
        self._write(lambda db: db.executemany(sql, batch))
        return len(batch)

    def done_row_keys(self, model: str, *, retry_errors: bool = False) -> set[tuple[str, str, int]]:
        """(item, configuration, repeat) of the model's finished cells under any spec: countable
        before the model loads and its spec is known."""
        query = "SELECT item_id, config_id, repeat FROM cells WHERE model = ?"
        params: list[Any] = [model]
        if retry_errors:
            query += f" AND status IN ({', '.join('?' for _ in ANSWERED_STATUSES)})"
            params += sorted(ANSWERED_STATUSES)
        return {(str(i), str(c), int(r)) for i, c, r in self._db.execute(query, params)}

    def done_cell_ids(self, *, retry_errors: bool = False) -> set[str]:
        """Cells a sweep must not run again: `ok`/`noanswer` cells, and failed cells unless
        `retry_errors` (a rerun stays reproducible and a broken video is not re-decoded every
        time)."""
        if retry_errors:
            marks = ", ".join("?" for _ in ANSWERED_STATUSES)
            cur = self._db.execute(
                f"SELECT cell_id FROM cells WHERE status IN ({marks})", sorted(ANSWERED_STATUSES)
            )
        else:
            cur = self._db.execute("SELECT cell_id FROM cells")
        return {row[0] for row in cur}

    def count(self, *, status: str | None = None) -> int:
        if status is None:
            return int(self._db.execute("SELECT COUNT(*) FROM cells").fetchone()[0])
        return int(
            self._db.execute("SELECT COUNT(*) FROM cells WHERE status = ?", (status,)).fetchone()[0]
        )

    def stored_configs(self, series_prefix: str = "") -> list[tuple[str, str, str, int]]:
        """(config id, series, label, cells) of every stored configuration whose series starts
        with `series_prefix` (a changed selection file leaves an earlier one under the same
        label)."""
        cur = self._db.execute(
            "SELECT config_id, series, config_label, COUNT(*) FROM cells "
            "WHERE substr(series, 1, ?) = ? GROUP BY config_id, series, config_label "
            "ORDER BY config_id",
            (len(series_prefix), series_prefix),
        )
        return [(str(c), str(s), str(label), int(n)) for c, s, label, n in cur]

    def cells_by_session(self) -> dict[int, int]:
        """Session id -> the stored cells it computed (cells stored before sessions were recorded
        name none)."""
        cur = self._db.execute(
            "SELECT session_id, COUNT(*) FROM cells WHERE session_id IS NOT NULL "
            "GROUP BY session_id"
        )
        return {int(s): int(n) for s, n in cur}

    def attempts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._db.execute("SELECT cell_id, attempts FROM cells")}

    def cells_frame(self) -> pd.DataFrame:
        """Every stored cell (all identities), with `spec_id`, `attempts`, `finished_at`."""
        cur = self._db.execute("SELECT * FROM cells ORDER BY finished_at, rowid")
        names = [d[0] for d in cur.description]
        records = [dict(zip(names, values, strict=True)) for values in cur.fetchall()]
        for record in records:
            for name in _JSON_LIST_FIELDS:
                value = record[name]
                if isinstance(value, str):
                    cell = f"cells, cell {record.get('cell_id')!r}"
                    record[name] = self._json_cell(value, cell, name, want=list)
                else:
                    record[name] = None
        frame = pd.DataFrame.from_records(records, columns=names)
        return frame

    def _json_cell(self, value: str, row: str, column: str, *, want: type) -> Any:
        """A JSON value stored in a column, or a `StoreError` naming the table, row and column."""
        try:
            parsed = loads_json(value)
        except ValueError as exc:
            reason = getattr(exc, "msg", None) or str(exc)
            raise StoreError(
                f"{self.path}: table {row}, column {column!r}: not valid JSON ({reason}: "
                f"{value[:60]!r}); the store was edited or damaged (nothing was exported)"
            ) from None
        if not isinstance(parsed, want):
            raise StoreError(
                f"{self.path}: table {row}, column {column!r}: expected a JSON "
                f"{'list' if want is list else 'object'}, got {type(parsed).__name__} "
                "(nothing was exported)"
            )
        return parsed

    def responses(self, *, prefer: Collection[str] | None = None) -> pd.DataFrame:
        """The response table of this store. When stored cells share a row key (the prompt
        template or the decoding settings changed), the one in `prefer` (the current plan) wins,
        else the latest."""
        frame = self.cells_frame()
        if frame.empty:
            return empty_responses()
        preferred = set(prefer or ())
        frame["_preferred"] = frame["cell_id"].isin(preferred)
        frame["_order"] = range(len(frame))  # finished_at, then insertion order
        frame = frame.sort_values(["_preferred", "_order"], ascending=[False, False])
        frame = frame.drop_duplicates(list(ROW_KEY), keep="first")
        frame = frame.sort_values(["model", "item_id", "axis_order", "config_id", "repeat"])
        return normalise_responses(
            frame[list(COLUMNS)].reset_index(drop=True), where=str(self.path)
        )

    # -- provenance ------------------------------------------------------------------------
    def record_model(self, spec_id: str, name: str, spec: Mapping[str, Any]) -> None:
        self._autocommit(
            "INSERT INTO models (spec_id, name, spec_json) VALUES (?, ?, ?) "
            "ON CONFLICT(spec_id) DO UPDATE SET name = excluded.name, spec_json = excluded.spec_json",
            (spec_id, name, json.dumps(redact_value(dict(spec)), sort_keys=True, default=str)),
        )

    def record_load(self, fingerprint: str, spec_id: str, name: str) -> None:
        self._autocommit(
            "INSERT INTO model_loads (fingerprint, spec_id, name, recorded_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(fingerprint) DO UPDATE SET spec_id = excluded.spec_id, "
            "name = excluded.name, recorded_at = excluded.recorded_at",
            (fingerprint, spec_id, name, utc_now()),
        )

    def loaded_spec(self, fingerprint: str) -> str | None:
        """The spec an earlier load with this fingerprint produced (None: never loaded)."""
        row = self._db.execute(
            "SELECT spec_id FROM model_loads WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        return None if row is None else str(row[0])

    def models(self) -> dict[str, StoredModel]:
        return {
            r[0]: {
                "name": r[1],
                "spec": self._json_cell(r[2], f"models, {r[0]!r}", "spec_json", want=dict),
            }
            for r in self._db.execute("SELECT spec_id, name, spec_json FROM models ORDER BY name")
        }

    def record_video(self, video_id: str, path: str | None, content_hash: str | None) -> None:
        self._autocommit(
            "INSERT INTO videos (video_id, path, content_hash) VALUES (?, ?, ?) "
            "ON CONFLICT(video_id) DO UPDATE SET path = excluded.path, "
            "content_hash = COALESCE(excluded.content_hash, videos.content_hash)",
            (video_id, path, content_hash),
        )

    def video_hashes(self) -> dict[str, str | None]:
        return {
            r[0]: r[1]
            for r in self._db.execute("SELECT video_id, content_hash FROM videos ORDER BY video_id")
        }

    def start_session(self, info: Mapping[str, Any]) -> int:
        cur = self._autocommit(
            "INSERT INTO sessions (started_at, host, info_json) VALUES (?, ?, ?)",
            (
                utc_now(),
                socket.gethostname(),
                json.dumps(redact_value(dict(info)), sort_keys=True, default=str),
            ),
        )
        return int(cur.lastrowid or 0)

    def _session_info(self, session_id: int) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT info_json FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        info: dict[str, Any] = self._json_cell(
            row[0], f"sessions, session {session_id}", "info_json", want=dict
        )
        return info

    def _merge_session_info(self, session_id: int, changes: Mapping[str, object]) -> None:
        """Set top-level keys of a session's info, keeping everything else it holds."""
        info = self._session_info(session_id)
        if info is None:
            return
        self._autocommit(
            "UPDATE sessions SET info_json = ? WHERE session_id = ?",
            (
                json.dumps(redact_value({**info, **changes}), sort_keys=True, default=str),
                session_id,
            ),
        )

    def add_session_info(self, session_id: int, key: str, name: str, value: object) -> None:
        """Set `info[key][name] = value` in a session's info, keeping everything else it holds."""
        info = self._session_info(session_id)
        if info is None:
            return
        block = info.get(key)
        self._merge_session_info(
            session_id, {key: {**(block if isinstance(block, dict) else {}), name: value}}
        )

    def end_session(
        self, session_id: int, outcome: str, info: Mapping[str, Any] | None = None
    ) -> None:
        """Close a session; `info` adds what was learnt while it ran (the batch sizes used)."""
        if info:
            self._merge_session_info(session_id, info)
        self._autocommit(
            "UPDATE sessions SET finished_at = ?, outcome = ? WHERE session_id = ?",
            (utc_now(), outcome, session_id),
        )

    def sessions(self) -> list[dict[str, object]]:
        """Every session: its row's columns, then the info it was started with."""
        cur = self._db.execute(
            "SELECT session_id, started_at, finished_at, outcome, host, info_json "
            "FROM sessions ORDER BY session_id"
        )
        return [
            {
                "session_id": r[0],
                "started_at": r[1],
                "finished_at": r[2],
                "outcome": r[3],
                "host": r[4],
                **self._json_cell(r[5], f"sessions, session {r[0]}", "info_json", want=dict),
            }
            for r in cur
        ]

    # -- export ----------------------------------------------------------------------------
    def export(
        self,
        run_dir: str | os.PathLike[str],
        provenance: Mapping[str, Any],
        *,
        prefer: Collection[str] | None = None,
        imported: pd.DataFrame | None = None,
    ) -> pd.DataFrame:
        """Write `RUN_DIR/responses.parquet` + `run.json` from the store; returns the table.

        The store's provenance (backend specs, video hashes, sessions) is added to the caller's.
        `imported`: rows that came by `itemscale import` (no store cell), kept beside the
        store's; a row key held by both is refused, since one of the two answers would be lost.
        """
        table = self.responses(prefer=prefer)
        if imported is not None and len(imported):
            key = list(ROW_KEY)
            clash = imported.merge(table[key], on=key, how="inner")
            if len(clash):
                first = clash.iloc[0]
                raise StoreError(
                    f"{run_dir}: {len(clash)} imported row(s) have the same key as a swept cell "
                    f"(model={first['model']!r}, item_id={first['item_id']!r}, "
                    f"config_id={first['config_id']!r}, repeat={first['repeat']}); nothing was "
                    "exported (the store keeps every cell); import them into another run"
                )
            table = normalise_responses(
                pd.concat([table, imported], ignore_index=True), where=str(run_dir)
            )
        payload = dict(provenance)
        payload.setdefault("model_specs", self.models())
        payload.setdefault("video_content_hashes", self.video_hashes())
        payload.setdefault("sessions", self.sessions())
        payload["store"] = {
            "file": self.path.name,
            "schema_version": self.schema_version,
            "cells": self.count(),
            "by_status": {s.value: self.count(status=s.value) for s in Status},
        }
        write_run(run_dir, table, payload)
        return table


def _clean(name: str, value: Any) -> Any:
    """Free text a server sent back (error bodies, replies) without any known secret."""
    if name in ("error", "raw_text") and isinstance(value, str):
        return redact(value)
    return value


def open_store(run_dir: str | os.PathLike[str]) -> RunStore:
    """Open (creating and migrating as needed) the store of a run directory."""
    return RunStore(Path(run_dir) / STORE_FILE)

"""Numbered migrations of the run store's SQLite schema. A store outlives the itemscale that
created it, so its layout changes only by appending here; `PRAGMA user_version` counts those
applied, and a store with more than this list is refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ...core.responses import ResponseColumn

#: Migration N (1-based) brings a store from version N-1 to N. Append only; never edit a
#: released entry, since stores already on disk went through it.
MIGRATIONS: Final[tuple[str, ...]] = (
    # 1: one row per cell identity, holding the response-table fields of its latest attempt.
    """
    CREATE TABLE cells (
        cell_id TEXT PRIMARY KEY,
        spec_id TEXT NOT NULL,
        model TEXT NOT NULL,
        item_id TEXT NOT NULL,
        video_id TEXT NOT NULL,
        task_kind TEXT NOT NULL,
        series TEXT NOT NULL,
        config_id TEXT NOT NULL,
        config_label TEXT NOT NULL,
        axis_order REAL NOT NULL,
        frames INTEGER NOT NULL,
        effective_frames INTEGER,
        pixels INTEGER,
        sampling TEXT,
        pipeline TEXT,
        repeat INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        raw_text TEXT,
        answer TEXT,
        correct REAL,
        score REAL,
        token_f1 REAL,
        rouge_l REAL,
        exact_match REAL,
        confidence REAL,
        option_probs TEXT,
        reference TEXT,
        visual_tokens INTEGER,
        frame_indices TEXT,
        frame_timestamps TEXT,
        latency_s REAL,
        attributes TEXT,
        source TEXT,
        attempts INTEGER NOT NULL DEFAULT 1,
        finished_at TEXT NOT NULL
    );
    CREATE INDEX cells_row_key ON cells (model, item_id, config_id, repeat);
    CREATE INDEX cells_status ON cells (status);
    """,
    # 2: provenance the export needs even when the store is exported on another machine:
    # the backend specs, the videos' content hashes and one row per sweep session.
    """
    CREATE TABLE models (
        spec_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        spec_json TEXT NOT NULL
    );
    CREATE TABLE videos (
        video_id TEXT PRIMARY KEY,
        path TEXT,
        content_hash TEXT
    );
    CREATE TABLE sessions (
        session_id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        outcome TEXT,
        host TEXT NOT NULL,
        info_json TEXT NOT NULL
    );
    """,
    # 3: which spec each local model load produced, keyed by what decided it (the entry, the
    # device, the checkpoint folder's fingerprint), so a resumed sweep whose cells are all done
    # can skip loading the model.
    """
    CREATE TABLE model_loads (
        fingerprint TEXT PRIMARY KEY,
        spec_id TEXT NOT NULL,
        name TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    """,
    # 4: the top-two option probability margin (response table schema 2), kept beside the
    # probabilities so an exported table needs no JSON parsing to stop a cascade on it.
    """
    ALTER TABLE cells ADD COLUMN margin REAL;
    UPDATE cells SET margin = (
        SELECT MAX(value) - COALESCE(
            (SELECT value FROM json_each(cells.option_probs) ORDER BY value DESC LIMIT 1 OFFSET 1),
            0.0)
        FROM json_each(cells.option_probs)
    ) WHERE option_probs IS NOT NULL AND json_valid(option_probs);
    """,
    # 5: how each multiple-choice answer was chosen (response table schema 3): `letter` or
    # `likelihood`; cells stored before it do not say (NULL: unknown).
    """
    ALTER TABLE cells ADD COLUMN scoring_rule TEXT;
    """,
    # 6: the session that produced each cell (response table schema 4); cells stored before
    # it do not say (NULL).
    """
    ALTER TABLE cells ADD COLUMN session_id INTEGER;
    """,
    # 7: a rerun's original repeat (response table schema 5, `sweep --rerun-check`); every
    # cell stored before it is an ordinary one (NULL).
    """
    ALTER TABLE cells ADD COLUMN rerun_of INTEGER;
    """,
)

SCHEMA_VERSION: Final[int] = len(MIGRATIONS)

#: The store's own columns of `cells` before the response row's (the cell's identity, its
#: primary key, then the backend spec it ran under) and after the first schema's (how many
#: attempts, when the last one ended): (name, SQLite type, NOT NULL).
CELL_KEY_COLUMNS: Final[tuple[tuple[str, str, bool], ...]] = (
    ("cell_id", "TEXT", False),
    ("spec_id", "TEXT", True),
)
CELL_BOOKKEEPING_COLUMNS: Final[tuple[tuple[str, str, bool], ...]] = (
    ("attempts", "INTEGER", True),
    ("finished_at", "TEXT", True),
)


def cells_layout(
    columns: Sequence[ResponseColumn] | None = None,
) -> tuple[tuple[str, str, bool], ...]:
    """The `cells` table every migrated store has, from `RESPONSE_COLUMNS` (or `columns`): key
    columns, the first schema's response columns, bookkeeping columns, then later response
    columns in the order the versions added them (a test migrates every older version and
    compares)."""
    from ...core.responses import RESPONSE_COLUMNS

    keys = {name for name, _, _ in CELL_KEY_COLUMNS}
    row = [c for c in (RESPONSE_COLUMNS if columns is None else columns) if c.name not in keys]
    first = [(c.name, c.sql_type, c.required) for c in row if c.since == 1]
    later = sorted((c for c in row if c.since > 1), key=lambda c: c.since)
    return (
        *CELL_KEY_COLUMNS,
        *first,
        *CELL_BOOKKEEPING_COLUMNS,
        *((c.name, c.sql_type, c.required) for c in later),
    )


def unmigrated_columns(
    present: Iterable[str], columns: Sequence[ResponseColumn] | None = None
) -> list[str]:
    """The layout's columns a `cells` table holding `present` lacks (a row column no migration
    adds)."""
    have = set(present)
    return [name for name, _, _ in cells_layout(columns) if name not in have]


def migrated_columns(migrations: Sequence[str] = MIGRATIONS) -> list[tuple[str, str, bool]]:
    """The `cells` table (name, SQLite type, NOT NULL) that `migrations` build from nothing."""
    db = sqlite3.connect(":memory:")
    try:
        for script in migrations:
            db.executescript(script)
        return [(r[1], r[2], bool(r[3])) for r in db.execute("PRAGMA table_info(cells)")]
    finally:
        db.close()


def missing_migration_message(missing: Sequence[str]) -> str:
    """What a store says when the row has a column its migrations never add."""
    return (
        f"the response row defines {', '.join(missing)}, which no run store migration adds to "
        "`cells`: append one to itemscale/collect/store/_migrations.py "
        "(`ALTER TABLE cells ADD COLUMN ...`)"
    )

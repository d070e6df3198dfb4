"""The response row is defined once (`RESPONSE_COLUMNS`): the Parquet schema is derived from it,
the run store's `cells` table is derived from it and every older store, migrated, ends with
exactly those columns in order and type, and `CellRow` has the row's fields with its types."""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from pathlib import Path

import pyarrow as pa
import pytest

from itemscale.collect.store import MIGRATIONS, CellRow, RunStore, cells_layout, open_store
from itemscale.core.responses import (
    COLUMNS,
    REQUIRED_COLUMNS,
    RESPONSE_COLUMNS,
    read_run,
)
from itemscale.core.responses._schema import RESPONSE_SCHEMA, SCHEMA_VERSION

#: What each kind of value is in a row (`CellRow`'s annotation for a nullable column adds
#: `| None`).
PYTHON_TYPES = {
    "text": "str",
    "real": "float",
    "integer": "int",
    "integer_list": "tuple[int, ...]",
    "real_list": "tuple[float, ...]",
}


def _columns(path: Path) -> list[tuple[str, str, bool]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("PRAGMA table_info(cells)").fetchall()
    finally:
        db.close()
    return [(r[1], r[2], bool(r[3])) for r in rows]


def test_the_parquet_schema_is_the_definition() -> None:
    assert RESPONSE_SCHEMA.names == [c.name for c in RESPONSE_COLUMNS] == list(COLUMNS)
    for column, field in zip(RESPONSE_COLUMNS, RESPONSE_SCHEMA, strict=True):
        assert field.type == column.arrow_type and field.nullable is not column.required
    assert {c.name for c in RESPONSE_COLUMNS if c.required} == REQUIRED_COLUMNS
    # a column a later schema version added says so, and no column is newer than the schema
    assert {c.name: c.since for c in RESPONSE_COLUMNS if c.since > 1} == {
        "margin": 2,
        "scoring_rule": 3,
        "session_id": 4,
        "rerun_of": 5,
    }
    assert max(c.since for c in RESPONSE_COLUMNS) == SCHEMA_VERSION
    assert RESPONSE_SCHEMA.field("frame_indices").type == pa.list_(pa.int64())


def test_the_layout_holds_every_response_column_once() -> None:
    layout = cells_layout()
    names = [name for name, _, _ in layout]
    assert len(names) == len(set(names))
    assert set(names) == set(COLUMNS) | {"spec_id", "attempts", "finished_at"}
    kinds = {c.name: c for c in RESPONSE_COLUMNS}
    for name, sql_type, not_null in layout:
        if name in kinds and name != "cell_id":  # the primary key: never null anyway
            assert (sql_type, not_null) == (kinds[name].sql_type, kinds[name].required), name


def test_a_new_store_has_the_layout(tmp_path: Path) -> None:
    with open_store(tmp_path):
        pass
    assert _columns(tmp_path / "store.sqlite") == list(cells_layout())


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS)))
def test_every_older_store_migrated_ends_with_the_layout(tmp_path: Path, version: int) -> None:
    """A store made by the first `version` migrations, holding a cell, opened by this release:
    exactly the layout's columns in order and type, and the cell exported in the schema's."""
    path = tmp_path / "store.sqlite"
    db = sqlite3.connect(path)
    for script in MIGRATIONS[:version]:
        db.executescript(script)
    db.execute(f"PRAGMA user_version = {version}")
    db.execute(
        "INSERT INTO cells (cell_id, spec_id, model, item_id, video_id, task_kind, series, "
        "config_id, config_label, axis_order, frames, repeat, status, finished_at, answer, "
        "correct, frame_indices) VALUES ('c', 's', 'm', 'i', 'v', 'mcqa', 'default', '8f', "
        "'8f', 8, 8, 0, 'ok', 't', 'A', 1.0, '[0, 3]')"
    )
    db.commit()
    db.close()
    assert _columns(path) != list(cells_layout())  # an older layout: something to migrate
    with RunStore(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        store.export(tmp_path, {"schema_version": 1})
    assert _columns(path) == list(cells_layout())
    df, _ = read_run(tmp_path)
    assert list(df.columns) == list(COLUMNS)
    assert df.loc[0, "answer"] == "A" and list(df.loc[0, "frame_indices"]) == [0, 3]


def test_cell_row_has_the_rows_fields_with_their_types() -> None:
    annotations = {f.name: str(f.type) for f in fields(CellRow)}
    expected = {"spec_id": "str", "cell_id": "str"}
    for column in RESPONSE_COLUMNS:
        if column.name == "cell_id":  # a stored cell always has its identity
            continue
        python = PYTHON_TYPES[column.kind]
        expected[column.name] = python if column.required else f"{python} | None"
    assert annotations == expected

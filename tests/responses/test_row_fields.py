"""One row: `ResponseRow`, the store's `CellRow` and the sweep's `RowIdentity` and `FrameFields`
are written from `RESPONSE_COLUMNS` (`_row_fields`), so a new column is its `ResponseColumn`, a
rewrite of the blocks, and the store migration that adds it; the store refuses to open while no
migration adds a column of the row."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import typing
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import itemscale.core.responses
from itemscale.collect.store import MIGRATIONS, CellRow, RunStore, StoreError, cells_layout
from itemscale.collect.store._migrations import migrated_columns, unmigrated_columns
from itemscale.collect.sweep._execute import FrameFields, RowIdentity
from itemscale.core.responses import (
    COLUMNS,
    RESPONSE_COLUMNS,
    ResponseColumn,
    ResponseRow,
    read_responses,
)
from itemscale.core.responses._row_fields import (
    PACKAGE_DIR,
    RowBlockError,
    block_files,
    main,
    rewrite,
    stale_files,
)
from itemscale.core.responses._schema import SCHEMA_VERSION, SCHEMA_VERSION_KEY

#: Where each shape's block lives, by class name.
SHAPES = {
    "ResponseRow": "core/responses/_schema.py",
    "CellRow": "collect/store/_store.py",
    "RowIdentity": "collect/sweep/_execute.py",
    "FrameFields": "collect/sweep/_execute.py",
}

#: A column a later release might add (the session that computed a row is `session_id`; this
#: is the host it ran on), once as part of the cell and once as part of the frames.
HOST = ResponseColumn("host", "text", "cell", since=5)
DECODER = ResponseColumn("decoder", "text", "frames", since=5)


def _block(text: str, class_name: str) -> list[str]:
    """The field lines of `class_name`'s row block in a module's text."""
    found = re.search(
        rf"^class {class_name}\b.*?# <row fields[^>]*>\n(.*?)\n[ \t]*# </row fields>",
        text,
        re.S | re.M,
    )
    assert found is not None, class_name
    return [line.strip() for line in found.group(1).splitlines()]


def _built(text: str, class_name: str) -> type:
    """The shape `class_name` as its block in `text` writes it, built on its own: a TypedDict
    (all keys optional for `ResponseRow`) or, for `CellRow`, a frozen dataclass."""
    fields = "\n".join(f"    {line}" for line in _block(text, class_name))
    if class_name == "CellRow":
        source = f"@dataclass(frozen=True)\nclass {class_name}:\n{fields}\n"
    else:
        total = class_name != "ResponseRow"
        source = f"class {class_name}(TypedDict, total={total}):\n{fields}\n"
    namespace: dict[str, object] = {"dataclass": dataclasses.dataclass}
    namespace["TypedDict"] = typing.TypedDict
    exec(source, namespace)
    built = namespace[class_name]
    assert isinstance(built, type)
    return built


def _source(class_name: str) -> str:
    return (PACKAGE_DIR / SHAPES[class_name]).read_text("utf-8")


def test_every_block_is_what_the_definition_writes() -> None:
    """A hand edit of a block, or a column added without the rewrite, fails here."""
    assert stale_files() == [], "run `python -m itemscale.core.responses._row_fields`"
    assert {str(p.relative_to(PACKAGE_DIR)) for p in block_files()} == set(SHAPES.values())


def test_the_shapes_in_use_are_the_definition() -> None:
    names = [c.name for c in RESPONSE_COLUMNS]
    assert list(typing.get_type_hints(ResponseRow)) == names
    cell_row = [f.name for f in dataclasses.fields(CellRow)]
    assert cell_row[:2] == ["cell_id", "spec_id"] and sorted(cell_row[2:]) == sorted(
        n for n in names if n != "cell_id"
    )
    cell_part = [c.name for c in RESPONSE_COLUMNS if c.part == "cell" and c.name != "cell_id"]
    assert list(RowIdentity.__annotations__) == ["cell_id", "spec_id", *cell_part]
    frames_part = [c.name for c in RESPONSE_COLUMNS if c.part == "frames"]
    assert list(FrameFields.__annotations__) == frames_part
    # the sweep's parts and the outcome and session columns make a whole `CellRow`
    rest = {c.name for c in RESPONSE_COLUMNS if c.part in ("outcome", "session")}
    assert set(RowIdentity.__annotations__) | set(frames_part) | rest == set(cell_row)


@pytest.mark.parametrize("column", [HOST, DECODER], ids=lambda c: c.part)
def test_a_new_column_reaches_every_shape(column: ResponseColumn) -> None:
    """The column added to a copy of the definition: every shape built from the rewritten
    modules has it, with its type, and the sweep's part that the column names has it alone."""
    columns = (*RESPONSE_COLUMNS, column)
    row = _built(rewrite(_source("ResponseRow"), columns), "ResponseRow")
    assert typing.get_type_hints(row)[column.name] == str | None
    assert list(typing.get_type_hints(row)) == [c.name for c in columns]
    cell_row = _built(rewrite(_source("CellRow"), columns), "CellRow")
    (added,) = [f for f in dataclasses.fields(cell_row) if f.name == column.name]
    assert added.type == "str | None" and added.default is None
    sweep = rewrite(_source("RowIdentity"), columns)
    identity = _built(sweep, "RowIdentity").__annotations__
    frames = _built(sweep, "FrameFields").__annotations__
    assert (column.name in identity, column.name in frames) == (
        column.part == "cell",
        column.part == "frames",
    )
    # nothing else of the modules changes
    for class_name in SHAPES:
        before, after = _source(class_name), rewrite(_source(class_name), columns)
        assert [line for line in after.splitlines() if line not in before.splitlines()] == [
            line for line in after.splitlines() if re.match(rf"\s*{column.name}: ", line)
        ]


def test_the_migrations_build_the_layout() -> None:
    assert migrated_columns() == list(cells_layout())
    assert unmigrated_columns(name for name, _, _ in migrated_columns()) == []


def test_a_column_no_migration_adds_is_named() -> None:
    """The definition with a new column: the migrations leave it out until one adds it, and
    then build the layout with it last, where a migration appends it."""
    columns = (*RESPONSE_COLUMNS, HOST)
    present = [name for name, _, _ in migrated_columns()]
    assert unmigrated_columns(present, columns) == ["host"]
    migrated = migrated_columns((*MIGRATIONS, "ALTER TABLE cells ADD COLUMN host TEXT;"))
    assert migrated == list(cells_layout(columns)) and migrated[-1] == ("host", "TEXT", False)


def test_a_store_refuses_a_row_its_migrations_do_not_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RunStore(tmp_path / "store.sqlite"):
        pass
    monkeypatch.setattr(itemscale.core.responses, "RESPONSE_COLUMNS", (*RESPONSE_COLUMNS, HOST))
    with pytest.raises(StoreError, match=r"defines host, which no run store migration adds"):
        RunStore(tmp_path / "store.sqlite")
    with pytest.raises(StoreError, match="host"):
        RunStore(tmp_path / "new.sqlite")
    db = sqlite3.connect(tmp_path / "new.sqlite")
    try:  # refused inside the migration's transaction: nothing of it was kept
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
    finally:
        db.close()


def test_the_rewrite_fixes_a_stale_block_and_check_only_says_so(tmp_path: Path) -> None:
    module = tmp_path / "pkg" / "shape.py"
    module.parent.mkdir()
    stale = (
        "class Key(TypedDict):\n"
        "    # <row fields parts=cell,session first=cell_id:str>\n"
        "    model: int\n"
        "    # </row fields>\n"
        "\n"
        "x = 1\n"
    )
    module.write_text(stale, "utf-8")
    assert stale_files(module.parent) == [module]
    assert main(["--check"], module.parent) == 1 and module.read_text("utf-8") == stale
    assert main([], module.parent) == 0 and stale_files(module.parent) == []
    lines = module.read_text("utf-8").splitlines()
    assert lines[2:4] == ["    cell_id: str", "    model: str"]
    assert lines[-3:] == ["    # </row fields>", "", "x = 1"]
    assert "    session_id: int | None" in lines and "    status: str" not in lines


@pytest.mark.parametrize(
    "text",
    [
        "    # <row fields parts=cell>\n    model: str\n",
        "    # <row fields parts=answers>\n    # </row fields>\n",
        "    # <row fields sorted>\n    # </row fields>\n",
        "    # <row fields first=cell_id>\n    # </row fields>\n",
    ],
    ids=["no end", "unknown part", "unknown word", "first without a type"],
)
def test_a_block_it_cannot_read_is_refused(text: str) -> None:
    with pytest.raises(RowBlockError):
        rewrite(text)


@pytest.mark.parametrize("version", range(2, SCHEMA_VERSION))
def test_a_table_of_an_older_version_reads_with_its_later_columns_null(
    tmp_path: Path, version: int
) -> None:
    """A column that only adds null needs no table migration: a table written at `version`,
    without the columns added after it, reads with them empty."""
    later = [c.name for c in RESPONSE_COLUMNS if c.since > version]
    assert later
    rows = pd.DataFrame(
        {
            "model": ["m", "m"],
            "item_id": ["a", "b"],
            "video_id": ["v", "v"],
            "task_kind": ["mcqa", "mcqa"],
            "series": ["default", "default"],
            "config_id": ["8f", "8f"],
            "config_label": ["8f", "8f"],
            "axis_order": [8.0, 8.0],
            "frames": [8, 8],
            "repeat": [0, 0],
            "status": ["ok", "ok"],
            "answer": ["A", "B"],
            "correct": [1.0, 0.0],
        }
    )
    table = pa.Table.from_pandas(rows, preserve_index=False)
    path = tmp_path / "old.parquet"
    pq.write_table(table.replace_schema_metadata({SCHEMA_VERSION_KEY: str(version).encode()}), path)
    back = read_responses(path)
    assert list(back.columns) == list(COLUMNS)
    assert back[later].isna().all().all() and back["answer"].tolist() == ["A", "B"]

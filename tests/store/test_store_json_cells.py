"""A malformed JSON value in a store column (a hand-edited or damaged store) is a typed error
naming the table, the row and the column, exit 2: never a JSONDecodeError traceback, and the
run's table and run.json are left as they were."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.collect.protocol import load_protocol
from itemscale.collect.store import StoreError, open_store
from itemscale.collect.sweep import run_sweep


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        (
            "UPDATE cells SET frame_indices = '[0, 1' WHERE rowid = 1",
            "column 'frame_indices': not valid JSON",
        ),
        ("UPDATE cells SET frame_indices = '{\"a\": 1}' WHERE rowid = 1", "expected a JSON list"),
        ("UPDATE models SET spec_json = 'not json'", "column 'spec_json': not valid JSON"),
        ("UPDATE sessions SET info_json = '9' * 5000", "column 'info_json': not valid JSON"),
    ],
)
def test_a_damaged_json_cell_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str, said: str
) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,))

    run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    run_dir = tmp_path / "run"
    before = {n: (run_dir / n).read_bytes() for n in ("responses.parquet", "run.json")}
    with sqlite3.connect(run_dir / "store.sqlite") as con:
        con.execute(sql.replace("'9' * 5000", "'" + "9" * 5000 + "'"))
    capsys.readouterr()
    with pytest.raises(StoreError) as caught, open_store(run_dir) as store:
        store.export(run_dir, {})  # what every sweep's end does
    message = str(caught.value)
    assert said in message and "store.sqlite: table" in message, message
    assert "JSONDecodeError" not in message
    assert caught.value.exit_code == 2
    assert {n: (run_dir / n).read_bytes() for n in before} == before

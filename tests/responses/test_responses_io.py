"""The response table on disk: schema version, migration, validation, atomic writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscale.core.responses import (
    SchemaError,
    read_responses,
    read_run,
    write_responses,
    write_run,
)
from itemscale.core.responses._schema import RESPONSE_SCHEMA


def rows(n: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["m"] * n,
            "item_id": [f"i{i}" for i in range(n)],
            "video_id": ["v"] * n,
            "task_kind": ["mcqa"] * n,
            "series": ["default"] * n,
            "config_id": ["c8"] * n,
            "config_label": ["8f"] * n,
            "axis_order": [0.0] * n,
            "frames": [8] * n,
            "repeat": [0] * n,
            "status": ["ok"] * n,
            "correct": [1.0, 0.0][:n],
            "frame_indices": [[0, 5, 9]] * n,
        }
    )


def test_round_trip_keeps_values_and_version(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    write_responses(rows(), path)
    meta = pq.read_schema(path).metadata
    assert meta[b"itemscale.schema_version"] == b"5"
    back = read_responses(path)
    assert list(back.columns) == RESPONSE_SCHEMA.names
    assert back["correct"].tolist() == [1.0, 0.0]
    assert list(back["frame_indices"].iloc[0]) == [0, 5, 9]


def test_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    write_responses(rows(), path)
    table = pq.read_table(path)
    table = table.replace_schema_metadata({b"itemscale.schema_version": b"99"})
    pq.write_table(table, path)
    with pytest.raises(SchemaError, match=r"version 99.*upgrade itemscale"):
        read_responses(path)


def test_version_0_is_migrated(tmp_path: Path) -> None:
    old = rows().drop(columns=["series"])
    old["prediction"] = ["A", "B"]
    table = pa.Table.from_pandas(old, preserve_index=False)
    table = table.replace_schema_metadata({b"itemscale.schema_version": b"0"})
    path = tmp_path / "old.parquet"
    pq.write_table(table, path)
    back = read_responses(path)
    assert back["series"].tolist() == ["default", "default"]
    assert back["raw_text"].tolist() == ["A", "B"]


def test_version_1_gains_the_margin_of_its_option_probabilities(tmp_path: Path) -> None:
    old = rows().drop(columns=["margin"], errors="ignore")
    old["option_probs"] = ['{"A": 0.5, "B": 0.375, "C": 0.125}', None]
    table = pa.Table.from_pandas(old, preserve_index=False)
    table = table.replace_schema_metadata({b"itemscale.schema_version": b"1"})
    path = tmp_path / "v1.parquet"
    pq.write_table(table, path)
    back = read_responses(path)
    assert back["margin"].iloc[0] == 0.125
    assert pd.isna(back["margin"].iloc[1])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.drop(columns=["model"]), "missing required column.*model"),
        (lambda d: d.assign(status=["ok", "weird"]), "status.*weird"),
        (lambda d: d.assign(item_id=["i0", "i0"]), "duplicate row key"),
        (lambda d: d.assign(score=[0.5, None]), "row 0 has both 'correct' and 'score'"),
        (lambda d: d.assign(bogus=[1, 2]), "unknown column.*bogus"),
    ],
)
def test_bad_tables_are_refused_and_nothing_is_written(
    tmp_path: Path, mutate: object, message: str
) -> None:
    run = tmp_path / "run"
    write_run(run, rows(), {"source": "first"})
    before = (run / "responses.parquet").read_bytes()
    with pytest.raises(SchemaError, match=message):
        write_run(run, mutate(rows()), {"source": "second"})  # type: ignore[operator]
    assert (run / "responses.parquet").read_bytes() == before
    assert read_run(run)[1]["source"] == "first"
    assert not [p for p in run.iterdir() if p.name.startswith(".")]


def test_atomic_text_file_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    from itemscale.core.files import atomic_text_file

    target = tmp_path / "sub" / "notes.csv"
    with atomic_text_file(target, newline="") as fh:
        fh.write("a,b\r\n")
    assert target.read_bytes() == b"a,b\r\n"  # newline="" writes line ends as given
    with pytest.raises(RuntimeError, match="half way"), atomic_text_file(target) as fh:
        fh.write("partial")
        raise RuntimeError("half way")
    assert target.read_bytes() == b"a,b\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["notes.csv"]


def test_write_parquet_atomic_replaces_pandas_metadata_and_leaves_no_temp(
    tmp_path: Path,
) -> None:
    from itemscale.core.responses import write_parquet_atomic

    table = pa.Table.from_pandas(pd.DataFrame({"x": [1, 2]}), preserve_index=False)
    assert b"pandas" in (table.schema.metadata or {})
    target = tmp_path / "t.parquet"
    write_parquet_atomic(table, target, {b"itemscale.schema_version": b"3", b"k": b"v"})
    meta = pq.read_schema(target).metadata
    assert meta == {b"itemscale.schema_version": b"3", b"k": b"v"}
    assert pq.read_table(target).column("x").to_pylist() == [1, 2]
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_replace_dir_swaps_a_whole_directory_in_and_leaves_nothing_aside(tmp_path: Path) -> None:
    from itemscale.core.files import replace_dir

    target = tmp_path / "sheets"
    first = tmp_path / ".new-1"
    first.mkdir()
    (first / "a.png").write_bytes(b"1")
    replace_dir(first, target)
    assert sorted(p.name for p in target.iterdir()) == ["a.png"]
    second = tmp_path / ".new-2"
    second.mkdir()
    (second / "b.png").write_bytes(b"2")
    replace_dir(second, target)
    assert sorted(p.name for p in target.iterdir()) == ["b.png"]  # old content gone, not merged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheets"]


def test_version_2_opens_with_its_scoring_rule_unknown(tmp_path: Path) -> None:
    old = rows().drop(columns=["scoring_rule"], errors="ignore")
    table = pa.Table.from_pandas(old, preserve_index=False)
    table = table.replace_schema_metadata({b"itemscale.schema_version": b"2"})
    path = tmp_path / "v2.parquet"
    pq.write_table(table, path)
    back = read_responses(path)
    assert list(back.columns) == RESPONSE_SCHEMA.names
    assert back["scoring_rule"].isna().all()
    assert back["correct"].tolist() == [1.0, 0.0]

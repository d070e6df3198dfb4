"""`import table` with a hand-written CSV: `config` from `frames`, one rule for an empty answer
in long and wide tables, a hint for a ';'-separated file, and a summary that tells rows kept as
wrong answers from rows not imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemscale.cli import main
from itemscale.collect.importers import (
    ImportInputError,
    TableOptions,
    import_table,
    load_answer_key,
)
from itemscale.core.responses import NOANSWER


def _write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_config_defaults_from_frames(tmp_path: Path) -> None:
    table = _write(
        tmp_path,
        "model,item_id,frames,pixels,correct\nm,q1,0,,0\nm,q1,8,,1\nm,q1,16,50176,0\n",
    )
    rows, _ = import_table(table)
    got = sorted(zip(rows["frames"], rows["config_label"], strict=True))
    assert got == [(0, "text-only"), (8, "8f"), (16, "16f@50176")]


def test_an_empty_answer_reads_the_same_in_long_and_wide_tables(tmp_path: Path) -> None:
    key = load_answer_key(_write(tmp_path, "item_id,gold,video_id\nq1,A,v1\nq2,A,v1\n", "k.csv"))
    long_text = "model,item_id,frames,answer\nm,q1,8,A\nm,q1,16,\nm,q2,8,A\nm,q2,16,A\n"
    wide_text = "item_id,8f,16f\nq1,A,\nq2,A,A\n"
    for empty in ("noanswer", "missing"):
        long_rows, _ = import_table(_write(tmp_path, long_text), TableOptions(empty=empty), key=key)
        wide_rows, _ = import_table(
            _write(tmp_path, wide_text, "w.csv"),
            TableOptions(wide=True, model="m", empty=empty),
            key=key,
        )

        def cells(df: object) -> list[tuple[str, str, object, float]]:
            return sorted(
                zip(df["item_id"], df["config_label"], df["answer"], df["correct"], strict=True)  # type: ignore[index]
            )

        assert cells(long_rows) == cells(wide_rows), empty
        q1 = [c for c in cells(long_rows) if c[0] == "q1" and c[1] == "16f"]
        assert q1 == ([("q1", "16f", NOANSWER, 0.0)] if empty == "noanswer" else [])


def test_a_semicolon_file_gets_a_hint(tmp_path: Path) -> None:
    table = _write(tmp_path, "model;item_id;frames;correct\nm;q1;8;1\n")
    with pytest.raises(ImportInputError) as exc:
        import_table(table)
    message = str(exc.value)
    assert "separated by semicolons" in message and "sep=';'" in message


def test_the_summary_tells_kept_from_not_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _write(tmp_path, "item_id,gold,video_id\nq1,A,v1\nq2,A,v1\n", "k.csv")
    table = _write(tmp_path, "model,item_id,frames,answer\nm,q1,8,A\nm,q1,16,\nm,q2,8,A\n")
    assert (
        main(["import", "table", str(table), "--answer-key", str(key), "-o", str(tmp_path / "r")])
        == 0
    )
    out = capsys.readouterr().out
    assert "kept, counted wrong (no option recognised):" in out
    assert "noanswer (no option recognised)" in out
    assert "not imported: none" in out
    assert "dropped or unparsed" not in out


@pytest.mark.parametrize("wide", [False, True])
def test_rows_left_out_by_empty_missing_are_read_and_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wide: bool
) -> None:
    """`--empty missing` leaves the empty cell out of the run: the summary counts it as read
    and lists it under "not imported", so read = added + not imported."""
    key = _write(tmp_path, "item_id,gold,video_id\nq1,A,v1\nq2,A,v1\n", "k.csv")
    text = (
        "item_id,8f,16f\nq1,A,\nq2,A,A\n"
        if wide
        else "model,item_id,frames,answer\nm,q1,8,A\nm,q1,16,\nm,q2,8,A\nm,q2,16,A\n"
    )
    table = _write(tmp_path, text)
    argv = ["import", "table", str(table), "--answer-key", str(key), "--empty", "missing"]
    argv += ["-o", str(tmp_path / "r"), "--summary-json", str(tmp_path / "s.json")]
    if wide:
        argv += ["--wide", "--model", "m"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rows: 4 read, 3 added" in out and "not imported, by reason:" in out
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["rows_read"] == 4
    assert summary["rows_added"] == 3
    (reason,) = summary["dropped"]
    assert "--empty missing" in reason and summary["dropped"][reason] == 1


def test_a_table_of_only_left_out_rows_says_so(tmp_path: Path) -> None:
    key = load_answer_key(_write(tmp_path, "item_id,gold,video_id\nq1,A,v1\n", "k.csv"))
    table = _write(tmp_path, "model,item_id,frames,answer\nm,q1,8,\n")
    with pytest.raises(ImportInputError, match=r"no data rows \(left out: 1 empty answer"):
        import_table(table, TableOptions(empty="missing"), key=key)

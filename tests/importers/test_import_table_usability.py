"""`import table` with a hand-written CSV: `config` from `frames`, one rule for an empty answer
in long and wide tables, a hint for a ';'-separated file, and a summary that tells rows kept as
wrong answers from rows not imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemscale.cli import main
from itemscale.importers import ImportInputError, TableOptions, import_table, load_answer_key
from itemscale.responses import NOANSWER


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

"""Two ids that differ only in Unicode normalisation (`io\\u0301` and `i\\u00f3`, both "ió") are
refused by every importer, within one file and across two imports into one run, naming both
forms and where each came from; ids are otherwise kept exactly as written (docs/importers.md)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from itemscale.cli import main
from itemscale.core.responses import read_run

DECOMPOSED, COMPOSED = "io\u0301", "i\u00f3"
HEADER = "model,item_id,video_id,config,frames,correct\n"


def test_the_two_forms_read_the_same() -> None:
    assert DECOMPOSED != COMPOSED
    assert unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED


def test_one_table_holding_both_forms_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        HEADER + f"m,{COMPOSED},v1,8f,8,1\nm,q2,v1,8f,8,0\nm,{DECOMPOSED},v1,8f,8,0\n",
        encoding="utf-8",
    )
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "column 'item_id': 'i\\xf3' and 'io\\u0301' differ only in Unicode normalisation" in err
    assert "from table:t.csv:2 and table:t.csv:4" in err
    assert not (tmp_path / "run").exists()


def test_a_second_import_with_the_other_form_is_refused_and_the_run_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(HEADER + f"m,{DECOMPOSED},v1,8f,8,1\n", encoding="utf-8")
    second.write_text(HEADER + f"m,{COMPOSED},v1,16f,16,1\n", encoding="utf-8")
    assert main(["import", "table", str(first), "-o", str(run)]) == 0
    before = (run / "responses.parquet").read_bytes()
    assert main(["import", "table", str(second), "-o", str(run)]) == 2
    assert "differ only in Unicode normalisation" in capsys.readouterr().err
    assert (run / "responses.parquet").read_bytes() == before


def test_one_form_alone_is_kept_as_written(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        HEADER + f"m,{DECOMPOSED},v1,8f,8,1\nm,{DECOMPOSED},v1,16f,16,0\n", encoding="utf-8"
    )
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 0
    df, _ = read_run(tmp_path / "run")
    assert set(df["item_id"]) == {DECOMPOSED}


def test_a_kelvin_sign_and_a_k_are_one_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NFC maps some non-ASCII characters to ASCII ones (U+212A KELVIN SIGN is K)."""
    table = tmp_path / "t.csv"
    table.write_text(HEADER + "m,qK,v1,8f,8,1\nm,q\u212a,v1,8f,8,0\n", encoding="utf-8")
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 2
    assert "'qK' and 'q\\u212a' differ only in Unicode normalisation" in capsys.readouterr().err

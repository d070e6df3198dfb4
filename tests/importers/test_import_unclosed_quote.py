"""A CSV/TSV that ends inside a quoted field is an error naming the line where the field
opened, not a few rows with the rest of the file swallowed into one answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemscale.cli import main
from itemscale.collect.importers import ImportInputError, import_table

HEADER = "model,item_id,video_id,config,frames,correct,answer,prediction"


def _rows(n: int, start: int = 0) -> list[str]:
    return [f"m,q{j},v{j},8f,8,1,A,the answer is A" for j in range(start, start + n)]


@pytest.mark.parametrize("final_newline", [True, False])
def test_unclosed_quote_names_the_line_it_opened(tmp_path: Path, final_newline: bool) -> None:
    # header line 1, rows on lines 2-8, the bad quote opens on line 9, 200 lines follow
    lines = [HEADER, *_rows(7), 'm,q7,v7,8f,8,1,A,"never closed', *_rows(200, start=8)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""))
    with pytest.raises(ImportInputError, match=r"t\.csv:9: a quoted field opens on this line"):
        import_table(path)


def test_unclosed_quote_in_a_tsv_and_in_a_multiline_field(tmp_path: Path) -> None:
    header = HEADER.replace(",", "\t")
    rows = [r.replace(",", "\t") for r in _rows(3)]
    # line 5 holds a well-closed field spanning lines 5-6; the bad one opens on line 7
    lines = [header, *rows, 'm\tq3\tv3\t8f\t8\t1\tA\t"two\nlines"', 'm\tq4\tv4\t8f\t8\t1\tA\t"open']
    path = tmp_path / "t.tsv"
    path.write_text("\n".join(lines) + "\nmore\nand more\n")
    with pytest.raises(ImportInputError, match=r"t\.tsv:7: a quoted field opens on this line"):
        import_table(path)


def test_unclosed_quote_in_the_header(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('model,item_id,"video_id\n' + "\n".join(_rows(3)) + "\n")
    with pytest.raises(ImportInputError, match=r"t\.csv:1: a quoted field opens"):
        import_table(path)


def test_cli_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [HEADER, *_rows(7), 'm,q7,v7,8f,8,1,A,"never closed', *_rows(200, start=8)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run"
    assert main(["import", "table", str(path), "-o", str(run)]) == 2
    assert "t.csv:9: a quoted field opens on this line and never closes" in capsys.readouterr().err
    assert not run.exists()


def test_closed_quotes_and_lenient_quotes_still_import(tmp_path: Path) -> None:
    """Quoted fields with commas, doubled quotes and newlines, and a final row without a line
    end, import as before; so does a quote the lenient reader accepts mid-field (`"a"b`)."""
    lines = [
        HEADER,
        'm,q0,v0,8f,8,1,A,"A, then ""B""\nthen\nA"',
        'm,q1,v1,8f,8,1,A,"x"y',
        "m,q2,v2,8f,8,1,A,plain",
    ]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines))
    rows = import_table(path)[0].set_index("item_id")
    assert rows.loc["q0", "raw_text"] == 'A, then "B"\nthen\nA'
    assert rows.loc["q1", "raw_text"] == "xy"
    assert rows.loc["q2", "raw_text"] == "plain"


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
def test_the_last_line_alone_opening_a_quote(tmp_path: Path, ending: str) -> None:
    """A quote opened on the file's last line (read from the file's tail), with or without a
    line end, CRLF too."""
    lines = [HEADER, *_rows(3), 'm,q3,v3,8f,8,1,A,"open']
    path = tmp_path / "t.csv"
    path.write_bytes(
        ("\r\n".join(lines) if ending == "\r\n" else "\n".join(lines)).encode() + ending.encode()
    )
    with pytest.raises(ImportInputError, match=r"t\.csv:5: a quoted field opens on this line"):
        import_table(path)

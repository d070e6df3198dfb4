"""A workbook with more rows or cells than a results table has is refused with a message
pointing to CSV or Parquet: before parsing when its first sheet declares its size, and as the
rows are read when it declares none or a false one. The bounds are lowered here (they are
read when checked), so the workbooks stay small."""

from __future__ import annotations

import re
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from itemscale.cli import main
from itemscale.core import files


@pytest.fixture
def low_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_SHEET_ROWS", 50)
    monkeypatch.setattr(files, "MAX_SHEET_CELLS", 300)


def _workbook(path: Path, rows: int, extra_columns: int = 0) -> Path:
    frame = pd.DataFrame(
        {
            "model": ["m"] * rows,
            "item_id": [f"q{j}" for j in range(rows)],
            "config": ["8f"] * rows,
            "frames": [8] * rows,
            "correct": [j % 2 for j in range(rows)],
        }
        | {f"x{k}": [k] * rows for k in range(extra_columns)}
    )
    frame.to_excel(path, index=False)
    return path


def _without_dimension(source: Path, target: Path) -> Path:
    """The same workbook with its sheet's `<dimension>` removed (some writers omit it)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.startswith("xl/worksheets/"):
                data = re.sub(rb"<dimension [^>]*/>", b"", data)
            new.writestr(info, data)
    return target


def test_the_declared_size_is_read_without_parsing(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "t.xlsx", 60, extra_columns=2)
    assert files.sheet_dimension(path) == (61, 7)  # the header row and 60 rows; 7 columns
    assert files.sheet_dimension(_without_dimension(path, tmp_path / "n.xlsx")) is None


@pytest.mark.usefixtures("low_bounds")
@pytest.mark.parametrize(
    ("rows", "extra", "said"),
    [
        (60, 0, "holds 61 rows x 5 columns (305 cells)"),  # rows past 50
        (40, 3, "holds 41 rows x 8 columns (328 cells)"),  # cells past 300
    ],
)
def test_a_declared_size_past_the_bounds_is_refused_before_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: int, extra: int, said: str
) -> None:
    path = _workbook(tmp_path / "t.xlsx", rows, extra)
    assert main(["import", "table", str(path), "-o", str(tmp_path / "run"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert said in err and "past the limit of 50 rows and 300 cells" in err
    assert "save the table as CSV or Parquet" in err
    assert main(["import", "vlmevalkit", str(path), "--model", "m", "-o", "r"]) == 2
    assert said in capsys.readouterr().err


@pytest.mark.usefixtures("low_bounds")
def test_a_sheet_without_its_size_is_counted_as_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _without_dimension(_workbook(tmp_path / "w.xlsx", 60), tmp_path / "t.xlsx")
    assert main(["import", "table", str(path), "-o", str(tmp_path / "run"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "t.xlsx: row 51: the first sheet holds more than 50 rows or 300 cells" in err
    assert "save the table as CSV or Parquet" in err


@pytest.mark.usefixtures("low_bounds")
def test_a_sheet_within_the_bounds_imports(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "t.xlsx", 40)  # 41 rows x 5 columns = 205 cells
    assert main(["import", "table", str(path), "-o", str(tmp_path / "run")]) == 0


def test_the_shipped_bounds_refuse_a_million_rows_at_once(tmp_path: Path) -> None:
    """A 10^6-row sheet (its dimension as a writer records it) is refused in well under a
    second at the shipped bounds: nothing of the sheet is parsed."""
    path = tmp_path / "big.xlsx"
    sheet = (
        b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
        b'openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:I1000001"/><sheetData>'
        + b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (j, j) for j in range(1, 2001))
        + b"</sheetData></worksheet>"
    )
    _workbook(tmp_path / "small.xlsx", 2)
    with zipfile.ZipFile(tmp_path / "small.xlsx") as old, zipfile.ZipFile(path, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            new.writestr(info, sheet if info.filename == "xl/worksheets/sheet1.xml" else data)
    start = time.perf_counter()
    with pytest.raises(files.ZipInputError, match="1,000,001 rows x 9 columns"):
        files.check_sheet_size(path)
    assert time.perf_counter() - start < 5

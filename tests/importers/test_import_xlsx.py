"""`import table` reads an .xlsx workbook's first sheet (located by row), and every reader of a
zip-based input (import table, import vlmevalkit) refuses a workbook that would expand past the
one limit (`itemscale.core.files.MAX_UNZIPPED_BYTES`) before parsing any of it (docs/importers.md)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest

from itemscale.cli import main
from itemscale.core.files import MAX_UNZIPPED_BYTES, ZipInputError, check_unzipped_size
from itemscale.core.responses import read_run


def test_import_table_reads_an_xlsx_like_the_same_csv(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "item_id": ["q1", "q1", "q2", "q2"],
            "video_id": ["v1", "v1", "v2", "v2"],
            "config": ["8f", "16f", "8f", "16f"],
            "frames": [8, 16, 8, 16],
            "correct": [1, 0, 0, 1],
        }
    )
    rows.to_excel(tmp_path / "t.xlsx", index=False)
    rows.to_csv(tmp_path / "t.csv", index=False)
    assert main(["import", "table", str(tmp_path / "t.xlsx"), "-o", str(tmp_path / "a")]) == 0
    assert main(["import", "table", str(tmp_path / "t.csv"), "-o", str(tmp_path / "b")]) == 0
    a, _ = read_run(tmp_path / "a")
    b, _ = read_run(tmp_path / "b")
    columns = ["model", "item_id", "video_id", "config_label", "frames", "correct"]
    pd.testing.assert_frame_equal(a[columns], b[columns])


def test_a_bad_xlsx_value_names_its_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = pd.DataFrame(
        {"model": ["m", "m"], "item_id": ["q1", "q1"], "video_id": ["v", "v"]}
        | {"config": ["8f", "16f"], "frames": [8, "lots"], "correct": [1, 0]}
    )
    rows.to_excel(tmp_path / "t.xlsx", index=False)
    assert main(["import", "table", str(tmp_path / "t.xlsx"), "-o", str(tmp_path / "r")]) == 2
    assert "t.xlsx: row 3: column 'frames'" in capsys.readouterr().err


def _bomb(path: Path, expanded: int) -> Path:
    """A workbook-shaped zip whose sheet expands to `expanded` bytes of XML-ish padding."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as member:
            block = b" " * 2**20
            for _ in range(expanded // len(block)):
                member.write(block)
    return path


@pytest.mark.parametrize("command", ["table", "vlmevalkit"])
def test_a_workbook_expanding_past_the_limit_is_refused_before_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    bomb = _bomb(tmp_path / "M_Video-MME_8frame.xlsx", MAX_UNZIPPED_BYTES + 2**20)
    assert bomb.stat().st_size < MAX_UNZIPPED_BYTES // 100
    assert main(["import", command, str(bomb), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "expands to 257 MiB uncompressed, past the limit of 256 MiB" in err, err
    assert not (tmp_path / "run").exists()


def test_the_limit_function_reads_only_the_directory(tmp_path: Path) -> None:
    small = _bomb(tmp_path / "s.xlsx", 3 * 2**20)
    assert check_unzipped_size(small) == 3 * 2**20 + len("<Types/>")
    with pytest.raises(ZipInputError, match="past the limit of 1 MiB"):
        check_unzipped_size(small, limit=2**20)
    (tmp_path / "n.xlsx").write_bytes(b"not a zip")
    with pytest.raises(ZipInputError, match=r"not a readable \.xlsx workbook"):
        check_unzipped_size(tmp_path / "n.xlsx")

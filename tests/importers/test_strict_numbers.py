"""Numbers in a foreign file are read strictly and shown exactly, within bounds: `1_6` (which
Python's `float` reads as 16) is not a frame count, and a 309-digit number or
99999999999999999999999 is printed as written, not in full nor through a float."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.cli import main
from itemscale.collect.protocol import read_selection
from itemscale.collect.video import SelectionError
from itemscale.core.errors import SHOWN_VALUE_CHARS, shown_value
from itemscale.core.files import parse_decimal

BIG = 99999999999999999999999


@pytest.mark.parametrize("frames", ["1_6", "١٦", "0x10", "16 f", "1e1_0"])
def test_import_table_refuses_a_count_python_alone_would_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], frames: str
) -> None:
    src = tmp_path / "t.csv"
    src.write_text(f"model,item_id,config,frames,correct\nm,q1,a,{frames},1\n", encoding="utf-8")
    assert main(["import", "table", str(src), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"t.csv:2: column 'frames': {frames!r} is not a number" in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("value", "shown"),
    [(10**308, "100000000000...000000 (309 digits)"), (BIG, str(BIG))],
    ids=["309-digits", "23-digits"],
)
def test_huge_counts_are_shown_bounded_and_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: int, shown: str
) -> None:
    src = tmp_path / "t.jsonl"
    row = {"model": "m", "item_id": "q1", "config": "a", "frames": value, "correct": 1}
    src.write_text(json.dumps(row) + "\n")
    assert main(["import", "table", str(src), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"column 'frames': {shown} is too large" in err
    assert "0" * 40 not in err and "1611392" not in err


@pytest.mark.parametrize(
    ("index", "shown"),
    [(10**308, "100000000000...000000 (309 digits)"), (BIG, str(BIG)), ("1_6", "'1_6'")],
    ids=["309-digits", "23-digits", "underscore"],
)
def test_a_selection_file_index_is_refused_as_written(
    tmp_path: Path, index: object, shown: str
) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"question_id": "q", "frame_idx": [1, index]}]))
    with pytest.raises(SelectionError) as caught:
        read_selection(path)
    assert shown in str(caught.value)
    assert "1611392" not in str(caught.value) and "0" * 40 not in str(caught.value)


@given(st.integers(min_value=-(10**400), max_value=10**400))
def test_shown_value_is_bounded_and_exact_where_whole(value: int) -> None:
    text = shown_value(value)
    assert len(text) <= SHOWN_VALUE_CHARS + 20
    if len(repr(value)) <= SHOWN_VALUE_CHARS:
        assert text == repr(value)
    else:
        digits = str(abs(value))
        assert text.endswith(f"({len(digits)} digits)") and digits[:12] in text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parse_decimal_reads_what_python_writes(value: float) -> None:
    assert parse_decimal(repr(value)) == value
    assert parse_decimal(f" {value:e} ") == float(f"{value:e}")


def test_parse_decimal_refuses_what_only_python_reads() -> None:
    for text in ("1_6", "١٦", "0x10", "", "1e", "--1", "inf_"):
        with pytest.raises(ValueError):
            parse_decimal(text)

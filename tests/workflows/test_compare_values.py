"""compare checks the outcome values it reads: a run whose `correct` is not 0/1 or whose
`score` is outside [0, 1] (a schema-tagged Parquet written by hand) is refused naming the file
and the column, never averaged into an "accuracy" of 65 points where 33 of 60 are right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.compare_rows import compare_row
from itemscale import compare
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, write_run
from itemscale.workflows import WorkflowError


def _rows(outcomes: list[Any], column: str = "correct") -> list[dict[str, Any]]:
    if column == "correct":
        return [compare_row(f"i{j}", f"v{j // 3}", value) for j, value in enumerate(outcomes)]
    return [
        compare_row(f"i{j}", f"v{j // 3}", None, task_kind="open_qa", **{column: value})
        for j, value in enumerate(outcomes)
    ]


def _run(folder: Path, rows: list[dict[str, Any]]) -> Path:
    write_run(folder, normalise_responses(pd.DataFrame(rows)), {})
    return folder


def test_correct_of_seven_is_refused_naming_file_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 33 of 60 right; two rows carry 7.0 instead of 1 (the mean would read 65.00, not 55.00)
    values = [1.0] * 31 + [7.0] * 2 + [0.0] * 27
    a = _run(tmp_path / "a", _rows(values))
    b = _run(tmp_path / "b", _rows([1.0] * 60))
    with pytest.raises(WorkflowError) as info:
        compare(a, b, bootstrap=0)
    said = str(info.value)
    assert f"{a / 'responses.parquet'}: column 'correct': 2 row(s)" in said
    assert "not 0 or 1 (first: item i31, 7.0)" in said
    assert main(["compare", str(b), str(a), "--bootstrap", "0"]) == 2
    assert "column 'correct'" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [1.5, -0.25])
def test_a_score_outside_the_unit_interval_is_refused(tmp_path: Path, bad: float) -> None:
    a = _run(tmp_path / "a", _rows([0.5, bad, 0.25], column="score"))
    b = _run(tmp_path / "b", _rows([0.5, 0.5, 0.25], column="score"))
    with pytest.raises(
        WorkflowError, match=r"column 'score': 1 row\(s\) hold a value that is not in \[0, 1\]"
    ):
        compare(b, a, bootstrap=0)


def test_good_values_and_missing_ones_compare(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _rows([1.0] * 33 + [0.0] * 27))
    rows = _rows([1.0] * 60)
    rows[0] |= {"status": "model_error", "correct": None, "error": "boom"}
    b = _run(tmp_path / "b", rows)
    result = compare(a, b, bootstrap=0)
    assert result.answers.accuracy_a.value == pytest.approx(32 / 59)  # i0 failed in B
    assert result.counts.failed_b == 1

"""The report and the trajectories read a few of the responses' columns (memory on large
runs): what they give from those columns is what they give from the whole table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from _support.runs import make_mixed_run
from itemscale.cli import main
from itemscale.core.responses import COLUMNS, read_response_columns, read_responses
from itemscale.report._build import load_report_inputs
from itemscale.report._html import REPORT_COLUMNS, render_report
from itemscale.report._trajectories import TRAJECTORY_COLUMNS, trajectory_table


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Failed cells, open-ended items and an audit (its cards read the responses)."""
    run = tmp_path_factory.mktemp("cols") / "run"
    make_mixed_run(run)
    assert main(["audit", str(run)]) == 0
    assert main(["report", str(run), "--bootstrap", "10"]) == 0
    return run / "artifact"


def test_a_column_read_is_the_whole_read_cut(artifact: Path) -> None:
    whole = read_responses(artifact / "responses.parquet")
    some = read_response_columns(artifact / "responses.parquet", {"score", "model", "answer"})
    assert list(some.columns) == ["model", "answer", "score"]  # the schema's order
    pd.testing.assert_frame_equal(some, whole[["model", "answer", "score"]])
    with pytest.raises(ValueError, match="not response-table columns: nope"):
        read_response_columns(artifact / "responses.parquet", {"model", "nope"})


def test_the_page_from_its_columns_is_the_page_from_every_column(artifact: Path) -> None:
    inputs = load_report_inputs(artifact)
    assert set(inputs.responses.columns) == REPORT_COLUMNS
    whole = dataclasses.replace(inputs, responses=read_responses(artifact / "responses.parquet"))
    assert len(whole.responses.columns) == len(COLUMNS) > len(REPORT_COLUMNS)
    page = render_report(inputs)
    assert "class='card'" in page and page == render_report(whole)
    assert page == (artifact / "report.html").read_text(encoding="utf-8")


def test_trajectories_from_their_columns(artifact: Path) -> None:
    whole = read_responses(artifact / "responses.parquet")
    narrow = read_response_columns(artifact / "responses.parquet", TRAJECTORY_COLUMNS)
    pd.testing.assert_frame_equal(trajectory_table(narrow), trajectory_table(whole))

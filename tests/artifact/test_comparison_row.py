"""comparison.json has one row type: the paper comparison writes `PaperNumber` rows and the
report reads them back as the same record; a file that does not fit is named in the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.runs import make_run
from itemscale.report import COMPARISON_FILE, ArtifactError, PaperComparison, build_artifact
from itemscale.workflows import PaperNumber

ROW = PaperNumber(
    model="m",
    measure="visual confusion",
    paper=12.5,
    itemscale=12.5,
    ci=[10.0, 15.0],
    same=True,
    n_items=24,
    n_videos=12,
    configs=["textonly", "16f"],
)


def test_the_row_the_report_reads_is_the_row_the_comparison_writes() -> None:
    written = PaperComparison((ROW, PaperNumber(**{**ROW.__dict__, "same": False})))
    back = PaperComparison.from_json(json.loads(json.dumps(written.as_json())))
    assert back == written
    assert back.reproduced == 1
    assert isinstance(back.rows[0], PaperNumber)


def test_a_comparison_row_that_does_not_fit_names_the_file_and_the_key(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=8, with_audit=False)
    row = {k: v for k, v in ROW.__dict__.items() if k != "same"} | {"equal": True}
    (run / COMPARISON_FILE).write_text(json.dumps({"schema_version": 1, "rows": [row]}))
    with pytest.raises(ArtifactError, match=r"comparison\.json: rows\[0\]: .*'equal'"):
        build_artifact(run, bootstrap=0, seed=0)

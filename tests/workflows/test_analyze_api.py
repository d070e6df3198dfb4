"""`itemscale.analyze`: the main job from Python, on a run folder, a response table or a results
table of one's own, returning the typed result whose JSON is `analyze --json`'s."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import itemscale
from _support.runs import make_run
from itemscale.analysis.measures import FRAME_COLUMNS, AnalysisResult, Estimate
from itemscale.cli import main
from itemscale.collect.importers import ImportInputError
from itemscale.core.responses import SchemaError


def _results_table() -> pd.DataFrame:
    """A results table as a notebook builds one: 4 items on 2 videos, three budgets and the
    text-only answer; hand-checked rates below."""
    right = {  # item -> correct at 0 (text-only), 8, 16, 32 frames
        "v1-q1": [0, 1, 1, 0],
        "v1-q2": [1, 0, 1, 1],
        "v2-q1": [0, 0, 1, 1],
        "v2-q2": [0, 0, 0, 0],
    }
    rows = []
    for item, ys in right.items():
        for frames, y in zip((0, 8, 16, 32), ys, strict=True):
            rows.append(
                {
                    "model": "m",
                    "item_id": item,
                    "video_id": item.split("-")[0],
                    "config": f"{frames}f" if frames else "text-only",
                    "frames": frames,
                    "correct": y,
                }
            )
    return pd.DataFrame(rows)


def test_a_run_folder_gives_what_analyze_json_writes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=10, with_audit=False)
    out = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "30", "--json", str(out)]) == 0
    result = itemscale.analyze(run, bootstrap=30)
    assert isinstance(result, AnalysisResult)
    assert result.dumps(sort_keys=True) == json.dumps(
        json.loads(out.read_text(encoding="utf-8")), sort_keys=True
    )
    # and the JSON reads back into the same record
    again = AnalysisResult.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert again.to_json() == result.to_json()


def test_a_notebook_table_is_imported_and_analysed() -> None:
    result = itemscale.analyze(_results_table(), bootstrap=0)
    series = result["m"]
    assert series.kind == "binary"
    assert series.configs == ("8f", "16f", "32f")
    assert series.accuracy["16f"] == Estimate(0.75, count={"k": 3, "n": 4})  # 3 of 4 items
    assert series.accuracy["16f"].ci_low is None
    # harmful on the visual budgets: v1-q1 alone (right at 8f and 16f, wrong at 32f)
    assert series.estimate("harmful_rate").value == pytest.approx(1 / 4)
    assert series.estimate("oracle").value == pytest.approx(3 / 4)
    # the seed paper's reading: v1-q2 is right blind and wrong at 8f (overwrite, harmed)
    assert series.estimate("grid_with_text.overwrite_rate").value == pytest.approx(1 / 4)
    assert series.estimate("grid_with_text.harmful_rate").value == pytest.approx(2 / 4)
    with pytest.raises(KeyError, match="no measure 'harmful'"):
        series.estimate("harmful")


def test_to_frame_is_tidy() -> None:
    frame = itemscale.analyze(_results_table(), bootstrap=40, seed=3).to_frame()
    assert tuple(frame.columns) == FRAME_COLUMNS
    acc = frame[(frame.measure == "accuracy")].set_index("config")["value"]
    assert acc.to_dict() == pytest.approx({"8f": 0.25, "16f": 0.75, "32f": 0.5})
    harmful = frame[(frame.measure == "harmful_rate") & frame.config.isna()]
    assert len(harmful) == 1
    row = harmful.iloc[0]
    assert row.ci_low <= row.value <= row.ci_high
    best = frame[frame.measure == "best_fixed"].iloc[0]
    assert best.config == "16f"
    assert not frame.duplicated(["model", "series", "measure", "config"]).any()


def test_bad_tables_get_located_errors() -> None:
    table = _results_table()
    table.loc[5, "correct"] = 3
    with pytest.raises(ImportInputError, match=r"DataFrame: row 6: column 'correct'"):
        itemscale.analyze(table)
    with pytest.raises(ImportInputError, match="missing column 'correct' or 'score'"):
        itemscale.analyze(_results_table().drop(columns=["correct"]))
    with pytest.raises(ValueError, match=r"bootstrap\n  Value error, resamples must be >= 0"):
        itemscale.analyze(_results_table(), bootstrap=-1)
    with pytest.raises(ValueError, match=r"ci\n  Input should be 'bca' or 'percentile'"):
        itemscale.analyze(_results_table(), ci="bootstrap")


def test_a_response_table_without_optional_columns_is_normalised(tmp_path: Path) -> None:
    """The response table's required columns alone (no `answer`, no `score`): analysed, not a
    KeyError from inside the measures."""
    run = tmp_path / "run"
    df, _ = make_run(run, n_items=6, with_audit=False)
    required = df[
        [
            "model",
            "item_id",
            "video_id",
            "task_kind",
            "series",
            "config_id",
            "config_label",
            "axis_order",
            "frames",
            "repeat",
            "status",
            "correct",
        ]
    ]
    result = itemscale.analyze(required, bootstrap=0)
    assert result.model_names
    broken = required.assign(status="fine")
    with pytest.raises(SchemaError, match="column 'status' has unknown value"):
        itemscale.analyze(broken)


def test_a_newer_layout_is_refused() -> None:
    data = itemscale.analyze(_results_table(), bootstrap=0).to_json()
    data["schema_version"] = 99
    with pytest.raises(SchemaError, match="newer than this itemscale reads"):
        AnalysisResult.from_json(data)


def test_a_duplicated_row_key_is_refused_not_overwritten(tmp_path: Path) -> None:
    """Two rows of one (model, item, configuration, repeat), on the axis or the text-only
    baseline: the matrix would keep one of them silently."""
    from itemscale.analysis.measures import analyze_responses, build_matrices

    run = tmp_path / "run"
    df, _ = make_run(run, n_items=6, with_audit=False)
    for frames in (8, 0):
        row = df[df["frames"] == frames].iloc[[0]]
        twice = pd.concat([df, row.assign(correct=1.0 - row["correct"])], ignore_index=True)
        with pytest.raises(SchemaError, match=r"duplicate row key .*\(2 rows\)"):
            analyze_responses(twice, bootstrap=0).to_json()
        with pytest.raises(SchemaError, match="duplicate row key"):
            build_matrices(twice)

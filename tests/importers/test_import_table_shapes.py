"""`import table --wide / --rename / --benchmark / --answer-key`: tables as papers release them.

Golden rows computed by hand from a small wide table and Video-MME's published question file
(gold answers 001-1 = C, 001-2 = A, 002-1 = C), and every bad input with its located error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from itemscale.cli import main
from itemscale.collect.importers import (
    ImportInputError,
    TableOptions,
    frames_from_label,
    import_table,
    key_from_benchmark,
    load_answer_key,
    pixels_from_label,
)
from itemscale.core.responses import NOANSWER, read_run

WIDE = """sample_id,textonly,8f,16f_151k,attr_split
001-1,C,B,The answer is C,V1
001-2,,A,A,V1
002-1,D,C,(C),V1
"""


def _write(tmp_path: Path, text: str, name: str = "wide.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _bench(fixtures_dir: Path) -> Path:
    return fixtures_dir / "benchmarks" / "videomme-test.parquet"


def test_wide_table_with_benchmark_golden_rows(tmp_path: Path, fixtures_dir: Path) -> None:
    key = key_from_benchmark(_bench(fixtures_dir))
    opts = TableOptions(wide=True, id_column="sample_id", model="m")
    rows, notes = import_table(_write(tmp_path, WIDE), opts, key=key)
    got = {
        (r.item_id, r.config_label): (
            r.frames,
            r.answer,
            r.correct,
            r.status,
            None if pd.isna(r.raw_text) else r.raw_text,
        )
        for r in rows.itertuples()
    }
    assert got == {
        ("001-1", "textonly"): (0, "C", 1.0, "ok", None),
        ("001-1", "8f"): (8, "B", 0.0, "ok", None),
        ("001-1", "16f_151k"): (16, "C", 1.0, "ok", "The answer is C"),
        ("001-2", "textonly"): (0, NOANSWER, 0.0, "noanswer", None),
        ("001-2", "8f"): (8, "A", 1.0, "ok", None),
        ("001-2", "16f_151k"): (16, "A", 1.0, "ok", None),
        ("002-1", "textonly"): (0, "D", 0.0, "ok", None),
        ("002-1", "8f"): (8, "C", 1.0, "ok", None),
        ("002-1", "16f_151k"): (16, "C", 1.0, "ok", "(C)"),
    }
    r = rows.set_index(["item_id", "config_label"])
    assert r.loc[("001-1", "16f_151k"), "pixels"] == 151000
    assert pd.isna(r.loc[("001-1", "8f"), "pixels"])
    assert r.loc[("001-1", "8f"), "reference"] == "C"
    assert r.loc[("001-1", "8f"), "video_id"] == "fFjv93ACGo8"  # Video-MME's YouTube id
    attrs = json.loads(r.loc[("001-1", "8f"), "attributes"])
    assert attrs["duration"] == "short" and attrs["split"] == "V1"
    assert attrs["task_type"] == "Counting Problem"
    assert r.loc[("001-1", "8f"), "source"] == "table:wide.csv:2"
    assert any("1 empty answer cell" in n for n in notes)
    assert any("3 of the table's 3 items found (it lists 2700)" in n for n in notes)


def test_empty_cells_can_mean_not_run(tmp_path: Path, fixtures_dir: Path) -> None:
    key = key_from_benchmark(_bench(fixtures_dir))
    opts = TableOptions(wide=True, id_column="sample_id", model="m", empty="missing")
    rows, _ = import_table(_write(tmp_path, WIDE), opts, key=key)
    assert len(rows) == 8
    assert ("001-2", "textonly") not in set(zip(rows["item_id"], rows["config_label"], strict=True))


def test_wide_correctness_cells_and_frames_override(tmp_path: Path) -> None:
    text = "item_id,video_id,blind,uniform,32f\nq1,v1,1,0,1\nq2,v1,0,,1\n"
    opts = TableOptions(wide=True, model="m", frames={"uniform": 16}, wide_values="correct")
    rows, _ = import_table(_write(tmp_path, text), opts)
    got = sorted(
        zip(rows["item_id"], rows["config_label"], rows["frames"], rows["correct"], strict=True)
    )
    assert got == [
        ("q1", "32f", 32, 1.0),
        ("q1", "blind", 0, 1.0),
        ("q1", "uniform", 16, 0.0),
        ("q2", "32f", 32, 1.0),
        ("q2", "blind", 0, 0.0),
    ]


def test_long_table_with_renamed_columns_like_per_item_csv(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    text = (
        "sample_id,model,split,config,frame_count,pixel_count,predicted_option,"
        "ground_truth_option,correct\n"
        "001-1,M,V1_short,textonly,0,0,C,C,1\n"
        "001-1,M,V1_short,16f_151k,16,150528,B,C,0\n"
        "001-2,M,V1_short,16f_151k,16,150528,A,A,1\n"
    )
    renames = {
        "sample_id": "item_id",
        "frame_count": "frames",
        "predicted_option": "answer",
        "ground_truth_option": "gold",
        "split": "attr_split",
    }
    rows, notes = import_table(_write(tmp_path, text, "per_item.csv"), TableOptions(rename=renames))
    got = sorted(
        zip(rows["item_id"], rows["config_label"], rows["answer"], rows["correct"], strict=True)
    )
    assert got == [
        ("001-1", "16f_151k", "B", 0.0),
        ("001-1", "textonly", "C", 1.0),
        ("001-2", "16f_151k", "A", 1.0),
    ]
    assert any("pixel_count" in n for n in notes)  # not renamed: ignored, and said so
    # a `correct` that disagrees with answer and gold names the file's own column
    bad = text.replace(
        "001-2,M,V1_short,16f_151k,16,150528,A,A,1", "001-2,M,V1_short,16f_151k,16,150528,B,A,1"
    )
    with pytest.raises(
        ImportInputError, match=r"per_item\.csv:4: column 'correct'.*reads as B.*gold answer is A"
    ):
        import_table(_write(tmp_path, bad, "per_item.csv"), TableOptions(rename=renames))
    # the same answers checked against the benchmark file
    rows, _ = import_table(
        _write(tmp_path, text, "per_item.csv"),
        TableOptions(rename=renames),
        key=key_from_benchmark(_bench(fixtures_dir)),
    )
    assert set(rows["video_id"]) == {"fFjv93ACGo8"}


def test_answer_key_file(tmp_path: Path) -> None:
    key_path = _write(
        tmp_path, "item_id,gold,video_id,attr_task\nq1,b,v1,count\nq2,A,v1,count\n", "key.csv"
    )
    key = load_answer_key(key_path)
    rows, _ = import_table(
        _write(tmp_path, "item_id,8f,16f\nq1,B,A\nq2,NOANSWER,A\n"),
        TableOptions(wide=True, model="m"),
        key=key,
    )
    got = sorted(
        zip(rows["item_id"], rows["config_label"], rows["correct"], rows["video_id"], strict=True)
    )
    assert got == [
        ("q1", "16f", 0.0, "v1"),
        ("q1", "8f", 1.0, "v1"),
        ("q2", "16f", 1.0, "v1"),
        ("q2", "8f", 0.0, "v1"),
    ]
    assert json.loads(rows["attributes"].iloc[0]) == {"task": "count"}


@pytest.mark.parametrize(
    ("table", "options", "key_text", "message"),
    [
        (
            "sample_id,8f\nq1,A\n",
            {"wide": True, "id_column": "sample_id"},
            None,
            r"give the model with --model",
        ),
        (
            "id,8f\nq1,A\n",
            {"wide": True, "model": "m"},
            None,
            r"no id column 'item_id'.*--id-column",
        ),
        (
            "item_id,uniform\nq1,A\n",
            {"wide": True, "model": "m"},
            "item_id,gold\nq1,A\n",
            r"wide\.csv:1: column 'uniform': cannot tell the frame count.*--frames uniform=N",
        ),
        (
            "item_id,8f\nq1,A\n",
            {"wide": True, "model": "m", "frames": {"9f": 9}},
            None,
            r"--frames 9f=\.\.\.: no configuration column '9f'",
        ),
        (
            "item_id,8f\nq1,A\n",
            {"wide": True, "model": "m", "rename": {"sample": "item_id"}},
            None,
            r"--rename sample=item_id: no column 'sample'",
        ),
        (
            "item_id,8f\nq1,A\n",
            {"wide": True, "model": "m"},
            None,
            r"missing column 'correct' or 'score'",
        ),
        (
            "item_id,8f\nq9,A\n",
            {"wide": True, "model": "m"},
            "item_id,gold\nq1,A\n",
            r"wide\.csv:2: column 'item_id': item 'q9' is not in .*key\.csv",
        ),
        (
            "item_id,gold,8f\nq1,B,A\n",
            {"wide": True, "model": "m"},
            "item_id,gold\nq1,A\n",
            r"column 'gold': gold answer B for item 'q1', but A in",
        ),
        (
            "item_id,gold,8f\nq1,maybe,A\n",
            {"wide": True, "model": "m"},
            None,
            r"column 'gold': gold answer 'maybe' is not an option letter",
        ),
        (
            "model,item_id,config,frames,answer\nm,q1,8f,8,A\n",
            {"model": "x"},
            None,
            r"has a 'model' column; --model is for tables without one",
        ),
        (
            "model,item_id,config,answer,gold\nm,q1,uniform,A,A\n",
            {},
            None,
            r"wide\.csv:2: column 'config': cannot tell the frame count of configuration 'uniform'",
        ),
    ],
)
def test_bad_input_is_located(
    tmp_path: Path, table: str, options: dict[str, object], key_text: str | None, message: str
) -> None:
    key = load_answer_key(_write(tmp_path, key_text, "key.csv")) if key_text else None
    with pytest.raises(ImportInputError, match=message):
        import_table(_write(tmp_path, table), TableOptions(**options), key=key)  # type: ignore[arg-type]


def test_bad_answer_key_is_located(tmp_path: Path) -> None:
    with pytest.raises(
        ImportInputError, match=r"key\.csv:3: column 'gold': 'E1' is not an option letter"
    ):
        load_answer_key(_write(tmp_path, "item_id,gold\nq1,A\nq2,E1\n", "key.csv"))
    with pytest.raises(
        ImportInputError, match=r"key\.csv:3: column 'item_id': item 'q1' appears twice"
    ):
        load_answer_key(_write(tmp_path, "item_id,gold\nq1,A\nq1,B\n", "key.csv"))
    with pytest.raises(ImportInputError, match=r"needs columns 'item_id' and 'gold'"):
        load_answer_key(_write(tmp_path, "item_id,answer\nq1,A\n", "key.csv"))


def test_labels_state_frames_and_pixels() -> None:
    assert [
        frames_from_label(x)
        for x in ("16f_151k", "8f", "8frames", "textonly", "blind", "Text-Only", "uniform", "f16")
    ] == [16, 8, 8, 0, 0, 0, None, None]
    assert [
        pixels_from_label(x) for x in ("64f_235k", "64f_76k", "16f", "textonly", "32f@302k")
    ] == [235000, 76000, None, None, 302000]


def test_cli_wide_import_records_options_and_refuses_bad_input(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    run = tmp_path / "run"
    table = _write(tmp_path, WIDE)
    argv = [
        "import",
        "table",
        "--wide",
        "--id-column",
        "sample_id",
        "--model",
        "m",
        "--benchmark",
        str(_bench(fixtures_dir)),
        str(table),
        "-o",
        str(run),
    ]
    assert main(argv) == 0
    df, meta = read_run(run)
    assert len(df) == 9
    options = meta["imports"][0]["options"]
    assert options["wide"] is True and options["id_column"] == "sample_id"
    assert options["benchmark"]["sha256"]
    before = (run / "responses.parquet").read_bytes()
    # both key sources at once, a malformed --rename, a bad --frames: exit 2, nothing written
    assert main([*argv[:-3], "--answer-key", str(table), str(table), "-o", str(run)]) == 2
    assert main(["import", "table", "--rename", "nonsense", str(table), "-o", str(run)]) == 2
    assert (
        main(
            [
                "import",
                "table",
                "--wide",
                "--model",
                "m",
                "--frames",
                "8f=x",
                str(table),
                "-o",
                str(run),
            ]
        )
        == 2
    )
    assert (run / "responses.parquet").read_bytes() == before
    assert main(argv) == 0  # idempotent
    assert (run / "responses.parquet").read_bytes() == before

"""`itemscale import table`: hand-computed rows, every bad-input error, idempotent re-import."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import (
    ImportConflictError,
    ImportInputError,
    import_table,
    label_config_id,
    merge_into_run,
)
from itemscale.collect.importers._common import import_record
from itemscale.core.responses import NOANSWER, read_run

HEADER = "model,item_id,video_id,config,order,frames,correct,answer,attr_duration"
GOOD = [
    "m,q1,v1,8f,1,8,1,B,short",
    "m,q1,v1,16f,2,16,0,C,short",
    "m,q2,v1,8f,1,8,0,NOANSWER,short",
    "m,q2,v1,16f,2,16,1,A,short",
    "m,q3,v2,8f,1,8,1,D,long",
    "m,q3,v2,16f,2,16,1,D,long",
    "m,q1,v1,blind,0,0,1,B,short",
]


@pytest.fixture(autouse=True)
def _analyze_prints_to_a_live_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd_analyze.print_summary binds `sys.stdout` as a default argument at import time; under
    pytest's capture that stream is closed by a later test. Give it a live one."""
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def write_csv(tmp_path: Path, lines: list[str], name: str = "t.csv", header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_rows_land_in_the_response_table(tmp_path: Path) -> None:
    rows, notes = import_table(write_csv(tmp_path, GOOD))
    assert len(rows) == 7
    r = rows.set_index(["item_id", "config_label"])
    assert r.loc[("q1", "8f"), "correct"] == 1.0
    assert r.loc[("q1", "16f"), "correct"] == 0.0
    assert r.loc[("q2", "8f"), "status"] == "noanswer"
    assert r.loc[("q2", "16f"), "status"] == "ok"
    assert r.loc[("q1", "8f"), "task_kind"] == "mcqa"
    assert r.loc[("q1", "8f"), "series"] == "default"
    assert r.loc[("q1", "8f"), "axis_order"] == 1.0
    assert r.loc[("q1", "blind"), "frames"] == 0
    assert "blind" in set(rows["config_label"])  # the user's label stays
    assert r.loc[("q1", "8f"), "config_id"] == label_config_id("8f", 8)
    assert json.loads(r.loc[("q3", "8f"), "attributes"]) == {"duration": "long"}
    assert r.loc[("q1", "8f"), "source"] == "table:t.csv:2"
    assert any("blind" in n for n in notes)


def test_config_id_is_a_stable_hash_of_label_and_frames() -> None:
    # sha256 of '{"frames":8,"label":"8f","v":1}', first 16 hex digits
    import hashlib

    expected = hashlib.sha256(b'{"frames":8,"label":"8f","v":1}').hexdigest()[:16]
    assert label_config_id("8f", 8) == expected
    assert label_config_id("8f", 16) != expected
    assert label_config_id("8g", 8) != expected


def test_cli_import_then_analyze_matches_hand_computation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_csv(tmp_path, GOOD)
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    out = capsys.readouterr().out
    assert "7 added" in out and "matched grid: 3 items" in out
    assert "noanswer (no option recognised)" in out
    df, prov = read_run(run)
    assert len(df) == 7
    (imp,) = prov["imports"]
    assert imp["importer"] == "table"
    assert imp["sources"][0]["sha256"] == __import__("hashlib").sha256(src.read_bytes()).hexdigest()
    assert imp["tool_version"]
    measures = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "20", "--json", str(measures)]) == 0
    m = json.loads(measures.read_text())["models"]["m"]
    # 8f: q1 1, q2 0, q3 1 -> 2/3; 16f: q1 0, q2 1, q3 1 -> 2/3
    assert m["accuracy"]["8f"]["value"] == pytest.approx(2 / 3)
    assert m["accuracy"]["16f"]["value"] == pytest.approx(2 / 3)
    # q1 right at 8f and wrong at 16f: harmful 1/3; q2 the reverse: beneficial 1/3
    assert m["harmful_rate"]["value"] == pytest.approx(1 / 3)
    assert m["beneficial_rate"]["value"] == pytest.approx(1 / 3)
    assert m["oracle"]["value"] == pytest.approx(1.0)


def test_reimport_is_idempotent_and_writes_nothing(tmp_path: Path) -> None:
    src = write_csv(tmp_path, GOOD)
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    after = {p.name: p.read_bytes() for p in run.iterdir()}
    assert before == after


def test_second_file_adds_rows_and_a_provenance_record(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert (
        main(["import", "table", str(write_csv(tmp_path, GOOD[:2], "a.csv")), "-o", str(run)]) == 0
    )
    assert (
        main(["import", "table", str(write_csv(tmp_path, GOOD[2:], "b.csv")), "-o", str(run)]) == 0
    )
    df, prov = read_run(run)
    assert len(df) == 7
    assert [Path(i["sources"][0]["path"]).name for i in prov["imports"]] == ["a.csv", "b.csv"]


def test_conflicting_answer_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["import", "table", str(write_csv(tmp_path, GOOD, "a.csv")), "-o", str(run)]) == 0
    before = (run / "responses.parquet").read_bytes()
    changed = [GOOD[0].replace(",1,B,", ",0,C,"), "m,q9,v9,8f,1,8,1,A,short"]
    rows, _ = import_table(write_csv(tmp_path, changed, "b.csv"))
    with pytest.raises(ImportConflictError, match=r"'correct' is 1\.0 in the run .*table:a\.csv:2"):
        merge_into_run(run, rows, import_record("table", []))
    assert (run / "responses.parquet").read_bytes() == before
    assert len(read_run(run)[0]) == 7  # q9 was not added either


@pytest.mark.parametrize(
    ("lines", "header", "message"),
    [
        (
            # without `config` the label comes from `frames`; without both, both are named
            ["m,q1,v1,1,1,B,short"],
            "model,item_id,video_id,order,correct,answer,attr_d",
            r"t\.csv:1: missing required column\(s\) 'config', 'frames'",
        ),
        (
            ["m,q1,v1,8f,1,8,B,short"],
            "model,item_id,video_id,config,order,frames,answer,attr_d",
            r"t\.csv:1: missing column 'correct' or 'score'",
        ),
        (
            ["m,q1,v1,8f,1,8,1,B,short", "m,q1,v1,8f,1,8,0,C,short"],
            HEADER,
            r"t\.csv:3: duplicate key \(model='m', item_id='q1', config='8f', repeat=0\) first seen on line 2",
        ),
        (
            ["m,q1,v1,8f,1,eight,1,B,short"],
            HEADER,
            r"t\.csv:2: column 'frames': 'eight' is not a number",
        ),
        (["m,q1,v1,8f,1,8,2,B,short"], HEADER, r"t\.csv:2: column 'correct': '2' must be 0 or 1"),
        (
            ["m,q1,v1,8f,1,8,1,B,short", "m,q2,v1,8f,3,8,1,B,short"],
            HEADER,
            r"t\.csv:3: column 'order': config '8f' has order 3 here but 1 on line 2",
        ),
        (
            ["m,q1,v1,8f,1,8,1,B,short", "m,q2,v1,8f,1,16,1,B,short"],
            HEADER,
            r"t\.csv:3: column 'frames': config '8f' has frames 16 here but 8 on line 2",
        ),
        (["m,,v1,8f,1,8,1,B,short"], HEADER, r"t\.csv:2: column 'item_id': empty value"),
        (["m,q1,v1,8f,1,8,1,B"], HEADER, r"t\.csv:2: 8 fields, the header has 9"),
        (["m,q1,v1,8f,1,-8,1,B,short"], HEADER, r"t\.csv:2: column 'frames': '-8' is below 0"),
        (
            ["m,q1,v1,8f,1,8,1,NOANSWER,short"],
            HEADER,
            r"t\.csv:2: column 'correct': a NOANSWER row cannot be correct",
        ),
        (
            ["m,q1,v1,8f,1,8,1,B,short", "m,q1,v2,16f,2,16,1,B,short"],
            HEADER,
            r"t\.csv:3: column 'video_id': item 'q1' has video 'v2' here but 'v1' on line 2",
        ),
    ],
)
def test_bad_csv_names_file_line_and_column(
    tmp_path: Path, lines: list[str], header: str, message: str
) -> None:
    path = write_csv(tmp_path, lines, header=header)
    with pytest.raises(ImportInputError, match=message):
        import_table(path)


def test_cli_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_csv(tmp_path, [*GOOD, "m,q4,v3,8f,1,8,yes,B,short"])
    run = tmp_path / "run"
    assert main(["import", "table", str(path), "-o", str(run)]) == 2
    err = capsys.readouterr().err
    assert "t.csv:9: column 'correct': 'yes' is not a number" in err
    assert not run.exists()


def test_score_rows_and_both_correct_and_score(tmp_path: Path) -> None:
    header = "model,item_id,config,frames,correct,score"
    ok = write_csv(tmp_path, ["m,q1,8f,8,,0.25", "m,q1,16f,16,,1"], header=header)
    rows, _ = import_table(ok)
    assert rows["task_kind"].tolist() == ["open_qa", "open_qa"]
    assert rows["score"].tolist() == [0.25, 1.0]
    assert rows["video_id"].tolist() == ["q1", "q1"]  # video_id defaults to item_id
    assert rows["axis_order"].tolist() == [8.0, 16.0]  # order defaults to frames
    both = write_csv(tmp_path, ["m,q1,8f,8,1,0.5"], "both.csv", header=header)
    with pytest.raises(ImportInputError, match=r"both\.csv:2: both 'correct' and 'score'"):
        import_table(both)
    out = write_csv(tmp_path, ["m,q1,8f,8,,1.5"], "out.csv", header=header)
    with pytest.raises(ImportInputError, match=r"out\.csv:2: column 'score': '1.5' is outside"):
        import_table(out)


def test_prediction_and_reference_give_token_f1_rouge_and_exact_match(tmp_path: Path) -> None:
    path = tmp_path / "open.jsonl"
    lines = [
        {
            "model": "m",
            "item_id": "q1",
            "config": "8f",
            "frames": 8,
            "prediction": "the cat sat on the mat",
            "reference": "the cat lay on a mat",
        },
        {
            "model": "m",
            "item_id": "q1",
            "config": "16f",
            "frames": 16,
            "prediction": "a red ball",
            "reference": ["blue", "Red ball."],
            "score": 0.4,
        },
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    rows, _ = import_table(path)
    r = rows.set_index("config_label")
    # token F1 3/4 (see test_scoring); score defaults to token F1
    assert r.loc["8f", "token_f1"] == pytest.approx(0.75)
    assert r.loc["8f", "score"] == pytest.approx(0.75)
    assert r.loc["8f", "rouge_l"] == pytest.approx(2 / 3)
    assert r.loc["8f", "exact_match"] == 0.0
    assert r.loc["16f", "exact_match"] == 1.0  # "red ball" matches the second reference
    assert r.loc["16f", "score"] == pytest.approx(0.4)  # a given score is kept
    assert r.loc["8f", "raw_text"] == "the cat sat on the mat"


def test_jsonl_truncated_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"model": "m", "item_id": "q", "config": "8f", "frames": 8, "correct": 1})
        + '\n{"model": "m", "item_id": "q2", "con\n',
        encoding="utf-8",
    )
    with pytest.raises(ImportInputError, match=r"t\.jsonl:2: not valid JSON .*truncated"):
        import_table(path)


def test_parquet_rows_are_counted_from_one(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "model": ["m", "m"],
            "item_id": ["q1", "q2"],
            "config": ["8f", "8f"],
            "frames": [8, 8],
            "correct": [1, 3],
        }
    )
    pq.write_table(table, path)
    with pytest.raises(
        ImportInputError, match=r"t\.parquet: row 2: column 'correct': 3 must be 0 or 1"
    ):
        import_table(path)
    pq.write_table(table.set_column(4, "correct", pa.array([1, 0])), path)
    rows, _ = import_table(path)
    assert rows["correct"].tolist() == [1.0, 0.0]


def test_unknown_format_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "t.xls"
    bad.write_text("x", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"t\.xls: unknown table format '\.xls'"):
        import_table(bad)
    with pytest.raises(ImportInputError, match="no such file"):
        import_table(tmp_path / "absent.csv")


def test_failure_rows_and_repeats(tmp_path: Path) -> None:
    header = "model,item_id,config,frames,correct,repeat,status"
    path = write_csv(
        tmp_path,
        [
            "m,q1,8f,8,1,0,",
            "m,q1,8f,8,0,1,",
            "m,q1,16f,16,,0,media_error",
            "m,q2,16f,16,,0,timeout",
        ],
        header=header,
    )
    rows, _ = import_table(path)
    r = rows.set_index(["item_id", "config_label", "repeat"])
    assert r.loc[("q1", "8f", 1), "correct"] == 0.0
    assert r.loc[("q1", "16f", 0), "status"] == "media_error"
    assert r.loc[("q1", "16f", 0), "task_kind"] == "mcqa"  # inherited from the item's answers
    bad = write_csv(tmp_path, ["m,q1,8f,8,1,0,timeout"], "bad.csv", header=header)
    with pytest.raises(ImportInputError, match=r"bad\.csv:2: column 'status': a 'timeout' row"):
        import_table(bad)


def test_ignored_columns_are_reported(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path, ["m,q1,8f,8,1,what"], header="model,item_id,config,frames,correct,question"
    )
    rows, notes = import_table(path)
    assert len(rows) == 1
    assert any("ignored column(s) question" in n for n in notes)
    assert rows["answer"].isna().all()
    assert NOANSWER not in set(rows["status"])
    assert isinstance(rows, pd.DataFrame)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    grid=st.lists(st.lists(st.integers(0, 1), min_size=3, max_size=3), min_size=1, max_size=8),
    seed=st.integers(0, 2**16),
)
def test_any_valid_grid_round_trips_in_any_row_order(
    tmp_path: Path, grid: list[list[int]], seed: int
) -> None:
    """Whatever the values and the row order, the table holds exactly the input cells."""
    import random

    lines = [
        f"m,q{i},v{i // 2},{8 * 2**k}f,{k},{8 * 2**k},{c}"
        for i, row in enumerate(grid)
        for k, c in enumerate(row)
    ]
    random.Random(seed).shuffle(lines)
    path = write_csv(
        tmp_path, lines, f"g{seed}.csv", header="model,item_id,video_id,config,order,frames,correct"
    )
    rows, _ = import_table(path)
    got = {(r.item_id, int(r.frames)): r.correct for r in rows.itertuples()}
    want = {(f"q{i}", 8 * 2**k): float(c) for i, row in enumerate(grid) for k, c in enumerate(row)}
    assert got == want
    assert rows.groupby("config_label")["config_id"].nunique().eq(1).all()
    assert len(set(rows["config_id"])) == 3


def test_the_same_key_in_two_files_of_one_import_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_csv(tmp_path, GOOD[:2], "a.csv")
    b = write_csv(tmp_path, [GOOD[0].replace(",1,B,", ",0,C,")], "b.csv")
    assert main(["import", "table", str(a), str(b), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "item_id='q1'" in err and "table:a.csv:2" in err and "table:b.csv:2" in err
    assert not (tmp_path / "run").exists()


def test_attributes_drive_analyze_by(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["import", "table", str(write_csv(tmp_path, GOOD)), "-o", str(run)]) == 0
    out = tmp_path / "m.json"
    argv = ["analyze", str(run), "--bootstrap", "0", "--by", "duration", "--json", str(out)]
    assert main(argv) == 0
    groups = json.loads(out.read_text())["models"]["m"]["by"]["duration"]["groups"]
    # long: q3 right at both; short: q1 (1, 0) and q2 (0, 1) -> 1/2 at each budget
    assert groups["long"]["accuracy"]["8f"]["value"] == 1.0
    assert groups["short"]["accuracy"]["8f"]["value"] == pytest.approx(0.5)
    assert groups["short"]["accuracy"]["16f"]["value"] == pytest.approx(0.5)

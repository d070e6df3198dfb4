"""Benchmark question files (the published Parquet files) into Item records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscale.collect.items import (
    BenchmarkFileError,
    Item,
    load_benchmark,
    load_longvideobench,
    load_mlvu,
    load_videomme,
    strip_option_prefix,
    write_items_jsonl,
)
from itemscale.collect.items._benchmarks import detect_benchmark


def bench(fixtures_dir: Path, name: str) -> Path:
    return fixtures_dir / "benchmarks" / name


def test_videomme(fixtures_dir: Path) -> None:
    items = load_videomme(bench(fixtures_dir, "videomme-test.parquet"))
    assert len(items) == 2700
    first = items[0]
    assert first.item_id == "001-1"
    assert first.video_id == "fFjv93ACGo8"
    assert first.options == (
        "Apples.",
        "Candles.",
        "Berries.",
        "The three kinds are of the same number.",
    )
    assert first.answer == "C"
    assert first.attributes["duration"] == "short"
    assert first.attributes["task_type"] == "Counting Problem"
    assert first.attributes["domain"] == "Knowledge"
    assert first.video_path == "fFjv93ACGo8.mp4"
    assert {i.attributes["duration"] for i in items} == {"short", "medium", "long"}
    assert len({i.item_id for i in items}) == 2700
    assert len({i.video_id for i in items}) == 900  # 3 questions per video


def test_mlvu(fixtures_dir: Path) -> None:
    items = load_mlvu(bench(fixtures_dir, "mlvu-test.parquet"), video_dir="/videos/mlvu")
    assert len(items) == 2174
    first = items[0]
    assert first.item_id == "Q0"
    assert first.video_id == "needle_32"
    assert first.question == "What does the hand coming out of the computer do?"
    assert first.options[1] == "Shakes the woman's hand"
    assert first.answer == "A"
    assert first.attributes == {"task_type": "needle"}
    assert first.video_path == "/videos/mlvu/needle_32.mp4"
    assert first.duration_s == pytest.approx(467.98)


def test_longvideobench(fixtures_dir: Path) -> None:
    items = load_longvideobench(bench(fixtures_dir, "longvideobench-val.parquet"))
    assert len(items) == 1337
    by_id = {i.item_id: i for i in items}
    first = by_id["86CxyhFV9MI_0"]
    assert first.video_id == "86CxyhFV9MI"
    assert first.answer == "B"  # correct_choice 1
    assert len(first.options) == 4  # option4 is 'N/A'
    assert first.attributes["duration"] == "600"
    assert first.attributes["question_category"] == "TOS"
    three = by_id["kj3Po7zUeyw_0"]  # option3 and option4 are 'N/A'
    assert three.options == ("White", "Black", "Asian")
    assert three.answer == "B"
    # counts of the published answer key: digits 0..4 -> letters A..E
    letters = [i.answer for i in items]
    assert letters.count("E") == 182 and letters.count("B") == 304


def test_detect_and_load_benchmark(fixtures_dir: Path, tmp_path: Path) -> None:
    assert detect_benchmark(bench(fixtures_dir, "videomme-test.parquet")) == "videomme"
    assert detect_benchmark(bench(fixtures_dir, "mlvu-test.parquet")) == "mlvu"
    assert detect_benchmark(bench(fixtures_dir, "longvideobench-val.parquet")) == "longvideobench"
    items = load_benchmark(bench(fixtures_dir, "mlvu-test.parquet"))
    assert items[0].item_id == "Q0"
    jsonl = tmp_path / "items.jsonl"
    write_items_jsonl(jsonl, items[:3])
    assert load_benchmark(jsonl) == items[:3]


def test_strip_option_prefix() -> None:
    assert strip_option_prefix("A. Apples.") == "Apples."
    assert strip_option_prefix("(B) Candles") == "Candles"
    assert strip_option_prefix("C) 3") == "3"
    assert strip_option_prefix("A cat") == "A cat"  # no marker: the article stays


def test_bad_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "lvb.parquet"
    pq.write_table(pa.table({"id": ["x"], "correct_choice": [0], "option0": ["a"]}), missing)
    with pytest.raises(BenchmarkFileError, match=r"not a known benchmark file"):
        load_benchmark(missing)
    with pytest.raises(BenchmarkFileError, match=r"lvb\.parquet: missing column\(s\) 'video_id'"):
        load_longvideobench(missing)
    cols = {f"option{i}": ["a" if i < 2 else "N/A"] for i in range(5)}
    bad_choice = tmp_path / "choice.parquet"
    pq.write_table(
        pa.table(
            {
                "video_id": ["v"],
                "id": ["v_0"],
                "correct_choice": [3],
                "question": ["q?"],
                "duration_group": [15],
                **cols,
            }
        ),
        bad_choice,
    )
    with pytest.raises(
        BenchmarkFileError, match=r"row 1 \(id 'v_0'\): column 'correct_choice' 3 is not an index"
    ):
        load_longvideobench(bad_choice)
    bad_answer = tmp_path / "vm.parquet"
    pq.write_table(
        pa.table(
            {
                "video_id": ["001"],
                "videoID": ["abc"],
                "question_id": ["001-1"],
                "duration": ["short"],
                "question": ["q?"],
                "options": ["['A. x', 'B. y']"],  # options as a string of a Python list
                "answer": ["E"],
            }
        ),
        bad_answer,
    )
    with pytest.raises(BenchmarkFileError, match=r"row 1 \(question_id '001-1'\): field"):
        load_videomme(bad_answer)
    with pytest.raises(BenchmarkFileError, match="no such file"):
        load_benchmark(tmp_path / "absent.parquet")


def test_items_pair_with_generated_videos_under_the_expected_names(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """The loader's video paths are the names the videos are published under: a tiny H.264
    file written under that name is found and decodes."""
    av = pytest.importorskip("av")
    items: list[Item] = load_videomme(
        bench(fixtures_dir, "videomme-test.parquet"), video_dir=tmp_path
    )[:3]
    path = Path(items[0].video_path or "")
    assert path.parent == tmp_path and path.name == "fFjv93ACGo8.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=4)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for k in range(4):
            frame = av.VideoFrame.from_ndarray(
                np.full((32, 32, 3), 60 * k, dtype=np.uint8), format="rgb24"
            )
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    assert all(Path(i.video_path or "").exists() for i in items)  # 3 questions, one video
    with av.open(str(path)) as container:
        assert sum(1 for _ in container.decode(video=0)) == 4

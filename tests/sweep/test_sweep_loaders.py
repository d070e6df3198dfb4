"""Benchmark loaders in the sweep: the published question files (Video-MME, MLVU,
LongVideoBench) with a videos folder, and the generic JSONL item format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _support.paths import FIXTURES, shared
from _support.sweep import make_video, pixel_factory
from itemscale.cli import main
from itemscale.collect.items import Item, write_items_jsonl
from itemscale.collect.protocol import BenchmarkEntry, load_protocol
from itemscale.collect.sweep import BenchmarkLoadError, load_benchmark_items, run_sweep

BENCH = FIXTURES / "benchmarks"

# (kind, file, first items in file order, their video ids, file name of the first video)
CASES = [
    (
        "videomme",
        "videomme-test.parquet",
        ["001-1", "001-2", "001-3", "002-1"],
        "fFjv93ACGo8",
        "fFjv93ACGo8.mp4",
    ),
    ("mlvu", "mlvu-test.parquet", None, "needle_32", "needle_32.mp4"),
    ("longvideobench", "longvideobench-val.parquet", None, "86CxyhFV9MI", "86CxyhFV9MI.mp4"),
]


def _protocol(tmp_path: Path, kind: str, file: Path, videos: Path, limit: int) -> Path:
    text = f"""
output = {json.dumps(str(tmp_path / "run"))}
[[models]]
name = "pixel"
backend = "hf"
model = "x"
[benchmark]
kind = "{kind}"
path = {json.dumps(str(file))}
videos = {json.dumps(str(videos))}
limit = {limit}
[grid]
frames = [2, 4]
"""
    path = tmp_path / "protocol.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("kind", "name", "first_ids", "video_id", "file_name"), CASES)
def test_published_benchmarks_run_with_their_videos(
    tmp_path: Path,
    kind: str,
    name: str,
    first_ids: list[str] | None,
    video_id: str,
    file_name: str,
) -> None:
    shared(f"benchmarks/{name}")
    videos = tmp_path / "videos"
    make_video(videos / file_name, n_frames=20)
    proto = load_protocol(_protocol(tmp_path, kind, BENCH / name, videos, limit=4))
    items = load_benchmark_items(proto.benchmark)
    assert len(items) == 4
    if first_ids is not None:
        assert [i.item_id for i in items] == first_ids
    result = run_sweep(proto, backend_factory=pixel_factory, progress=False)
    df = result.table
    assert len(df) == 4 * 3
    have = df[df["video_id"] == video_id]
    assert len(have) > 0 and set(have["status"]) == {"ok"}
    assert set(have[have["frames"] == 4]["effective_frames"]) == {4}
    # Items whose video is not in the folder: typed missing-file rows, text-only still answered.
    other = df[(df["video_id"] != video_id) & (df["frames"] > 0)]
    assert set(other["status"]) <= {"media_error"}
    assert all(e.startswith("missing_file") for e in other["error"])
    assert set(df[df["frames"] == 0]["status"]) <= {"ok", "noanswer"}
    assert (df["reference"].str.len() == 1).all()  # option letters from the file


def test_jsonl_items_with_relative_paths_and_lookup_by_id(tmp_path: Path) -> None:
    make_video(tmp_path / "clips" / "a.mp4", n_frames=12)
    make_video(tmp_path / "pool" / "b.mkv", n_frames=12)  # found by video id in `videos`
    items = [
        Item(
            item_id="1",
            video_id="a",
            question="Q?",
            options=("x", "y"),
            answer="A",
            video_path="clips/a.mp4",
        ),
        Item(item_id="2", video_id="b", question="Q?", options=("x", "y"), answer="B"),
        Item(
            item_id="3",
            video_id="c",
            question="Describe.",
            task_kind="open_qa",
            references=("a red ball",),
        ),
    ]
    write_items_jsonl(tmp_path / "items.jsonl", items)
    entry = BenchmarkEntry(
        kind="jsonl", path=str(tmp_path / "items.jsonl"), videos=str(tmp_path / "pool")
    )
    loaded = load_benchmark_items(entry)
    assert loaded[0].video_path == str((tmp_path / "clips" / "a.mp4").resolve())
    assert loaded[1].video_path == str((tmp_path / "pool" / "b.mkv").resolve())
    assert loaded[2].video_path == str((tmp_path / "pool" / "c.mp4").resolve())  # missing
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "1", "video_id": "a", "question": "Q", "options": ["x"]}\n')
    with pytest.raises(BenchmarkLoadError, match=r"bad.jsonl:1"):
        load_benchmark_items(BenchmarkEntry(kind="jsonl", path=str(bad)))


def test_cli_videos_option_overrides_the_protocol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    make_video(elsewhere / "fFjv93ACGo8.mp4", n_frames=20)
    proto = _protocol(
        tmp_path,
        "videomme",
        shared("benchmarks/videomme-test.parquet"),
        tmp_path / "empty",
        limit=3,
    )
    assert main(["sweep", str(proto), "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["visual_tokens_unknown_cells"] == 6
    assert main(["sweep", str(proto), "--dry-run", "--json", "--videos", str(elsewhere)]) == 0
    plan = json.loads(capsys.readouterr().out)
    # 3 items x (2 + 4 frames) of 64x48, resized to 56x56 = 2x2 tokens per 2 frames
    assert plan["visual_tokens_unknown_cells"] == 0
    assert plan["visual_tokens_estimated"] == 3 * 4 * (1 + 2)
    shutil.rmtree(elsewhere)

"""The built-in `change` selector: one frame per equal segment, the one most unlike its segment;
and `itemscale select` writing files the sweep replays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.video import pick_by_change, read_selection, sample_indices
from itemscale.video._content import segment_bounds


def test_segments_cover_the_video_in_equal_parts() -> None:
    assert segment_bounds(120, 4) == [(0, 30), (30, 60), (60, 90), (90, 120)]
    assert segment_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert segment_bounds(3, 8) == [(0, 1), (1, 2), (2, 3)]  # shorter than the budget


def test_a_flash_between_uniform_frames_is_picked() -> None:
    """Grey video of 120 frames, a red flash at frames 57-58: 4 uniform frames never see it;
    `change` takes frame 57 in its segment and the first frame of every quiet segment."""
    stack = np.full((120, 24, 32, 3), 100, dtype=np.uint8)
    stack[57:59] = (255, 0, 0)
    from itemscale.protocol import SamplingPolicy

    uniform = sample_indices(SamplingPolicy(), 120, 4, fps=10.0)
    assert not set(uniform.tolist()) & {57, 58}
    assert pick_by_change(stack, 4).tolist() == [0, 57, 60, 90]


def test_select_writes_a_table_the_reader_takes(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)
    proto = write_protocol(tmp_path / "p.toml", suite)
    assert main(["select", str(proto), "--frames", "2,4", "--out", str(tmp_path / "sel")]) == 0
    for k in (2, 4):
        selection = read_selection(tmp_path / "sel" / f"change_{k}.jsonl")
        assert selection.format == "table" and selection.unit == "index"
        assert set(selection.entries) == {"v0-q0", "v0-q1", "v1-q0", "v1-q1"}
        # both questions of a video get its frames, one per segment
        assert selection.entries["v0-q0"].values == selection.entries["v0-q1"].values
        values = selection.entries["v1-q0"].values
        assert len(values) == k
        for value, (start, end) in zip(values, segment_bounds(35, k), strict=True):
            assert start <= value < end
    lines = (tmp_path / "sel" / "change_2.jsonl").read_text().splitlines()
    assert json.loads(lines[0]).keys() == {"item_id", "indices"}

"""The built-in `change` selector: one frame per equal segment, the one most unlike its segment;
and `itemscale select` writing files the sweep replays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.video import pick_by_change, read_selection, sample_indices
from itemscale.collect.video._content import segment_bounds


def test_segments_cover_the_video_in_equal_parts() -> None:
    assert segment_bounds(120, 4) == [(0, 30), (30, 60), (60, 90), (90, 120)]
    assert segment_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert segment_bounds(3, 8) == [(0, 1), (1, 2), (2, 3)]  # shorter than the budget


def test_a_flash_between_uniform_frames_is_picked() -> None:
    """Grey video of 120 frames, a red flash at frames 57-58: 4 uniform frames never see it;
    `change` takes frame 57 in its segment and the first frame of every quiet segment."""
    stack = np.full((120, 24, 32, 3), 100, dtype=np.uint8)
    stack[57:59] = (255, 0, 0)
    from itemscale.collect.protocol import SamplingPolicy

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


def test_the_adaptive_selector_keeps_the_segments_that_changed() -> None:
    """Grey video, a red flash at 57-58 and a blue one at 95: at a cap of 4 the adaptive
    selector keeps the two flashing segments' frames; with --min-frames 3 the highest-scoring
    quiet segment is added (all quiet segments score 0: the earliest)."""
    from itemscale.collect.video import Adaptive
    from itemscale.collect.video._content import pick_adaptive

    stack = np.full((120, 24, 32, 3), 100, dtype=np.uint8)
    stack[57:59] = (255, 0, 0)
    stack[95] = (0, 0, 255)
    assert pick_adaptive(stack, 4, Adaptive()).tolist() == [57, 95]
    assert pick_adaptive(stack, 4, Adaptive(min_frames=3)).tolist() == [0, 57, 95]
    # a threshold above every score: min_frames of the highest-scoring segments
    assert pick_adaptive(stack, 4, Adaptive(min_frames=1, threshold=1e9)).tolist() == [57]
    quiet = np.full((40, 24, 32, 3), 100, dtype=np.uint8)
    assert pick_adaptive(quiet, 4, Adaptive(min_frames=2)).tolist() == [0, 10]


def test_select_adaptive_writes_a_capped_selection_with_its_cost(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)
    proto = write_protocol(tmp_path / "p.toml", suite)
    args = ["select", str(proto), "--frames", "4", "--out", str(tmp_path / "sel"), "--adaptive"]
    assert main([*args, "--min-frames", "2", "--threshold", "1000"]) == 0
    selection = read_selection(tmp_path / "sel" / "change_4.jsonl")
    assert {len(e.values) for e in selection.entries.values()} == {2}  # nothing reaches 1000
    assert selection.entries["v1-q0"].frames_scored == 35  # every frame of v1 was scored
    assert main([*args, "--min-frames", "5"]) == 2  # more than the budget
    assert (
        main(["select", str(proto), "--frames", "4", "--out", str(tmp_path), "--min-frames", "2"])
        == 2
    )

"""The focus layout: one large storyline per video, with answers and evidence read off the plan."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from itemscale.collect.items import read_items_jsonl
from itemscale.collect.synth import COLOURS, generate_suite, read_manifest, reusable_suite
from itemscale.collect.synth._focus import FOCUS_QUESTIONS, build_focus_items, plan_focus_scene
from itemscale.collect.synth._scene import render_frame

SIZE = {"width": 160, "height": 120, "fps": 10, "duration_s": 12.0}


@pytest.mark.parametrize("seed", range(6))
def test_flash_scene_answer_and_evidence(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scene = plan_focus_scene(rng, "v", "flash", **SIZE)
    (flash,) = scene.events
    assert flash.role == "flash" and 4 <= flash.end_frame - flash.start_frame <= 6
    assert flash.start_frame >= 5 and flash.end_frame <= scene.n_frames - 5
    mcqa, open_item = build_focus_items(rng, scene, video_path="v.mp4", split="test", position=2)
    assert mcqa.answer == "C" and mcqa.options[2] == flash.colour
    assert len(set(mcqa.options)) == 4 and set(mcqa.options) <= set(COLOURS)
    assert open_item.references == (flash.colour,)
    assert mcqa.question == open_item.question == FOCUS_QUESTIONS["flash"]
    assert mcqa.evidence[0].start == flash.start_frame / 10
    # drawn: the centre pixel is the flash colour during it and the background outside it
    centre = np.asarray(render_frame(scene, flash.start_frame))[60, 80]
    assert tuple(centre) == COLOURS[flash.colour]
    assert tuple(np.asarray(render_frame(scene, 0))[60, 80]) == scene.background


@pytest.mark.parametrize("seed", range(6))
def test_longest_scene_answer_is_the_longest_block(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scene = plan_focus_scene(rng, "v", "longest", **SIZE)
    blocks = sorted(scene.events, key=lambda e: e.start_frame)
    assert [b.role for b in blocks] == ["block"] * 3
    assert blocks[0].start_frame == 0 and blocks[-1].end_frame == scene.n_frames
    assert all(a.end_frame == b.start_frame for a, b in itertools.pairwise(blocks))
    lengths = sorted((b.end_frame - b.start_frame, b.colour) for b in blocks)
    longest, runner_up = lengths[-1], lengths[-2]
    assert longest[0] > runner_up[0] and 0.38 * 120 <= longest[0] <= 0.46 * 120 + 1
    mcqa, _ = build_focus_items(rng, scene, video_path="v.mp4", split="train", position=0)
    assert mcqa.options[0] == longest[1] and mcqa.answer == "A"
    assert runner_up[1] in mcqa.options and lengths[0][1] in mcqa.options  # distractors shown


def test_focus_suite_balances_kinds_and_positions(tmp_path: Path) -> None:
    manifest = generate_suite(tmp_path, n_videos=16, seed=5, layout="focus", duration_s=6.0)
    assert manifest.layout == "focus" and manifest.generator_version == "itemscale-synth-focus-1"
    items = read_items_jsonl(tmp_path / "items.jsonl")
    assert len(items) == 32
    mcqa = [i for i in items if i.task_kind.value == "mcqa"]
    for split in ("train", "test"):
        kinds = Counter(i.attributes["question_kind"] for i in mcqa if i.split == split)
        assert abs(kinds["flash"] - kinds["longest"]) <= 1
    letters = Counter(i.answer for i in mcqa if i.split == "train")
    assert max(letters.values()) - min(letters.values()) <= 2
    assert read_manifest(tmp_path).layout == "focus"
    assert reusable_suite(tmp_path, n_videos=16, seed=5, layout="focus", duration_s=6.0)
    assert reusable_suite(tmp_path, n_videos=16, seed=5, duration_s=6.0) is None  # grid asked


def _seen(indices: np.ndarray, start: int, end: int) -> bool:
    return bool(((indices >= start) & (indices < end)).any())


def test_blink_is_shorter_than_the_sampling_gap_so_phase_decides_what_a_budget_sees() -> None:
    """A blink lasts 2-3 frames, fewer than the 3.8-frame gap of 32 linspace frames over 120:
    some blinks are seen by a smaller budget and missed at 32 (temporal aliasing; about 10% of
    blinks, from the scene plans), and a nested 32-frame grid that keeps the 16 frames never
    misses what 16 saw."""
    from itemscale.collect.protocol import SamplingPolicy
    from itemscale.collect.video import sample_indices

    linspace = SamplingPolicy(name="linspace")
    nested = SamplingPolicy(name="linspace", keep_frames=16)
    aliased = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        scene = plan_focus_scene(rng, "v", "blink", **SIZE)
        (blink,) = scene.events
        assert blink.role == "blink" and 2 <= blink.end_frame - blink.start_frame <= 3
        at = {k: sample_indices(linspace, scene.n_frames, k, fps=10) for k in (4, 8, 16, 32)}
        seen = {k: _seen(at[k], blink.start_frame, blink.end_frame) for k in at}
        seen16 = seen[16]
        aliased += not seen[32] and any(seen[k] for k in (4, 8, 16))
        kept = sample_indices(nested, scene.n_frames, 32, fps=10)
        assert not seen16 or _seen(kept, blink.start_frame, blink.end_frame)
        mcqa, _ = build_focus_items(rng, scene, video_path="v.mp4", split="test", position=1)
        assert mcqa.question == FOCUS_QUESTIONS["flash"]  # asked like any flash
        assert mcqa.attributes == {
            "question_kind": "blink",
            "budget_axis": "sampling_phase",
            "split": "test",
        }
        assert mcqa.options[1] == blink.colour
    assert aliased >= 3


def test_focus_kinds_are_dealt_in_turn_and_recorded(tmp_path: Path) -> None:
    kinds = ("flash", "longest", "blink")
    manifest = generate_suite(
        tmp_path,
        n_videos=9,
        seed=3,
        layout="focus",
        duration_s=6.0,
        test_fraction=1.0,
        focus_kinds=kinds,
    )
    assert manifest.focus_kinds == kinds
    mcqa = [i for i in read_items_jsonl(tmp_path / "items.jsonl") if i.task_kind.value == "mcqa"]
    assert Counter(i.attributes["question_kind"] for i in mcqa) == {k: 3 for k in kinds}
    params = {"n_videos": 9, "seed": 3, "layout": "focus", "duration_s": 6.0, "test_fraction": 1.0}
    assert reusable_suite(tmp_path, **params, focus_kinds=kinds)  # type: ignore[arg-type]
    assert reusable_suite(tmp_path, **params) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name each of flash, longest, blink at most once"):
        generate_suite(tmp_path / "x", n_videos=2, seed=0, layout="focus", focus_kinds=("wink",))  # type: ignore[arg-type]

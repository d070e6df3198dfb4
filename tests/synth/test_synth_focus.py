"""The focus layout: one large storyline per video, with answers and evidence read off the plan."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from itemscale.items import read_items_jsonl
from itemscale.synth import (
    COLOURS,
    FOCUS_QUESTIONS,
    build_focus_items,
    generate_suite,
    plan_focus_scene,
    read_manifest,
    render_frame,
    reusable_suite,
)

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

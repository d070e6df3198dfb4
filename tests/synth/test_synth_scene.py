"""Scene planning and question building, without encoding: invariants over many seeds, and the
check that the options' text carries no usable hint of the answer."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.collect.items import OPTION_LETTERS, Item, write_items_jsonl
from itemscale.collect.synth import COLOURS, SHAPES, VideoScene, plan_scene
from itemscale.collect.synth._questions import QUESTION_KINDS, build_items
from itemscale.collect.synth._scene import (
    CELLS,
    GRID_COLUMNS,
    GRID_ROWS,
    check_scene_parameters,
    frames_needed,
    place_intervals,
    render_frame,
)
from itemscale.collect.synth._suite import (
    GENERATOR_VERSION,
    assign_splits,
    balanced_positions,
    rgb_to_yuv420p,
)
from itemscale.core.responses import TaskKind

SIZES = [(160, 120), (224, 160), (128, 96)]


def planned(
    seed: int, *, width: int = 160, height: int = 120, fps: int = 10, duration: float = 12.0
) -> VideoScene:
    rng = np.random.default_rng(seed)
    return plan_scene(rng, f"v{seed}", width=width, height=height, fps=fps, duration_s=duration)


def items_for(seed: int, positions: dict[str, int] | None = None) -> list[Item]:
    scene = planned(seed)
    rng = np.random.default_rng(seed + 10_000)
    answer_positions = positions or {kind: (seed + i) % 4 for i, kind in enumerate(QUESTION_KINDS)}
    return build_items(
        rng,
        scene,
        video_path=f"videos/v{seed}.mp4",
        split="test",
        answer_positions=answer_positions,  # type: ignore[arg-type]
        dialogue_kind=QUESTION_KINDS[seed % 5],
    )


@given(
    n_frames=st.integers(1, 300),
    lengths=st.lists(st.integers(1, 40), min_size=1, max_size=8),
    gap=st.integers(0, 10),
    margin=st.integers(0, 10),
    seed=st.integers(0, 2**32 - 1),
)
def test_place_intervals_keeps_order_gaps_and_margins(
    n_frames: int, lengths: list[int], gap: int, margin: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    needed = sum(lengths) + gap * (len(lengths) - 1) + 2 * margin
    if needed > n_frames:
        with pytest.raises(ValueError, match="do not fit"):
            place_intervals(rng, n_frames, lengths, gap, margin)
        return
    intervals = place_intervals(rng, n_frames, lengths, gap, margin)
    assert [end - start for start, end in intervals] == lengths
    assert intervals[0][0] >= margin and intervals[-1][1] <= n_frames - margin
    for (_, end), (start, _) in itertools.pairwise(intervals):
        assert start - end >= gap


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    fps=st.integers(5, 30),
    duration=st.floats(8.0, 20.0),
    size=st.sampled_from(SIZES),
)
def test_scene_plan_invariants(seed: int, fps: int, duration: float, size: tuple[int, int]) -> None:
    width, height = size
    scene = planned(seed, width=width, height=height, fps=fps, duration=duration)
    assert scene.n_frames == round(duration * fps)
    cw, ch = width // GRID_COLUMNS, height // GRID_ROWS
    by_cell: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for event in scene.events:
        assert 0 <= event.start_frame < event.end_frame <= scene.n_frames
        col, row = CELLS[event.role]
        x0, y0, x1, y1 = event.bbox
        assert col * cw <= x0 < x1 <= (col + 1) * cw and row * ch <= y0 < y1 <= (row + 1) * ch
        by_cell[(col, row)].append((event.start_frame, event.end_frame))
    for spans in by_cell.values():  # one thing at a time in each cell: no occlusion
        spans.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))

    roles = Counter(e.role for e in scene.events)
    assert roles["brief"] == roles["sign"] == roles["stay"] == 1
    assert 1 <= roles["count"] <= 6 and roles["turn"] == 3 and 3 <= roles["lookalike"] <= 4
    (stay,) = scene.by_role("stay")
    lookalikes = scene.by_role("lookalike")
    assert {e.shape for e in lookalikes} == {stay.shape}
    assert len({e.colour for e in lookalikes}) == 1 and lookalikes[0].colour != stay.colour
    # Each storyline names a colour-and-shape that nothing else in the video has.
    combos = [(a.colour, a.shape) for a in scene.actors]
    combos += [(e.colour, e.shape) for e in scene.events if e.role in ("brief", "turn", "stay")]
    combos += [(scene.by_role("count")[0].colour, scene.by_role("count")[0].shape)]
    combos += [(lookalikes[0].colour, lookalikes[0].shape)]
    assert len(set(combos)) == len(combos) == 9
    assert all(c in COLOURS and s in SHAPES for c, s in combos)

    (brief,) = scene.by_role("brief")
    assert brief.end_frame - brief.start_frame == max(2, round(0.2 * fps))
    assert stay.end_frame - stay.start_frame >= 0.3 * duration * fps - 1
    (sign,) = scene.by_role("sign")
    assert sign.text is not None and len(sign.alternatives) == 3
    assert len({sign.text, *sign.alternatives}) == 4
    if sign.text.isdigit():
        for other in sign.alternatives:
            assert len(other) == 2 and other[0] != "0"
            assert sum(a != b for a, b in zip(sign.text, other, strict=True)) == 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_items_of_a_scene(seed: int) -> None:
    positions = {kind: i % 4 for i, kind in enumerate(QUESTION_KINDS)}
    items = items_for(seed, positions)
    assert Counter(i.task_kind for i in items) == {
        TaskKind.MCQA: 5,
        TaskKind.OPEN_QA: 5,
        TaskKind.SUMMARY: 1,
        TaskKind.DIALOGUE: 1,
    }
    assert len({i.item_id for i in items}) == len(items)
    for item in items:
        for span in item.evidence:
            assert 0 <= span.start < span.end <= 12.0
        if item.task_kind == TaskKind.MCQA:
            kind = item.attributes["question_kind"]
            assert item.answer == OPTION_LETTERS[positions[kind]]


def test_text_alone_does_not_find_the_answer() -> None:
    """Simple text-only strategies stay near chance (25%) on every MCQA question kind: the most
    frequent answer seen on other videos, the option most similar to the others, the longest
    and the shortest option."""
    rng = np.random.default_rng(0)
    train: dict[str, Counter[str]] = defaultdict(Counter)
    hits: dict[tuple[str, str], int] = Counter()
    totals: Counter[str] = Counter()
    for seed in range(600):
        positions = {kind: int(rng.integers(4)) for kind in QUESTION_KINDS}
        for item in items_for(seed, positions):
            if item.task_kind != TaskKind.MCQA:
                continue
            kind = item.attributes["question_kind"]
            answer = item.options[OPTION_LETTERS.index(item.answer or "")]
            if seed < 300:
                train[kind][answer] += 1
                continue
            totals[kind] += 1

            def similarity(option: str, options: tuple[str, ...] = item.options) -> int:
                return sum(len(set(option) & set(other)) for other in options if other != option)

            guesses = {
                "prior": max(item.options, key=lambda o: train[kind][o]),
                "similar": max(item.options, key=similarity),
                "longest": max(item.options, key=len),
                "shortest": min(item.options, key=len),
            }
            for name, guess in guesses.items():
                hits[(kind, name)] += guess == answer
    assert set(totals.values()) == {300}
    rates = {key: n / totals[key[0]] for key, n in hits.items()}
    assert max(rates.values()) < 0.35, sorted(rates.items(), key=lambda kv: -kv[1])[:3]


@pytest.mark.parametrize("fps", range(5, 31))
def test_every_allowed_timeline_fits_the_longest_storylines(fps: int) -> None:
    for duration in (8.0, 8.5, 9.9, 12.0, 20.0, 60.0):
        check_scene_parameters(width=160, height=120, fps=fps, duration_s=duration)
        assert frames_needed(fps, duration) <= round(duration * fps)


def test_too_small_frames_and_timelines_are_refused_up_front() -> None:
    with pytest.raises(ValueError, match="too narrow for the sign"):
        check_scene_parameters(width=96, height=120, fps=10, duration_s=12.0)
    with pytest.raises(ValueError, match="fps must be at least 5"):
        check_scene_parameters(width=160, height=120, fps=4, duration_s=12.0)
    with pytest.raises(ValueError, match="too small for the suite's shapes"):
        check_scene_parameters(width=24, height=16, fps=10, duration_s=12.0)


@given(n=st.integers(0, 200), seed=st.integers(0, 2**32 - 1))
def test_balanced_positions(n: int, seed: int) -> None:
    positions = balanced_positions(np.random.default_rng(seed), n)
    counts = Counter(positions)
    assert len(positions) == n and set(counts) <= {0, 1, 2, 3}
    assert max(counts.values(), default=0) - min(counts.get(p, 0) for p in range(4)) <= 1


@given(
    n=st.integers(1, 300),
    fraction=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_split_sizes(n: int, fraction: float, seed: int) -> None:
    splits = assign_splits(np.random.default_rng(seed), n, fraction)
    n_test = splits.count("test")
    assert len(splits) == n
    if n >= 2 and 0 < fraction < 1:
        assert n_test == min(max(round(n * fraction), 1), n - 1)
    else:
        assert n_test == round(n * fraction)


def test_bt601_conversion_by_hand() -> None:
    rgb = np.zeros((2, 4, 3), dtype=np.uint8)
    rgb[:, :2] = (255, 0, 0)  # a 2x2 red block
    rgb[:, 2:] = (255, 255, 255)  # a 2x2 white block
    yuv = rgb_to_yuv420p(rgb)
    assert yuv.shape == (3, 4)
    # Y plane (2x4), then U (1x2) and V (1x2) packed into the last row.
    assert yuv[:2].tolist() == [[82, 82, 235, 235], [82, 82, 235, 235]]
    assert yuv[2].tolist() == [90, 128, 240, 128]


def test_rendered_frame_shows_the_plan() -> None:
    scene = planned(3)
    (brief,) = scene.by_role("brief")
    inside = np.asarray(render_frame(scene, brief.start_frame))
    before = np.asarray(render_frame(scene, brief.start_frame - 1))
    x0, y0, x1, y1 = brief.bbox
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    assert tuple(inside[cy, cx]) == COLOURS[brief.colour or ""]
    assert tuple(before[cy, cx]) != COLOURS[brief.colour or ""]


def test_generator_output_is_pinned(tmp_path: Path) -> None:
    """Changing what a seed generates must come with a new GENERATOR_VERSION (and this hash)."""
    items = [item for seed in range(3) for item in items_for(seed)]
    write_items_jsonl(tmp_path / "items.jsonl", items)
    digest = hashlib.sha256((tmp_path / "items.jsonl").read_bytes()).hexdigest()
    scenes = "".join(planned(seed).model_dump_json() for seed in range(3))
    scene_digest = hashlib.sha256(scenes.encode()).hexdigest()
    assert (GENERATOR_VERSION, digest[:16], scene_digest[:16]) == (
        "itemscale-synth-1",
        "d7746cf321693166",
        "9874a8b07fb71106",
    )

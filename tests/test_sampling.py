"""Golden index tests for every sampling policy, and the invariants all policies share."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.protocol import POLICY_NAMES, SamplingPolicy
from itemscale.video import fps_frame_count, sample_indices


def idx(name: str, n: int, k: int, *, fps: float = 30.0, **policy: object) -> list[int]:
    return sample_indices(SamplingPolicy(name=name, **policy), n, k, fps=fps).tolist()  # type: ignore[arg-type]


# Expected arrays written out by hand from the formulas (n = 100 frames, K = 8).
def test_linspace_matches_lmms_eval_formula() -> None:
    # np.linspace(0, 99, 8) = 0, 14.14, 28.29, 42.43, 56.57, 70.71, 84.86, 99 -> truncated
    assert idx("linspace", 100, 8) == [0, 14, 28, 42, 56, 70, 84, 99]
    assert idx("linspace", 100, 1) == [0]
    assert idx("linspace", 100, 2) == [0, 99]


def test_interior_matches_vlmevalkit_formula() -> None:
    # int(i * 100 / 9), i = 1..8: 11.1, 22.2, 33.3, 44.4, 55.6, 66.7, 77.8, 88.9
    assert idx("interior", 100, 8) == [11, 22, 33, 44, 55, 66, 77, 88]
    assert idx("interior", 10, 1) == [5]


def test_centre_and_left() -> None:
    # centre: int((i + 0.5) * 12.5); left: int(i * 12.5)
    assert idx("centre", 100, 8) == [6, 18, 31, 43, 56, 68, 81, 93]
    assert idx("left", 100, 8) == [0, 12, 25, 37, 50, 62, 75, 87]


def test_phase_shift() -> None:
    # left shifted by half a segment is the centre policy
    assert idx("left", 100, 8, phase=0.5) == idx("centre", 100, 8)
    # interior shifted by 0.5: int((i + 0.5) * 100 / 9) = 16.7, 27.8, 38.9, 50, 61.1, 72.2, 83.3, 94.4
    assert idx("interior", 100, 8, phase=0.5) == [16, 27, 38, 50, 61, 72, 83, 94]
    # linspace shifted by a quarter step (99/7/4 = 3.54): 3.5, 17.7, 31.8, 46.0, 60.1, 74.2, 88.4, 102.5 -> clipped to 99
    assert idx("linspace", 100, 8, phase=0.25) == [3, 17, 31, 45, 60, 74, 88, 99]


def test_fps_policy_follows_qwen_utils() -> None:
    # 300 frames at 30 fps = 10 s; 2 fps wants 20 frames, below the cap of 32:
    # round(linspace(0, 299, 20)), step 15.737
    assert idx("fps", 300, 32, fps=30.0) == [
        0, 16, 31, 47, 63, 79, 94, 110, 126, 142, 157, 173, 189, 205, 220, 236, 252, 268, 283, 299,
    ]  # fmt: skip
    # capped at K = 8: round(linspace(0, 299, 8)), step 42.714
    assert idx("fps", 300, 8, fps=30.0) == [0, 43, 85, 128, 171, 214, 256, 299]
    # K = 7 is floored to an even count: 6 frames, step 59.8
    assert idx("fps", 300, 7, fps=30.0) == [0, 60, 120, 179, 239, 299]
    # a 1 s clip at 2 fps wants 2 frames but Qwen's minimum is 4: round(linspace(0, 29, 4))
    assert idx("fps", 30, 16, fps=30.0) == [0, 10, 19, 29]
    # 1 fps over 10 s: 10 frames, round(linspace(0, 299, 10)), step 33.22
    one_fps = SamplingPolicy(name="fps", fps=1.0)
    assert sample_indices(one_fps, 300, 64, fps=30.0).tolist() == [
        0, 33, 66, 100, 133, 166, 199, 233, 266, 299,
    ]  # fmt: skip


def test_fps_count_uses_stream_duration_when_given() -> None:
    # a variable frame rate clip: 50 frames over 20 s (nominal 30 fps would say 1.67 s)
    assert fps_frame_count(50, 64, video_fps=30.0, fps=2.0, duration_s=20.0) == 40
    assert fps_frame_count(50, 64, video_fps=30.0, fps=2.0) == 4
    policy = SamplingPolicy(name="fps", fps=1.0)
    assert sample_indices(policy, 50, 64, fps=30.0, duration_s=20.0).size == 20
    # budgets below Qwen's 2-frame minimum take K frames instead of failing
    assert fps_frame_count(300, 1, video_fps=30.0, fps=2.0) == 1


def test_nested_dyadic() -> None:
    assert idx("nested", 100, 1) == [0]
    assert idx("nested", 100, 2) == [0, 50]
    assert idx("nested", 100, 3) == [0, 25, 50]
    assert idx("nested", 100, 4) == [0, 25, 50, 75]
    # a power-of-two budget is exactly the left edges of K segments
    assert idx("nested", 100, 8) == idx("left", 100, 8)
    assert idx("nested", 1000, 16) == idx("left", 1000, 16)


def test_short_video_records_fewer_frames_never_duplicates() -> None:
    # 5 frames, K = 8: every policy yields each frame at most once
    for name in POLICY_NAMES:
        got = idx(name, 5, 8)
        assert len(got) == len(set(got)) <= 5, name
        assert all(0 <= i < 5 for i in got)
    assert idx("linspace", 5, 8) == [0, 1, 2, 3, 4]
    # interior: int(i * 5 / 9), i = 1..8 = 0, 1, 1, 2, 2, 3, 3, 4 -> 5 distinct frames
    assert idx("interior", 5, 8) == [0, 1, 2, 3, 4]
    assert idx("nested", 5, 8) == [0, 1, 2, 3, 4]
    assert idx("fps", 5, 8) == [0, 1, 3, 4]  # 4 frames (even count of at most 5)


def test_random_is_seeded_per_item_and_repeat() -> None:
    policy = SamplingPolicy(name="random", seed=7)
    a = sample_indices(policy, 1000, 16, fps=30.0, item_key="q1", repeat=0)
    assert a.tolist() == sample_indices(policy, 1000, 16, fps=30.0, item_key="q1").tolist()
    others = [
        sample_indices(policy, 1000, 16, fps=30.0, item_key="q2", repeat=0),
        sample_indices(policy, 1000, 16, fps=30.0, item_key="q1", repeat=1),
        sample_indices(SamplingPolicy(name="random", seed=8), 1000, 16, fps=30.0, item_key="q1"),
    ]
    for other in others:
        assert other.tolist() != a.tolist()
    assert SamplingPolicy(name="random").seed == 0


def test_zero_budget_and_bad_input() -> None:
    assert idx("linspace", 100, 0) == []
    with pytest.raises(ValueError, match="n_frames"):
        idx("linspace", 0, 8)
    with pytest.raises(ValueError, match="k must be"):
        idx("linspace", 10, -1)


policies = st.sampled_from(POLICY_NAMES)


@settings(max_examples=300, deadline=None)
@given(name=policies, n=st.integers(1, 5000), k=st.integers(1, 300), seed=st.integers(0, 50))
def test_every_policy_sorted_unique_in_range(name: str, n: int, k: int, seed: int) -> None:
    policy = SamplingPolicy(name=name, seed=seed) if name == "random" else SamplingPolicy(name=name)  # type: ignore[arg-type]
    got = sample_indices(policy, n, k, fps=25.0, item_key="x", repeat=seed)
    assert got.dtype == np.int64
    assert np.all(np.diff(got) > 0)
    assert got.size <= min(k, n)
    assert got.size >= 1
    assert got[0] >= 0 and got[-1] < n
    # these pick K distinct frames whenever the video has K frames; the truncating formulas can
    # merge neighbours only when a segment is shorter than two frames
    if k <= n and (name in ("nested", "random", "left") or (name != "fps" and n >= 2 * k)):
        assert got.size == k


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), k1=st.integers(1, 200), k2=st.integers(1, 200))
def test_nested_budgets_contain_smaller_ones(n: int, k1: int, k2: int) -> None:
    small, large = sorted((k1, k2))
    a = set(idx("nested", n, small))
    b = set(idx("nested", n, large))
    assert a <= b

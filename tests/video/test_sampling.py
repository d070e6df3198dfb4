"""Golden index tests for every sampling policy, and the invariants all policies share."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.collect.protocol import SAMPLING_POLICY_NAMES, SamplingPolicy
from itemscale.collect.video import sample_indices
from itemscale.collect.video._sampling import fps_frame_count


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
    for name in SAMPLING_POLICY_NAMES:
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
    with pytest.raises(ValueError, match=r"^video_frames must be > 0 \(got 0\)"):
        idx("linspace", 0, 8)
    with pytest.raises(ValueError, match=r"^frames must be >= 0 \(got -1\)"):
        idx("linspace", 10, -1)
    # the names the arguments had before issue 27 still work, with a warning
    with pytest.deprecated_call(match=r"sample_indices\((policy|n_frames|k)=\.\.\.\) is depr"):
        old = sample_indices(policy=SamplingPolicy(), n_frames=100, k=4, fps=25.0)  # type: ignore[call-arg]
    assert old.tolist() == idx("linspace", 100, 4)


policies = st.sampled_from(SAMPLING_POLICY_NAMES)


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


# ---- Review: golden indices by hand; lmms-eval, VLMEvalKit and qwen-vl-utils as oracles


def hand_idx(name: str, n: int, k: int, *, video_fps: float = 25.0, **policy: object) -> list[int]:
    policy_ = SamplingPolicy.model_validate({"name": name, **policy})
    return [int(x) for x in sample_indices(policy_, n, k, fps=video_fps)]


# ---- n = 100, K = 8 -------------------------------------------------------------------------


def test_n100_k8_by_hand() -> None:
    # linspace: 99/7 = 14.142857..., truncated
    assert hand_idx("linspace", 100, 8) == [0, 14, 28, 42, 56, 70, 84, 99]
    # interior: i * 100 / 9 = 11.1, 22.2, ..., 88.9
    assert hand_idx("interior", 100, 8) == [11, 22, 33, 44, 55, 66, 77, 88]
    # centre: (i + 0.5) * 12.5 = 6.25, 18.75, 31.25, ...
    assert hand_idx("centre", 100, 8) == [6, 18, 31, 43, 56, 68, 81, 93]
    # left: i * 12.5
    assert hand_idx("left", 100, 8) == [0, 12, 25, 37, 50, 62, 75, 87]


def test_fps_by_hand() -> None:
    # 100 frames at 25 fps = 4 s; 2 fps -> 8 frames; round(linspace(0, 99, 8)) rounds
    # 56.57 -> 57, 70.71 -> 71, 84.86 -> 85 (linspace would truncate them)
    assert hand_idx("fps", 100, 8, video_fps=25.0, fps=2.0) == [0, 14, 28, 42, 57, 71, 85, 99]
    # 10 s at 1 fps wants 10, capped at K = 7, floored to an even 6: 99/5 = 19.8 steps
    assert hand_idx("fps", 100, 7, video_fps=10.0, fps=1.0) == [0, 20, 40, 59, 79, 99]
    # 4 s at 0.5 fps wants 2: raised to FPS_MIN_FRAMES = 4
    assert hand_idx("fps", 100, 8, video_fps=25.0, fps=0.5) == [0, 33, 66, 99]
    # 4 s at 1.25 fps wants 5: floored to the frame factor, 4
    assert hand_idx("fps", 100, 8, video_fps=25.0, fps=1.25) == [0, 33, 66, 99]
    # 301 frames at 30 fps, 1 fps wants 10.03 -> 10 frames, 300/9 = 33.3 steps, rounded
    assert hand_idx("fps", 301, 16, video_fps=30.0, fps=1.0) == [
        0, 33, 67, 100, 133, 167, 200, 233, 267, 300,
    ]  # fmt: skip
    # budget 3 is below the minimum of 4: the even cap wins, 2 frames
    assert hand_idx("fps", 100, 3, video_fps=25.0, fps=2.0) == [0, 99]


# ---- n = 301, K = 16 ------------------------------------------------------------------------


def test_n301_k16_by_hand() -> None:
    # linspace: 300 / 15 = 20 exactly
    assert hand_idx("linspace", 301, 16) == list(range(0, 301, 20))
    # interior: i * 301 / 17 = 17.7, 35.4, 53.1, ...
    assert hand_idx("interior", 301, 16) == [
        17, 35, 53, 70, 88, 106, 123, 141, 159, 177, 194, 212, 230, 247, 265, 283,
    ]  # fmt: skip
    # centre: (i + 0.5) * 18.8125
    assert hand_idx("centre", 301, 16) == [
        9, 28, 47, 65, 84, 103, 122, 141, 159, 178, 197, 216, 235, 253, 272, 291,
    ]  # fmt: skip
    # left: i * 18.8125
    assert hand_idx("left", 301, 16) == [
        0, 18, 37, 56, 75, 94, 112, 131, 150, 169, 188, 206, 225, 244, 263, 282,
    ]  # fmt: skip


# ---- n = 7 < K = 8 --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["linspace", "interior", "centre", "left", "nested"])
def test_short_video_every_frame_once(name: str) -> None:
    # linspace(0, 6, 8, dtype=int) = [0, 0, 1, 2, 3, 4, 5, 6]; interior int(i*7/9) =
    # [0, 1, 2, 3, 3, 4, 5, 6]; centre [0, 1, 2, 3, 3, 4, 5, 6]; left [0, 0, 1, 2, 3, 4, 5, 6]:
    # duplicates are dropped, never repeated, and the effective count is 7
    assert hand_idx(name, 7, 8) == [0, 1, 2, 3, 4, 5, 6]


def test_short_video_random_and_fps() -> None:
    got = hand_idx("random", 7, 8, seed=3)
    assert got == [0, 1, 2, 3, 4, 5, 6]
    # 7 frames at 7 fps = 1 s; 2 fps wants 2 -> raised to 4 -> linspace(0, 6, 4) = 0, 2, 4, 6
    assert hand_idx("fps", 7, 8, video_fps=7.0, fps=2.0) == [0, 2, 4, 6]


# ---- the reference tools' expressions, as oracles ------------------------------------------


def lmms_eval_linspace(n: int, k: int) -> list[int]:
    return sorted(set(np.linspace(0, n - 1, k, dtype=int).tolist()))


def vlmevalkit_interior(n: int, k: int) -> list[int]:
    # VLMEvalKit's save_video_frames: step_size = len(vid) / (nframe + 1); int(i * step_size)
    step_size = n / (k + 1)
    return sorted({int(i * step_size) for i in range(1, k + 1)})


def qwen_fps(n: int, k: int, video_fps: float, fps: float) -> list[int]:
    # qwen-vl-utils smart_nframes with max_frames=k (QwenLM/Qwen3-VL,
    # qwen-vl-utils/src/qwen_vl_utils/vision_process.py: floor_by_factor(ele["max_frames"], 2);
    # the default min(768, total_frames) only without max_frames), then
    # linspace(0, n - 1, nframes).round() (in float64 here; the package's torch.linspace is
    # float32: docs/protocol.md, "fps and qwen-vl-utils")
    min_frames = math.ceil(4 / 2) * 2
    max_frames = math.floor(k / 2) * 2
    nframes = n / video_fps * fps
    nframes = min(min(max(nframes, min_frames), max_frames), n)
    nframes = math.floor(nframes / 2) * 2
    return sorted(set(np.round(np.linspace(0, n - 1, nframes)).astype(int).tolist()))


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 5000), k=st.integers(1, 256))
def test_linspace_is_lmms_eval(n: int, k: int) -> None:
    assert hand_idx("linspace", n, k) == lmms_eval_linspace(n, k)


def test_interior_is_vlmevalkit_at_float_ties() -> None:
    # 11 * 45 / 33 is exactly 15, but VLMEvalKit multiplies by the rounded step 45 / 33 and
    # truncates 14.999... to 14 (and 29.999... to 29 at i = 22): the frames it really decodes
    assert vlmevalkit_interior(45, 32)[10] == 14
    got = hand_idx("interior", 45, 32)
    assert got[10] == 14 and got[21] == 29
    assert got == vlmevalkit_interior(45, 32)


@settings(max_examples=400, deadline=None)
@given(n=st.integers(1, 5000), k=st.integers(1, 256))
def test_interior_is_vlmevalkit(n: int, k: int) -> None:
    assert hand_idx("interior", n, k) == vlmevalkit_interior(n, k)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(2, 4000),
    k=st.integers(2, 256),
    video_fps=st.sampled_from([10.0, 24.0, 25.0, 29.97, 30.0, 60.0]),
    fps=st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]),
)
def test_fps_is_qwen(n: int, k: int, video_fps: float, fps: float) -> None:
    assert hand_idx("fps", n, k, video_fps=video_fps, fps=fps) == qwen_fps(n, k, video_fps, fps)


# ---- nested and random ----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 3000), k=st.integers(1, 128), extra=st.integers(1, 128))
def test_nested_budgets_contain_each_other(n: int, k: int, extra: int) -> None:
    small = set(hand_idx("nested", n, k))
    large = set(hand_idx("nested", n, k + extra))
    assert small <= large
    assert len(small) == min(k, n) and len(large) == min(k + extra, n)


def test_nested_powers_of_two_are_even_grids() -> None:
    # van der Corput prefixes of length 2^m are exactly {i / 2^m}: floor(i * 64 / 8)
    assert hand_idx("nested", 64, 8) == [0, 8, 16, 24, 32, 40, 48, 56]
    assert hand_idx("nested", 64, 4) == [0, 16, 32, 48]


def test_random_draw_changes_with_item_repeat_and_seed() -> None:
    policy = SamplingPolicy(name="random", seed=7)

    def draw(item: str, repeat: int, seed: int = 7) -> list[int]:
        p = policy.model_copy(update={"seed": seed})
        return [int(x) for x in sample_indices(p, 1000, 16, fps=25.0, item_key=item, repeat=repeat)]

    a = draw("item-a", 0)
    assert a == draw("item-a", 0)
    assert a == sorted(set(a)) and len(a) == 16
    assert a != draw("item-b", 0)
    assert a != draw("item-a", 1)
    assert a != draw("item-a", 0, seed=8)


def test_keep_frames_by_hand() -> None:
    # keep 4 of linspace: [0, 33, 66, 99]; the 8-frame grid [0, 14, 28, 42, 56, 70, 84, 99]
    # minus those leaves [14, 28, 42, 56, 70, 84]; 4 more spread over it at floor(linspace(0, 5,
    # 4) + 0.5) = [0, 2, 3, 5] -> 14, 42, 56, 84
    assert hand_idx("linspace", 100, 8, keep_frames=4) == [0, 14, 33, 42, 56, 66, 84, 99]
    assert set(hand_idx("linspace", 100, 4)) <= set(hand_idx("linspace", 100, 8, keep_frames=4))


def test_linspace_phase_by_hand() -> None:
    # half a spacing (99/7 = 14.14) later: 7.07, 21.2, ..., 91.9, and 106.1 clipped to the last
    assert hand_idx("linspace", 100, 8, phase=0.5) == [7, 21, 35, 49, 63, 77, 91, 99]


@pytest.mark.xfail(
    strict=True,
    reason=(
        "known deviation: qwen-vl-utils rounds torch.linspace in float32; on long videos a "
        "float32 .5 tie can move one index by one frame (at 30 fps first seen at 256 frames of "
        "~19 min and 128 frames of ~40 min; never at <= 64 frames up to 1 h)"
    ),
)
def test_fps_float32_ties_of_qwen() -> None:
    torch = pytest.importorskip("torch")
    n, count = 71915, 128  # 40 min at 30 fps
    qwen = torch.linspace(0, n - 1, count).round().long().tolist()
    assert hand_idx("fps", n, count, video_fps=30.0, fps=2.0) == qwen


def test_fps_budgets_above_768_frames_take_their_own_count() -> None:
    """qwen-vl-utils asked with max_frames = K above its default cap of 768 takes up to K: a
    30-minute video at 30 fps sampled at 2 fps wants 3600 frames."""
    from itemscale.collect.video._sampling import fps_frame_count

    assert fps_frame_count(54_000, 1024, video_fps=30.0, fps=2.0) == 1024
    assert fps_frame_count(54_000, 1001, video_fps=30.0, fps=2.0) == 1000  # floored to even
    assert fps_frame_count(54_000, 512, video_fps=30.0, fps=2.0) == 512
    assert fps_frame_count(1_500, 1024, video_fps=30.0, fps=2.0) == 100  # the rate decides
    assert hand_idx("fps", 54_000, 1024, video_fps=30.0, fps=2.0) == qwen_fps(
        54_000, 1024, 30.0, 2.0
    )

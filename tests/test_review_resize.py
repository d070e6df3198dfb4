"""Independent review of frame sizes against Qwen2-VL's `smart_resize` (factor 28, min/max
pixels), worked out by hand for a few sizes."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from itemscale.protocol import Configuration
from itemscale.video import allocation_max_pixels, smart_resize, target_size

PX = 28 * 28


def test_within_bounds_rounds_each_side() -> None:
    # 360 / 28 = 12.86 -> 13 -> 364; 640 / 28 = 22.86 -> 23 -> 644; 234416 pixels, in bounds
    assert smart_resize(360, 640) == (364, 644)
    # Python's round is half-to-even, as in Qwen's round_by_factor: 70/28 = 2.5 -> 2,
    # 98/28 = 3.5 -> 4, 42/28 = 1.5 -> 2
    assert smart_resize(70, 98) == (56, 112)
    assert smart_resize(42, 1000) == (56, 1008)


def test_above_max_pixels_scales_down_and_floors() -> None:
    # 364 x 644 > 128*784 = 100352; beta = sqrt(230400 / 100352) = 1.5152;
    # 360 / beta = 237.6 -> floor to 224; 640 / beta = 422.4 -> 420
    assert smart_resize(360, 640, max_pixels=128 * PX) == (224, 420)
    # 1080p to 768*784 = 602112: beta = 1.8558; 581.97 -> 560; 1034.6 -> 1008
    assert smart_resize(1080, 1920, max_pixels=768 * PX) == (560, 1008)


def test_below_min_pixels_scales_up_and_ceils() -> None:
    # 20 x 30 rounds to 28 x 28 = 784 < 3136; beta = sqrt(3136 / 600) = 2.2862;
    # 45.7 -> ceil to 56; 68.6 -> 84
    assert smart_resize(20, 30) == (56, 84)


def test_extreme_aspect_ratio_is_rejected() -> None:
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2100)


def qwen2vl_smart_resize(h: int, w: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen2-VL's algorithm, written out from its description as an oracle."""
    h_bar = max(28, round(h / 28) * 28)
    w_bar = max(28, round(w / 28) * 28)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        h_bar = max(28, math.floor(h / beta / 28) * 28)
        w_bar = max(28, math.floor(w / beta / 28) * 28)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        h_bar = math.ceil(h * beta / 28) * 28
        w_bar = math.ceil(w * beta / 28) * 28
    return h_bar, w_bar


@settings(max_examples=300, deadline=None)
@given(
    h=st.integers(16, 2160),
    w=st.integers(16, 3840),
    max_tokens=st.sampled_from([64, 128, 256, 768, 16384]),
)
def test_matches_qwen_and_invariants(h: int, w: int, max_tokens: int) -> None:
    assume(max(h, w) / min(h, w) <= 200)
    got = smart_resize(h, w, max_pixels=max_tokens * PX)
    assert got == qwen2vl_smart_resize(h, w, 4 * PX, max_tokens * PX)
    assert got[0] % 28 == 0 and got[1] % 28 == 0
    # the pixel cap holds unless a side is clamped up to one 28-pixel row (as in Qwen)
    if min(got) > 28:
        assert got[0] * got[1] <= max_tokens * PX


def test_configuration_sizes_by_hand() -> None:
    # short side 224 on 360x640: scale 0.6222; 640 * 0.6222 = 398.2 -> 14 * 28 = 392
    assert target_size(Configuration(frames=8, short_side=224), 360, 640) == (224, 392)
    assert target_size(Configuration(frames=8, max_pixels=128 * PX), 360, 640) == (224, 420)
    # allocation: one token per 28x28 pixels per 2 frames, so T tokens over F frames give
    # T * 784 * 2 / F pixels a frame: 4096 over 16 -> 401408 (native 364x644 fits), over 64 ->
    # 100352 (the 128-token case above)
    assert allocation_max_pixels(4096, 16) == 401408
    assert allocation_max_pixels(4096, 64) == 100352
    assert target_size(Configuration(frames=16, token_budget=4096), 360, 640) == (364, 644)
    assert target_size(Configuration(frames=64, token_budget=4096), 360, 640) == (224, 420)
    # a config with no resolution keeps the native size
    assert target_size(Configuration(frames=8), 360, 640) == (360, 640)

"""Frame sizes: short side, pixel budget, or a total token budget spread over F frames, rounded
as the Qwen-family processors round (qwen-vl-utils `smart_resize`: both sides multiples of 28,
aspect ratio kept, pixels within [min, max]), so the processor does not resize them again.
"""

from __future__ import annotations

import math
from typing import Final

from ..protocol import (
    FRAMES_PER_TEMPORAL_PATCH,
    IMAGE_FACTOR,
    MAX_FRAME_PIXELS,
    MIN_FRAME_PIXELS,
    PIXELS_PER_VISUAL_TOKEN,
    Configuration,
)

MIN_PIXELS: Final[int] = MIN_FRAME_PIXELS
MAX_PIXELS: Final[int] = MAX_FRAME_PIXELS
MAX_RATIO: Final[int] = 200


def _round_by(number: float, factor: int) -> int:
    return round(number / factor) * factor


def smart_resize(
    height: int,
    width: int,
    *,
    factor: int = IMAGE_FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """(height, width) rounded to multiples of `factor` with min_pixels <= h*w <= max_pixels."""
    if height <= 0 or width <= 0:
        raise ValueError(f"frame size must be positive (got {height}x{width})")
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(
            f"aspect ratio must be below {MAX_RATIO} (got {max(height, width) / min(height, width):.1f})"
        )
    h_bar = max(factor, _round_by(height, factor))
    w_bar = max(factor, _round_by(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def allocation_max_pixels(token_budget: int, frames: int) -> int:
    """Pixels per frame when `token_budget` visual tokens are spread over `frames` frames."""
    if frames <= 0:
        raise ValueError("allocation needs at least one frame")
    return max(
        MIN_PIXELS, token_budget * PIXELS_PER_VISUAL_TOKEN * FRAMES_PER_TEMPORAL_PATCH // frames
    )


def target_size(config: Configuration, height: int, width: int) -> tuple[int, int]:
    """The (height, width) a configuration serves frames at; native size when it sets none."""
    if config.short_side is not None:
        scale = config.short_side / min(height, width)
        return (
            max(IMAGE_FACTOR, _round_by(height * scale, IMAGE_FACTOR)),
            max(IMAGE_FACTOR, _round_by(width * scale, IMAGE_FACTOR)),
        )
    if config.max_pixels is not None:
        return smart_resize(height, width, max_pixels=max(config.max_pixels, MIN_PIXELS))
    if config.token_budget is not None:
        return smart_resize(
            height, width, max_pixels=allocation_max_pixels(config.token_budget, config.frames)
        )
    return height, width

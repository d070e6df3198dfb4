"""The dry run's visual tokens equal the processor's: transformers' Qwen2-VL video processor
resizing frames as the `hf` backend asks it to, and its image processor (a Qwen2-VL server's
default) for image parts, on several frame sizes."""

from __future__ import annotations

import numpy as np
import pytest

from itemscale.collect.sweep._plan import estimate_image_tokens, estimate_visual_tokens

SIZES = [(48, 64), (57, 85), (90, 160), (112, 200), (224, 224), (360, 640), (480, 854)]


@pytest.mark.parametrize(("height", "width"), SIZES)
@pytest.mark.parametrize("frames", [1, 4, 7])
def test_hf_video_tokens_equal_the_processors(height: int, width: int, frames: int) -> None:
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    processor = Qwen2VLVideoProcessor()
    # the bounds `itemscale.collect.models._hf_families.resize_kwargs` passes: one patch below, the
    # frame rounded up to the patch grid above
    ceiling = -(-height // 28) * 28 * (-(-width // 28) * 28)
    video = np.random.default_rng(0).integers(0, 256, (frames, height, width, 3), dtype=np.uint8)
    grid = processor(
        videos=[video],
        size={"shortest_edge": 28 * 28, "longest_edge": ceiling},
        cap_pixels_per_frame=False,
        do_sample_frames=False,
        return_tensors="np",
    )["video_grid_thw"][0]
    merge = processor.merge_size**2
    assert estimate_visual_tokens(frames, height, width) == int(np.prod(grid)) // merge


@pytest.mark.parametrize(("height", "width"), SIZES)
def test_image_part_tokens_equal_a_servers_processor(height: int, width: int) -> None:
    from transformers import Qwen2VLImageProcessor

    processor = Qwen2VLImageProcessor()  # a server's defaults: 56 x 56 to 28 x 28 x 1280
    image = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    grid = processor(images=[image], return_tensors="np")["image_grid_thw"][0]
    per_image = int(np.prod(grid)) // processor.merge_size**2 + 2  # two markers around it
    assert estimate_image_tokens(3, height, width) == 3 * per_image


def test_the_old_rounding_up_is_gone() -> None:
    # 90 x 160: the processor rounds 90 to 84 (3 patches), not up to 112 (4)
    assert estimate_visual_tokens(2, 90, 160) == 3 * 6
    assert estimate_image_tokens(1, 90, 160) == 3 * 6 + 2

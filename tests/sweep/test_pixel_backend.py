"""The sweep tests' helpers themselves (tests/_support/sweep.py): the pixel backend answers
from the frames' pixels, and the test videos decode to the frame count and size asked for."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from _support.sweep import PixelBackend, make_items, make_video, read_log
from itemscale.collect.models import VideoRequest


def test_pixel_backend_answers_from_pixels(tmp_path: Path) -> None:
    from itemscale.collect.models import Frames

    item = make_items(1)[0]
    backend = PixelBackend(str(tmp_path / "log.jsonl"))
    dark = Frames(np.full((2, 4, 4, 3), 10, np.uint8), (0, 1), (0.0, 0.1))
    light = Frames(np.full((2, 4, 4, 3), 13, np.uint8), (0, 1), (0.0, 0.1))
    out = backend.generate(
        [VideoRequest(item, dark), VideoRequest(item, light), VideoRequest(item, None)]
    )
    assert [r.raw_text for r in out] == [
        "The answer is C.",  # 10 % 4 = 2
        "The answer is B.",  # 13 % 4 = 1
        f"The answer is {'ABCD'[len(item.question) % 4]}.",
    ]
    assert [e["frames"] for e in read_log(tmp_path / "log.jsonl")] == [2, 2, 0]


def test_make_video_decodes_to_distinct_colours(tmp_path: Path) -> None:
    from itemscale.collect.video import probe_video

    path = make_video(tmp_path / "x.mp4", n_frames=12)
    info = probe_video(path)
    assert info.video_frames == 12 and (info.width, info.height) == (64, 48)

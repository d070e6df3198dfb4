"""Frame times in the `video_input` transport: with `frame_times`, each request carries vLLM's
`media_io_kwargs.video` (the frames' indices, the video's frame rate, frame count and duration,
`num_frames = -1`, `do_sample_frames = false`), checked by a local server that validates the
field the way vLLM's `VideoMediaIO.load_base64` does for a `data:video/jpeg` frame list and
answers with the times a timestamp-aware processor would print."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from _support.openai_server import ChatServer, Reply
from itemscale.collect.items import Item
from itemscale.collect.models import BackendError, Frames, VideoRequest, load_backend
from itemscale.collect.protocol import ModelEntry
from itemscale.core.responses import TaskKind

OPEN = Item(
    item_id="q", video_id="v", task_kind=TaskKind.OPEN_QA, question="When?", references=("x",)
)


def vllm_times(body: dict[str, Any]) -> tuple[str, None]:
    """What vLLM (main, vllm/frontend/processing/multimodal/media/video.py) accepts for a
    `data:video/jpeg` list, turned into each frame's time (index / fps) as the reply; a
    request vLLM would refuse answers 'refused: ...'."""
    url = body["messages"][0]["content"][0]["video_url"]["url"]
    sent = len(url.split("base64,", 1)[1].split(","))
    video = body.get("media_io_kwargs", {}).get("video")
    if video is None:
        return "no metadata", None
    num_frames = video.get("num_frames", 32)
    kept = sent if num_frames < 0 else min(sent, num_frames)
    indices = video.get("frames_indices")
    if not isinstance(indices, list) or not all(isinstance(i, int) for i in indices):
        return "refused: frames_indices must be a list of integers", None
    if len(indices) != kept:
        return "refused: frames_indices length must match number of frames sent", None
    total = video.get("total_num_frames", kept)
    if not isinstance(total, int) or total < kept:
        return "refused: total_num_frames", None
    if video.get("do_sample_frames") is not False:
        return "refused: would sample again", None
    fps = float(video["fps"])
    return " ".join(f"{i / fps:.2f}" for i in indices), None


def _entry(server: ChatServer, **options: object) -> ModelEntry:
    return ModelEntry(
        name="served",
        backend="openai",
        model="m",
        options={"base_url": server.base_url, "video_input": True, **options},
    )


def _frames(indices: tuple[int, ...], fps: float) -> Frames:
    pixels = np.full((len(indices), 16, 16, 3), 128, dtype=np.uint8)
    return Frames(pixels, indices, tuple(i / fps for i in indices))


def test_the_frames_true_times_travel_as_vllm_takes_them() -> None:
    # 40 frames out of a 30 fps video: past vLLM's default of 32 for a JPEG list
    indices = tuple(range(3, 3 + 15 * 40, 15))
    with ChatServer(default=Reply(respond=vllm_times)) as server:
        backend = load_backend(_entry(server, frame_times=True))
        [response] = backend.generate([VideoRequest(OPEN, _frames(indices, 30.0))])
        backend.close()
    video = server.received[0].body["media_io_kwargs"]["video"]
    assert video["frames_indices"] == list(indices)
    assert video["fps"] == pytest.approx(30.0)
    assert video["num_frames"] == -1 and video["do_sample_frames"] is False
    assert video["duration"] == pytest.approx((indices[-1] + 1) / 30.0)
    assert response.raw_text == " ".join(f"{i / 30.0:.2f}" for i in indices)
    assert response.raw_text.split()[:2] == ["0.10", "0.60"]  # not 0, 1/30, ...


def test_without_the_option_nothing_is_sent_and_the_identity_is_unchanged() -> None:
    with ChatServer(default=Reply(respond=vllm_times)) as server:
        plain = load_backend(_entry(server))
        [response] = plain.generate([VideoRequest(OPEN, _frames((0, 30), 30.0))])
        plain.close()
        timed = load_backend(_entry(server, frame_times=True))
        timed.close()
    assert "media_io_kwargs" not in server.received[0].body
    assert response.raw_text == "no metadata"
    assert "frame_times" not in plain.spec.processor
    assert timed.spec.processor["frame_times"] is True
    assert timed.spec.spec_id != plain.spec.spec_id


def test_frame_times_need_the_video_transport() -> None:
    entry = ModelEntry(name="s", backend="openai", model="m", options={"frame_times": True})
    with pytest.raises(BackendError, match="frame_times needs video_input"):
        load_backend(entry)

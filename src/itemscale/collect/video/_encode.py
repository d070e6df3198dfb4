"""Writing videos: the synthetic suite, the tests and the benchmark make real files with it.

Variable frame rate is written with explicit timestamps (`pts_s`), so a test can check that the
reader takes timestamps from the stream rather than from a nominal rate.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

#: Container format by file suffix (PyAV guesses most, but `.webm` needs saying).
_FORMATS = {".mp4": "mp4", ".mkv": "matroska", ".webm": "webm", ".mov": "mov", ".avi": "avi"}


def encode_video(
    path: str | os.PathLike[str],
    frames: Iterable[np.ndarray],
    *,
    fps: float = 25.0,
    codec: str = "libx264",
    gop: int = 12,
    pts_s: Sequence[float] | None = None,
    options: Mapping[str, str] | None = None,
    container_options: Mapping[str, str] | None = None,
) -> Path:
    """Encode RGB uint8 frames [H, W, 3] to `path` (temp file, then rename). `pts_s`: each
    frame's presentation time in seconds (variable frame rate; else 1/fps apart)."""
    import av

    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with av.open(
            str(temp), mode="w", format=fmt, options=dict(container_options or {})
        ) as container:
            rate = Fraction(fps).limit_denominator(1001)
            stream: Any = container.add_stream(codec, rate=rate, options=dict(options or {}))
            stream.pix_fmt = "yuv420p"
            stream.codec_context.gop_size = gop
            if pts_s is not None:
                stream.codec_context.time_base = Fraction(1, 1000)
            started = False
            for i, array in enumerate(frames):
                if not started:
                    stream.height, stream.width = int(array.shape[0]), int(array.shape[1])
                    started = True
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(array), format="rgb24")
                if pts_s is not None:
                    frame.pts = round(pts_s[i] * 1000)
                    frame.time_base = Fraction(1, 1000)
                for packet in stream.encode(frame):
                    container.mux(packet)
            if not started:
                raise ValueError("encode_video needs at least one frame")
            for packet in stream.encode():
                container.mux(packet)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return path

"""The drawing both kinds of contact sheet are made of: tiles resized, captions written, PNG
bytes. `video` (`itemscale frames`) and `audit` (`audit --sheets`) may not import each other, so
it lives in a box below both. Pillow is imported on use: it belongs to the `video` extra."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Final

import numpy as np

BACKGROUND: Final[tuple[int, int, int]] = (255, 255, 255)
INK: Final[tuple[int, int, int]] = (20, 20, 20)
#: text line height of Pillow's default bitmap font
LINE: Final[int] = 12

#: where a caption goes (x, y) and what it says
Caption = tuple[tuple[int, int], str]


def resize_nearest(frame: np.ndarray, height: int, width: int | None = None) -> np.ndarray:
    """Nearest-neighbour, so a low-resolution budget shows as blocks, not a blur; `width`
    defaults to the aspect ratio's."""
    h, w = frame.shape[:2]
    if width is None:
        width = max(1, round(w * height / h))
    rows = (np.arange(height) * h // height).clip(0, h - 1)
    cols = (np.arange(width) * w // width).clip(0, w - 1)
    out: np.ndarray = frame[rows][:, cols]
    return out


def resize_bilinear(frame: np.ndarray, height: int) -> np.ndarray:
    """Bilinear resize to `height` keeping the aspect ratio, to show the picture, not its pixel
    grid."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(frame), mode="RGB")
    width = max(1, round(frame.shape[1] * height / frame.shape[0]))
    return np.asarray(image.resize((width, height), Image.Resampling.BILINEAR), dtype=np.uint8)


def draw_text(
    image: np.ndarray, lines: Sequence[Caption], *, fill: tuple[int, int, int] = INK
) -> np.ndarray:
    """`image` (HxWx3 uint8) with each line written at its place in Pillow's default font."""
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(np.ascontiguousarray(image), mode="RGB")
    draw = ImageDraw.Draw(canvas)
    for (x, y), text in lines:
        draw.text((x, y), text, fill=fill)
    return np.asarray(canvas, dtype=np.uint8)


def encode_png(image: np.ndarray, *, optimize: bool = True) -> bytes:
    """PNG bytes of an HxWx3 uint8 image; `optimize` (smaller, slower) for sheets embedded in the
    report."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image), mode="RGB").save(
        buf, format="PNG", optimize=optimize
    )
    return buf.getvalue()

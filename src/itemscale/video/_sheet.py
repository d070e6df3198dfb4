"""Contact sheets: every frame a configuration saw, in order, with its index and timestamp, so a
person can check what a budget actually showed the model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

import numpy as np

from ._pipeline import FrameSet

_BACKGROUND: Final[tuple[int, int, int]] = (255, 255, 255)
_INK: Final[tuple[int, int, int]] = (20, 20, 20)
_LINE: Final[int] = 12  # text line height of Pillow's default bitmap font


def _tile(frame: np.ndarray, tile_height: int) -> Any:
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(frame), mode="RGB")
    width = max(1, round(frame.shape[1] * tile_height / frame.shape[0]))
    return image.resize((width, tile_height), Image.Resampling.BILINEAR)


def render_contact_sheet(
    frames: FrameSet, *, title: str, tile_height: int = 96, columns: int = 8
) -> np.ndarray:
    """An RGB uint8 image: a title line, then the frames in rows of `columns`, each captioned
    `#index  t.ttts`."""
    from PIL import Image, ImageDraw

    count = frames.effective_frames
    tiles = [_tile(f, tile_height) for f in frames.frames]
    tile_width = max((t.width for t in tiles), default=tile_height)
    pad, caption = 4, _LINE + 4
    cols = max(1, min(columns, count))
    rows = max(1, -(-count // cols))
    cell_w, cell_h = tile_width + 2 * pad, tile_height + caption + 2 * pad
    header = 2 * _LINE + 8
    width = max(cols * cell_w, 6 * len(title) + 2 * pad, 320)
    sheet = Image.new("RGB", (width, header + rows * cell_h), _BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    draw.text((pad, 2), title, fill=_INK)
    draw.text(
        (pad, 2 + _LINE + 2),
        f"{count} frames at {frames.width}x{frames.height}",
        fill=_INK,
    )
    for n, (tile, index, stamp) in enumerate(
        zip(tiles, frames.indices.tolist(), frames.timestamps.tolist(), strict=True)
    ):
        r, c = divmod(n, cols)
        x, y = c * cell_w + pad, header + r * cell_h + pad
        sheet.paste(tile, (x, y))
        draw.text((x, y + tile_height + 2), f"#{index}  {stamp:.3f}s", fill=_INK)
    return np.asarray(sheet, dtype=np.uint8)


def write_contact_sheet(
    path: str | os.PathLike[str],
    frames: FrameSet,
    *,
    title: str,
    tile_height: int = 96,
    columns: int = 8,
) -> Path:
    """Render and save as PNG (temp file, then rename)."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image = render_contact_sheet(frames, title=title, tile_height=tile_height, columns=columns)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        Image.fromarray(image, mode="RGB").save(temp, format="PNG")
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return path

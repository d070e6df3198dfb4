"""Contact sheets: every frame a configuration saw, in order, with its index and timestamp, so a
person can check what a budget actually showed the model. The tiles, captions and PNG bytes are
drawn by `itemscale.core.sheets`, as the audit's transition sheets are."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...core.errors import renamed_keywords
from ...core.sheets import BACKGROUND, LINE, draw_text, encode_png, resize_bilinear
from ._pipeline import FrameSet


@renamed_keywords(frames="frame_set")
def render_contact_sheet(
    frame_set: FrameSet, *, title: str, tile_height: int = 96, columns: int = 8
) -> np.ndarray:
    """An RGB uint8 image: a title line, then the frames in rows of `columns`, each captioned
    `#index  t.ttts`."""
    count = frame_set.effective_frames
    tiles = [resize_bilinear(f, tile_height) for f in frame_set.array]
    tile_width = max((t.shape[1] for t in tiles), default=tile_height)
    pad, caption = 4, LINE + 4
    cols = max(1, min(columns, count))
    rows = max(1, -(-count // cols))
    cell_w, cell_h = tile_width + 2 * pad, tile_height + caption + 2 * pad
    header = 2 * LINE + 8
    width = max(cols * cell_w, 6 * len(title) + 2 * pad, 320)
    sheet = np.full((header + rows * cell_h, width, 3), BACKGROUND, dtype=np.uint8)
    text = [
        ((pad, 2), title),
        ((pad, 2 + LINE + 2), f"{count} frames at {frame_set.width}x{frame_set.height}"),
    ]
    for n, (tile, index, stamp) in enumerate(
        zip(tiles, frame_set.indices.tolist(), frame_set.timestamps.tolist(), strict=True)
    ):
        r, c = divmod(n, cols)
        x, y = c * cell_w + pad, header + r * cell_h + pad
        sheet[y : y + tile.shape[0], x : x + tile.shape[1]] = tile
        text.append(((x, y + tile_height + 2), f"#{index}  {stamp:.3f}s"))
    # tiles and text never overlap, so writing the text last draws what drawing in turn did
    return draw_text(sheet, text)


@renamed_keywords(frames="frame_set")
def write_contact_sheet(
    path: str | os.PathLike[str],
    frame_set: FrameSet,
    *,
    title: str,
    tile_height: int = 96,
    columns: int = 8,
) -> Path:
    """Render and save as PNG (temp file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image = render_contact_sheet(frame_set, title=title, tile_height=tile_height, columns=columns)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(encode_png(image, optimize=False))
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return path

"""Contact sheets show every frame, in order, at a predictable place."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from itemscale.collect.video import FrameSet, write_contact_sheet
from itemscale.collect.video._sheet import render_contact_sheet


def frameset(colours: list[tuple[int, int, int]]) -> FrameSet:
    frames = np.stack([np.full((48, 64, 3), c, dtype=np.uint8) for c in colours])
    n = len(colours)
    return FrameSet(
        array=frames,
        indices=np.arange(0, 10 * n, 10, dtype=np.int64),
        timestamps=np.arange(n, dtype=np.float64) * 0.4,
        width=64,
        height=48,
        effective_frames=n,
    )


def test_tiles_in_reading_order(tmp_path: Path) -> None:
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (250, 250, 0), (0, 250, 250)]
    sheet = render_contact_sheet(frameset(colours), title="demo", tile_height=48, columns=3)
    # layout: header 2*12+8 = 32 px, cells of (64+8) x (48+16+8), tiles at (+4, +4)
    header, cell_w, cell_h, pad = 32, 72, 72, 4
    assert sheet.shape == (header + 2 * cell_h, max(3 * cell_w, 320), 3)
    for n, colour in enumerate(colours):
        r, c = divmod(n, 3)
        y = header + r * cell_h + pad + 24
        x = c * cell_w + pad + 32
        assert tuple(sheet[y, x]) == colour, n
    # the caption area under the first tile has ink (its index and timestamp)
    caption = sheet[header + pad + 48 + 2 : header + pad + 48 + 14, pad : pad + 64]
    assert caption.min() < 100
    path = write_contact_sheet(tmp_path / "s" / "sheet.png", frameset(colours), title="demo")
    with Image.open(path) as image:
        assert image.format == "PNG"
    assert not list(path.parent.glob("*.tmp"))


def test_empty_frameset_renders_title_only() -> None:
    empty = FrameSet(
        array=np.empty((0, 0, 0, 3), dtype=np.uint8),
        indices=np.empty(0, dtype=np.int64),
        timestamps=np.empty(0),
        width=0,
        height=0,
        effective_frames=0,
    )
    sheet = render_contact_sheet(empty, title="text-only")
    assert sheet.dtype == np.uint8 and sheet.shape[0] > 0


def test_both_kinds_of_sheet_draw_with_the_same_primitives(tmp_path: Path) -> None:
    """The frames sheet and the audit's transition sheet share one resize, caption and PNG
    encoder (`itemscale.core.sheets`): a caption is the same ink either way, and a written sheet is
    exactly the shared encoder's bytes of the rendered one."""
    from itemscale.analysis.audit import contact_sheet
    from itemscale.core.sheets import INK, draw_text, encode_png

    frames = frameset([(255, 0, 0), (0, 255, 0)])
    path = write_contact_sheet(tmp_path / "sheet.png", frames, title="demo")
    rendered = render_contact_sheet(frames, title="demo")
    assert path.read_bytes() == encode_png(rendered, optimize=False)
    with Image.open(path) as image:
        assert np.array_equal(np.asarray(image), rendered)
    blank = np.full((20, 60, 3), 255, dtype=np.uint8)
    written = draw_text(blank, [((2, 2), "1.25s")])
    assert min(INK) <= written.min() < 100  # ink, never darker than the ink colour
    grey = np.full((8, 8, 3), 128, dtype=np.uint8)
    audit = contact_sheet([grey], [grey], status_from=["kept"], status_to=["kept"])
    with Image.open(io.BytesIO(encode_png(audit))) as image:
        assert np.array_equal(np.asarray(image), audit)

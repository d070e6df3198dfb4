"""Contact sheets: the frames of the two budgets of a transition, side by side, as one image.

A coder judging a pathway needs to see which frames the model lost and gained, so each tile
has a coloured frame: grey kept (in both budgets), red dropped (only at j), blue added (only
at k), and a green bar under evidence frames. The composition is plain numpy on frames the
caller decoded (the audit never imports the decoder); PNG encoding uses Pillow, imported on
use because it belongs to the `video` extra.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Final

import numpy as np

COLOURS: Final[dict[str, tuple[int, int, int]]] = {
    "kept": (150, 150, 150),
    "dropped": (215, 48, 39),
    "added": (49, 130, 189),
    "evidence": (26, 152, 80),
    "background": (255, 255, 255),
}


def _resize_nearest(frame: np.ndarray, height: int) -> np.ndarray:
    h, w = frame.shape[:2]
    width = max(1, round(w * height / h))
    rows = (np.arange(height) * h // height).clip(0, h - 1)
    cols = (np.arange(width) * w // width).clip(0, w - 1)
    out: np.ndarray = frame[rows][:, cols]
    return out


def _as_rgb(frame: np.ndarray) -> np.ndarray:
    arr = np.asarray(frame)
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4):
        raise ValueError(f"a frame must be HxWx3 (or HxW), got shape {arr.shape}")
    if arr.dtype != np.uint8:
        raise ValueError(f"a frame must be uint8, got {arr.dtype}")
    return arr[:, :, :3]


def _block(
    frames: Sequence[np.ndarray],
    status: Sequence[str],
    evidence: Sequence[bool],
    tile: int,
    columns: int,
) -> np.ndarray:
    border, bar = 3, 4
    tiles = [_resize_nearest(_as_rgb(f), tile) for f in frames]
    width = max((t.shape[1] for t in tiles), default=tile)
    cell_w, cell_h = width + 2 * border + 2, tile + 2 * border + bar + 2
    cols = max(1, min(columns, len(tiles)))
    rows = max(1, -(-len(tiles) // cols))
    out = np.full((rows * cell_h, cols * cell_w, 3), COLOURS["background"], dtype=np.uint8)
    for n, (t, st, ev) in enumerate(zip(tiles, status, evidence, strict=True)):
        r, c = divmod(n, cols)
        y, x = r * cell_h + 1, c * cell_w + 1
        h, w = t.shape[:2]
        out[y : y + h + 2 * border, x : x + w + 2 * border] = COLOURS[st]
        out[y + border : y + border + h, x + border : x + border + w] = t
        if ev:
            yb = y + h + 2 * border
            out[yb : yb + bar, x : x + w + 2 * border] = COLOURS["evidence"]
    return out


def contact_sheet(
    frames_from: Sequence[np.ndarray],
    frames_to: Sequence[np.ndarray],
    *,
    status_from: Sequence[str],
    status_to: Sequence[str],
    evidence_from: Sequence[bool] | None = None,
    evidence_to: Sequence[bool] | None = None,
    tile: int = 72,
    columns: int = 8,
) -> np.ndarray:
    """One HxWx3 uint8 image: budget j's frames on the left, budget k's on the right.

    `status_*` says per frame `kept`, `dropped` or `added`; `evidence_*` marks evidence frames.
    """
    if len(frames_from) != len(status_from) or len(frames_to) != len(status_to):
        raise ValueError("one status per frame is needed")
    for st in (*status_from, *status_to):
        if st not in ("kept", "dropped", "added"):
            raise ValueError(f"unknown frame status {st!r}")
    ev_from = list(evidence_from) if evidence_from is not None else [False] * len(frames_from)
    ev_to = list(evidence_to) if evidence_to is not None else [False] * len(frames_to)
    left = _block(frames_from, status_from, ev_from, tile, columns)
    right = _block(frames_to, status_to, ev_to, tile, columns)
    gap = 12
    height = max(left.shape[0], right.shape[0])
    out = np.full((height, left.shape[1] + gap + right.shape[1], 3), 255, dtype=np.uint8)
    out[: left.shape[0], : left.shape[1]] = left
    out[: right.shape[0], left.shape[1] + gap :] = right
    out[:, left.shape[1] + gap // 2 - 1 : left.shape[1] + gap // 2 + 1] = 0
    return out


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of an HxWx3 uint8 image."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image), mode="RGB").save(buf, format="PNG", optimize=True)
    return buf.getvalue()

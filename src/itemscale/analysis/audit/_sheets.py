"""Contact sheets: the frames of a transition's two budgets side by side, as one image.

Each tile has a coloured frame (grey kept, red dropped, blue added) and a green bar under
evidence frames; each side is headed by its budget and each tile captioned with its timestamp,
so a sheet read on its own still says what it shows. The composition is plain numpy on frames
the caller decoded; tiles, captions and PNG bytes are drawn by `itemscale.core.sheets`, as
`itemscale frames`' sheets are, so the two kinds of sheet cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from ...core.sheets import BACKGROUND, INK, LINE, draw_text, encode_png, resize_nearest

COLOURS: Final[dict[str, tuple[int, int, int]]] = {
    "kept": (150, 150, 150),
    "dropped": (215, 48, 39),
    "added": (49, 130, 189),
    "evidence": (26, 152, 80),
    "background": BACKGROUND,
    "ink": INK,
}
_HEADER: Final[int] = 2 * LINE + 6
_CAPTION: Final[int] = LINE + 2

__all__ = ["COLOURS", "contact_sheet", "encode_png"]


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
    *,
    header: int = 0,
    caption: int = 0,
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The block's image and where each tile's caption goes (x, y)."""
    border, bar = 3, 4
    tiles = [resize_nearest(_as_rgb(f), tile) for f in frames]
    width = max((t.shape[1] for t in tiles), default=tile)
    cell_w, cell_h = width + 2 * border + 2, tile + 2 * border + bar + 2 + caption
    cols = max(1, min(columns, len(tiles)))
    rows = max(1, -(-len(tiles) // cols))
    shape = (header + rows * cell_h, cols * cell_w, 3)
    out = np.full(shape, COLOURS["background"], dtype=np.uint8)
    captions = []
    for n, (t, st, ev) in enumerate(zip(tiles, status, evidence, strict=True)):
        r, c = divmod(n, cols)
        y, x = header + r * cell_h + 1, c * cell_w + 1
        h, w = t.shape[:2]
        out[y : y + h + 2 * border, x : x + w + 2 * border] = COLOURS[st]
        out[y + border : y + border + h, x + border : x + border + w] = t
        if ev:
            yb = y + h + 2 * border
            out[yb : yb + bar, x : x + w + 2 * border] = COLOURS["evidence"]
        captions.append((x, y + h + 2 * border + bar))
    return out, captions


def _seconds(t: float) -> str:
    minutes, seconds = divmod(float(t), 60.0)
    return f"{int(minutes)}:{seconds:05.2f}" if minutes else f"{seconds:.2f}s"


def contact_sheet(
    frames_from: Sequence[np.ndarray],
    frames_to: Sequence[np.ndarray],
    *,
    status_from: Sequence[str],
    status_to: Sequence[str],
    evidence_from: Sequence[bool] | None = None,
    evidence_to: Sequence[bool] | None = None,
    label_from: str | None = None,
    label_to: str | None = None,
    times_from: Sequence[float] | None = None,
    times_to: Sequence[float] | None = None,
    tile: int = 72,
    columns: int = 8,
) -> np.ndarray:
    """One HxWx3 uint8 image: budget j's frames on the left, budget k's on the right.

    `status_*` says per frame `kept`, `dropped` or `added`; `evidence_*` marks evidence frames.
    `label_*` heads each side (its budget, e.g. `8f@112`) and `times_*` (seconds into the video)
    caption each tile; without them the sheet is the bare tiles.
    """
    if len(frames_from) != len(status_from) or len(frames_to) != len(status_to):
        raise ValueError("one status per frame is needed")
    for st in (*status_from, *status_to):
        if st not in ("kept", "dropped", "added"):
            raise ValueError(f"unknown frame status {st!r}")
    ev_from = list(evidence_from) if evidence_from is not None else [False] * len(frames_from)
    ev_to = list(evidence_to) if evidence_to is not None else [False] * len(frames_to)
    for name, times, frames in (("from", times_from, frames_from), ("to", times_to, frames_to)):
        if times is not None and len(times) != len(frames):
            raise ValueError(f"one timestamp per frame is needed (times_{name})")
    header = _HEADER if label_from is not None or label_to is not None else 0
    caption = _CAPTION if times_from is not None or times_to is not None else 0
    left, left_at = _block(
        frames_from, status_from, ev_from, tile, columns, header=header, caption=caption
    )
    right, right_at = _block(
        frames_to, status_to, ev_to, tile, columns, header=header, caption=caption
    )
    gap = 12
    height = max(left.shape[0], right.shape[0])
    out = np.full((height, left.shape[1] + gap + right.shape[1], 3), 255, dtype=np.uint8)
    out[: left.shape[0], : left.shape[1]] = left
    offset = left.shape[1] + gap
    out[: right.shape[0], offset:] = right
    out[:, left.shape[1] + gap // 2 - 1 : left.shape[1] + gap // 2 + 1] = 0
    text: list[tuple[tuple[int, int], str]] = []
    for x0, label, frames, status in (
        (0, label_from, frames_from, status_from),
        (offset, label_to, frames_to, status_to),
    ):
        if header and label is not None:
            changed = sum(st != "kept" for st in status)
            verb = "dropped" if x0 == 0 else "added"
            text.append(((x0 + 4, 2), label))
            text.append(((x0 + 4, 2 + LINE + 2), f"{len(frames)} frames, {changed} {verb}"))
    for x0, times, at in ((0, times_from, left_at), (offset, times_to, right_at)):
        for (x, y), t in zip(at, times or (), strict=False):
            text.append(((x0 + x, y), _seconds(t)))
    return draw_text(out, text, fill=COLOURS["ink"]) if text else out

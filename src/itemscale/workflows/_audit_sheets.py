"""`write_audit_sheets`: decode the frames of audited transitions and write their contact sheets,
a workflow above both the audit's composer and the decoder, so the analysis stays free of PyAV.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..core.sheets import resize_nearest


def at_pixels(frame: np.ndarray, pixels: object) -> np.ndarray:
    """At the budget's resolution (nearest neighbour), so blur shows on the sheet."""
    if pixels is None or (isinstance(pixels, float) and np.isnan(pixels)):
        return frame
    h, w = frame.shape[:2]
    scale = float(np.sqrt(float(pixels) / (h * w))) if h * w else 1.0  # type: ignore[arg-type]
    if scale >= 1.0:
        return frame
    return resize_nearest(frame, max(1, round(h * scale)), max(1, round(w * scale)))


def write_audit_sheets(
    run_dir: str | Path,
    transitions: Any,
    items: Mapping[str, Any],
    base: str | Path,
    limit: int,
) -> tuple[int, list[str]]:
    """Contact sheets for up to `limit` transitions (rows of `audit_transitions`), into
    `RUN_DIR/audit_sheets/`, which is replaced whole so no sheet of an earlier audit lingers.
    `items` maps item ids to items (their video path, relative to `base` unless absolute, and
    evidence spans). Returns (sheets written, one line per transition left without a sheet)."""
    from ..analysis.audit import SHEETS_DIR, contact_sheet, encode_png, evidence_frames
    from ..collect.video import MediaError, decode_frames, stream_index
    from ..core.files import replace_dir, shared_mode

    run_dir, base = Path(run_dir), Path(base)
    target = run_dir / SHEETS_DIR
    tmp = Path(tempfile.mkdtemp(prefix=f".{SHEETS_DIR}-", dir=run_dir))
    failures: list[str] = []
    written = 0
    try:
        for t in transitions.head(max(limit, 0)).itertuples(index=False):
            where = f"{t.model} / {t.item_id} ({t.from_label} -> {t.to_label})"
            item = items.get(t.item_id)
            if item is None or not item.video_path:
                failures.append(f"{where}: no video path for the item")
                continue
            if t.frames_from is None or t.frames_to is None:
                failures.append(f"{where}: no frame indices recorded")
                continue
            path = Path(item.video_path)
            path = path if path.is_absolute() else base / path
            fj = [int(x) for x in t.frames_from]
            fk = [int(x) for x in t.frames_to]
            wanted = sorted(set(fj) | set(fk))
            try:
                index = stream_index(path)
                decoded = decode_frames(index, wanted)
            except (MediaError, ValueError, OSError) as exc:
                failures.append(f"{where}: {exc}")
                continue
            spans = [(s.start, s.end) for s in item.evidence]
            times = index.timestamps(np.asarray(wanted, dtype=np.int64)).tolist()
            time_of = dict(zip(wanted, times, strict=True))
            ev_all = evidence_frames(wanted, times, spans) or set()
            sheet = contact_sheet(
                [at_pixels(decoded[i], t.pixels_from) for i in fj],
                [at_pixels(decoded[i], t.pixels_to) for i in fk],
                status_from=["kept" if i in set(fk) else "dropped" for i in fj],
                status_to=["kept" if i in set(fj) else "added" for i in fk],
                evidence_from=[i in ev_all for i in fj],
                evidence_to=[i in ev_all for i in fk],
                label_from=str(t.from_label),
                label_to=str(t.to_label),
                times_from=[time_of[i] for i in fj],
                times_to=[time_of[i] for i in fk],
            )
            (tmp / f"{t.transition_id}.png").write_bytes(encode_png(sheet))
            written += 1
        shared_mode(tmp, folder=True)
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written, failures

"""The response table a measure is checked on: 12 multiple-choice and 12 open-ended items on
6 videos, at three budgets and the text-only baseline, with answers that rise, fall and flip
between budgets, so that every kind of block (`binary`, `continuous`, each `_with_text`) is
built."""

from __future__ import annotations

import numpy as np
import pandas as pd

LABELS = (("8f", 8), ("16f", 16), ("32f", 32))


def conformance_table(seed: int = 0) -> pd.DataFrame:
    """A small run's response table, the same for the same seed."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []
    for kind in ("mcqa", "open_qa"):
        for n in range(12):
            item, video = f"{kind}-{n}", f"v{n // 2}"
            budgets = [(label, frames, float(k)) for k, (label, frames) in enumerate(LABELS)]
            for label, frames, order in [("text-only", 0, -1.0), *budgets]:
                row: dict[str, object] = {
                    "model": "m",
                    "item_id": item,
                    "video_id": video,
                    "task_kind": kind,
                    "series": "default",
                    "config_id": label,
                    "config_label": label,
                    "axis_order": order,
                    "frames": frames,
                    "repeat": 0,
                    "status": "ok",
                }
                if kind == "mcqa":
                    right = bool(rng.random() < 0.3 + 0.15 * (order + 1))
                    row["correct"] = float(right)
                    row["answer"] = "A" if right else str(rng.choice(["B", "C"]))
                else:
                    row["score"] = float(np.round(rng.random(), 3))
                rows.append(row)
    return pd.DataFrame(rows)

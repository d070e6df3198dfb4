"""`table`: a response table from a hand-written correctness matrix (item -> one value per
budget), with optional answers, text-only rows, videos, statuses and task kind."""

from __future__ import annotations

import pandas as pd

LABELS = ["8f", "16f", "32f"]


def table(
    matrix: dict[str, list[float]],
    *,
    labels: list[str] = LABELS,
    answers: dict[str, list[str]] | None = None,
    text: dict[str, tuple[float, str]] | None = None,
    videos: dict[str, str] | None = None,
    model: str = "m",
    series: str = "default",
    repeat: int = 0,
    status: dict[tuple[str, int], str] | None = None,
    kind: str = "mcqa",
) -> pd.DataFrame:
    rows = []
    for item, ys in matrix.items():
        video = (videos or {}).get(item, item)
        for k, y in enumerate(ys):
            st_ = (status or {}).get((item, k), "ok")
            row = {
                "model": model,
                "item_id": item,
                "video_id": video,
                "task_kind": kind,
                "series": series,
                "config_id": f"{series}-{labels[k]}",
                "config_label": labels[k],
                "axis_order": float(k),
                "frames": 8 * 2**k,
                "repeat": repeat,
                "status": st_,
            }
            if st_ in ("ok", "noanswer"):
                row["correct" if kind == "mcqa" else "score"] = float(y)
                if answers:
                    row["answer"] = answers[item][k]
            rows.append(row)
        if text and item in text:
            rows.append(
                {
                    "model": model,
                    "item_id": item,
                    "video_id": video,
                    "task_kind": kind,
                    "series": series,
                    "config_id": "text",
                    "config_label": "text-only",
                    "axis_order": -1.0,
                    "frames": 0,
                    "repeat": repeat,
                    "status": "ok",
                    "correct" if kind == "mcqa" else "score": text[item][0],
                    "answer": text[item][1],
                }
            )
    return pd.DataFrame(rows)

"""One answered row of the small two-run tables the compare tests build by hand."""

from __future__ import annotations

from typing import Any


def compare_row(item: str, video: str, correct: float | None, **extra: Any) -> dict[str, Any]:
    """Model `m`, series `default`, one 16-frame configuration `c16`, repeat 0, status ok;
    `extra` adds or replaces columns (`repeat`, `answer`, ...)."""
    row: dict[str, Any] = {
        "model": "m",
        "item_id": item,
        "video_id": video,
        "task_kind": "mcqa",
        "series": "default",
        "config_id": "c16",
        "config_label": "16f",
        "axis_order": 16.0,
        "frames": 16,
        "repeat": 0,
        "status": "ok",
        "correct": correct,
    }
    row.update(extra)
    return row

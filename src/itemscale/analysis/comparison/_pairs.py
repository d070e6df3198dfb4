"""One side of a comparison (its rows and what it names) and how two sides' rows match, by
(item id, repeat), every row that did not match or did not answer counted by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...core.responses import ANSWERED_STATUSES

#: the per-pair columns a comparison reads from each side
PAIR_COLUMNS = (
    "video_id",
    "task_kind",
    "status",
    "raw_text",
    "answer",
    "correct",
    "score",
    "visual_tokens",
    "effective_frames",
    "attributes",
)


@dataclass(frozen=True)
class Side:
    """One side: its run folder, that run's run.json, its rows and the slice they are.

    `evidence` holds the rows its rerun floor is measured on: the side's model in its run,
    every configuration, rerun rows (`rerun_of`) included, since a floor is a property of the
    set-up, not of one configuration (None: the side's own rows). `rows` holds no rerun row.
    """

    run: str
    provenance: dict[str, object]
    rows: pd.DataFrame
    model: str
    series: str
    config: str
    config_id: str
    evidence: pd.DataFrame | None = None


@dataclass(frozen=True)
class NamedRerun:
    """A second execution of one side's configuration that the user names (`compare
    --rerun`): its rows (one slice), and which side it executes again (`A` or `B`)."""

    of: str
    side: Side


@dataclass(frozen=True)
class Matched:
    """The pairs answered on both sides, aligned, and the counts of what did not match."""

    pairs: pd.DataFrame  # columns: item_id, repeat, <col>_a, <col>_b for PAIR_COLUMNS
    only_a: int
    only_b: int
    failed_a: int
    failed_b: int


def match_pairs(a: pd.DataFrame, b: pd.DataFrame) -> Matched:
    """Rows matched by (item id, repeat); every row that did not match is counted by side."""
    key = ["item_id", "repeat"]
    left = a[key + list(PAIR_COLUMNS)].rename(columns={c: f"{c}_a" for c in PAIR_COLUMNS})
    right = b[key + list(PAIR_COLUMNS)].rename(columns={c: f"{c}_b" for c in PAIR_COLUMNS})
    merged = left.merge(right, on=key, how="outer", indicator=True)
    only_a = int((merged["_merge"] == "left_only").sum())
    only_b = int((merged["_merge"] == "right_only").sum())
    both = merged[merged["_merge"] == "both"]
    ok_a = both["status_a"].astype(str).isin(ANSWERED_STATUSES)
    ok_b = both["status_b"].astype(str).isin(ANSWERED_STATUSES)
    pairs = both[ok_a & ok_b].drop(columns="_merge").sort_values(key).reset_index(drop=True)
    return Matched(pairs, only_a, only_b, int((~ok_a).sum()), int((~ok_b).sum()))

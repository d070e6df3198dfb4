"""Per-item labels (`analyze --per-item FILE`): one row per (model, series, item) of the analysed
grid, with itemscale's own labels and the seed paper's, under its column names and values.

The export is exactly the indicators the rates average (the mean of `harmful` over matched
items is `harmful_rate`), so researchers can join them with their own item metadata; dropped
items are rows too, with `in_matched_grid` 0 and their reason (docs/measures.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import pandas as pd

from ...core.responses import ANSWERED_STATUSES
from ._binary import (
    beneficial_indicator,
    eps_flips,
    harmful_indicator,
    matrix_text_overwrite_counts,
    terminal_regression_indicator,
)
from ._matrix import CONTINUOUS_METRICS, ResponseMatrix, build_matrices
from ._order import with_text_first
from ._select import select_configs

PER_ITEM_SCHEMA_VERSION: Final[int] = 1
#: The seed paper's trajectory classes (its `labels/derived.csv`).
TRAJECTORY_CLASSES: Final[tuple[str, ...]] = (
    "always_correct",
    "always_wrong",
    "monotonic_increasing",
    "monotonic_decreasing",
    "oscillating",
)
#: The seed paper's per-item columns; under `--configs` each is prefixed `matched_grid_`.
PAPER_COLUMNS: Final[tuple[str, ...]] = (
    "trajectory_class",
    "is_visually_confused",
    "is_text_overwritten",
    "best_config",
)
KEY_COLUMNS: Final[tuple[str, ...]] = (
    "schema_version",
    "model",
    "series",
    "kind",
    "item_id",
    "video_id",
    "grid",
    "in_matched_grid",
    "drop_reason",
)
#: itemscale's labels, on the visual budgets (the text-only answer a baseline beside them).
BINARY_COLUMNS: Final[tuple[str, ...]] = (
    "pattern",
    "harmful",
    "beneficial",
    "terminal_regression",
    "oracle",
    "n_right",
    "first_right",
    "text_only_right",
    "text_overwrite",
    "harmful_with_text",
)
CONTINUOUS_COLUMNS: Final[tuple[str, ...]] = (
    "best_score",
    "best_score_config",
    "text_score",
    "harmful_eps",
    "beneficial_eps",
)
_INT_COLUMNS: Final[frozenset[str]] = frozenset(
    {
        "schema_version",
        "in_matched_grid",
        "harmful",
        "beneficial",
        "terminal_regression",
        "oracle",
        "n_right",
        "text_only_right",
        "text_overwrite",
        "harmful_with_text",
        "harmful_eps",
        "beneficial_eps",
        "is_visually_confused",
        "is_text_overwritten",
    }
)


def pattern_labels(harmful: np.ndarray, beneficial: np.ndarray, y: np.ndarray) -> np.ndarray:
    """itemscale's pattern of an item's correctness on the visual budgets: `mixed` (harmful and
    beneficial), `harmful`, `beneficial`, else `always_right` / `always_wrong`."""
    right = y[:, 0] >= 1 if y.shape[1] else np.zeros(y.shape[0], dtype=bool)
    return np.where(
        harmful & beneficial,
        "mixed",
        np.where(
            harmful,
            "harmful",
            np.where(beneficial, "beneficial", np.where(right, "always_right", "always_wrong")),
        ),
    ).astype(object)


def paper_labels(
    y: np.ndarray,
    labels: Sequence[str],
    *,
    text_first: bool = True,
    less: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The seed paper's per-item labels of an [n, K+1] correctness matrix whose first column is
    the text-only answer and whose others are in axis order (j < k by column), or, on a grid of
    more than one axis, ordered by `less` (the partial order `harmful_with_text` uses: one
    definition of "visually confused" for the label and the rate, docs/measures.md).
    `text_first=False`: a grid without a text-only answer (nothing is text-overwritten)."""
    down = harmful_indicator(y, less)
    up = beneficial_indicator(y, less)
    right = y >= 1
    trajectory = np.where(
        down & up,
        "oscillating",
        np.where(
            down,
            "monotonic_decreasing",
            np.where(
                up, "monotonic_increasing", np.where(right[:, 0], "always_correct", "always_wrong")
            ),
        ),
    ).astype(object)
    first = np.where(right.any(axis=1), right.argmax(axis=1), 0)
    return {
        "trajectory_class": trajectory,
        "is_visually_confused": down.astype(np.int64),
        "is_text_overwritten": (
            right[:, 0] & (~right[:, 1:]).any(axis=1)
            if text_first
            else np.zeros(y.shape[0], dtype=bool)
        ).astype(np.int64),
        "best_config": np.asarray(labels, dtype=object)[first],
    }


def _where(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` where `mask`, else None (an object column that writes as an empty cell)."""
    out = np.full(mask.shape[0], None, dtype=object)
    out[mask] = np.asarray(values, dtype=object)[mask]
    return out


def _binary_rows(m: ResponseMatrix, paper_prefix: str) -> dict[str, np.ndarray]:
    y = m.y
    n, k = y.shape
    order = m.budget_order
    less = order.less if order.multi_axis else None
    harmful = harmful_indicator(y, less)
    beneficial = beneficial_indicator(y, less)
    right = y >= 1
    first = right.argmax(axis=1) if k else np.zeros(n, dtype=np.int64)
    labels = np.asarray(m.labels, dtype=object)
    cols: dict[str, np.ndarray] = {
        "pattern": pattern_labels(harmful, beneficial, y),
        "harmful": harmful.astype(np.int64),
        "beneficial": beneficial.astype(np.int64),
        "terminal_regression": terminal_regression_indicator(y, order).astype(np.int64),
        "oracle": np.asarray(right.any(axis=1)).astype(np.int64),
        "n_right": right.sum(axis=1).astype(np.int64),
        "first_right": _where(
            np.asarray(right.any(axis=1)), labels[first] if k else np.full(n, None)
        ),
    }
    has_text = ~np.isnan(m.text_value)
    cols["text_only_right"] = np.where(has_text, (m.text_value >= 1).astype(float), np.nan)
    _, overwrite_n = matrix_text_overwrite_counts(y, m, less)
    cols["text_overwrite"] = np.where(has_text, (overwrite_n > 0).astype(float), np.nan)
    yt = np.column_stack([np.nan_to_num(m.text_value), y]) if n else np.zeros((0, k + 1))
    with_less = with_text_first(order).less if order.multi_axis else None
    cols["harmful_with_text"] = np.where(has_text, harmful_indicator(yt, with_less), np.nan)
    if m.text_label is None:
        # a model run without any text-only configuration: the paper labels the grid it has,
        # and no text-only answer can be overwritten
        paper = paper_labels(y, list(m.labels), text_first=False, less=less)
        has_text = np.ones(n, dtype=bool)
    else:
        paper = paper_labels(yt, [m.text_label, *m.labels], less=with_less)
    for name in PAPER_COLUMNS:
        cols[paper_prefix + name] = _where(has_text, paper[name])
    return cols


def _continuous_rows(m: ResponseMatrix, eps: float) -> dict[str, np.ndarray | None]:
    s = m.y
    n, k = s.shape
    order = m.budget_order
    harmful, beneficial = eps_flips(s, order.less if order.multi_axis else None, eps)
    best = s.argmax(axis=1) if k else np.zeros(n, dtype=np.int64)
    return {
        "best_score": s.max(axis=1) if k else np.full(n, np.nan),
        "best_score_config": np.asarray(m.labels, dtype=object)[best] if k else None,
        "text_score": m.text_value,
        "harmful_eps": harmful.astype(np.int64),
        "beneficial_eps": beneficial.astype(np.int64),
    }


def _dropped(df: pd.DataFrame, m: ResponseMatrix, value_col: str) -> pd.DataFrame:
    """The slice's items the matched grid left out, with their reasons as `drop_reason`."""
    if m.n_dropped == 0:  # the usual case; filtering a large table costs more than the labels
        return pd.DataFrame({"item_id": [], "video_id": [], "drop_reason": []})
    mine = df[df["model"] == m.model]
    binary = mine["task_kind"] == "mcqa"
    rows = mine[
        (mine["series"] == m.series)
        & (mine["frames"] > 0)
        & (binary if m.kind == "binary" else ~binary)
        & mine["config_label"].isin(list(m.labels))
    ]
    rows = rows[~rows["item_id"].isin(m.item_ids.tolist())]
    answered = rows["status"].isin(list(ANSWERED_STATUSES))
    has_value = rows[value_col].notna()
    reason = np.where(answered & ~has_value, f"no_{value_col}", rows["status"].astype(str))
    bad = rows.assign(_reason=reason)[~(answered & has_value)]
    failed: dict[str, set[str]] = {}
    for item, why in zip(bad["item_id"].tolist(), bad["_reason"].tolist(), strict=True):
        failed.setdefault(str(item), set()).add(str(why))
    expected = len(m.labels) * int(mine["repeat"].nunique())
    cells = rows.drop_duplicates(["item_id", "config_label", "repeat"]).groupby("item_id").size()
    videos = rows.groupby("item_id")["video_id"].first()
    out = []
    for item in sorted(videos.index):
        reasons = set(failed.get(item, set()))
        if cells[item] < expected:
            reasons.add("missing")
        out.append((item, str(videos[item]), ",".join(sorted(reasons))))
    return pd.DataFrame(out, columns=["item_id", "video_id", "drop_reason"])


def per_item_labels(
    df: pd.DataFrame,
    *,
    configs: Sequence[str] | None = None,
    metric: str = "score",
    eps: float = 0.1,
) -> pd.DataFrame:
    """One row per (model, series, kind, item) of the analysed grid; see docs/measures.md
    ("Per-item labels") for every column. With `configs` (as `analyze --configs`) the grid is
    restricted first, and the paper's columns are its `matched_grid_*` values."""
    if metric not in CONTINUOUS_METRICS:
        raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(CONTINUOUS_METRICS)}")
    prefix = "matched_grid_" if configs is not None else ""
    if configs is not None:
        df, _ = select_configs(df, configs)
    parts = []
    for m in build_matrices(df, metric=metric):
        grid = ",".join([*([m.text_label] if m.text_label else []), *m.labels])
        labels: Mapping[str, np.ndarray | None] = (
            _binary_rows(m, prefix) if m.kind == "binary" else _continuous_rows(m, eps)
        )
        part = pd.DataFrame(
            {
                "item_id": m.item_ids.astype(str),
                "video_id": m.video_ids.astype(str),
                "in_matched_grid": 1,
                "drop_reason": "",
                **labels,
            }
        )
        dropped = _dropped(df, m, "correct" if m.kind == "binary" else m.metric).assign(
            in_matched_grid=0
        )
        part = pd.concat([part, dropped], ignore_index=True) if len(dropped) else part
        part.insert(0, "schema_version", PER_ITEM_SCHEMA_VERSION)
        part.insert(1, "model", m.model)
        part.insert(2, "series", m.series)
        part.insert(3, "kind", m.kind)
        part.insert(6, "grid", grid)
        parts.append(part)
    paper = [prefix + c for c in PAPER_COLUMNS]
    columns = [*KEY_COLUMNS, *BINARY_COLUMNS, *CONTINUOUS_COLUMNS, *paper]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    out = pd.concat(parts, ignore_index=True).reindex(columns=columns)
    for col in out.columns:
        name = col.removeprefix("matched_grid_")
        if name in _INT_COLUMNS:
            out[col] = pd.to_numeric(out[col]).astype("Int64")
        elif col in ("best_score", "text_score"):
            out[col] = pd.to_numeric(out[col]).astype(float)
        else:
            out[col] = out[col].astype(object).where(out[col].notna(), None)
    return out.sort_values(["model", "series", "kind", "item_id"], kind="stable").reset_index(
        drop=True
    )

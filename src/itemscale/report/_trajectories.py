"""Item trajectories: the wide table (one row per item and axis, one column per budget).

The long response table is the record; the wide table is what a reader scans to see which items a
bigger budget hurts. Each row also carries its pattern so the heat map and the item table can group
items the same way.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from ..analysis.measures import (
    INTERVENTION_SERIES_PREFIX,
    BudgetOrder,
    beneficial_indicator,
    budget_order,
    eps_flips,
    harmful_indicator,
)
from ..core.responses import ANSWERED_STATUSES

#: 2: patterns follow the budget order of the measures (on a frames x resolution grid, the
#: partial order), not the columns' order.
TRAJECTORY_SCHEMA_VERSION: Final[int] = 2
#: Patterns in the order the report shows them.
PATTERNS: Final[tuple[str, ...]] = (
    "harmful",
    "mixed",
    "beneficial",
    "always_wrong",
    "always_right",
    "stable",
    "incomplete",
)
KEY_COLUMNS: Final[tuple[str, ...]] = ("model", "series", "item_id", "video_id", "kind", "pattern")
#: How the report names each pattern: "harmful only", never bare "harmful", which the harmful
#: rate uses for every item with a harmful step (harmful only and mixed items alike).
PATTERN_NAMES: Final[dict[str, str]] = {
    "harmful": "harmful only",
    "mixed": "mixed",
    "beneficial": "beneficial only",
    "always_wrong": "always wrong",
    "always_right": "always right",
    "stable": "stable",
    "incomplete": "incomplete",
}


def pattern_of(
    values: np.ndarray, *, binary: bool, eps: float = 0.1, less: np.ndarray | None = None
) -> np.ndarray:
    """Pattern per row of an [n, K] matrix (nan = no answered response).

    Binary: `always_right`, `always_wrong`, `harmful` (some right -> wrong step up the budget
    order and no wrong -> right), `beneficial` (the reverse), `mixed` (both). Scores: `stable`
    when no pair moves by more than `eps`, otherwise harmful/beneficial/mixed the same way.
    `incomplete` when a budget has no answer. `less` is the budget order (`less[j, k]`: j is a
    smaller budget than k; None: the columns' order): the same indicators and the same order as
    the harmful and beneficial rates, so "harmful only" plus "mixed" items are exactly the
    harmful rate's count.
    """
    n, k = values.shape
    out = np.full(n, "incomplete", dtype=object)
    complete = ~np.isnan(values).any(axis=1)
    if k == 0:
        return out
    v = np.where(np.isnan(values), 0.0, values)
    if binary:
        down = harmful_indicator(v, less)
        up = beneficial_indicator(v, less)
    else:
        down, up = eps_flips(v, less, eps)
    labels = np.where(
        down & up,
        "mixed",
        np.where(down, "harmful", np.where(up, "beneficial", "stable")),
    ).astype(object)
    if binary:
        labels[(labels == "stable") & (v[:, 0] >= 0.5)] = "always_right"
        labels[labels == "stable"] = "always_wrong"
    out[complete] = labels[complete]
    return out


#: The response columns `trajectory_table` reads (`verify` reads only these to check it).
TRAJECTORY_COLUMNS: Final[frozenset[str]] = frozenset(
    {
        *("model", "series", "item_id", "video_id", "task_kind", "config_label", "axis_order"),
        *("frames", "pixels", "repeat", "status", "correct", "score"),
    }
)


def _label_order(grid: pd.DataFrame) -> pd.DataFrame:
    return (
        grid.groupby("config_label", sort=False)
        .agg(order=("axis_order", "min"), frames=("frames", "min"), pixels=("pixels", "min"))
        .reset_index()
        .assign(pixels=lambda t: t["pixels"].astype(float).fillna(-1.0))
        .sort_values(["order", "frames", "pixels", "config_label"], kind="stable")
    )


def _axis_order(order: pd.DataFrame, axis: list[str]) -> BudgetOrder:
    at = order.set_index("config_label").reindex(axis)
    return budget_order(
        at["frames"].to_numpy(dtype=float),
        at["pixels"].where(at["pixels"] >= 0).to_numpy(dtype=float),
        axis,
    )


def partial_orders(responses: pd.DataFrame) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """For each (model, series) on a grid of frames x pixels, every pair (smaller, larger) of its
    budget labels the order compares (one-axis series are not listed)."""
    grid = responses[(responses["repeat"] == 0) & (responses["frames"] > 0)]
    if grid.empty:
        return {}
    order = _label_order(grid)
    labels = [str(x) for x in order["config_label"]]
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for (model, series), rows in grid.groupby(["model", "series"], sort=True):
        present = set(rows["config_label"].astype(str).unique().tolist())
        axis = [lab for lab in labels if lab in present]
        found = _axis_order(order, axis)
        if not found.multi_axis:
            continue
        less = found.less
        out[(str(model), str(series))] = [
            (axis[j], axis[k]) for j in range(len(axis)) for k in range(len(axis)) if less[j, k]
        ]
    return out


def trajectory_table(responses: pd.DataFrame, *, eps: float = 0.1) -> pd.DataFrame:
    """Wide table: KEY_COLUMNS, `text_only`, then one column per budget label in axis order.

    Values are repeat-0 correctness (binary items) or score (others), as the binary measures
    use; a budget an axis does not have, or a failed cell, is NaN.
    """
    df = responses[responses["repeat"] == 0]
    value = df["correct"].astype(float).where(df["correct"].notna(), df["score"].astype(float))
    value = value.where(df["status"].isin(ANSWERED_STATUSES))
    df = df.assign(_value=value, _kind=np.where(df["task_kind"] == "mcqa", "binary", "continuous"))
    grid = df[df["frames"] > 0]
    order = _label_order(grid)
    labels = [str(x) for x in order["config_label"]]
    text = df[df["frames"] == 0].sort_values(["axis_order", "config_label"], kind="stable")
    text_value = text.groupby(["model", "item_id"], sort=False)["_value"].first()
    parts: list[pd.DataFrame] = []
    for (model, series, kind), rows in grid.groupby(["model", "series", "_kind"], sort=True):
        wide = rows.pivot_table(
            index="item_id", columns="config_label", values="_value", aggfunc="first", dropna=False
        )
        present = set(rows["config_label"].unique().tolist())
        axis = [lab for lab in labels if lab in present]
        wide = wide.reindex(columns=axis)
        vals = wide.to_numpy(dtype=float)
        less = _axis_order(order, axis).less
        part = pd.DataFrame(
            {
                "model": str(model),
                "series": str(series),
                "item_id": wide.index.astype(str),
                "video_id": rows.groupby("item_id")["video_id"]
                .first()
                .reindex(wide.index)
                .astype(str)
                .to_numpy(),
                "kind": str(kind),
                "pattern": pattern_of(vals, binary=kind == "binary", eps=eps, less=less),
            }
        )
        tv = text_value.reindex(pd.MultiIndex.from_product([[model], wide.index]))
        part["text_only"] = tv.to_numpy(dtype=float)
        for n, lab in enumerate(axis):
            part[lab] = vals[:, n]
        parts.append(part)
    columns = [*KEY_COLUMNS, "text_only", *labels]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    out = pd.concat(parts, ignore_index=True).reindex(columns=columns)
    for lab in ("text_only", *labels):
        out[lab] = out[lab].astype(float)
    # intervention re-runs (a few chosen items) after the budget axes, never first
    rerun = out["series"].astype(str).str.startswith(INTERVENTION_SERIES_PREFIX)
    out = out.assign(_rerun=rerun.to_numpy())
    out = out.sort_values(["model", "_rerun", "series", "item_id"], kind="stable")
    return out.drop(columns="_rerun").reset_index(drop=True)

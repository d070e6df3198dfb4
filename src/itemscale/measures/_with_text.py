"""The grid with the text-only answer as its zero budget (`grid_with_text`, docs/measures.md).

The visual-only measures answer "which frame budget should I run?": the text-only answer is a
baseline beside the axis. Papers that report oracle headroom and "visual confusion" (the seed
paper's Table 2 and its released per-model JSON) put the text-only answer *on* the axis, first,
so an item the model answers right blind and wrong with frames counts as harmed by the frames,
and an item only the blind answer gets right counts towards the oracle. Both readings are
legitimate and answer different questions, so both are computed and labelled, never mixed.

Only items with an answered text-only response take part (the matched grid of this block is the
visual matched grid minus the items without one; how many is reported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._binary import (
    Stat,
    _Columns,
    _scalar_stat,
    curve_best_gap,
    eps_flips,
    harmful_indicator,
)
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix
from ._order import with_text_first

BootFor = Callable[[np.ndarray], VideoBootstrap | None]

#: What the console and the report call this block.
GRID_WITH_TEXT_TITLE = (
    "with the text-only answer as budget 0 (the seed paper's definitions, as in its Table 2)"
)


def _with_text(m: ResponseMatrix) -> tuple[ResponseMatrix, np.ndarray, list[str], int]:
    """The items that have a text-only answer, their [n, K+1] matrix (text-only first), the
    labels, and how many items of the visual matched grid lack a text-only answer."""
    has_text = ~np.isnan(m.text_value)
    sub = m if has_text.all() else m.subset(has_text)
    y = np.column_stack([sub.text_value, sub.y]) if sub.n_items else np.zeros((0, m.n_configs + 1))
    labels = [m.text_label or "text-only", *m.labels]
    return sub, y, labels, int((~has_text).sum())


def _header(
    sub: ResponseMatrix, m: ResponseMatrix, labels: list[str], without_text: int
) -> dict[str, Any]:
    reasons = dict(m.drop_reasons)
    if without_text:
        reasons["no_text_only"] = without_text
    return {
        "configs": labels,
        "multi_axis": m.budget_order.multi_axis,
        "n_items": sub.n_items,
        "n_videos": len(set(sub.video_ids.tolist())),
        "n_dropped": m.n_dropped + without_text,
        "drop_reasons": reasons,
    }


def _scalar(
    boot: VideoBootstrap | None,
    points: dict[str, np.ndarray],
    samples: dict[str, np.ndarray],
    jack: dict[str, np.ndarray],
    name: str,
) -> Stat:
    value = float(points[name][0]) if points[name].size else None
    return _scalar_stat(boot, value, samples[name][:, 0], jack[name][:, 0])


def binary_grid_with_text(m: ResponseMatrix, boot_for: BootFor) -> dict[str, Any] | None:
    """`accuracy`, `best_fixed`, `oracle`, `oracle_headroom`, `harmful_rate` (the paper's
    visual confusion) and `overwrite_rate` on text-only < c_1 < ... < c_K; None without any
    text-only answer."""
    if not (~np.isnan(m.text_value)).any():
        return None
    sub, y, labels, without_text = _with_text(m)
    n = sub.n_items
    boot = boot_for(sub.video_ids) if n else None
    cols = _Columns(boot)
    cols.add("accuracy", y)
    cols.add("oracle", y.max(axis=1))
    order = m.budget_order
    less = with_text_first(order).less if order.multi_axis else None
    cols.add("harmful", harmful_indicator(y, less))
    cols.add("overwrite", (y[:, 0] >= 1) & (y[:, 1:] < 1).any(axis=1))
    points, samples, jack = cols.resolve()
    curve, best_entry, headroom = curve_best_gap(
        boot, labels, points, samples, jack, "accuracy", "oracle", n
    )
    return {
        **_header(sub, m, labels, without_text),
        "accuracy": curve,
        "best_fixed": best_entry,
        "oracle": _scalar(boot, points, samples, jack, "oracle"),
        "oracle_headroom": headroom,
        "harmful_rate": _scalar(boot, points, samples, jack, "harmful"),
        "overwrite_rate": _scalar(boot, points, samples, jack, "overwrite"),
    }


def continuous_grid_with_text(
    m: ResponseMatrix, boot_for: BootFor, eps: float
) -> dict[str, Any] | None:
    """The continuous counterpart: `mean_score`, `best_fixed`, `oracle_score`, `oracle_gap`,
    `harmful_rate_eps` and `overwrite_rate_eps` (text-only score above some visual
    configuration's by more than eps), text-only first on the axis."""
    if not (~np.isnan(m.text_value)).any():
        return None
    sub, s, labels, without_text = _with_text(m)
    n = sub.n_items
    boot = boot_for(sub.video_ids) if n else None
    cols = _Columns(boot)
    cols.add("mean_score", s)
    cols.add("item_max", s.max(axis=1))
    order = m.budget_order
    less = with_text_first(order).less if order.multi_axis else None
    cols.add("harmful", eps_flips(s, less, eps)[0])
    cols.add("overwrite", (s[:, :1] - s[:, 1:] > eps).any(axis=1))
    points, samples, jack = cols.resolve()
    curve, best_entry, gap = curve_best_gap(
        boot, labels, points, samples, jack, "mean_score", "item_max", n
    )
    return {
        **_header(sub, m, labels, without_text),
        "metric": m.metric,
        "eps": eps,
        "mean_score": curve,
        "best_fixed": best_entry,
        "oracle_score": _scalar(boot, points, samples, jack, "item_max"),
        "oracle_gap": gap,
        "harmful_rate_eps": _scalar(boot, points, samples, jack, "harmful"),
        "overwrite_rate_eps": _scalar(boot, points, samples, jack, "overwrite"),
    }

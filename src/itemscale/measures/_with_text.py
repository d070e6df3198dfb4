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

from ._binary import Stat, _Columns, _interval, harmful_indicator, stat
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix

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
        "n_items": sub.n_items,
        "n_videos": len(set(sub.video_ids.tolist())),
        "n_dropped": m.n_dropped + without_text,
        "drop_reasons": reasons,
    }


def _curve_and_best(
    labels: list[str],
    points: dict[str, np.ndarray],
    samples: dict[str, np.ndarray],
    per_config: str,
    item_max: str,
    n: int,
) -> tuple[dict[str, Stat], dict[str, Any], Stat]:
    """Per-configuration stats, the best fixed configuration (ties to the lower budget), and
    the gap between the item-level oracle and it, whose interval re-selects the best
    configuration in every resample."""
    values, resampled = points[per_config], samples[per_config]
    ci = _interval(resampled)
    curve = {lab: stat(values[j], ci[j]) for j, lab in enumerate(labels)}
    best = int(np.argmax(values)) if n else 0
    best_s = resampled.max(axis=1) if resampled.shape[0] else np.zeros(0)
    best_entry = {
        "config": labels[best] if n else None,
        **stat(values[best] if n else None, _interval(best_s)[0] if best_s.size else None),
    }
    gap_s = samples[item_max][:, 0] - best_s
    gap = stat(
        points[item_max][0] - values[best] if n else None,
        _interval(gap_s)[0] if gap_s.size else None,
    )
    return curve, best_entry, gap


def _scalar(points: dict[str, np.ndarray], samples: dict[str, np.ndarray], name: str) -> Stat:
    s = samples[name][:, 0]
    return stat(points[name][0], _interval(s)[0] if s.size else None)


def binary_grid_with_text(m: ResponseMatrix, boot_for: BootFor) -> dict[str, Any] | None:
    """`accuracy`, `best_fixed`, `oracle`, `oracle_headroom`, `harmful_rate` (the paper's
    visual confusion) and `overwrite_rate` on text-only < c_1 < ... < c_K; None without any
    text-only answer."""
    if not (~np.isnan(m.text_value)).any():
        return None
    sub, y, labels, without_text = _with_text(m)
    n = sub.n_items
    cols = _Columns(boot_for(sub.video_ids) if n else None)
    cols.add("accuracy", y)
    cols.add("oracle", y.max(axis=1))
    cols.add("harmful", harmful_indicator(y))
    cols.add("overwrite", (y[:, 0] >= 1) & (y[:, 1:] < 1).any(axis=1))
    points, samples = cols.resolve()
    curve, best_entry, headroom = _curve_and_best(labels, points, samples, "accuracy", "oracle", n)
    return {
        **_header(sub, m, labels, without_text),
        "accuracy": curve,
        "best_fixed": best_entry,
        "oracle": _scalar(points, samples, "oracle"),
        "oracle_headroom": headroom,
        "harmful_rate": _scalar(points, samples, "harmful"),
        "overwrite_rate": _scalar(points, samples, "overwrite"),
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
    cols = _Columns(boot_for(sub.video_ids) if n else None)
    cols.add("mean_score", s)
    cols.add("item_max", s.max(axis=1))
    best_before = np.maximum.accumulate(s, axis=1)[:, :-1]
    cols.add("harmful", (best_before - s[:, 1:] > eps).any(axis=1))
    cols.add("overwrite", (s[:, :1] - s[:, 1:] > eps).any(axis=1))
    points, samples = cols.resolve()
    curve, best_entry, gap = _curve_and_best(labels, points, samples, "mean_score", "item_max", n)
    return {
        **_header(sub, m, labels, without_text),
        "metric": m.metric,
        "eps": eps,
        "mean_score": curve,
        "best_fixed": best_entry,
        "oracle_score": _scalar(points, samples, "item_max"),
        "oracle_gap": gap,
        "harmful_rate_eps": _scalar(points, samples, "harmful"),
        "overwrite_rate_eps": _scalar(points, samples, "overwrite"),
    }

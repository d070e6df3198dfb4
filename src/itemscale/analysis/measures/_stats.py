"""How a statistic is written and resampled: its record (`Estimate`), the per-item columns
resampled together in one product, and the interval of each kind of statistic. Every measure's
number goes through these, so the point and its interval always come from the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._bootstrap import (
    VideoBootstrap,
    intervals,
    jackknife_means,
    jackknife_ratios,
)
from ._result_models import Count, Estimate
from ._selected import selected_intervals


def _clean(x: float | None) -> float | None:
    """A finite float, or None (NaN and infinities are undefined, and JSON has no such number)."""
    if x is None or not np.isfinite(x):
        return None
    return float(x)


def stat(value: float | None, ci: Sequence[float] | np.ndarray | None) -> Estimate:
    """A statistic's record: `Estimate` with its value and [low, high] interval, None where
    undefined (not finite, or no interval); its JSON form is {"value": v, "ci": [low, high]}."""
    interval = None
    if ci is not None:
        low, high = _clean(ci[0]), _clean(ci[1])
        interval = None if low is None or high is None else [low, high]
    return Estimate(value=_clean(value), ci=interval)


def count_of(k: float | None, n: int) -> Count:
    """{"k": items for which a share holds, "n": items it is over}; k None for a mean score.
    `k` is given as the column's mean times n and rounded, which is exact for a mean of 0/1
    values (value = k / n)."""
    items = None if k is None or not np.isfinite(k) else round(float(k))
    return Count(k=items, n=int(n))


def counted(estimate: Estimate, k: float | None, n: int) -> Estimate:
    """The estimate with the count it comes from under `count` (`count_of`): k of n items for
    a share of items (k / n is its value), n items for a mean score."""
    return Estimate(value=estimate.value, ci=estimate.ci, count=count_of(k, n))


class Columns:
    """Collects named per-item columns, resamples them in one product, hands back stats."""

    def __init__(self, boot: VideoBootstrap | None) -> None:
        self.boot = boot
        self.names: list[str] = []
        self.blocks: list[np.ndarray] = []

    def add(self, name: str, column: np.ndarray) -> None:
        column = np.asarray(column, dtype=float)
        self.names.append(name)
        self.blocks.append(column if column.ndim == 2 else column[:, None])

    def resolve(
        self,
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Point, resampled [B, m] and leave-one-video-out [V, m] means of every column."""
        points: dict[str, np.ndarray] = {}
        samples: dict[str, np.ndarray] = {}
        jack: dict[str, np.ndarray] = {}
        if not self.blocks:
            return points, samples, jack
        matrix = np.hstack(self.blocks)
        n = matrix.shape[0]
        point = matrix.mean(axis=0) if n else np.full(matrix.shape[1], np.nan)
        boot = self.boot
        if boot is not None and boot.bootstrap > 0 and n:
            resampled = boot.means(matrix)
        else:
            resampled = np.zeros((0, matrix.shape[1]))
        if (
            boot is not None
            and boot.bootstrap > 0
            and boot.method == "bca"
            and boot.n_clusters >= 3
        ):
            left_out = jackknife_means(boot, matrix)
        else:
            left_out = np.zeros((0, matrix.shape[1]))
        start = 0
        for name, block in zip(self.names, self.blocks, strict=True):
            width = block.shape[1]
            points[name] = point[start : start + width]
            samples[name] = resampled[:, start : start + width]
            jack[name] = left_out[:, start : start + width]
            start += width
        return points, samples, jack


def smooth_ci(
    boot: VideoBootstrap | None,
    point: np.ndarray | float,
    samples: np.ndarray,
    jack: np.ndarray | None,
) -> np.ndarray:
    """[M, 2] intervals of smooth statistics, by the bootstrap's interval method."""
    method = boot.method if boot is not None else "percentile"
    return intervals(np.atleast_1d(np.asarray(point, dtype=float)), samples, jack, method)


def scalar_stat(
    boot: VideoBootstrap | None,
    point: float | None,
    samples: np.ndarray,
    jack: np.ndarray | None,
) -> Estimate:
    if point is None or samples.size == 0:
        return stat(point, None)
    return stat(point, smooth_ci(boot, point, samples, jack)[0])


def selected_ci(
    boot: VideoBootstrap | None,
    values: np.ndarray,
    resampled: np.ndarray,
    oracle: np.ndarray | None = None,
    oracle_resampled: np.ndarray | None = None,
) -> np.ndarray:
    """[M, 2] intervals of maxima over configurations (`values` [M, K], resamples [B, M, K]),
    or of an oracle minus one (docs/measures.md, "Interval method")."""
    if boot is None or resampled.shape[0] == 0:
        return np.full((values.shape[0], 2), np.nan)
    return selected_intervals(
        boot.method,
        values,
        resampled,
        boot.n_clusters,
        oracle=oracle,
        oracle_resampled=oracle_resampled,
    )


def best_stat(boot: VideoBootstrap | None, values: np.ndarray, resampled: np.ndarray) -> Estimate:
    """Best fixed: the largest of `values` [K], with the interval of a selected maximum."""
    if not values.size:
        return stat(None, None)
    return stat(float(values.max()), selected_ci(boot, values[None, :], resampled[:, None, :])[0])


def gap_stat(
    boot: VideoBootstrap | None,
    values: np.ndarray,
    resampled: np.ndarray,
    oracle: float | None,
    oracle_resampled: np.ndarray,
) -> Estimate:
    """The oracle minus the best of `values` [K], with the interval of such a gap."""
    if not values.size or oracle is None:
        return stat(None, None)
    row, rows = values[None, :], resampled[:, None, :]
    gap_ci = selected_ci(boot, row, rows, np.array([oracle]), oracle_resampled[:, None])[0]
    return stat(oracle - float(values.max()), gap_ci)


def ratio_stat(
    boot: VideoBootstrap | None, numerator: np.ndarray, denominator: np.ndarray
) -> Estimate:
    den = float(denominator.sum())
    value = float(numerator.sum()) / den if den > 0 else None
    ci = None
    if boot is not None and boot.bootstrap > 0 and len(numerator) and value is not None:
        jack = (
            jackknife_ratios(boot, numerator, denominator)
            if boot.method == "bca" and boot.n_clusters >= 3
            else None
        )
        ci = smooth_ci(boot, value, boot.ratios(numerator, denominator), jack)[0]
    return stat(value, ci)

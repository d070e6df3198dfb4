"""The paired cluster bootstrap: resample videos, recompute every statistic on the same resample.

Items of one video are not independent (same clip, often the same failure), so the video is the
resampling unit. All resamples are drawn as one count matrix C [B, V] (how often video v appears
in resample b); a statistic that is a mean over items then becomes (C @ per-video sums) /
(C @ per-video item counts): one matrix product for every statistic at once, no loop over items
or resamples.

Resamples are drawn in fixed chunks of `CHUNK` rows, chunk c from its own child seed
`SeedSequence(seed, spawn_key=(c,))`. Any split of the chunks across processes therefore gives
the same counts, bit for bit; and since binary statistics are integer sums, the products are
exact in float64 whatever the summation order.
"""

from __future__ import annotations

import threading
from typing import Any, Final

import numpy as np
import pandas as pd
import scipy.sparse as sp

CHUNK = 100
CI_LEVEL = 0.95
#: Draws made in one call of the generator while counting resamples (8 MB of int64).
_DRAWS_AT_ONCE = 2**20
#: Bytes of count matrix converted to floats at once for an exact product (`resampled`).
_PRODUCT_BYTES = 2**24
#: Largest float32 copy of a count matrix kept for exact products (`resampled`): 1,000
#: resamples of up to 33,554 videos. Converting the matrix again for each of a block's 50-odd
#: products cost the analysis benchmark 0.6 s; larger matrices (the 2 x 10^6-row runs, whose
#: peak memory is budgeted) are still converted a block at a time.
_KEPT_FLOAT32_BYTES = 2**27
_CONVERT_LOCK = threading.Lock()


def resample_counts(
    n_clusters: int, bootstrap: int, seed: int, chunks: range | None = None
) -> np.ndarray:
    """Counts [B, V] of each cluster in each resample, for the chunks requested (all by default),
    as the smallest unsigned integer type that holds them (`uint8` unless a video is drawn more
    than 255 times in one resample): 1000 resamples of 133,000 videos are 0.13 GB."""
    n_chunks = -(-bootstrap // CHUNK)
    wanted = list(chunks if chunks is not None else range(n_chunks))
    rows_of = [min(CHUNK, bootstrap - c * CHUNK) for c in wanted]
    out = np.empty((sum(rows_of), n_clusters), dtype=np.uint8)
    start = 0
    for c, rows in zip(wanted, rows_of, strict=True):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(c,))))
        # the chunk's [rows, V] draws in pieces of whole resamples (the same stream, row-major,
        # as one call), so their int64 copies stay near 8 MB (214 MB at 133,000 videos)
        step = max(1, min(rows, _DRAWS_AT_ONCE // max(n_clusters, 1)))
        for first in range(start, start + rows, step):
            size = min(step, start + rows - first)
            draws = rng.integers(0, n_clusters, size=(size, n_clusters), dtype=np.int64)
            draws += (np.arange(size, dtype=np.int64) * n_clusters)[:, None]
            counts = np.bincount(draws.ravel(), minlength=size * n_clusters)
            wider = np.min_scalar_type(int(counts.max(initial=0)))
            if np.iinfo(wider).max > np.iinfo(out.dtype).max:  # the earlier rows are kept
                out = out.astype(wider)
            out[first : first + size] = counts.reshape(size, n_clusters)
        start += rows
    return out


def _exact_products(per_cluster: np.ndarray, n_clusters: int) -> bool:
    """Every resampled sum of `per_cluster` (a count matrix's rows sum to `n_clusters`) and
    every partial sum on the way is an integer its float type holds exactly."""
    exact_below = 2.0 ** (np.finfo(per_cluster.dtype).nmant + 1)
    bound = float(np.abs(per_cluster).max(initial=0.0)) * n_clusters
    return bound < exact_below and bool(np.all(per_cluster == np.round(per_cluster)))


class VideoBootstrap:
    """Resampled means over items, with videos as clusters."""

    def __init__(
        self,
        video_ids: np.ndarray,
        bootstrap: int,
        seed: int,
        *,
        counts: np.ndarray | None = None,
        method: str = "bca",
        converted: dict[str, np.ndarray] | None = None,
    ) -> None:
        """`counts` lets callers reuse the count matrix of an identical (sorted) video set, and
        `converted` the float32 copy of it (`float32_counts`) that bootstraps sharing it share;
        `method` is the interval method of every statistic computed on it (`intervals`)."""
        if bootstrap < 0:
            raise ValueError("bootstrap (resamples) must be >= 0")
        if method not in ("bca", "percentile"):
            raise ValueError(f"unknown interval method {method!r}; use bca or percentile")
        self.method = method
        codes, uniques = pd.factorize(pd.Series(np.asarray(video_ids, dtype=object)), sort=True)
        self.codes = codes.astype(np.int64)
        self.n_clusters = len(uniques)
        self.bootstrap = bootstrap
        self.seed = seed
        if counts is not None and counts.shape != (bootstrap, self.n_clusters):
            raise ValueError("reused bootstrap counts do not match the video set")
        self.counts = (
            counts
            if counts is not None
            else resample_counts(self.n_clusters, bootstrap, seed)
            if self.n_clusters
            else np.zeros((bootstrap, 0), dtype=np.uint8)
        )
        self.converted: dict[str, np.ndarray] = converted if converted is not None else {}
        self.items_per_cluster = np.bincount(self.codes, minlength=self.n_clusters).astype(float)
        n_items = len(self.codes)
        self._membership = sp.csr_matrix(
            (np.ones(n_items), (self.codes, np.arange(n_items))),
            shape=(self.n_clusters, n_items),
        )

    @property
    def n_boot(self) -> int:
        """The retired name of `bootstrap` (docs/glossary.md, 'One name per concept')."""
        from ...core.errors import warn_renamed

        warn_renamed("VideoBootstrap.n_boot", "VideoBootstrap.bootstrap")
        return self.bootstrap

    def cluster_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-video sums of item values [n_items, M] -> [V, M]."""
        values = np.asarray(values, dtype=float)
        if values.ndim == 1:
            values = values[:, None]
        return np.asarray(self._membership @ values)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Resampled sums over items [B, M].

        Integer-valued inputs (binary outcomes, counts) are summed in float32, which is exact
        while every resampled sum stays below 2**24, and twice as fast as float64."""
        return self._products(self.cluster_sums(values))

    def _products(self, per_cluster: np.ndarray) -> np.ndarray:
        """`counts @ per_cluster` [B, M] in float64, multiplied in float32 where that is exact
        (integers whose resampled sums stay below 2**24, in any summation order)."""
        integral = bool(np.all(per_cluster == np.round(per_cluster)))
        bound = float(np.abs(per_cluster).max(initial=0.0)) * self.n_clusters
        if integral and bound < 2**24:
            return self.resampled(per_cluster, dtype=np.float32)
        return self.resampled(per_cluster)

    def resampled(
        self,
        per_cluster: np.ndarray,
        rows: int | None = None,
        *,
        dtype: type[np.floating[Any]] = np.float64,
    ) -> np.ndarray:
        """`counts[:rows] @ per_cluster` [rows, M] as float64, multiplied in `dtype` a block of
        resamples at a time: the integer count matrix is never converted whole (at 2 x 10^6
        rows a float64 copy of it is 1 GB). A block is `CHUNK` resamples, or when every
        product is an exact integer (its order of summation cannot change it) as many as
        fit 16 MB."""
        counts = self.counts if rows is None else self.counts[:rows]
        per_cluster = np.asarray(per_cluster, dtype=dtype)
        out = np.empty((counts.shape[0], *per_cluster.shape[1:]), dtype=np.float64)
        step = CHUNK
        if _exact_products(per_cluster, self.n_clusters):
            kept = self.float32_counts() if dtype is np.float32 else None
            if kept is not None:  # exact, so one product equals the blocked ones bit for bit
                out[:] = kept[: counts.shape[0]] @ per_cluster
                return out
            step = max(1, _PRODUCT_BYTES // max(np.dtype(dtype).itemsize * counts.shape[1], 1))
        for start in range(0, counts.shape[0], step):
            block = counts[start : start + step].astype(dtype)
            out[start : start + step] = block @ per_cluster
        return out

    def float32_counts(self) -> np.ndarray | None:
        """The count matrix as float32, converted once and kept while it is at most
        `_KEPT_FLOAT32_BYTES` (None above: the caller converts a block at a time). Bootstraps
        on other threads may share `converted`: the lock converts it once."""
        with _CONVERT_LOCK:
            kept = self.converted.get("float32")
            if kept is None and self.counts.size * 4 <= _KEPT_FLOAT32_BYTES:
                kept = self.converted["float32"] = self.counts.astype(np.float32)
        return kept

    def item_counts(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Resampled number of items (optionally only those in `mask`) [B]."""
        if mask is None:
            return self._products(self.items_per_cluster[:, None])[:, 0]
        return self.sums(np.asarray(mask, dtype=float))[:, 0]

    def means(self, values: np.ndarray) -> np.ndarray:
        """Resampled means over items [B, M]; NaN values must be masked out by the caller."""
        den = self.item_counts()
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = self.sums(values) / den[:, None]
        return result

    def ratios(self, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        """Resampled ratios of sums [B, M] (NaN where a resample has a zero denominator)."""
        # two products: stacking them into one [V, 2] product measured no faster (BLAS's
        # matrix-vector path serves each one-column product)
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = self.sums(numerator) / self.sums(denominator)
        return result


def percentile_interval(samples: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float] | None:
    """Percentile interval of bootstrap samples (NaN resamples ignored); None with no samples."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def percentile_intervals(samples: np.ndarray, level: float = CI_LEVEL) -> np.ndarray:
    """Column-wise percentile intervals of [B, M] samples -> [M, 2] (NaN where undefined)."""
    samples = np.asarray(samples, dtype=float)
    if samples.shape[0] == 0:
        return np.full((samples.shape[1], 2), np.nan)
    alpha = (1.0 - level) / 2.0
    if not np.isnan(samples).any():  # the common case; nanquantile is several times slower
        return np.asarray(np.quantile(samples, [alpha, 1.0 - alpha], axis=0).T)
    # all-NaN columns (undefined statistics) give NaN: computed on zeros and set back, without
    # the warning (and without `catch_warnings`, which is not thread-safe)
    empty = np.isnan(samples).all(axis=0)
    q = np.nanquantile(np.where(empty, 0.0, samples), [alpha, 1.0 - alpha], axis=0)
    q[:, empty] = np.nan
    return np.asarray(q.T)


# -- intervals -----------------------------------------------------------------------------

#: Interval methods `analyze --ci` offers; `bca` is the default (docs/measures.md).
CI_METHODS: Final[tuple[str, ...]] = ("bca", "percentile")
DEFAULT_CI: Final[str] = "bca"


def jackknife_means(boot: VideoBootstrap, values: np.ndarray) -> np.ndarray:
    """Leave-one-video-out means of item values [n_items, M] -> [V, M] (no resampling: the
    per-video sums are subtracted from the total)."""
    per_cluster = boot.cluster_sums(values)
    total = per_cluster.sum(axis=0)
    counts = boot.items_per_cluster
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = (total[None, :] - per_cluster) / (counts.sum() - counts)[:, None]
    return result


def jackknife_ratios(
    boot: VideoBootstrap, numerator: np.ndarray, denominator: np.ndarray
) -> np.ndarray:
    num = boot.cluster_sums(numerator)
    den = boot.cluster_sums(denominator)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = (num.sum(axis=0) - num) / (den.sum(axis=0) - den)
    return result


def column_quantiles(samples: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Per column j, the `levels[..., j]` quantiles of `samples[:, j]` (NaN ignored; linear
    interpolation, as `np.quantile`): [L, M]."""
    ordered = np.sort(samples, axis=0)  # NaN sort last
    valid = (~np.isnan(samples)).sum(axis=0)
    # an undefined level (a statistic with no point value) gives an undefined quantile, not
    # an index: NaN cast to int64 is the most negative integer
    defined = np.isfinite(levels) & (valid > 0)
    pos = np.where(defined, np.clip(levels, 0.0, 1.0), 0.0) * np.maximum(valid - 1, 0)
    low = np.floor(pos).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(valid - 1, 0))
    frac = pos - low
    cols = np.arange(samples.shape[1])
    lo_v = ordered[low, cols]
    hi_v = ordered[high, cols]
    out: np.ndarray = np.where(defined, lo_v + frac * (hi_v - lo_v), np.nan)
    return out


def acceleration(jack: np.ndarray, n_stats: int) -> np.ndarray:
    """BCa's acceleration of each statistic [M] from its leave-one-video-out values [V, M]:
    sum(c^3) / (6 sum(c^2)^1.5), c the centred values (0 without spread or values)."""
    if not jack.shape[0]:
        return np.zeros(n_stats)
    if not np.isnan(jack).any():
        # the usual case: mean and sum are nanmean and nansum without their copies (the same
        # reductions on the same layout, so the same bits), on a [videos, statistics] array of
        # 16 MB at 33,000 videos and 60 statistics
        centred = jack.mean(axis=0) - jack
        num = (centred**3).sum(axis=0)
        den = 6.0 * (centred**2).sum(axis=0) ** 1.5
    else:
        # an all-NaN jackknife column (undefined statistic) is averaged as zeros and set back
        # to NaN: no warning, and no `catch_warnings`, which is not thread-safe
        empty = np.isnan(jack).all(axis=0)
        centred = np.nanmean(np.where(empty, 0.0, jack), axis=0) - jack
        centred[:, empty] = np.nan
        num = np.nansum(centred**3, axis=0)
        den = 6.0 * np.nansum(centred**2, axis=0) ** 1.5
    result: np.ndarray = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return result


def bca_intervals(
    point: np.ndarray, samples: np.ndarray, jack: np.ndarray, level: float = CI_LEVEL
) -> np.ndarray:
    """Bias-corrected and accelerated intervals (Efron 1987), column-wise -> [M, 2].

    z0 from the share of resamples below the estimate (ties count half, which matters for the
    discrete statistics of small samples); the acceleration from the leave-one-video-out
    jackknife. A column without spread gives the point itself."""
    from scipy.stats import norm

    point = np.asarray(point, dtype=float)
    b = np.sum(~np.isnan(samples), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = (np.nansum(samples < point, axis=0) + 0.5 * np.nansum(samples == point, axis=0)) / b
    below = np.clip(below, 0.5 / np.maximum(b, 1), 1 - 0.5 / np.maximum(b, 1))
    below[~np.isfinite(point) | (b == 0)] = np.nan  # undefined: NaN interval, no warning
    z0 = norm.ppf(below)
    accel = acceleration(jack, point.size)
    alpha = (1.0 - level) / 2.0
    levels = []
    for z in (norm.ppf(alpha), norm.ppf(1.0 - alpha)):
        shifted = z0 + (z0 + z) / (1.0 - accel * (z0 + z))
        levels.append(norm.cdf(shifted))
    out = column_quantiles(samples, np.stack(levels))
    return np.asarray(out.T)


def intervals(
    point: np.ndarray,
    samples: np.ndarray,
    jack: np.ndarray | None,
    method: str,
    level: float = CI_LEVEL,
) -> np.ndarray:
    """The 95% intervals of a block of smooth statistics (means, ratios) [M] from their
    resamples [B, M] -> [M, 2]: BCa, or plain percentile intervals. Statistics that select a
    configuration (best fixed, gaps) have their own construction (`_selected`)."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim == 1:
        samples = samples[:, None]
    point = np.atleast_1d(np.asarray(point, dtype=float))
    if samples.shape[0] == 0:
        return np.full((samples.shape[1], 2), np.nan)
    if method == "percentile":
        return percentile_intervals(samples, level)
    if method != "bca":
        raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(CI_METHODS)}")
    if jack is None or jack.shape[0] < 3:
        return percentile_intervals(samples, level)
    jk = np.asarray(jack, dtype=float)
    return bca_intervals(point, samples, jk if jk.ndim == 2 else jk[:, None], level)

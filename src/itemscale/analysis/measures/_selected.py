"""Intervals for statistics that select the best configuration: best fixed, and an oracle minus it.

The best of several noisy budgets is optimistic (the winner's curse), and a percentile interval
of the resampled maximum sits too high (best fixed) or too low (headroom). Each end therefore
takes the least favourable case the data cannot rule out (Chernozhukov, Lee & Rosen 2013;
generalised moment selection, Andrews & Soares 2010): contenders within kappa = sqrt(ln V)
bootstrap standard errors for the optimistic end, the plug-in law or the practical ties for
the other. docs/measures.md states the bounds; `benchmarks/coverage.py` measures them.
"""

from __future__ import annotations

import numpy as np

from ._bootstrap import CI_LEVEL, column_quantiles, percentile_intervals


def _column_quantile(samples: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each column of [B, M], as `np.quantile`, NaN resamples ignored."""
    return np.asarray(column_quantiles(samples, np.full((1, samples.shape[1]), q))[0])


def contender_kappa(n_clusters: int) -> float:
    """How many standard errors from the best a configuration may sit and still count as tied
    with it: sqrt(ln V), the BIC-type choice of Andrews & Soares (2010)."""
    return float(np.sqrt(np.log(max(n_clusters, 3))))


#: A configuration within this many standard errors of the winner counts, for the lower end of
#: a gap, as tied with it in the sample.
PRACTICAL_TIE: float = 0.25


def selected_max_intervals(
    values: np.ndarray,
    resampled: np.ndarray,
    n_clusters: int,
    *,
    oracle: np.ndarray | None = None,
    oracle_resampled: np.ndarray | None = None,
    level: float = CI_LEVEL,
) -> np.ndarray:
    """Intervals [M, 2] of M statistics, each the maximum over K configurations (`values`
    [M, K], resamples [B, M, K]) or, with `oracle` [M] and its resamples [B, M], the oracle
    minus that maximum."""
    values = np.asarray(values, dtype=float)
    resampled = np.asarray(resampled, dtype=float)
    n_stats, k = values.shape
    if resampled.shape[0] == 0 or k == 0:
        return np.full((n_stats, 2), np.nan)
    rows = np.arange(n_stats)
    best = values.max(axis=1)
    winner = np.argmax(values, axis=1)
    shortfall = (best[:, None] - values).T  # [K, M], 0 at the winner
    # configuration-major [K, B, M]: every reduction over configurations is then a loop over
    # K whole [B, M] slices, several times faster than reducing a short last axis
    by_config = np.ascontiguousarray(np.moveaxis(resampled, 2, 0))
    errors = by_config - values.T[:, None, :]
    winner_resampled = by_config[winner, :, rows].T  # [B, M]
    differences = winner_resampled[None, :, :] - by_config
    if np.isnan(differences).any():
        # an all-NaN slice has no spread (0): computed on zeros, without the warning (and
        # without `catch_warnings`, which is not thread-safe)
        empty = np.isnan(differences).all(axis=1, keepdims=True)
        spread = np.nan_to_num(np.nanstd(np.where(empty, 0.0, differences), axis=1))
    else:
        spread = differences.std(axis=1)  # [K, M]

    def largest_error(within: float) -> np.ndarray:
        """Per resample, the largest error among configurations within `within` standard
        errors of the winner [B, M] (NaN where a resample leaves one undefined)."""
        tied = shortfall <= within * spread + 1e-12
        out = np.full(errors.shape[1:], -np.inf)
        for j in range(k):
            if tied[j].any():
                np.maximum(out, np.where(tied[j][None, :], errors[j], -np.inf), out=out)
        return out

    optimistic = largest_error(contender_kappa(n_clusters))
    alpha = (1.0 - level) / 2.0
    if oracle is None:
        plug_in = by_config.max(axis=0) - best[None, :]
        low = best - _column_quantile(optimistic, 1.0 - alpha)
        high = best - _column_quantile(plug_in, alpha)
        return _within_range(low, high)
    if oracle_resampled is None:
        raise ValueError("an oracle gap needs the oracle's resamples")
    oracle = np.asarray(oracle, dtype=float)
    oracle_error = np.asarray(oracle_resampled, dtype=float) - oracle[None, :]
    gap = oracle - best
    low = gap - _column_quantile(oracle_error - largest_error(PRACTICAL_TIE), 1.0 - alpha)
    high = gap - _column_quantile(oracle_error - optimistic, alpha)
    return _within_range(low, high)


def _within_range(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A basic bound can leave the statistic's range; every statistic here is a share or a mean
    score in [0, 1] (a gap: an oracle minus a maximum over the same configurations, so never
    below 0), and cutting an interval where the truth cannot be loses no coverage."""
    with np.errstate(invalid="ignore"):
        return np.column_stack([np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)])


def selected_intervals(
    method: str,
    values: np.ndarray,
    resampled: np.ndarray,
    n_clusters: int,
    *,
    oracle: np.ndarray | None = None,
    oracle_resampled: np.ndarray | None = None,
    level: float = CI_LEVEL,
) -> np.ndarray:
    """`selected_max_intervals` under `bca`; under `percentile`, the plain percentile interval
    of the resampled statistic (the maximum re-selected in every resample)."""
    if method == "bca":
        return selected_max_intervals(
            values,
            resampled,
            n_clusters,
            oracle=oracle,
            oracle_resampled=oracle_resampled,
            level=level,
        )
    if method != "percentile":
        raise ValueError(f"unknown interval method {method!r}; use bca or percentile")
    resampled = np.asarray(resampled, dtype=float)
    if resampled.shape[0] == 0 or resampled.shape[2] == 0:
        return np.full((resampled.shape[1], 2), np.nan)
    statistic = resampled.max(axis=2)
    if oracle is not None:
        if oracle_resampled is None:
            raise ValueError("an oracle gap needs the oracle's resamples")
        statistic = np.asarray(oracle_resampled, dtype=float) - statistic
    return percentile_intervals(statistic, level)

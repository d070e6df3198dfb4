"""Paired tests between two budgets that treat the video, not the item, as the unit of chance.

The items of a video fail and recover together, so the exact McNemar test's p-values are too
small. Beside it: the clustered McNemar test (Durkalski et al. 2003; the default, no Monte
Carlo error) and the paired video bootstrap (Hall & Wilson 1991); Holm (1979) adjusts the
family of a block's adjacent pairs (docs/measures.md, "Tests between budgets").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from ._bootstrap import VideoBootstrap, intervals, jackknife_means
from ._mcnemar import mcnemar_exact_ps


@dataclass(frozen=True)
class PairedTest:
    """One pair of budgets a -> b on the same items."""

    pair: str
    n_items: int
    n_videos: int
    #: items right at a and wrong at b (down) and the reverse (up)
    n_down: int
    n_up: int
    #: accuracy at b minus accuracy at a, with its video-bootstrap interval
    difference: float
    difference_ci: tuple[float, float] | None
    exact_mcnemar_p: float
    clustered_statistic: float
    clustered_p: float
    bootstrap_p: float | None


def cluster_boot(video_ids: np.ndarray, boot: VideoBootstrap | None) -> VideoBootstrap:
    """The bootstrap to take per-video sums from (one without resamples when there is none)."""
    return boot if boot is not None else VideoBootstrap(video_ids, 0, 0)


def clustered_mcnemar(per_video: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durkalski et al.'s statistic and p-value for each column of per-video differences
    [V, P] (flips up minus flips down per video); p = 1 where no video has a discordant pair."""
    num = per_video.sum(axis=0) ** 2
    den = (per_video**2).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return statistic, np.asarray(chi2.sf(statistic, 1))


def bootstrap_p(point: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Two-sided p of a zero difference from resampled differences [B, P] (NaN without any)."""
    if samples.shape[0] == 0:
        return np.full(point.shape, np.nan)
    # a resampled difference equal to the estimate up to rounding counts as as extreme
    tol = 1e-9 * np.maximum(np.abs(point), 1.0)
    extreme = np.abs(samples - point) >= np.abs(point) - tol
    result: np.ndarray = (1.0 + extreme.sum(axis=0)) / (samples.shape[0] + 1.0)
    return result


def holm(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: the k-th smallest of m is multiplied by m - k + 1,
    made non-decreasing in that order and capped at 1 (Holm 1979)."""
    values = np.asarray(p, dtype=float)
    m = values.size
    if m == 0:
        return values.copy()
    order = np.argsort(values, kind="stable")
    scaled = values[order] * (m - np.arange(m))
    adjusted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def paired_tests(
    y: np.ndarray,
    video_ids: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    labels: Sequence[str],
    boot: VideoBootstrap | None = None,
) -> list[PairedTest]:
    """The exact, clustered and bootstrap tests of each pair (a, b) of columns of `y` [n, K]."""
    if not pairs:
        return []
    a_idx = np.array([a for a, _ in pairs], dtype=np.int64)
    b_idx = np.array([b for _, b in pairs], dtype=np.int64)
    right = (y >= 1).astype(float)
    diff = right[:, b_idx] - right[:, a_idx]
    n = diff.shape[0]
    clusters = cluster_boot(video_ids, boot)
    per_video = clusters.cluster_sums(diff)
    statistic, clustered = clustered_mcnemar(per_video)
    point = diff.mean(axis=0) if n else np.full(len(pairs), np.nan)
    ci = np.full((len(pairs), 2), np.nan)
    boot_p = np.full(len(pairs), np.nan)
    if boot is not None and boot.bootstrap > 0 and n:
        # the resampled item count as one more column of the same product
        sums = boot.sums(np.hstack([diff, np.ones((n, 1))]))
        samples = sums[:, :-1] / sums[:, -1:]
        jack = jackknife_means(boot, diff) if boot.n_clusters >= 3 else None
        ci = intervals(point, samples, jack, boot.method)
        boot_p = bootstrap_p(point, samples)
    down = (diff < 0).sum(axis=0)
    up = (diff > 0).sum(axis=0)
    exact_ps = mcnemar_exact_ps(down, up)
    out = []
    for p, (a, b) in enumerate(pairs):
        interval = None if np.isnan(ci[p]).any() else (float(ci[p, 0]), float(ci[p, 1]))
        out.append(
            PairedTest(
                pair=f"{labels[a]}->{labels[b]}",
                n_items=n,
                n_videos=clusters.n_clusters,
                n_down=int(down[p]),
                n_up=int(up[p]),
                difference=float(point[p]),
                difference_ci=interval,
                exact_mcnemar_p=float(exact_ps[p]),
                clustered_statistic=float(statistic[p]),
                clustered_p=float(clustered[p]),
                bootstrap_p=None if np.isnan(boot_p[p]) else float(boot_p[p]),
            )
        )
    return out

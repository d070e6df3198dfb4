"""How small a difference between two budgets a run can detect, and how many videos a target
difference needs, from the run's own paired, clustered variance.

Power 1 - beta of the clustered McNemar test at V videos requires
Delta m1 sqrt(V) = z_{1-alpha/2} sqrt(s^2 + Delta^2 m2) + z_{1-beta} s (s^2 the per-video
variance of the paired difference, m1 and m2 the means of m_v and m_v^2; Connor 1987, Donner &
Klar 2000; docs/measures.md derives it, `tests/measures/test_inference.py` checks it by
simulation). A figure is "not estimable" where the variance comes from fewer than `MIN_VIDEOS`
videos that differ, or below the discrete test's floor of z_{1-alpha/2}^2 items (4 at 5%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ._bootstrap import VideoBootstrap
from ._paired_tests import cluster_boot
from ._small import MIN_VIDEOS

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class PairPower:
    pair: str
    #: s: the per-video standard deviation of the paired difference (item units)
    sd_per_video: float
    mde: float | None
    videos_needed: int | None
    #: why `mde` / `videos_needed` is None (no item differs, too few videos differ, below what
    #: the discrete test can detect); None where the figure stands
    mde_not_estimable: str | None = None
    videos_needed_not_estimable: str | None = None


@dataclass(frozen=True)
class AxisPower:
    """One axis of the grid (its adjacent pairs pooled: the mean of their variances)."""

    axis: str
    pairs: tuple[str, ...]
    sd_per_video: float
    mde: float | None
    videos_needed: int | None
    mde_not_estimable: str | None = None
    videos_needed_not_estimable: str | None = None


@dataclass(frozen=True)
class PowerAnalysis:
    n_videos: int
    items_per_video: float
    alpha: float
    power: float
    target: float
    pairs: tuple[PairPower, ...]
    axes: tuple[AxisPower, ...]


def _z(alpha: float, power: float) -> tuple[float, float]:
    return float(norm.ppf(1.0 - alpha / 2.0)), float(norm.ppf(power))


def smallest_rejectable(alpha: float = ALPHA) -> int:
    """The smallest net change in items (|sum_v D_v|) the clustered McNemar test can reject at
    `alpha`: X^2 = (sum D_v)^2 / sum D_v^2 <= |sum D_v| for whole items, so it needs
    |sum D_v| >= z_{1-alpha/2}^2 (4 items at 5%)."""
    za, _ = _z(alpha, 0.5)
    return math.ceil(za**2 - 1e-12)


@dataclass(frozen=True)
class _Evidence:
    """What a power figure rests on: where the budgets differ, and the run's size."""

    #: per pair of the figure (one for a pair, an axis' pairs for an axis)
    n_differ: tuple[int, ...]
    videos_differ: tuple[int, ...]
    n_items: int
    n_videos: int
    m1: float
    alpha: float


def _points(fraction: float) -> str:
    return f"{100 * fraction:.2g}" if abs(fraction) < 0.1 else f"{100 * fraction:.1f}"


def _listed(counts: tuple[int, ...]) -> str:
    """'5', '2 and 5', '1, 0 and 2': one count per pair of the figure."""
    text = [f"{n:,}" for n in counts]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + f" and {text[-1]}"


def _variance_reason(e: _Evidence) -> str | None:
    """Why the run's paired variance cannot be extrapolated (None when it can)."""
    if sum(e.n_differ) == 0:
        return "no item differs between the budgets: the paired variance is 0"
    if sum(e.videos_differ) < MIN_VIDEOS:
        items, videos = _listed(e.n_differ), _listed(e.videos_differ)
        return (
            f"the budgets differ on {items} of {e.n_items:,} items, in {videos} of "
            f"{e.n_videos:,} videos: a paired variance from fewer than {MIN_VIDEOS} videos that "
            "differ says nothing about a larger difference"
        )
    return None


def _mde_reason(mde: float, e: _Evidence) -> str | None:
    """Why a minimum detectable effect is not one (None when it is)."""
    floor = smallest_rejectable(e.alpha)
    if mde * e.n_items < floor:
        return (
            f"the formula gives {_points(mde)} points, {mde * e.n_items:.1f} of the run's "
            f"{e.n_items:,} items; the clustered test rejects only a net change of at least "
            f"{floor} items ({_points(floor / e.n_items)} points)"
        )
    return None


def _videos_reason(videos: float, target: float, e: _Evidence) -> str | None:
    """Why a video count is too small to show `target` (None when it can)."""
    floor = smallest_rejectable(e.alpha)
    items = target * e.m1 * videos
    if items < floor:
        least = math.ceil(floor / (target * e.m1) - 1e-9)
        return (
            f"the formula gives {int(videos):,} videos, whose {e.m1 * videos:,.0f} items hold "
            f"{items:.1f} items' worth of a {_points(target)}-point change; the clustered test "
            f"rejects only a net change of at least {floor} items ({least:,} videos at the "
            "least)"
        )
    return None


def _judged(
    mde: float, need: float, target: float, e: _Evidence
) -> tuple[float | None, int | None, str | None, str | None]:
    """(mde, videos needed, and why each is not estimable: a figure with a reason is None)."""
    shared = _variance_reason(e)
    mde_why = shared or (
        "the formula has no solution at this many videos" if not np.isfinite(mde) else None
    )
    mde_why = mde_why or _mde_reason(mde, e)
    need_why = shared or (None if np.isfinite(need) else "the paired variance is 0")
    need_why = need_why or _videos_reason(need, target, e)
    return (
        None if mde_why else float(mde),
        None if need_why else int(need),
        mde_why,
        need_why,
    )


def minimum_detectable(
    sd: np.ndarray | float,
    n_videos: float,
    m1: float,
    m2: float,
    alpha: float = ALPHA,
    power: float = POWER,
) -> np.ndarray:
    """The smallest accuracy difference the clustered test finds with `power` at `n_videos`
    (NaN where the variance is 0 or too few videos make the quadratic degenerate)."""
    za, zb = _z(alpha, power)
    s = np.asarray(sd, dtype=float)
    a = n_videos * m1**2 - za**2 * m2
    disc = zb**2 * m1**2 * n_videos - a * (zb**2 - za**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = s * (zb * m1 * np.sqrt(n_videos) + np.sqrt(disc)) / a
    result: np.ndarray = np.where((s > 0) & (a > 0), out, np.nan)
    return result


def videos_needed(
    delta: float,
    sd: np.ndarray | float,
    m1: float,
    m2: float,
    alpha: float = ALPHA,
    power: float = POWER,
) -> np.ndarray:
    """Videos (with the run's items per video) for the clustered test to find an accuracy
    difference `delta` with `power` (NaN where the variance is 0)."""
    za, zb = _z(alpha, power)
    s = np.asarray(sd, dtype=float)
    root = (za * np.sqrt(s**2 + delta**2 * m2) + zb * s) / (abs(delta) * m1)
    result: np.ndarray = np.where(s > 0, np.ceil(root**2 - 1e-9), np.nan)
    return result


def power_at(
    delta: float, sd: float, n_videos: float, m1: float, m2: float, alpha: float = ALPHA
) -> float:
    """The clustered test's approximate power against `delta` at `n_videos` (both tails)."""
    za, _ = _z(alpha, 0.5)
    spread = za * np.sqrt(sd**2 + delta**2 * m2)
    shift = delta * m1 * np.sqrt(n_videos)
    return float(norm.cdf((shift - spread) / sd) + norm.cdf((-shift - spread) / sd))


def cluster_design(diff: np.ndarray, clusters: VideoBootstrap) -> tuple[np.ndarray, float, float]:
    """Per column of paired differences [n, P]: the per-video SD about the estimate; and the
    mean of m_v and of m_v^2 (items per video)."""
    m = clusters.items_per_cluster
    v = clusters.n_clusters
    per_video = clusters.cluster_sums(diff)
    delta = diff.mean(axis=0) if diff.shape[0] else np.zeros(diff.shape[1])
    resid = per_video - m[:, None] * delta[None, :]
    sd = np.sqrt((resid**2).sum(axis=0) / max(v - 1, 1))
    return sd, float(m.mean()) if v else 0.0, float((m**2).mean()) if v else 0.0


def power_analysis(
    y: np.ndarray,
    video_ids: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    labels: Sequence[str],
    axis_of_pair: Sequence[str],
    target: float,
    boot: VideoBootstrap | None = None,
    alpha: float = ALPHA,
    power: float = POWER,
) -> PowerAnalysis:
    """Minimum detectable effect and videos needed for `target` (a fraction) for each pair of
    columns of `y` and each axis of pairs."""
    clusters = cluster_boot(video_ids, boot)
    right = (y >= 1).astype(float)
    a_idx = np.array([a for a, _ in pairs], dtype=np.int64)
    b_idx = np.array([b for _, b in pairs], dtype=np.int64)
    diff = right[:, b_idx] - right[:, a_idx]
    sd, m1, m2 = cluster_design(diff, clusters)
    v = clusters.n_clusters
    mde = minimum_detectable(sd, v, m1, m2, alpha, power)
    need = videos_needed(target, sd, m1, m2, alpha, power)
    names = [f"{labels[a]}->{labels[b]}" for a, b in pairs]
    differ = diff != 0
    n_differ = differ.sum(axis=0).astype(np.int64)
    videos_differ = (clusters.cluster_sums(differ.astype(float)) > 0).sum(axis=0)

    def evidence(cols: Sequence[int]) -> _Evidence:
        return _Evidence(
            n_differ=tuple(int(n_differ[c]) for c in cols),
            videos_differ=tuple(int(videos_differ[c]) for c in cols),
            n_items=int(y.shape[0]),
            n_videos=v,
            m1=m1,
            alpha=alpha,
        )

    per_pair = tuple(
        PairPower(
            names[p], float(sd[p]), *_judged(float(mde[p]), float(need[p]), target, evidence([p]))
        )
        for p in range(len(pairs))
    )
    axes = []
    for axis in dict.fromkeys(axis_of_pair):
        cols = [p for p, name in enumerate(axis_of_pair) if name == axis]
        pooled = float(np.sqrt(np.mean(sd[cols] ** 2)))
        axes.append(
            AxisPower(
                axis,
                tuple(names[p] for p in cols),
                pooled,
                *_judged(
                    float(minimum_detectable(pooled, v, m1, m2, alpha, power)),
                    float(videos_needed(target, pooled, m1, m2, alpha, power)),
                    target,
                    evidence(cols),
                ),
            )
        )
    return PowerAnalysis(
        n_videos=v,
        items_per_video=m1,
        alpha=alpha,
        power=power,
        target=target,
        pairs=per_pair,
        axes=tuple(axes),
    )

"""Binary, repeated and continuous measures of docs/measures.md on one response matrix.

Each measure is written as per-item columns whose means (or ratios of sums) are the statistic;
the point value is computed on all items and the interval from the same columns under the video
bootstrap, so point and interval can never disagree about what is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import binomtest

from ..responses import NOANSWER
from ._bootstrap import (
    VideoBootstrap,
    intervals,
    jackknife_means,
    jackknife_ratios,
)
from ._matrix import ResponseMatrix
from ._order import BudgetOrder
from ._selected import selected_intervals

Stat = dict[str, Any]


def stat(value: float | None, ci: Sequence[float] | np.ndarray | None) -> Stat:
    """The JSON form of a statistic: {"value": v, "ci": [low, high]} (None where undefined)."""

    def clean(x: float | None) -> float | None:
        if x is None or not np.isfinite(x):
            return None
        return float(x)

    interval = None
    if ci is not None:
        low, high = clean(ci[0]), clean(ci[1])
        interval = None if low is None or high is None else [low, high]
    return {"value": clean(value), "ci": interval}


class _Columns:
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
        """Point means, resampled means [B, m] and (for BCa) leave-one-video-out means [V, m]
        for every column."""
        points: dict[str, np.ndarray] = {}
        samples: dict[str, np.ndarray] = {}
        jack: dict[str, np.ndarray] = {}
        if not self.blocks:
            return points, samples, jack
        matrix = np.hstack(self.blocks)
        n = matrix.shape[0]
        point = matrix.mean(axis=0) if n else np.full(matrix.shape[1], np.nan)
        boot = self.boot
        if boot is not None and boot.n_boot > 0 and n:
            resampled = boot.means(matrix)
        else:
            resampled = np.zeros((0, matrix.shape[1]))
        if boot is not None and boot.n_boot > 0 and boot.method == "bca" and boot.n_clusters >= 3:
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


def _ci(
    boot: VideoBootstrap | None,
    point: np.ndarray | float,
    samples: np.ndarray,
    jack: np.ndarray | None,
) -> np.ndarray:
    """[M, 2] intervals of smooth statistics with the bootstrap's interval method (NaN without
    resamples)."""
    method = boot.method if boot is not None else "percentile"
    return intervals(np.atleast_1d(np.asarray(point, dtype=float)), samples, jack, method)


def _scalar_stat(
    boot: VideoBootstrap | None,
    point: float | None,
    samples: np.ndarray,
    jack: np.ndarray | None,
) -> Stat:
    if point is None or samples.size == 0:
        return stat(point, None)
    return stat(point, _ci(boot, point, samples, jack)[0])


def _selected_ci(
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


def _best_and_gap(
    boot: VideoBootstrap | None,
    values: np.ndarray,
    resampled: np.ndarray,
    oracle: float | None,
    oracle_resampled: np.ndarray,
) -> tuple[Stat, Stat]:
    """Best fixed (the largest of `values` [K]) and the oracle minus it, each with the interval
    of a selected maximum."""
    if not values.size or oracle is None:
        return stat(None, None), stat(None, None)
    best = float(values.max())
    row, rows = values[None, :], resampled[:, None, :]
    best_ci = _selected_ci(boot, row, rows)[0]
    gap_ci = _selected_ci(boot, row, rows, np.array([oracle]), oracle_resampled[:, None])[0]
    return stat(best, best_ci), stat(oracle - best, gap_ci)


def _ratio(boot: VideoBootstrap | None, numerator: np.ndarray, denominator: np.ndarray) -> Stat:
    den = float(denominator.sum())
    value = float(numerator.sum()) / den if den > 0 else None
    ci = None
    if boot is not None and boot.n_boot > 0 and len(numerator) and value is not None:
        jack = (
            jackknife_ratios(boot, numerator, denominator)
            if boot.method == "bca" and boot.n_clusters >= 3
            else None
        )
        ci = _ci(boot, value, boot.ratios(numerator, denominator), jack)[0]
    return stat(value, ci)


def pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _reach(mask: np.ndarray, less: np.ndarray) -> np.ndarray:
    """[n, K]: for each item and configuration k, whether `mask` holds at some j < k."""
    return np.asarray((mask.astype(np.float32) @ less.astype(np.float32)) > 0)


def harmful_indicator(y: np.ndarray, less: np.ndarray | None = None) -> np.ndarray:
    """Items right at some smaller budget and wrong at a larger one (`less`: the budget order,
    default the axis order)."""
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    if less is None:
        seen_right = np.maximum.accumulate(y, axis=1)[:, :-1] >= 1
        return np.asarray((seen_right & (y[:, 1:] < 1)).any(axis=1))
    return np.asarray((_reach(y >= 1, less) & (y < 1)).any(axis=1))


def beneficial_indicator(y: np.ndarray, less: np.ndarray | None = None) -> np.ndarray:
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    if less is None:
        seen_wrong = np.minimum.accumulate(y, axis=1)[:, :-1] < 1
        return np.asarray((seen_wrong & (y[:, 1:] >= 1)).any(axis=1))
    return np.asarray((_reach(y < 1, less) & (y >= 1)).any(axis=1))


def terminal_regression_indicator(y: np.ndarray, order: BudgetOrder | None = None) -> np.ndarray:
    """Wrong at the largest budget (on a multi-axis grid: at a maximal one) and right at a
    smaller one."""
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    if order is None or not order.multi_axis:
        return np.asarray((y[:, -1] < 1) & (y[:, :-1] >= 1).any(axis=1))
    reach = _reach(y >= 1, order.less)
    top = list(order.maximal)
    return np.asarray(((y[:, top] < 1) & reach[:, top]).any(axis=1))


def best_before(s: np.ndarray, less: np.ndarray, *, worst: bool = False) -> np.ndarray:
    """[n, K]: per item, the highest (or lowest) value at a smaller budget than k (NaN where
    none is smaller)."""
    n, k = s.shape
    out = np.full((n, k), np.nan)
    for col in range(k):
        below = less[:, col]
        if below.any():
            part = s[:, below]
            out[:, col] = part.min(axis=1) if worst else part.max(axis=1)
    return out


def eps_flips(s: np.ndarray, less: np.ndarray | None, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per item of a score matrix: (harmful, beneficial) by more than `eps`: some j<k with
    s_j - s_k > eps (or s_k - s_j > eps); `less` the budget order, None the axis order."""
    n, k = s.shape
    if k < 2:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if less is not None:
        high = best_before(s, less)
        low = best_before(s, less, worst=True)
        return (
            np.asarray((np.nan_to_num(high - s, nan=-1.0) > eps).any(axis=1)),
            np.asarray((np.nan_to_num(s - low, nan=-1.0) > eps).any(axis=1)),
        )
    high_run = np.maximum.accumulate(s, axis=1)[:, :-1]
    low_run = np.minimum.accumulate(s, axis=1)[:, :-1]
    return (
        np.asarray((high_run - s[:, 1:] > eps).any(axis=1)),
        np.asarray((s[:, 1:] - low_run > eps).any(axis=1)),
    )


def mcnemar_exact_p(discordant_down: int, discordant_up: int) -> float:
    """Two-sided exact McNemar p-value: binomial test on the discordant pairs."""
    n = discordant_down + discordant_up
    if n == 0:
        return 1.0
    return float(binomtest(min(discordant_down, discordant_up), n, 0.5).pvalue)


def greedy_cover(y: np.ndarray, labels: Sequence[str]) -> list[dict[str, Any]]:
    """Configurations picked greedily (largest gain, ties to the earlier budget) to reach the
    oracle, with the oracle reached after each step."""
    n = y.shape[0]
    if n == 0:
        return []
    right = y >= 1
    covered = np.zeros(n, dtype=bool)
    target = int(right.any(axis=1).sum())
    steps: list[dict[str, Any]] = []
    while int(covered.sum()) < target:
        gains = (right & ~covered[:, None]).sum(axis=0)
        best = int(np.argmax(gains))
        covered |= right[:, best]
        steps.append(
            {
                "config": labels[best],
                "gain": float(gains[best]) / n,
                "oracle": float(covered.sum()) / n,
            }
        )
    return steps


def _valid_answer(a: object) -> bool:
    return isinstance(a, str) and a != "" and a != NOANSWER


def text_overwrite_counts(
    y: np.ndarray,
    answers: np.ndarray,
    text_answer: np.ndarray,
    less: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: number of harmful transitions (j<k, y_j=1, y_k=0), and how many of them have
    the wrong answer at k equal to the text-only answer."""
    right = (y >= 1).astype(np.int64)
    if less is None:
        right_before: np.ndarray = np.cumsum(right, axis=1) - right  # right strictly before k
    else:
        right_before = right @ less.astype(np.int64)
    wrong = y < 1
    harmful = np.where(wrong, right_before, 0)
    valid_text = np.array([_valid_answer(a) for a in text_answer], dtype=bool)
    same = (answers == text_answer[:, None]) & valid_text[:, None]
    overwrite = np.where(same, harmful, 0)
    return harmful.sum(axis=1).astype(float), overwrite.sum(axis=1).astype(float)


def order_json(m: ResponseMatrix) -> dict[str, Any]:
    """The budget order a block used: its axes and, on a multi-axis grid, its chains."""
    order = m.budget_order
    return {
        "axes": list(order.axes),
        "multi_axis": order.multi_axis,
        "chains": {name: [m.labels[i] for i in line] for name, line in order.chains.items()},
    }


def binary_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, *, chains: bool = True
) -> dict[str, Any]:
    """Every binary measure of docs/measures.md for one matrix (repeat 0), with intervals. On a
    multi-axis grid, `chains` adds the block of each chain (each axis at each level of the
    others) under `chains`."""
    y = m.y
    n, k = y.shape
    labels = list(m.labels)
    order = m.budget_order
    less = order.less if order.multi_axis else None
    cols = _Columns(boot)
    cols.add("accuracy", y)
    cols.add("oracle", y.max(axis=1) if k else np.zeros(n))
    cols.add("harmful", harmful_indicator(y, less))
    cols.add("beneficial", beneficial_indicator(y, less))
    cols.add("terminal", terminal_regression_indicator(y, order))
    pair_list = order.comparable_pairs if order.multi_axis else pairs(k)
    a_idx = np.array([a for a, _ in pair_list], dtype=int)
    b_idx = np.array([b for _, b in pair_list], dtype=int)
    if pair_list:
        # Only the joint P(y_a = 1, y_b = 1) is resampled; flips and pair maxima follow from it
        # and the accuracies: down = acc_a - joint, up = acc_b - joint,
        # mean(max(y_a, y_b)) = acc_a + acc_b - joint.
        cols.add("joint", y[:, a_idx] * y[:, b_idx])
    points, samples, jack = cols.resolve()
    if pair_list:
        for source in (points, samples, jack):
            acc = source["accuracy"]
            joint = source["joint"]
            source["flip_down"] = acc[..., a_idx] - joint
            source["flip_up"] = acc[..., b_idx] - joint
            source["pair_max"] = acc[..., a_idx] + acc[..., b_idx] - joint

    acc_p, acc_s, acc_j = points["accuracy"], samples["accuracy"], jack["accuracy"]
    acc_ci = _ci(boot, acc_p, acc_s, acc_j)
    block: dict[str, Any] = {
        "kind": "binary",
        "axis": labels,
        "frames": [int(f) for f in m.frames],
        "n_items": n,
        "n_videos": len(set(m.video_ids.tolist())),
        "n_dropped": m.n_dropped,
        "drop_reasons": dict(m.drop_reasons),
        "noanswer_rate": {
            label: stat(float(np.mean(m.answers[:, j] == NOANSWER)) if n else None, None)
            for j, label in enumerate(labels)
        },
        "accuracy": {label: stat(acc_p[j], acc_ci[j]) for j, label in enumerate(labels)},
    }
    best = int(np.argmax(acc_p)) if k and n else 0
    oracle_p = float(points["oracle"][0]) if n else None
    best_stat, headroom = _best_and_gap(
        boot, acc_p if k and n else np.zeros(0), acc_s, oracle_p, samples["oracle"][:, 0]
    )
    block["best_fixed"] = {"config": labels[best] if k else None, **best_stat}
    block["oracle"] = _scalar_stat(boot, oracle_p, samples["oracle"][:, 0], jack["oracle"][:, 0])
    block["oracle_headroom"] = headroom
    for key, name in (
        ("harmful_rate", "harmful"),
        ("beneficial_rate", "beneficial"),
        ("terminal_regression_rate", "terminal"),
    ):
        block[key] = _scalar_stat(
            boot, float(points[name][0]) if n else None, samples[name][:, 0], jack[name][:, 0]
        )

    flip_down: dict[str, Stat] = {}
    flip_up: dict[str, Stat] = {}
    mcnemar: dict[str, float] = {}
    complementarity: dict[str, Stat] = {}
    if pair_list:
        fd_ci = _ci(boot, points["flip_down"], samples["flip_down"], jack["flip_down"])
        fu_ci = _ci(boot, points["flip_up"], samples["flip_up"], jack["flip_up"])
        comp_p = points["pair_max"] - np.maximum(acc_p[a_idx], acc_p[b_idx])
        comp_ci = _selected_ci(
            boot,
            np.stack([acc_p[a_idx], acc_p[b_idx]], axis=1),
            np.stack([acc_s[:, a_idx], acc_s[:, b_idx]], axis=2),
            points["pair_max"],
            samples["pair_max"],
        )
        down_counts = (y[:, a_idx] * (1 - y[:, b_idx])).sum(axis=0)
        up_counts = ((1 - y[:, a_idx]) * y[:, b_idx]).sum(axis=0)
        for p, (a, b) in enumerate(pair_list):
            arrow = f"{labels[a]}->{labels[b]}"
            flip_down[arrow] = stat(points["flip_down"][p], fd_ci[p])
            flip_up[arrow] = stat(points["flip_up"][p], fu_ci[p])
            mcnemar[arrow] = mcnemar_exact_p(int(down_counts[p]), int(up_counts[p]))
            complementarity[f"{labels[a]}|{labels[b]}"] = stat(comp_p[p], comp_ci[p])
    block["flip_down"] = flip_down
    block["flip_up"] = flip_up
    block["adjacent"] = [f"{labels[a]}->{labels[b]}" for a, b in order.adjacent]
    block["order"] = order_json(m)
    block["mcnemar_p"] = mcnemar
    block["complementarity"] = complementarity
    block["greedy_cover"] = greedy_cover(y, labels)

    has_text = ~np.isnan(m.text_value)
    block["n_text_only"] = int(has_text.sum())
    if has_text.any():
        block["text_answerable_rate"] = _ratio(
            boot, np.where(has_text, np.nan_to_num(m.text_value), 0.0), has_text.astype(float)
        )
        harmful_n, overwrite_n = text_overwrite_counts(y, m.answers, m.text_answer, less)
        harmful_n = np.where(has_text, harmful_n, 0.0)
        overwrite_n = np.where(has_text, overwrite_n, 0.0)
        block["text_overwrite_rate"] = _ratio(boot, overwrite_n, harmful_n)
        block["text_overwrite_item_rate"] = _ratio(
            boot, (overwrite_n > 0).astype(float), (harmful_n > 0).astype(float)
        )
        block["text_overwrite_counts"] = {
            "harmful_transitions": int(harmful_n.sum()),
            "overwrite_transitions": int(overwrite_n.sum()),
            "harmful_items": int((harmful_n > 0).sum()),
            "overwrite_items": int((overwrite_n > 0).sum()),
        }
    else:
        block["text_answerable_rate"] = stat(None, None)
        block["text_overwrite_rate"] = stat(None, None)
        block["text_overwrite_item_rate"] = stat(None, None)
    if m.n_repeats > 1:
        block.update(repeat_block(m, boot))
    if chains and order.multi_axis:
        block["chains"] = {
            name: binary_block(m.chain(line), boot, chains=False)
            for name, line in order.chains.items()
        }
    return block


def expected_harmful(p: np.ndarray) -> np.ndarray:
    """Per item: 1 - P(no harmful pair) for independent draws y_k ~ Bernoulli(p_k).

    No harmful pair means the draw is 0...0 1...1; summing over the switch point t gives
    P = sum_t prod_{k<t} (1-p_k) prod_{k>=t} p_k, computed exactly with prefix/suffix products.
    """
    n, k = p.shape
    prefix = np.ones((n, k + 1))
    prefix[:, 1:] = np.cumprod(1.0 - p, axis=1)
    suffix = np.ones((n, k + 1))
    suffix[:, :k] = np.cumprod(p[:, ::-1], axis=1)[:, ::-1]
    monotone = (prefix * suffix).sum(axis=1)
    return np.asarray(np.clip(1.0 - monotone, 0.0, 1.0))


def item_rate_harmful(p: np.ndarray, delta: float, less: np.ndarray | None = None) -> np.ndarray:
    if p.shape[1] < 2:
        return np.zeros(p.shape[0], dtype=bool)
    if less is None:
        before = np.maximum.accumulate(p, axis=1)[:, :-1]
        return np.asarray((before - p[:, 1:] >= delta - 1e-12).any(axis=1))
    gap = best_before(p, less) - p
    return np.asarray((np.nan_to_num(gap, nan=-1.0) >= delta - 1e-12).any(axis=1))


def disagreement(values: np.ndarray) -> np.ndarray:
    """Per item and configuration: the unbiased estimate of P(two repeats disagree),
    2 p (1 - p) R / (R - 1); for two repeats exactly 1 when they disagree, else 0."""
    r = values.shape[2]
    p = values.mean(axis=2)
    return np.asarray(2.0 * p * (1.0 - p) * r / (r - 1))


def repeat_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, delta: float = 0.5
) -> dict[str, Any]:
    p = m.values.mean(axis=2)
    order = m.budget_order
    cols = _Columns(boot)
    cols.add("rate_harmful", item_rate_harmful(p, delta, order.less if order.multi_axis else None))
    # exact along one axis (a chain); on a multi-axis grid it is undefined here (read it per
    # chain, where `chains` holds each chain's repeat block)
    if not order.multi_axis:
        cols.add("expected_harmful", expected_harmful(p))
    cols.add("noise", disagreement(m.values))
    cols.add("mean_accuracy", p)
    points, samples, jack = cols.resolve()
    labels = list(m.labels)
    noise_ci = _ci(boot, points["noise"], samples["noise"], jack["noise"])
    acc_ci = _ci(boot, points["mean_accuracy"], samples["mean_accuracy"], jack["mean_accuracy"])

    def one(name: str) -> Stat:
        return _scalar_stat(boot, float(points[name][0]), samples[name][:, 0], jack[name][:, 0])

    return {
        "n_repeats": m.n_repeats,
        "delta": delta,
        "item_rate_harmful_rate": one("rate_harmful"),
        "expected_harmful_rate": (
            stat(None, None) if order.multi_axis else one("expected_harmful")
        ),
        "noise_floor": {lab: stat(points["noise"][j], noise_ci[j]) for j, lab in enumerate(labels)},
        "repeat_mean_accuracy": {
            lab: stat(points["mean_accuracy"][j], acc_ci[j]) for j, lab in enumerate(labels)
        },
    }


def curve_best_gap(
    boot: VideoBootstrap | None,
    labels: list[str],
    points: dict[str, np.ndarray],
    samples: dict[str, np.ndarray],
    jack: dict[str, np.ndarray],
    per_config: str,
    item_max: str,
    n: int,
) -> tuple[dict[str, Stat], dict[str, Any], Stat]:
    """Per-configuration stats, the best fixed configuration (ties to the lower budget) and the
    gap between the item-level oracle and it. The best's interval re-selects the best
    configuration in every resample, and both are max-type (`intervals`)."""
    values, resampled, left_out = points[per_config], samples[per_config], jack[per_config]
    ci = _ci(boot, values, resampled, left_out)
    curve = {lab: stat(values[j], ci[j]) for j, lab in enumerate(labels)}
    defined = bool(n and len(labels))
    best = int(np.argmax(values)) if defined else 0
    top = float(points[item_max][0]) if n else None
    best_stat, gap = _best_and_gap(
        boot, values if defined else np.zeros(0), resampled, top, samples[item_max][:, 0]
    )
    best_entry = {"config": labels[best] if defined else None, **best_stat}
    return curve, best_entry, gap


def continuous_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, eps: float = 0.1, *, chains: bool = True
) -> dict[str, Any]:
    """Continuous measures (open QA, summary, dialogue) on scores in [0, 1]."""
    s = m.y
    n, k = s.shape
    labels = list(m.labels)
    cols = _Columns(boot)
    cols.add("mean_score", s)
    cols.add("item_max", s.max(axis=1) if k else np.zeros(n))
    order = m.budget_order
    harmful, beneficial = eps_flips(s, order.less if order.multi_axis else None, eps)
    cols.add("harmful", harmful)
    cols.add("beneficial", beneficial)
    points, samples, jack = cols.resolve()
    curve, best_entry, gap = curve_best_gap(
        boot, labels, points, samples, jack, "mean_score", "item_max", n
    )

    def one(name: str) -> Stat:
        return _scalar_stat(
            boot, float(points[name][0]) if n else None, samples[name][:, 0], jack[name][:, 0]
        )

    block: dict[str, Any] = {
        "kind": "continuous",
        "metric": m.metric,
        "axis": labels,
        "frames": [int(f) for f in m.frames],
        "n_items": n,
        "n_videos": len(set(m.video_ids.tolist())),
        "n_dropped": m.n_dropped,
        "drop_reasons": dict(m.drop_reasons),
        "eps": eps,
        "mean_score": curve,
        "best_fixed": best_entry,
        "oracle_score": one("item_max"),
        "oracle_gap": gap,
        "harmful_rate_eps": one("harmful"),
        "beneficial_rate_eps": one("beneficial"),
        "order": order_json(m),
    }
    if chains and order.multi_axis:
        block["chains"] = {
            name: continuous_block(m.chain(line), boot, eps, chains=False)
            for name, line in order.chains.items()
        }
    has_text = ~np.isnan(m.text_value)
    block["n_text_only"] = int(has_text.sum())
    block["text_mean_score"] = (
        _ratio(boot, np.where(has_text, np.nan_to_num(m.text_value), 0.0), has_text.astype(float))
        if has_text.any()
        else stat(None, None)
    )
    return block

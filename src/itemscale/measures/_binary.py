"""Binary, repeated and continuous measures of MEASURES.md on one response matrix.

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
from ._bootstrap import VideoBootstrap, percentile_intervals
from ._matrix import ResponseMatrix

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

    def resolve(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Point means and resampled means [B, m] for every column."""
        points: dict[str, np.ndarray] = {}
        samples: dict[str, np.ndarray] = {}
        if not self.blocks:
            return points, samples
        matrix = np.hstack(self.blocks)
        n = matrix.shape[0]
        point = matrix.mean(axis=0) if n else np.full(matrix.shape[1], np.nan)
        if self.boot is not None and self.boot.n_boot > 0 and n:
            resampled = self.boot.means(matrix)
        else:
            resampled = np.zeros((0, matrix.shape[1]))
        start = 0
        for name, block in zip(self.names, self.blocks, strict=True):
            width = block.shape[1]
            points[name] = point[start : start + width]
            samples[name] = resampled[:, start : start + width]
            start += width
        return points, samples


def _interval(samples: np.ndarray) -> np.ndarray:
    return percentile_intervals(samples if samples.ndim == 2 else samples[:, None])


def _ratio(boot: VideoBootstrap | None, numerator: np.ndarray, denominator: np.ndarray) -> Stat:
    den = float(denominator.sum())
    value = float(numerator.sum()) / den if den > 0 else None
    ci = None
    if boot is not None and boot.n_boot > 0 and len(numerator):
        ci = percentile_intervals(boot.ratios(numerator, denominator))[0]
    return stat(value, ci)


def pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def harmful_indicator(y: np.ndarray) -> np.ndarray:
    """Items right at some lower budget and wrong at a higher one."""
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    seen_right = np.maximum.accumulate(y, axis=1)[:, :-1] >= 1
    return np.asarray((seen_right & (y[:, 1:] < 1)).any(axis=1))


def beneficial_indicator(y: np.ndarray) -> np.ndarray:
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    seen_wrong = np.minimum.accumulate(y, axis=1)[:, :-1] < 1
    return np.asarray((seen_wrong & (y[:, 1:] >= 1)).any(axis=1))


def terminal_regression_indicator(y: np.ndarray) -> np.ndarray:
    if y.shape[1] < 2:
        return np.zeros(y.shape[0], dtype=bool)
    return np.asarray((y[:, -1] < 1) & (y[:, :-1] >= 1).any(axis=1))


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
    y: np.ndarray, answers: np.ndarray, text_answer: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: number of harmful transitions (j<k, y_j=1, y_k=0), and how many of them have
    the wrong answer at k equal to the text-only answer."""
    right = (y >= 1).astype(np.int64)
    right_before: np.ndarray = np.cumsum(right, axis=1) - right  # right answers strictly before k
    wrong = y < 1
    harmful = np.where(wrong, right_before, 0)
    valid_text = np.array([_valid_answer(a) for a in text_answer], dtype=bool)
    same = (answers == text_answer[:, None]) & valid_text[:, None]
    overwrite = np.where(same, harmful, 0)
    return harmful.sum(axis=1).astype(float), overwrite.sum(axis=1).astype(float)


def binary_block(m: ResponseMatrix, boot: VideoBootstrap | None) -> dict[str, Any]:
    """Every binary measure of MEASURES.md for one matrix (repeat 0), with intervals."""
    y = m.y
    n, k = y.shape
    labels = list(m.labels)
    cols = _Columns(boot)
    cols.add("accuracy", y)
    cols.add("oracle", y.max(axis=1) if k else np.zeros(n))
    cols.add("harmful", harmful_indicator(y))
    cols.add("beneficial", beneficial_indicator(y))
    cols.add("terminal", terminal_regression_indicator(y))
    pair_list = pairs(k)
    a_idx = np.array([a for a, _ in pair_list], dtype=int)
    b_idx = np.array([b for _, b in pair_list], dtype=int)
    if pair_list:
        # Only the joint P(y_a = 1, y_b = 1) is resampled; flips and pair maxima follow from it
        # and the accuracies: down = acc_a - joint, up = acc_b - joint,
        # mean(max(y_a, y_b)) = acc_a + acc_b - joint.
        cols.add("joint", y[:, a_idx] * y[:, b_idx])
    points, samples = cols.resolve()
    if pair_list:
        for source in (points, samples):
            acc = source["accuracy"]
            joint = source["joint"]
            source["flip_down"] = acc[..., a_idx] - joint
            source["flip_up"] = acc[..., b_idx] - joint
            source["pair_max"] = acc[..., a_idx] + acc[..., b_idx] - joint

    acc_p, acc_s = points["accuracy"], samples["accuracy"]
    acc_ci = _interval(acc_s)
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
    best_s = acc_s.max(axis=1) if acc_s.shape[0] else np.zeros(0)
    block["best_fixed"] = {
        "config": labels[best] if k else None,
        **stat(acc_p[best] if k and n else None, _interval(best_s)[0] if best_s.size else None),
    }
    oracle_p, oracle_s = points["oracle"][0], samples["oracle"][:, 0]
    block["oracle"] = stat(oracle_p, _interval(oracle_s)[0] if oracle_s.size else None)
    headroom_s = oracle_s - best_s
    block["oracle_headroom"] = stat(
        oracle_p - acc_p[best] if k and n else None,
        _interval(headroom_s)[0] if headroom_s.size else None,
    )
    for key, name in (
        ("harmful_rate", "harmful"),
        ("beneficial_rate", "beneficial"),
        ("terminal_regression_rate", "terminal"),
    ):
        s = samples[name][:, 0]
        block[key] = stat(points[name][0], _interval(s)[0] if s.size else None)

    flip_down: dict[str, Stat] = {}
    flip_up: dict[str, Stat] = {}
    mcnemar: dict[str, float] = {}
    complementarity: dict[str, Stat] = {}
    if pair_list:
        fd_ci = _interval(samples["flip_down"])
        fu_ci = _interval(samples["flip_up"])
        comp_s = samples["pair_max"] - np.maximum(acc_s[:, a_idx], acc_s[:, b_idx])
        comp_ci = _interval(comp_s)
        down_counts = (y[:, a_idx] * (1 - y[:, b_idx])).sum(axis=0)
        up_counts = ((1 - y[:, a_idx]) * y[:, b_idx]).sum(axis=0)
        for p, (a, b) in enumerate(pair_list):
            arrow = f"{labels[a]}->{labels[b]}"
            flip_down[arrow] = stat(points["flip_down"][p], fd_ci[p])
            flip_up[arrow] = stat(points["flip_up"][p], fu_ci[p])
            mcnemar[arrow] = mcnemar_exact_p(int(down_counts[p]), int(up_counts[p]))
            comp = points["pair_max"][p] - max(acc_p[a], acc_p[b])
            complementarity[f"{labels[a]}|{labels[b]}"] = stat(comp, comp_ci[p])
    block["flip_down"] = flip_down
    block["flip_up"] = flip_up
    block["adjacent"] = [f"{labels[j]}->{labels[j + 1]}" for j in range(k - 1)]
    block["mcnemar_p"] = mcnemar
    block["complementarity"] = complementarity
    block["greedy_cover"] = greedy_cover(y, labels)

    has_text = ~np.isnan(m.text_value)
    block["n_text_only"] = int(has_text.sum())
    if has_text.any():
        block["text_answerable_rate"] = _ratio(
            boot, np.where(has_text, np.nan_to_num(m.text_value), 0.0), has_text.astype(float)
        )
        harmful_n, overwrite_n = text_overwrite_counts(y, m.answers, m.text_answer)
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


def item_rate_harmful(p: np.ndarray, delta: float) -> np.ndarray:
    if p.shape[1] < 2:
        return np.zeros(p.shape[0], dtype=bool)
    best_before = np.maximum.accumulate(p, axis=1)[:, :-1]
    return np.asarray((best_before - p[:, 1:] >= delta - 1e-12).any(axis=1))


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
    cols = _Columns(boot)
    cols.add("rate_harmful", item_rate_harmful(p, delta))
    cols.add("expected_harmful", expected_harmful(p))
    cols.add("noise", disagreement(m.values))
    cols.add("mean_accuracy", p)
    points, samples = cols.resolve()
    labels = list(m.labels)
    noise_ci = _interval(samples["noise"])
    acc_ci = _interval(samples["mean_accuracy"])
    return {
        "n_repeats": m.n_repeats,
        "delta": delta,
        "item_rate_harmful_rate": stat(
            points["rate_harmful"][0], _interval(samples["rate_harmful"])[0]
        ),
        "expected_harmful_rate": stat(
            points["expected_harmful"][0], _interval(samples["expected_harmful"])[0]
        ),
        "noise_floor": {lab: stat(points["noise"][j], noise_ci[j]) for j, lab in enumerate(labels)},
        "repeat_mean_accuracy": {
            lab: stat(points["mean_accuracy"][j], acc_ci[j]) for j, lab in enumerate(labels)
        },
    }


def continuous_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, eps: float = 0.1
) -> dict[str, Any]:
    """Continuous measures (open QA, summary, dialogue) on scores in [0, 1]."""
    s = m.y
    n, k = s.shape
    labels = list(m.labels)
    cols = _Columns(boot)
    cols.add("mean_score", s)
    cols.add("item_max", s.max(axis=1) if k else np.zeros(n))
    if k >= 2:
        best_before = np.maximum.accumulate(s, axis=1)[:, :-1]
        worst_before = np.minimum.accumulate(s, axis=1)[:, :-1]
        cols.add("harmful", np.asarray((best_before - s[:, 1:] > eps).any(axis=1)))
        cols.add("beneficial", np.asarray((s[:, 1:] - worst_before > eps).any(axis=1)))
    else:
        cols.add("harmful", np.zeros(n))
        cols.add("beneficial", np.zeros(n))
    points, samples = cols.resolve()
    mean_ci = _interval(samples["mean_score"])
    best = int(np.argmax(points["mean_score"])) if k and n else 0
    best_s = samples["mean_score"].max(axis=1) if samples["mean_score"].shape[0] else np.zeros(0)
    gap_s = samples["item_max"][:, 0] - best_s
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
        "mean_score": {
            lab: stat(points["mean_score"][j], mean_ci[j]) for j, lab in enumerate(labels)
        },
        "best_fixed": {
            "config": labels[best] if k else None,
            **stat(
                points["mean_score"][best] if k and n else None,
                _interval(best_s)[0] if best_s.size else None,
            ),
        },
        "oracle_score": stat(
            points["item_max"][0], _interval(samples["item_max"])[0] if n else None
        ),
        "oracle_gap": stat(
            points["item_max"][0] - points["mean_score"][best] if k and n else None,
            _interval(gap_s)[0] if gap_s.size else None,
        ),
        "harmful_rate_eps": stat(points["harmful"][0], _interval(samples["harmful"])[0]),
        "beneficial_rate_eps": stat(points["beneficial"][0], _interval(samples["beneficial"])[0]),
    }
    has_text = ~np.isnan(m.text_value)
    block["n_text_only"] = int(has_text.sum())
    block["text_mean_score"] = (
        _ratio(boot, np.where(has_text, np.nan_to_num(m.text_value), 0.0), has_text.astype(float))
        if has_text.any()
        else stat(None, None)
    )
    return block

"""The per-item definitions of docs/measures.md (harmful, beneficial, terminal regression, the
flips of a pair, text overwrite counts, greedy cover) and the repeat measures of one matrix:
per-item columns the blocks resample together, so point and interval agree on what is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import pandas as pd

from ...core.responses import NOANSWER
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix
from ._mcnemar import mcnemar_exact_ps
from ._order import BudgetOrder
from ._result_models import BudgetOrderRecord, CoverStep, Estimate
from ._stats import Columns, scalar_stat, smooth_ci, stat


def pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _reach(mask: np.ndarray, less: np.ndarray) -> np.ndarray:
    """[n, K]: for each item and configuration k, whether `mask` holds at some j < k."""
    return np.asarray((mask.astype(np.float32) @ less.astype(np.float32)) > 0)


def harmful_indicator(y: np.ndarray, less: np.ndarray | None = None) -> np.ndarray:
    """Items right at some smaller budget and wrong at a larger one (`less`: None, axis order)."""
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
    """Two-sided exact McNemar p-value: binomial test on the discordant pairs (scipy's
    `binomtest`, bit for bit; `mcnemar_exact_ps` computes many at once)."""
    return float(mcnemar_exact_ps(np.array([discordant_down]), np.array([discordant_up]))[0])


def greedy_cover(y: np.ndarray, labels: Sequence[str]) -> list[CoverStep]:
    """Configurations picked greedily (largest gain, ties to the earlier budget) to reach the
    oracle, with the oracle reached after each step."""
    n = y.shape[0]
    if n == 0:
        return []
    right = y >= 1
    covered = np.zeros(n, dtype=bool)
    target = int(right.any(axis=1).sum())
    steps: list[CoverStep] = []
    while int(covered.sum()) < target:
        gains = (right & ~covered[:, None]).sum(axis=0)
        best = int(np.argmax(gains))
        covered |= right[:, best]
        steps.append(
            CoverStep(
                config=labels[best],
                gain=float(gains[best]) / n,
                oracle=float(covered.sum()) / n,
            )
        )
    return steps


def _valid_answer(a: object) -> bool:
    return isinstance(a, str) and a != "" and a != NOANSWER


def _valid_answers(answers: np.ndarray) -> np.ndarray:
    """`_valid_answer` of each entry. Answers repeat (a few options), so each distinct value is
    judged once: a Python call per item cost 0.08 s a model of 100,000 items."""
    if not len(answers):
        return np.zeros(0, dtype=bool)
    codes, uniques = pd.factorize(np.asarray(answers, dtype=object), use_na_sentinel=False)
    judged = np.array([_valid_answer(u) for u in uniques], dtype=bool)
    return np.asarray(judged[codes], dtype=bool)


def text_overwrite_counts(
    y: np.ndarray,
    answers: np.ndarray,
    text_answer: np.ndarray,
    less: np.ndarray | None = None,
    *,
    vocab: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: number of harmful transitions (j<k, y_j=1, y_k=0), and how many of them have
    the wrong answer at k equal to the text-only answer. With `vocab`, `answers` and
    `text_answer` are integer codes into it (`AnswerCodes`): the same counts, compared as
    integers."""
    right = (y >= 1).astype(np.int64)
    if less is None:
        right_before: np.ndarray = np.cumsum(right, axis=1) - right  # right strictly before k
    else:
        right_before = right @ less.astype(np.int64)
    wrong = y < 1
    harmful = np.where(wrong, right_before, 0)
    if vocab is None:
        valid_text = _valid_answers(text_answer)
    else:  # each distinct answer judged once; code -1 takes the vocabulary's last entry, None
        valid_text = np.array([_valid_answer(a) for a in vocab.tolist()], dtype=bool)[text_answer]
    same = (answers == text_answer[:, None]) & valid_text[:, None]
    overwrite = np.where(same, harmful, 0)
    return harmful.sum(axis=1).astype(float), overwrite.sum(axis=1).astype(float)


def matrix_text_overwrite_counts(
    y: np.ndarray, m: ResponseMatrix, less: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`text_overwrite_counts` of a matrix's answers, on its answer codes where it has them."""
    codes = m.answer_codes
    if codes is None:
        return text_overwrite_counts(y, m.answers, m.text_answer, less)
    return text_overwrite_counts(y, codes.cells, codes.text, less, vocab=codes.vocab)


def order_record(m: ResponseMatrix) -> BudgetOrderRecord:
    """The budget order a block used: its axes and, on a multi-axis grid, its chains."""
    order = m.budget_order
    return BudgetOrderRecord(
        axes=list(order.axes),
        multi_axis=order.multi_axis,
        chains={name: [m.labels[i] for i in line] for name, line in order.chains.items()},
    )


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


class RepeatFields(TypedDict):
    """The keys a binary block gains with repeats (R > 1), in the layout's order."""

    n_repeats: int
    delta: float
    item_rate_harmful_rate: Estimate
    expected_harmful_rate: Estimate
    noise_floor: dict[str, Estimate]
    repeat_mean_accuracy: dict[str, Estimate]


def repeat_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, delta: float = 0.5
) -> RepeatFields:
    p = m.values.mean(axis=2)
    order = m.budget_order
    cols = Columns(boot)
    cols.add("rate_harmful", item_rate_harmful(p, delta, order.less if order.multi_axis else None))
    # exact along one axis (a chain); on a multi-axis grid it is undefined here (read it per
    # chain, where `chains` holds each chain's repeat block)
    if not order.multi_axis:
        cols.add("expected_harmful", expected_harmful(p))
    cols.add("noise", disagreement(m.values))
    cols.add("mean_accuracy", p)
    points, samples, jack = cols.resolve()
    labels = list(m.labels)
    noise_ci = smooth_ci(boot, points["noise"], samples["noise"], jack["noise"])
    acc_ci = smooth_ci(
        boot, points["mean_accuracy"], samples["mean_accuracy"], jack["mean_accuracy"]
    )

    def one(name: str) -> Estimate:
        return scalar_stat(boot, float(points[name][0]), samples[name][:, 0], jack[name][:, 0])

    return RepeatFields(
        n_repeats=m.n_repeats,
        delta=delta,
        item_rate_harmful_rate=one("rate_harmful"),
        expected_harmful_rate=stat(None, None) if order.multi_axis else one("expected_harmful"),
        noise_floor={lab: stat(points["noise"][j], noise_ci[j]) for j, lab in enumerate(labels)},
        repeat_mean_accuracy={
            lab: stat(points["mean_accuracy"][j], acc_ci[j]) for j, lab in enumerate(labels)
        },
    )

"""Churn between two protocols of one model at equal budgets.

Two sampling phases, pipelines or seeds can give the same accuracy at 16 frames while answering
many items differently, which the accuracy curve and membership both hide. At every shared
budget: answer change, accuracy difference and flips, with intervals and each series' noise
floor; beside a frame selector's series, the selector's record (`Selector`; docs/measures.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._binary import disagreement
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix
from ._paired_tests import paired_tests
from ._result_models import Estimate, MatchedCost, Selector
from ._same_input import same_input
from ._stats import Columns, ratio_stat, smooth_ci, stat

#: The series of a `selection` sampling policy (`selection:NAME/pipeline`).
SELECTION_SERIES_PREFIX = "selection:"


@dataclass(frozen=True)
class BudgetChurn:
    """One budget both series ran (its statistics are the records `analyze --json` writes)."""

    budget: str
    config_p: str
    config_q: str
    answer_change: Estimate
    #: accuracy under the second series minus under the first
    accuracy_difference: Estimate
    #: right under the first series, wrong under the second (down) and the reverse (up)
    flip_down: Estimate
    flip_up: Estimate
    noise_floor_p: Estimate | None
    noise_floor_q: Estimate | None
    #: when exactly one series is a selector's: it against the other at this budget
    selector: Selector | None = None


@dataclass(frozen=True)
class SeriesChurn:
    series_p: str
    series_q: str
    n_common_items: int
    n_videos: int
    budgets: tuple[BudgetChurn, ...]


def shared_budgets(mp: ResponseMatrix, mq: ResponseMatrix) -> list[tuple[int, int]]:
    """Positions (in mp, in mq) of the configurations with the same frames and pixels per frame
    (frames alone where neither records pixels); a budget either series has twice is left out,
    since it names no single configuration."""

    def keys(m: ResponseMatrix) -> list[tuple[int, float | None]]:
        return [
            (int(f), float(p) if np.isfinite(p) else None)
            for f, p in zip(m.frames, m.pixels, strict=True)
        ]

    kp, kq = keys(mp), keys(mq)
    out = []
    for j, key in enumerate(kp):
        if kp.count(key) == 1 and kq.count(key) == 1:
            out.append((j, kq.index(key)))
    return out


def budget_name(label_p: str, label_q: str) -> str:
    """The leading `/` parts two labels share (`16f@56/centre`, `16f@56/left` -> `16f@56`), or
    the first label when they share none."""
    shared = []
    if label_p.startswith("<=") != label_q.startswith("<="):  # a cap and a fixed budget
        label_p, label_q = label_p.removeprefix("<="), label_q.removeprefix("<=")
    for a, b in zip(label_p.split("/"), label_q.split("/"), strict=False):
        if a != b:
            break
        shared.append(a)
    return "/".join(shared) or label_p


def _answer_text(answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    known = np.array([isinstance(a, str) and a != "" for a in answers.ravel()], dtype=bool)
    text = np.array([str(a) for a in answers.ravel()], dtype=object)
    return text.reshape(answers.shape), known.reshape(answers.shape)


def series_churn(
    mp: ResponseMatrix,
    mq: ResponseMatrix,
    boot_for: Callable[[np.ndarray], VideoBootstrap | None],
) -> SeriesChurn | None:
    """Churn at every shared budget, on the items matched in both (None: no budget shared)."""
    budgets = shared_budgets(mp, mq)
    if not budgets:
        return None
    common = np.intersect1d(mp.item_ids.astype(str), mq.item_ids.astype(str))
    ip = pd.Index(mp.item_ids.astype(str)).get_indexer(common)
    iq = pd.Index(mq.item_ids.astype(str)).get_indexer(common)
    cp = np.array([j for j, _ in budgets], dtype=np.int64)
    cq = np.array([k for _, k in budgets], dtype=np.int64)
    yp = (mp.y[np.ix_(ip, cp)] >= 1).astype(float)
    yq = (mq.y[np.ix_(iq, cq)] >= 1).astype(float)
    text_p, known_p = _answer_text(mp.answers[np.ix_(ip, cp)])
    text_q, known_q = _answer_text(mq.answers[np.ix_(iq, cq)])
    both = (known_p & known_q).astype(float)
    changed = ((text_p != text_q) & (both > 0)).astype(float)
    videos = mp.video_ids[ip]
    boot = boot_for(videos) if len(common) else None
    cols = Columns(boot)
    cols.add("difference", yq - yp)
    cols.add("down", yp * (1 - yq))
    cols.add("up", (1 - yp) * yq)
    floors = {}
    for side, m, rows, cfg in (("p", mp, ip, cp), ("q", mq, iq, cq)):
        if m.n_repeats > 1:
            floors[side] = True
            cols.add(f"noise_{side}", disagreement(m.values[np.ix_(rows, cfg)]))
    points, samples, jack = cols.resolve()
    cis = {name: smooth_ci(boot, points[name], samples[name], jack[name]) for name in points}

    def column(name: str, s: int) -> Estimate:
        return stat(points[name][s], cis[name][s])

    selector = _selector_side(mp, mq)
    out = []
    for s, (j, k) in enumerate(budgets):
        versus = None
        if selector is not None:
            versus = _selector_vs_uniform(
                (mp, ip, j), (mq, iq, k), selector, videos, boot, known_p[:, s] & known_q[:, s]
            )
        out.append(
            BudgetChurn(
                budget=budget_name(mp.labels[j], mq.labels[k]),
                config_p=mp.labels[j],
                config_q=mq.labels[k],
                answer_change=ratio_stat(boot, changed[:, s], both[:, s]),
                accuracy_difference=column("difference", s),
                flip_down=column("down", s),
                flip_up=column("up", s),
                noise_floor_p=column("noise_p", s) if "p" in floors else None,
                noise_floor_q=column("noise_q", s) if "q" in floors else None,
                selector=versus,
            )
        )
    return SeriesChurn(
        series_p=mp.series,
        series_q=mq.series,
        n_common_items=len(common),
        n_videos=len(set(videos.tolist())),
        budgets=tuple(out),
    )


def _selector_side(mp: ResponseMatrix, mq: ResponseMatrix) -> str | None:
    """`p` or `q` when exactly that series replays a selection, else None."""
    sel_p = mp.series.startswith(SELECTION_SERIES_PREFIX)
    sel_q = mq.series.startswith(SELECTION_SERIES_PREFIX)
    if sel_p == sel_q:
        return None
    return "p" if sel_p else "q"


Side = tuple[ResponseMatrix, np.ndarray, int]


def _same_frames(fs: np.ndarray, fu: np.ndarray) -> tuple[int, int]:
    """Items whose frame indices both sides recorded, and those whose indices are equal."""
    recorded = same = 0
    for a, b in zip(fs.tolist(), fu.tolist(), strict=True):
        if a is None or b is None:
            continue
        recorded += 1
        same += bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return recorded, same


def _selector_vs_uniform(
    side_p: Side,
    side_q: Side,
    selector: str,
    videos: np.ndarray,
    boot: VideoBootstrap | None,
    answered: np.ndarray,
) -> Selector:
    """The selector's record at one budget: `side_*` are (matrix, matched rows, column)."""
    (ms, rs, cs), (mu, ru, cu) = (side_p, side_q) if selector == "p" else (side_q, side_p)
    right_s = (ms.y[rs, cs] >= 1).astype(float)
    right_u = (mu.y[ru, cu] >= 1).astype(float)
    (test,) = paired_tests(
        np.stack([right_u, right_s], axis=1), videos, [(0, 1)], ["uniform", "selector"], boot
    )
    cols = Columns(boot)
    cols.add("s", right_s)
    cols.add("u", right_u)
    points, samples, jack = cols.resolve()

    def accuracy(name: str) -> Estimate:
        return stat(points[name][0], smooth_ci(boot, points[name], samples[name], jack[name])[0])

    # wrong at every budget the uniform series ran (a missing cell is not a wrong answer)
    uniform_all = mu.y[ru]
    wrong_everywhere = (np.nan_to_num(uniform_all, nan=1.0) < 1).all(axis=1).astype(float)
    headroom_fixed = wrong_everywhere * right_s
    recorded, same = _same_frames(ms.frame_indices[rs, cs], mu.frame_indices[ru, cu])
    answers_u = [a if ok else None for a, ok in zip(mu.answers[ru, cu], answered, strict=True)]
    answers_s = [a if ok else None for a, ok in zip(ms.answers[rs, cs], answered, strict=True)]
    looks_same = same_input(answers_u, answers_s, frame_step=False, floor=ms.rerun_floor)
    used = effective_frames_of(ms, rs, cs)
    return Selector(
        selector_series=ms.series,
        uniform_series=mu.series,
        accuracy_selector=accuracy("s"),
        accuracy_uniform=accuracy("u"),
        accuracy_difference=stat(test.difference, test.difference_ci),
        clustered_mcnemar_p=test.clustered_p,
        exact_mcnemar_p=test.exact_mcnemar_p,
        n_fixed=test.n_up,
        n_broken=test.n_down,
        n_uniform_wrong_everywhere=int(wrong_everywhere.sum()),
        n_headroom_fixed=int(headroom_fixed.sum()),
        headroom_share=ratio_stat(boot, headroom_fixed, wrong_everywhere),
        n_frames_recorded=recorded,
        n_same_frames=same,
        same_input=looks_same,
        frames_cap=int(ms.frames[cs]),
        frames_used_mean=float(used.mean()) if used.size else None,
        frames_used_min=int(used.min()) if used.size else None,
        frames_used_max=int(used.max()) if used.size else None,
        uniform_frames_used_mean=float(effective_frames_of(mu, ru, cu).mean())
        if used.size
        else None,
        matched_cost=matched_cost((ms, rs, cs), (mu, ru, cu), boot) if used.size else None,
    )


def effective_frames_of(m: ResponseMatrix, rows: np.ndarray, col: int) -> np.ndarray:
    """The frames each cell of one configuration used: its recorded `effective_frames`, else
    the count of its recorded frame indices, else the configuration's frame count (a cap for
    an adaptive selection, which is why the recorded counts come first)."""
    out = np.asarray(m.effective_frames[rows, col], dtype=float).copy()
    for i, (value, indices) in enumerate(zip(out, m.frame_indices[rows, col], strict=True)):
        if not np.isfinite(value):
            out[i] = len(indices) if indices is not None else float(m.frames[col])
    return out


def _same_pixels(a: float, b: float) -> bool:
    return (not np.isfinite(a) and not np.isfinite(b)) or a == b


def matched_cost(selector: Side, uniform: Side, boot: VideoBootstrap | None) -> MatchedCost | None:
    """Uniform sampling at the selector's mean frames used, on the matched items: each item's
    correctness interpolated linearly between the uniform budgets (at the selector's pixels)
    whose mean frames used lie just below and just above it; the nearest budget when the
    mean lies outside them. Linear interpolation of per-item correctness gives the
    interpolated accuracy and lets the bootstrap resample the difference item by item."""
    (ms, rs, cs), (mu, ru, cu) = selector, uniform
    target = float(effective_frames_of(ms, rs, cs).mean())
    budgets = [
        (float(effective_frames_of(mu, ru, k).mean()), k)
        for k in range(mu.n_configs)
        if mu.frames[k] > 0 and _same_pixels(float(mu.pixels[k]), float(mu.pixels[cu]))
    ]
    if not budgets:
        return None
    budgets.sort()
    below = [b for b in budgets if b[0] <= target]
    above = [b for b in budgets if b[0] >= target]
    nearest = not below or not above
    low = below[-1] if below else budgets[0]
    high = above[0] if above else budgets[-1]
    if nearest:
        low = high = low if below else high
    weight = 0.0 if high[0] == low[0] else (target - low[0]) / (high[0] - low[0])
    right_s = (ms.y[rs, cs] >= 1).astype(float)
    interpolated = (1.0 - weight) * (mu.y[ru, low[1]] >= 1) + weight * (mu.y[ru, high[1]] >= 1)
    cols = Columns(boot)
    cols.add("uniform", interpolated.astype(float))
    cols.add("difference", right_s - interpolated)
    points, samples, jack = cols.resolve()

    def estimate(name: str) -> Estimate:
        return stat(points[name][0], smooth_ci(boot, points[name], samples[name], jack[name])[0])

    return MatchedCost(
        frames=target,
        uniform_below=mu.labels[low[1]],
        uniform_above=mu.labels[high[1]],
        weight_above=weight,
        nearest=nearest,
        accuracy_uniform=estimate("uniform"),
        accuracy_difference=estimate("difference"),
    )

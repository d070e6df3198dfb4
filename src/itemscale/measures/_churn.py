"""Churn between two protocols of one model at equal budgets.

Two sampling phases (linspace, centre, left), two pipelines (raw, cached) or two seeds can give
the same accuracy at 16 frames while answering many items differently: the accuracy curve and
the harmful sets that membership compares both hide it. At every budget the two series share
(the same frame count and pixels per frame), on the items matched in both: the share of items
whose parsed answer differs, the accuracy difference, and the flips between the two (right
under the first protocol and wrong under the second, and the reverse), each with its
video-bootstrap interval, and each series' noise floor at that budget when it has repeats
(churn above the noise floor is the protocol's doing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._binary import disagreement
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix
from ._stats import Columns, Stat, ratio_stat, smooth_ci, stat


@dataclass(frozen=True)
class BudgetChurn:
    """One budget both series ran (the statistics in `analyze`'s JSON form)."""

    budget: str
    config_p: str
    config_q: str
    answer_change: Stat
    #: accuracy under the second series minus under the first
    accuracy_difference: Stat
    #: right under the first series, wrong under the second (down) and the reverse (up)
    flip_down: Stat
    flip_up: Stat
    noise_floor_p: Stat | None
    noise_floor_q: Stat | None


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
    """The leading `/` parts the two labels of one budget share (`16f@56/centre` and
    `16f@56/left` -> `16f@56`), or the first label when they share none."""
    shared = []
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
    """Churn at every shared budget, on the items matched in both (None when no budget is
    shared). `boot_for` gives the bootstrap of a set of videos."""
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

    def column(name: str, s: int) -> Stat:
        return stat(points[name][s], cis[name][s])

    out = []
    for s, (j, k) in enumerate(budgets):
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
            )
        )
    return SeriesChurn(
        series_p=mp.series,
        series_q=mq.series,
        n_common_items=len(common),
        n_videos=len(set(videos.tolist())),
        budgets=tuple(out),
    )

"""Anchor subsets: K items that predict a model's accuracy on the whole item set at every budget.

Why: a budget sweep costs models x budgets x items; most users can afford the full benchmark at
one or two budgets, not at eight. Anchors are chosen from the 2PL fitted to runs already made
(`fit_irt`), so a new model need only answer them. The design (strata by difficulty, Neyman
allocation, systematic draws along discrimination, a model-assisted stratified estimate) is
docs/anchors.md's.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from ...core.files import read_input_text
from ._irt import IrtError, IrtFit, probability

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Version of the anchor file's header; bump on any change of its comment lines.
ANCHOR_SCHEMA_VERSION: Final[int] = 1
DEFAULT_STRATA: Final[int] = 10
#: Added to each group's expected outcome variance in the allocation, so that groups the fitted
#: respondents all answered alike still get anchors (a new model may not).
VARIANCE_FLOOR: Final[float] = 0.01
#: Normal quantile of the 95% intervals.
Z95: Final[float] = 1.959964

_HEADER = re.compile(r"^# itemscale anchors, schema (\d+)$")
_DESIGN = re.compile(r"^# fit ([0-9a-f]{64}); items (\d+); k (\d+); strata (\d+); seed (-?\d+)$")
_STRATUM = re.compile(r"^# stratum (\d+) of (\d+): (\d+) items, (\d+) anchors$")


@dataclass(frozen=True)
class AnchorSet:
    """K anchors and the design they were drawn under (`strata[h]`: (items in group h, its
    anchors)). A plain list of item ids reads as one group holding every item of the fit."""

    items: tuple[str, ...]
    data_digest: str | None
    n_items: int | None
    seed: int | None
    strata: tuple[tuple[int, tuple[str, ...]], ...]

    @property
    def k(self) -> int:
        return len(self.items)


def difficulty_strata(fit: IrtFit, strata: int) -> np.ndarray:
    """Group index (0 = easiest) of every fit item: equal-size groups by fitted difficulty,
    ties broken by item order so the same fit always gives the same groups."""
    _, b = fit.arrays()
    order = np.lexsort((np.arange(len(b)), b))
    labels = np.empty(len(b), dtype=int)
    for h, chunk in enumerate(np.array_split(order, strata)):
        labels[chunk] = h
    return labels


def neyman_allocation(
    sizes: np.ndarray, spread: np.ndarray, k: int, minimum: int = 2
) -> np.ndarray:
    """Anchors per group: size x spread, in [`minimum`, size], summing to k (largest remainders)."""
    target = k * sizes * spread / (sizes * spread).sum()
    n = np.minimum(np.maximum(minimum, np.floor(target).astype(int)), sizes)
    while n.sum() > k:
        n[int(np.argmax(np.where(n > minimum, n - target, -np.inf)))] -= 1
    while n.sum() < k:
        n[int(np.argmax(np.where(n < sizes, target - n, -np.inf)))] += 1
    return np.asarray(n)


def systematic_draw(
    members: np.ndarray, key: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """n of `members` by systematic sampling along `key` (ties by item order): every
    (size / n)-th item from a random start. Each item has the same chance n / size as in a
    simple random draw, but the draw spreads over the key's range (implicit stratification on
    discrimination inside a difficulty group)."""
    ordered = members[np.lexsort((members, key))]
    step = len(ordered) / n
    start = rng.random() * step
    return np.asarray(ordered[np.floor(start + step * np.arange(n)).astype(int)])


def choose_anchors(
    fit: IrtFit, k: int, *, strata: int = DEFAULT_STRATA, seed: int = 0
) -> AnchorSet:
    """K anchors drawn under the design of the module docstring; `strata` (at least 1) is
    lowered to k // 2 when K is too small for two anchors per group (`len(strata)` of the
    result says how many there are)."""
    ids = fit.item_ids()
    if not 2 <= k <= len(ids):
        raise IrtError(f"--k {k}: choose between 2 and the fit's {len(ids)} items")
    if strata < 1:
        raise IrtError(f"--strata {strata}: at least 1 difficulty group")
    strata = min(strata, k // 2, len(ids) // 2)
    labels = difficulty_strata(fit, strata)
    a, b = fit.arrays()
    p = probability(np.array([r.theta for r in fit.respondents]), a, b)
    sizes = np.bincount(labels, minlength=strata)
    spread = np.array(
        [
            np.sqrt((p[:, labels == h] * (1 - p[:, labels == h])).mean() + VARIANCE_FLOOR)
            for h in range(strata)
        ]
    )
    n = neyman_allocation(sizes, spread, k)
    rng = np.random.default_rng(seed)
    groups = []
    for h in range(strata):
        members = np.flatnonzero(labels == h)
        drawn = np.sort(systematic_draw(members, a[members], int(n[h]), rng))
        groups.append((int(sizes[h]), tuple(ids[j] for j in drawn)))
    return AnchorSet(
        items=tuple(i for _, g in groups for i in g),
        data_digest=fit.data_digest,
        n_items=len(ids),
        seed=seed,
        strata=tuple(groups),
    )


def anchor_text(anchors: AnchorSet) -> str:
    """The anchor file: one item id a line; `#` lines record the design `analyze --anchors`
    needs (the fit's digest, the groups' sizes) and that a protocol's item list ignores."""
    lines = [
        f"# itemscale anchors, schema {ANCHOR_SCHEMA_VERSION}",
        f"# fit {anchors.data_digest}; items {anchors.n_items}; k {anchors.k}; "
        f"strata {len(anchors.strata)}; seed {anchors.seed}",
    ]
    for h, (size, group) in enumerate(anchors.strata, start=1):
        lines.append(f"# stratum {h} of {len(anchors.strata)}: {size} items, {len(group)} anchors")
        lines.extend(group)
    return "\n".join(lines) + "\n"


def read_item_list(path: Path, text: str | None = None) -> list[str]:
    """The item ids of a plain list (one a line; blank lines and `#` comments skipped), as the
    protocol's `[benchmark] items` key reads it; a repeated id is refused with its line.
    `text`: the file's text, already read (else it is read through `read_input_text`: a FIFO or
    a device is refused, not waited on)."""
    if text is None:
        text = read_input_text(path, what="an item list")
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line in seen:
            raise IrtError(f"{path}: line {number}: item {line!r} repeats line {seen[line]}")
        seen[line] = number
    if not seen:
        raise IrtError(f"{path}: no item ids (one a line; '#' starts a comment)")
    return list(seen)


def read_anchors(path: Path) -> AnchorSet:
    """An anchor file `anchor_text` wrote, or a plain item list (then one group, no digest)."""
    text = read_input_text(path, what="an anchor file")
    items = read_item_list(path, text)
    lines = text.splitlines()
    head = _HEADER.match(lines[0].strip()) if lines else None
    if head is None:
        return AnchorSet(tuple(items), None, None, None, ((0, tuple(items)),))
    if int(head.group(1)) != ANCHOR_SCHEMA_VERSION:
        raise IrtError(f"{path}: line 1: anchor schema {head.group(1)}; this itemscale reads 1")
    design = _DESIGN.match(lines[1].strip()) if len(lines) > 1 else None
    if design is None:
        raise IrtError(f"{path}: line 2: expected '# fit SHA256; items N; k K; strata H; seed S'")
    groups: list[tuple[int, list[str]]] = []
    for number, raw in enumerate(lines[2:], start=3):
        line = raw.strip()
        stratum = _STRATUM.match(line)
        if stratum is not None:
            groups.append((int(stratum.group(3)), []))
        elif line and not line.startswith("#"):
            if not groups:
                raise IrtError(f"{path}: line {number}: item before any '# stratum' line")
            groups[-1][1].append(line)
    return AnchorSet(
        items=tuple(items),
        data_digest=design.group(1),
        n_items=int(design.group(2)),
        seed=int(design.group(5)),
        strata=tuple((size, tuple(g)) for size, g in groups),
    )


def stratified_estimate(residuals: Sequence[np.ndarray], sizes: np.ndarray) -> tuple[float, float]:
    """(sum_h (N_h/N) mean_h, its sampling variance) of per-group residuals; a group with one
    answered anchor borrows the pooled within-group variance."""
    total = float(sizes.sum())
    pooled = [r for r in residuals if len(r) >= 2]
    fallback = float(np.mean([r.var(ddof=1) for r in pooled])) if pooled else 0.25
    est = var = 0.0
    for r, size in zip(residuals, sizes, strict=True):
        if len(r) == 0:
            continue
        s2 = float(r.var(ddof=1)) if len(r) >= 2 else fallback
        est += size / total * float(r.mean())
        var += (size / total) ** 2 * max(0.0, 1.0 - len(r) / size) * s2 / len(r)
    return est, var


def _by_stratum(
    values: np.ndarray, seen: np.ndarray, bounds: np.ndarray, sizes: np.ndarray
) -> tuple[float, float]:
    """`stratified_estimate` of one row of anchor values, over the anchors `seen`."""
    groups = [values[lo:hi][seen[lo:hi]] for lo, hi in itertools.pairwise(bounds)]
    return stratified_estimate(groups, sizes)


def _unseen_items(
    own: np.ndarray,
    seen: np.ndarray,
    shrunk: np.ndarray,
    any_seen: np.ndarray,
    bounds: np.ndarray,
    sizes: np.ndarray,
) -> tuple[float, float]:
    """(correction, variance) of one configuration: per group, its answered anchors' residuals
    in full and the shrunk residual mean for the group's other items, over N. The variance is
    the shrunk mean's sampling variance plus the configuration's own residual variance over its
    unanswered items (with its own residuals, the stratified variance of `stratified_estimate`)."""
    total = float(sizes.sum())
    pools = [shrunk[lo:hi][any_seen[lo:hi]] for lo, hi in itertools.pairwise(bounds)]
    spread = [float(r.var(ddof=1)) for r in pools if len(r) >= 2]
    fallback = float(np.mean(spread)) if spread else 0.25
    est = var = 0.0
    for h, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        mine, pool = own[lo:hi][seen[lo:hi]], pools[h]
        if len(pool) == 0:
            continue
        unseen = max(0.0, float(sizes[h]) - len(mine))
        s2_pool = float(pool.var(ddof=1)) if len(pool) >= 2 else fallback
        s2_own = float(mine.var(ddof=1)) if len(mine) >= 2 else s2_pool
        est += (float(mine.sum()) + unseen * float(pool.mean())) / total
        if unseen > 0:
            var += (unseen / total) ** 2 * (s2_pool / len(pool) + s2_own / unseen)
    return est, var


def pooled_corrections(
    resid: np.ndarray, seen: np.ndarray, bounds: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(correction, its variance, pooling weight) of each configuration of one model from its
    anchor residuals `resid` [configurations, anchors] (`seen`: answered).

    Why: where the 2PL misfits a model it mostly misfits all its configurations alike, so a
    configuration's residual mean is shrunk toward the model's (method of moments), and the
    shrinkage's bias is added to the variance as d_c^2 + v_c / 2, the choice docs/anchors.md
    measures against d_c^2 and d_c^2 + v_c."""
    n_conf = len(resid)
    count = seen.sum(axis=0)
    any_seen = count > 0
    mean = np.where(any_seen, resid.sum(axis=0) / np.maximum(count, 1), 0.0)
    dev = np.array([_by_stratum(resid[c] - mean, seen[c], bounds, sizes) for c in range(n_conf)])
    d, v = dev[:, 0], dev[:, 1]
    if n_conf > 1:
        tau2 = max(0.0, float(n_conf / (n_conf - 1) * np.mean(d**2) - np.mean(v)))
        lam = np.divide(tau2, tau2 + v, out=np.ones(n_conf), where=(tau2 + v) > 0)
    else:
        lam = np.ones(n_conf)
    est, var = np.empty(n_conf), np.empty(n_conf)
    for c in range(n_conf):
        shrunk = np.where(seen[c], (1.0 - lam[c]) * mean + lam[c] * resid[c], mean)
        est[c], var[c] = _unseen_items(resid[c], seen[c], shrunk, any_seen, bounds, sizes)
        share_unseen = 1.0 - seen[c].sum() / float(sizes.sum())
        var[c] += ((1.0 - lam[c]) * share_unseen) ** 2 * (d[c] ** 2 + v[c] / 2)
    return est, var, lam


def predict_accuracy(
    fit: IrtFit,
    anchors: AnchorSet,
    y: np.ndarray,
    observed: np.ndarray,
    item_ids: list[str],
    groups: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(predicted accuracy on the fit's whole item set, its standard error, theta) of every
    respondent (row of `y` over `item_ids`) from its anchor answers alone; rows sharing a
    `groups` label (one model's configurations) pool their residuals (`pooled_corrections`),
    rows without one stand alone. Abilities use the fitted respondents' spread as their prior."""
    from ._irt import theta_for

    a, b = fit.arrays()
    index = {item: j for j, item in enumerate(fit.item_ids())}
    column = {item: j for j, item in enumerate(item_ids)}
    anchor_idx = np.array([index[i] for i in anchors.items])
    cols = np.array([column[i] for i in anchors.items])
    ya, seen = y[:, cols], observed[:, cols].astype(bool)
    fitted = np.array([r.theta for r in fit.respondents])
    prior = (float(fitted.mean()), max(float(fitted.std()), 1.0))
    theta, _ = theta_for(ya, a[anchor_idx], b[anchor_idx], seen.astype(float), prior=prior)
    p_all = probability(theta, a, b)
    sizes = np.array([size if size else len(index) for size, _ in anchors.strata], dtype=float)
    bounds = np.cumsum([0] + [len(g) for _, g in anchors.strata])
    resid = np.where(seen, ya - p_all[:, anchor_idx], 0.0)
    labels = [str(r) for r in range(len(theta))] if groups is None else [str(g) for g in groups]
    est, var = np.empty(len(theta)), np.empty(len(theta))
    for label in sorted(set(labels)):
        rows = np.array([r for r, g in enumerate(labels) if g == label])
        delta, var[rows], _ = pooled_corrections(resid[rows], seen[rows], bounds, sizes)
        est[rows] = p_all[rows].mean(axis=1) + delta
    return est, np.sqrt(var), theta

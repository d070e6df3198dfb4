"""Which budget is "more": a total order on one axis, the partial order on several.

A grid of frame counts at two resolutions is not one axis: flattened, 8f@112 -> 16f@56 would
count as "more budget" although it halves the pixels. c_j < c_k when every component of
(frames, pixels per frame) of c_k is at least c_j's and one is larger; pairs that are not
comparable do not count. A single chain, or an allocation axis, keeps its own axis order
(docs/measures.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

_FRAMES_PREFIX = re.compile(r"^\d+\s*f(?:rames?)?[_@\-/ ]?", re.IGNORECASE)


@dataclass(frozen=True, eq=False)
class BudgetOrder:
    """The order of a matrix's configurations (positions 0..K-1 in axis order)."""

    #: less[j, k]: configuration j is a smaller budget than k.
    less: np.ndarray
    #: Pairs one step apart along one axis, the others fixed (the headline flips).
    adjacent: tuple[tuple[int, int], ...]
    multi_axis: bool
    axes: tuple[str, ...]
    #: Named chains of a multi-axis grid: `frames@<resolution>` (the frame counts at one
    #: resolution) and `resolution@<N>f` (the resolutions at one frame count), positions in order.
    chains: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def maximal(self) -> tuple[int, ...]:
        """The largest budgets: those no configuration exceeds (one on a single axis)."""
        return tuple(int(k) for k in np.flatnonzero(~self.less.any(axis=1)))

    @property
    def comparable_pairs(self) -> list[tuple[int, int]]:
        return [(int(a), int(b)) for a, b in zip(*np.nonzero(self.less), strict=True)]


def resolution_tag(label: str, pixels: float) -> str:
    """How a chain names a resolution: the label without its frame count (`16f_151k` -> `151k`,
    `2f@56` -> `56`), else the pixel count."""
    rest = _FRAMES_PREFIX.sub("", label.strip(), count=1).strip("_@-/ ")
    if rest and rest != label.strip():
        return rest
    return f"{int(pixels)}px" if np.isfinite(pixels) else "?"


def total_order(k: int) -> BudgetOrder:
    less = np.triu(np.ones((k, k), dtype=bool), 1)
    return BudgetOrder(
        less=less,
        adjacent=tuple((j, j + 1) for j in range(k - 1)),
        multi_axis=False,
        axes=("axis",),
    )


def budget_order(
    frames: np.ndarray, pixels: np.ndarray, labels: tuple[str, ...] | list[str]
) -> BudgetOrder:
    """The order of configurations given in axis order with these frames and pixels."""
    f = np.asarray(frames, dtype=float)
    p = np.asarray(pixels, dtype=float)
    k = f.size
    known = np.isfinite(p).all() and k > 1
    if not known or len(set(p.tolist())) < 2 or len(set(f.tolist())) < 2:
        return total_order(k)
    rising = all(f[j] <= f[i] and p[j] <= p[i] for j in range(k) for i in range(j + 1, k))
    repeated = len(set(f.tolist())) < k or len(set(p.tolist())) < k
    if rising or not repeated:
        # one chain, or an allocation axis (frames up as pixels go down, one configuration per
        # level): the sweep's own axis order is the order
        return total_order(k)
    le = (f[:, None] <= f[None, :]) & (p[:, None] <= p[None, :])
    strict = (f[:, None] < f[None, :]) | (p[:, None] < p[None, :])
    less = le & strict
    adjacent: list[tuple[int, int]] = []
    for j in range(k):
        for i in range(k):
            if not less[j, i]:
                continue
            one_axis = (f[j] == f[i]) != (p[j] == p[i])
            between = less[j, :] & less[:, i]
            if one_axis and not (between & ((f == f[j]) | (p == p[j]))).any():
                adjacent.append((j, i))
    adjacent.sort(key=lambda pair: (pair[0], pair[1]))
    tags = {
        float(px): resolution_tag(labels[int(np.flatnonzero(p == px)[0])], float(px))
        for px in sorted(set(p.tolist()))
    }
    if len(set(tags.values())) < len(tags):  # two resolutions share a tag: name them by pixels
        tags = {px: f"{int(px)}px" for px in tags}
    chains: dict[str, tuple[int, ...]] = {}
    for px, tag in tags.items():
        line = sorted(np.flatnonzero(p == px).tolist(), key=lambda i: (f[i], i))
        if len(line) >= 2:
            chains[f"frames@{tag}"] = tuple(int(i) for i in line)
    for fr in sorted(set(f.tolist())):
        line = sorted(np.flatnonzero(f == fr).tolist(), key=lambda i: (p[i], i))
        if len(line) >= 2:
            chains[f"resolution@{int(fr)}f"] = tuple(int(i) for i in line)
    return BudgetOrder(
        less=less,
        adjacent=tuple(adjacent),
        multi_axis=True,
        axes=("frames", "pixels"),
        chains=chains,
    )


def with_text_first(order: BudgetOrder) -> BudgetOrder:
    """The order with the text-only answer added as budget 0, below every configuration."""
    k = order.less.shape[0]
    less = np.zeros((k + 1, k + 1), dtype=bool)
    less[0, 1:] = True
    less[1:, 1:] = order.less
    adjacent = ((0, 1), *((a + 1, b + 1) for a, b in order.adjacent))
    chains = {name: (0, *(i + 1 for i in line)) for name, line in order.chains.items()}
    return BudgetOrder(
        less=less,
        adjacent=adjacent,
        multi_axis=order.multi_axis,
        axes=order.axes,
        chains=chains,
    )


def main_chain(order: BudgetOrder, frames: np.ndarray) -> tuple[str, tuple[int, ...]] | None:
    """The chain a cascade or an intervention follows on a multi-axis grid: the frame counts at
    the resolution of the largest budget (the maximal configuration with the most frames)."""
    if not order.multi_axis:
        return None
    top = max(order.maximal, key=lambda i: (float(frames[i]), i))
    best = [
        (name, line)
        for name, line in order.chains.items()
        if name.startswith("frames@") and top in line
    ]
    return best[0] if best else None

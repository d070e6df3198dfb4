"""What stopping a cascade at a stage costs, per item.

The contract (MEASURES.md) counts the *shared frame cost*: a cascade that runs budgets c_1..c_k
decodes and encodes the union of their frames, so a frame an earlier stage already used is not
paid again. With nested sampling a stage then pays only its new frames; with phase-shifted
formulas it pays almost every frame again, which is exactly the difference the policy has to see.
Visual tokens are a second currency: the language model prefills every stage's visual tokens anew
(its input changes from stage to stage), so token cost is a plain running sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

CostBasis = Literal["frame_indices_union", "sum_of_frame_counts", "visual_tokens_sum"]


@dataclass(frozen=True)
class StageCosts:
    """Cumulative cost of stopping at each stage, and the cost of the fixed terminal budget.

    `cumulative[i, k]` is what item i has paid once stage k has answered (stages 0..k all run);
    `terminal[i]` is what the fixed terminal budget alone costs for item i, the baseline of
    `cost_reduction`.
    """

    cumulative: FloatArray
    terminal: FloatArray
    basis: CostBasis
    note: str


def _as_index_array(cell: object, where: str) -> npt.NDArray[np.int64]:
    arr = np.asarray(cell, dtype=np.int64).ravel()
    if arr.size and arr.min() < 0:
        raise ValueError(f"{where}: negative frame index {int(arr.min())}")
    return arr


def shared_frame_costs_from_indices(frame_indices: npt.NDArray[np.object_]) -> StageCosts:
    """Shared frame cost from the frame indices each cell actually used.

    Vectorised: every (item, frame) pair is attributed to the first stage that used it, then a
    per-stage count is accumulated along the axis, so no Python loop runs over items per stage.
    """
    if frame_indices.ndim != 2:
        raise ValueError(f"frame_indices must be [items, stages], got shape {frame_indices.shape}")
    n_items, n_stages = frame_indices.shape
    flat = frame_indices.ravel()
    arrays: list[npt.NDArray[np.int64]] = []
    for cell_no, cell in enumerate(flat):
        i, k = divmod(cell_no, n_stages)
        if cell is None:
            raise ValueError(f"frame_indices: item row {i}, stage {k} has no indices")
        arrays.append(_as_index_array(cell, f"frame_indices[{i}, {k}]"))
    lengths = np.fromiter((a.size for a in arrays), dtype=np.int64, count=len(arrays))
    cell_of_row = np.repeat(np.arange(len(arrays), dtype=np.int64), lengths)
    items = cell_of_row // max(n_stages, 1)
    stages = cell_of_row % max(n_stages, 1)
    indices = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
    terminal = np.array(
        [np.unique(arrays[i * n_stages + n_stages - 1]).size for i in range(n_items)],
        dtype=np.float64,
    )
    # Sort by (item, frame, stage): the first row of each (item, frame) run is its first use.
    order = np.lexsort((stages, indices, items))
    items, stages, indices = items[order], stages[order], indices[order]
    first = np.ones(items.size, dtype=bool)
    if items.size > 1:
        first[1:] = (items[1:] != items[:-1]) | (indices[1:] != indices[:-1])
    new_frames = np.zeros((n_items, n_stages), dtype=np.float64)
    np.add.at(new_frames, (items[first], stages[first]), 1.0)
    return StageCosts(
        cumulative=np.cumsum(new_frames, axis=1),
        terminal=terminal,
        basis="frame_indices_union",
        note="distinct frame indices used up to the stopping stage (union of recorded index sets)",
    )


def shared_frame_costs_from_counts(frames: Sequence[int] | FloatArray, n_items: int) -> StageCosts:
    """Fallback when frame indices were not recorded: every stage pays its full frame count.

    This over-counts whenever budgets share frames, so it is a pessimistic cost for the cascade
    and the report says that it was used.
    """
    counts = np.asarray(frames, dtype=np.float64).ravel()
    if counts.size == 0:
        raise ValueError("frames: no stages")
    cumulative = np.broadcast_to(np.cumsum(counts), (n_items, counts.size)).copy()
    return StageCosts(
        cumulative=cumulative,
        terminal=np.full(n_items, counts[-1], dtype=np.float64),
        basis="sum_of_frame_counts",
        note=(
            "frame indices were not recorded for every cell, so each stage pays its full frame "
            "count (an upper bound on the shared cost)"
        ),
    )


def shared_frame_costs(
    frame_indices: npt.NDArray[np.object_] | None,
    frames: Sequence[int] | FloatArray,
    n_items: int,
) -> StageCosts:
    """Union of recorded indices when every cell has them, else the sum-of-counts fallback."""
    if frame_indices is not None:
        complete = all(cell is not None for cell in frame_indices.ravel())
        if complete and frame_indices.shape[0] == n_items:
            return shared_frame_costs_from_indices(frame_indices)
    return shared_frame_costs_from_counts(frames, n_items)


def visual_token_costs(visual_tokens: FloatArray) -> StageCosts | None:
    """Running sum of visual tokens; None when any cell lacks a token count."""
    tokens = np.asarray(visual_tokens, dtype=np.float64)
    if tokens.ndim != 2 or tokens.size == 0 or not np.all(np.isfinite(tokens)):
        return None
    return StageCosts(
        cumulative=np.cumsum(tokens, axis=1),
        terminal=tokens[:, -1].copy(),
        basis="visual_tokens_sum",
        note="visual tokens prefilled at every stage run up to the stopping stage (not shared)",
    )

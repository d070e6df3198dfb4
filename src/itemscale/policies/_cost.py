"""What running a cascade's stages costs, per item.

The definition (docs/policies.md) counts the *shared frame cost*: a cascade that runs budgets c_1..c_k
decodes and encodes the union of their frames, so a frame an earlier stage already used is not
paid again. With nested sampling a stage then pays only its new frames; with phase-shifted
formulas it pays almost every frame again, which is exactly the difference a policy has to see.

A stage whose threshold is +inf can never answer, so a confidence cascade does not run it at all:
costs are therefore defined for any *set of stages that run* (`active`), not only for the full
prefix. Visual tokens are a second currency: the language model prefills every stage's visual
tokens anew (its input changes from stage to stage), so token cost is a plain sum over the stages
that ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CostBasis = Literal["frame_indices_union", "sum_of_frame_counts", "visual_tokens_sum"]


class StageCosts:
    """Cumulative cost of stopping at each stage, for any set of stages that run.

    `cumulative(active)[i, k]` is what item i has paid once stage k has answered, when exactly
    the stages flagged in `active` run (an inactive stage costs nothing and never answers);
    `terminal[i]` is the fixed terminal budget alone, the baseline of `cost_reduction`.
    Results are cached per active set: a threshold search asks for the same few sets repeatedly.
    """

    def __init__(
        self,
        *,
        n_items: int,
        n_stages: int,
        basis: CostBasis,
        note: str,
        terminal: FloatArray,
        per_stage: FloatArray | None = None,
        union_rows: tuple[IntArray, IntArray, IntArray] | None = None,
    ) -> None:
        if (per_stage is None) == (union_rows is None):
            raise ValueError("give exactly one of per_stage costs or union rows")
        self.n_items = n_items
        self.n_stages = n_stages
        self.basis: CostBasis = basis
        self.note = note
        self.terminal = np.asarray(terminal, dtype=np.float64)
        self._per_stage = per_stage
        self._union_rows = union_rows
        self._cache: dict[tuple[bool, ...], FloatArray] = {}

    @property
    def all_stages(self) -> tuple[bool, ...]:
        return (True,) * self.n_stages

    def cumulative(self, active: Sequence[bool] | None = None) -> FloatArray:
        key = self.all_stages if active is None else tuple(bool(a) for a in active)
        if len(key) != self.n_stages:
            raise ValueError(f"active has {len(key)} flags for {self.n_stages} stages")
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        mask = np.asarray(key, dtype=bool)
        if self._per_stage is not None:
            result = np.cumsum(self._per_stage * mask[None, :], axis=1)
        else:
            assert self._union_rows is not None
            items, stages, indices = self._union_rows
            keep = mask[stages]
            items, stages, indices = items[keep], stages[keep], indices[keep]
            # Rows are sorted by (item, frame, stage): the first row of each (item, frame) run
            # is the first stage that ran and used that frame; only it pays.
            first = np.ones(items.size, dtype=bool)
            if items.size > 1:
                first[1:] = (items[1:] != items[:-1]) | (indices[1:] != indices[:-1])
            new_frames = np.zeros((self.n_items, self.n_stages), dtype=np.float64)
            np.add.at(new_frames, (items[first], stages[first]), 1.0)
            result = np.cumsum(new_frames, axis=1)
        result = np.asarray(result, dtype=np.float64)
        result.setflags(write=False)
        self._cache[key] = result
        return result


def _as_index_array(cell: object, where: str) -> IntArray:
    arr = np.asarray(cell, dtype=np.int64).ravel()
    if arr.size and arr.min() < 0:
        raise ValueError(f"{where}: negative frame index {int(arr.min())}")
    return arr


def shared_frame_costs_from_indices(frame_indices: npt.NDArray[np.object_]) -> StageCosts:
    """Shared frame cost from the frame indices each cell actually used.

    Vectorised: the (item, stage, frame) rows of every cell are sorted once; any set of running
    stages then costs one filter, one first-use flag and one accumulation, with no loop over
    items.
    """
    if frame_indices.ndim != 2:
        raise ValueError(f"frame_indices must be [items, stages], got shape {frame_indices.shape}")
    n_items, n_stages = frame_indices.shape
    arrays: list[IntArray] = []
    for cell_no, cell in enumerate(frame_indices.ravel()):
        i, k = divmod(cell_no, n_stages)
        if cell is None:
            raise ValueError(f"frame_indices: item row {i}, stage {k} has no indices")
        arrays.append(_as_index_array(cell, f"frame_indices[{i}, {k}]"))
    lengths = np.fromiter((a.size for a in arrays), dtype=np.int64, count=len(arrays))
    cell_of_row = np.repeat(np.arange(len(arrays), dtype=np.int64), lengths)
    items = cell_of_row // max(n_stages, 1)
    stages = cell_of_row % max(n_stages, 1)
    indices = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
    order = np.lexsort((stages, indices, items))
    terminal = np.array(
        [np.unique(arrays[i * n_stages + n_stages - 1]).size for i in range(n_items)],
        dtype=np.float64,
    )
    return StageCosts(
        n_items=n_items,
        n_stages=n_stages,
        basis="frame_indices_union",
        note="distinct frame indices used by the stages that ran (union of recorded index sets)",
        terminal=terminal,
        union_rows=(items[order], stages[order], indices[order]),
    )


def shared_frame_costs_from_counts(frames: Sequence[int] | FloatArray, n_items: int) -> StageCosts:
    """Fallback when frame indices were not recorded: every stage that runs pays its full
    frame count. This over-counts whenever budgets share frames (a pessimistic cost for the
    cascade), and the report says that it was used."""
    counts = np.asarray(frames, dtype=np.float64).ravel()
    if counts.size == 0:
        raise ValueError("frames: no stages")
    return StageCosts(
        n_items=n_items,
        n_stages=int(counts.size),
        basis="sum_of_frame_counts",
        note=(
            "frame indices were not recorded for every cell, so each stage that runs pays its "
            "full frame count (an upper bound on the shared cost)"
        ),
        terminal=np.full(n_items, counts[-1], dtype=np.float64),
        per_stage=np.broadcast_to(counts, (n_items, counts.size)).copy(),
    )


def shared_frame_costs(
    frame_indices: npt.NDArray[np.object_] | None,
    frames: Sequence[int] | FloatArray,
    n_items: int,
) -> StageCosts:
    """Union of recorded indices when every cell has them, else the sum-of-counts fallback."""
    if frame_indices is not None and frame_indices.ndim == 2 and frame_indices.shape[0] == n_items:
        complete = all(cell is not None for cell in frame_indices.ravel())
        if complete:
            return shared_frame_costs_from_indices(frame_indices)
    return shared_frame_costs_from_counts(frames, n_items)


def visual_token_costs(visual_tokens: FloatArray) -> StageCosts | None:
    """Sum of visual tokens over the stages that ran; None when any cell lacks a count."""
    tokens = np.asarray(visual_tokens, dtype=np.float64)
    if tokens.ndim != 2 or tokens.size == 0 or not np.all(np.isfinite(tokens)):
        return None
    return StageCosts(
        n_items=int(tokens.shape[0]),
        n_stages=int(tokens.shape[1]),
        basis="visual_tokens_sum",
        note="visual tokens prefilled at every stage that ran, up to the stopping stage (not shared)",
        terminal=tokens[:, -1].copy(),
        per_stage=tokens.copy(),
    )

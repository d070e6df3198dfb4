"""What running a cascade's stages costs, per item, under a stated cost model (docs/policies.md,
"Cost models"); what the stages share changes every saving a stopping rule claims:

- `union`: the distinct frame indices of the stages that ran, as the sweep recorded them (a
  frame decoded once is paid once); it needs every cell's indices, so frames only.
- `prefix`: a stage pays only its excess over the previous stage that ran, `max(0, c_k - c_prev)`:
  exact for nested sampling, the seed paper's shared cost (`code/cascade.py --mode shared`).
  Without frame indices it is the optimistic end, never the default (`AUTO_NONE_NOTE`).
- `none`: every stage that runs pays in full (nothing is reused).

A stage whose threshold is +inf never runs, so costs are defined for any set of running stages
(`active`), not only for the full prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

Sharing = Literal["union", "prefix", "none"]
SHARING_NOTES: Final[dict[str, str]] = {
    "union": "distinct frame indices of the stages that ran (union of the recorded index sets)",
    "prefix": (
        "each stage pays only what it adds beyond the previous stage that ran, so an item pays "
        "its stop stage's cost (exact for nested sampling; the seed paper's shared cost)"
    ),
    "none": "every stage that runs pays in full (nothing is shared)",
}
#: Why `--sharing auto` pays every stage in full on a run without frame indices: nothing in
#: the record shows what the stages share, and `prefix` is exact only for nested frames.
AUTO_NONE_NOTE: Final[str] = (
    "every stage that runs pays in full: the default where no frame indices are recorded, so "
    "nothing shows what the stages share; --sharing prefix charges only the frames a stage "
    "adds (exact for nested frames, the seed paper's shared cost)"
)


class StageCosts:
    """`cumulative(active)[i, k]`: what item i has paid once stage k answered, when exactly the
    stages flagged in `active` run; `terminal[i]`: the terminal budget alone. Cached per active
    set: a threshold search asks for the same few sets repeatedly."""

    def __init__(
        self,
        *,
        n_items: int,
        n_stages: int,
        basis: Sharing,
        note: str,
        terminal: FloatArray,
        per_stage: FloatArray | None = None,
        union_rows: tuple[IntArray, IntArray, IntArray] | None = None,
    ) -> None:
        if (per_stage is None) == (union_rows is None):
            raise ValueError("give exactly one of per_stage costs or union rows")
        if (union_rows is not None) != (basis == "union"):
            raise ValueError("union rows go with the union basis, per-stage costs with the others")
        self.n_items = n_items
        self.n_stages = n_stages
        self.basis: Sharing = basis
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
            result = np.cumsum(self._increments(self._per_stage, mask), axis=1)
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

    def _increments(self, per_stage: FloatArray, mask: BoolArray) -> FloatArray:
        """What each running stage adds: its own cost (`none`) or its excess over the previous
        running stage (`prefix`)."""
        paid = per_stage * mask[None, :]
        if self.basis == "none":
            return paid
        previous = np.zeros(per_stage.shape[0])
        increments = np.zeros_like(per_stage)
        for stage in np.flatnonzero(mask):
            increments[:, stage] = np.maximum(0.0, per_stage[:, stage] - previous)
            previous = per_stage[:, stage]
        return increments


def _as_index_array(cell: object, where: str) -> IntArray:
    arr = np.asarray(cell, dtype=np.int64).ravel()
    if arr.size and arr.min() < 0:
        raise ValueError(f"{where}: negative frame index {int(arr.min())}")
    return arr


def frame_union_costs(frame_indices: npt.NDArray[np.object_]) -> StageCosts:
    """`union` frame cost from the frame indices each cell used: the (item, stage, frame) rows
    are sorted once, so any set of running stages costs one filter and one accumulation."""
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
        basis="union",
        note=SHARING_NOTES["union"],
        terminal=terminal,
        union_rows=(items[order], stages[order], indices[order]),
    )


def stage_value_costs(
    values: FloatArray, sharing: Literal["prefix", "none"], note: str | None = None
) -> StageCosts:
    """`prefix` or `none` cost from each cell's own cost (frames, visual tokens or seconds);
    `note` says why this model where the default chose it."""
    per_stage = np.asarray(values, dtype=np.float64)
    if per_stage.ndim != 2 or per_stage.shape[1] == 0:
        raise ValueError(f"stage costs must be [items, stages>=1], got shape {per_stage.shape}")
    if not np.all(np.isfinite(per_stage)):
        raise ValueError("stage costs must be finite for every cell")
    return StageCosts(
        n_items=int(per_stage.shape[0]),
        n_stages=int(per_stage.shape[1]),
        basis=sharing,
        note=note or SHARING_NOTES[sharing],
        terminal=per_stage[:, -1].copy(),
        per_stage=per_stage.copy(),
    )


def frame_counts_matrix(frames: Sequence[int] | FloatArray, n_items: int) -> FloatArray:
    """Every item's frame count per stage: the configuration's count, the same for every item."""
    counts = np.asarray(frames, dtype=np.float64).ravel()
    if counts.size == 0:
        raise ValueError("frames: no stages")
    return np.broadcast_to(counts, (n_items, counts.size)).copy()


def has_all_indices(frame_indices: npt.NDArray[np.object_] | None, n_items: int) -> bool:
    """Every cell recorded its frame indices (a text-only stage records an empty set)."""
    return (
        frame_indices is not None
        and frame_indices.ndim == 2
        and frame_indices.shape[0] == n_items
        and all(cell is not None for cell in frame_indices.ravel())
    )

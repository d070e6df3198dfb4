"""`sweep --rerun-check FRACTION`: the sweep measures its own rerun floor.

After a model's grid, a seeded sample of its finished answered cells runs again on the loaded
model, shuffled and at another batch size (8 after one request per call, else 1), so each cell
meets other neighbours, position and batch size: what moves greedy answers on a GPU. Reruns are
stored as rerun rows with the seed and frames of the cell they repeat; no measure counts them,
and every same-input verdict on the run is graded against their floor (docs/compare.md,
"Reruns"). A resumed sweep draws the same sample and runs only the reruns not stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._plan import Cell

#: the batch size reruns take when the grid ran one request per model call
OTHER_BATCH_SIZE = 8


@dataclass(frozen=True)
class RerunCheck:
    """What `--rerun-check` asks: the share to run again, the seed of the sample and its order,
    and the reruns' batch size (None: 8 after batch size 1, else 1)."""

    fraction: float
    seed: int = 0
    batch_size: int | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.fraction) and 0.0 < self.fraction <= 1.0):
            raise ValueError(f"rerun check fraction {self.fraction}: give a share in (0, 1]")
        if self.seed < 0:
            raise ValueError(f"rerun check seed {self.seed}: give a seed >= 0")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"rerun check batch size {self.batch_size}: give at least 1")

    def size_for(self, grid_batch_size: int, auto: bool) -> int:
        """The reruns' batch size: the one asked, else another than the grid's."""
        if self.batch_size is not None:
            return self.batch_size
        return OTHER_BATCH_SIZE if grid_batch_size == 1 and not auto else 1

    def sample(self, finished: list[Cell]) -> list[Cell]:
        """The seeded sample of `finished` (at least one cell), in its seeded order."""
        if not finished:
            return []
        rng = np.random.default_rng(self.seed)
        k = min(len(finished), max(1, round(self.fraction * len(finished))))
        return [finished[int(i)] for i in rng.choice(len(finished), size=k, replace=False)]

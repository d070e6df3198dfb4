"""`sweep --rerun-check FRACTION`: the sweep measures its own rerun floor (what is asked; the
run itself is `_rerun_run`).

After a model's grid, a seeded random sample of its finished answered cells is run again on the
same loaded model, in a shuffled order and at another batch size than the grid's (8 when the
grid ran one request per call, else 1), so each cell meets other neighbours, another batch
position and another batch size: what moves greedy answers on a GPU. Each rerun is stored as a
rerun row (`rerun_of`: the repeat it executes again; its own repeat numbered from
`RERUN_REPEAT_BASE`), with the seed and frames of the cell it repeats. No measure counts a
rerun row; every same-input verdict on the run is graded against the floor they measure
(docs/compare.md, "Reruns"). The session records, per model, the sample and the floor
(run.json `sessions[].rerun_check`). A resumed sweep draws the same sample and runs only the
reruns not yet stored.
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
    """What `--rerun-check` asks: the share of finished cells to run again, the seed of the
    sample and of its order, and the batch size of the reruns (None: 8 when the grid ran at
    batch size 1, else 1)."""

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
        """The seeded sample of `finished` (at least one cell when there is one), in the
        seeded order it runs in."""
        if not finished:
            return []
        rng = np.random.default_rng(self.seed)
        k = min(len(finished), max(1, round(self.fraction * len(finished))))
        return [finished[int(i)] for i in rng.choice(len(finished), size=k, replace=False)]

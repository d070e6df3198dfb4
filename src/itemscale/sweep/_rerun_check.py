"""`sweep --rerun-check FRACTION`: the sweep measures its own rerun floor.

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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..models import PROMPT_TEMPLATE_VERSION
from ..responses import EXTRACTOR_VERSION, RERUN_REPEAT_BASE
from ..store import cell_identity

if TYPE_CHECKING:
    from ..models import VideoLM
    from ._plan import Cell
    from ._session import Session

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


def as_rerun(cell: Cell, session: Session) -> Cell:
    """The rerun of `cell`: its repeat numbered from `RERUN_REPEAT_BASE`, its seed and frames
    the cell's own (`rerun_of`), its own identity."""
    from ._execute import repeat_decoding

    repeat = RERUN_REPEAT_BASE + cell.repeat
    decoding = repeat_decoding(session.protocol.decoding, cell.seed).canonical()
    cell_id = cell_identity(
        item=cell.item,
        spec_id=cell.spec_id,
        config_id=cell.config.config_id,
        prompt_template_version=PROMPT_TEMPLATE_VERSION,
        decoding=decoding,
        extractor_version=EXTRACTOR_VERSION,
        repeat=repeat,
    )
    return replace(cell, cell_id=cell_id, repeat=repeat, rerun_of=cell.repeat)


def run_rerun_check(session: Session, backend: VideoLM, model: str, planned: list[Cell]) -> None:
    """Run the rerun check of one loaded model over its planned cells, commit the reruns as
    they return, and record the sample and the floor they measure in the session."""
    from ._batching import run_across_videos
    from ._execute import VideoJobRunner, group_by_video

    check = session.rerun_check
    if check is None:
        return
    answered = session.store.done_cell_ids(retry_errors=True)
    finished = [c for c in planned if c.cell_id in answered and c.rerun_of is None]
    chosen = check.sample(finished)
    reruns = [as_rerun(c, session) for c in chosen]
    stored = session.store.done_cell_ids()
    pending = [c for c in reruns if c.cell_id not in stored]
    size = check.size_for(session.batch_size, session.auto_batch)
    runner = VideoJobRunner(
        backend,
        batch_size=size,
        cache=session.frame_cache,
        decoding_base=session.protocol.decoding,
    )
    session.bar.total = (session.bar.total or 0) + len(pending)
    run_across_videos(session, runner, group_by_video(pending, session.known_hashes))
    record = _record(session, check, size, finished, chosen, reruns, len(pending))
    session.result.rerun_checks[model] = record
    if session.session_id is not None:
        session.store.add_session_info(session.session_id, "rerun_check", model, record)


def _record(
    session: Session,
    check: RerunCheck,
    size: int,
    finished: list[Cell],
    chosen: list[Cell],
    reruns: list[Cell],
    ran: int,
) -> dict[str, Any]:
    """The session's record of one model's rerun check: what was sampled and run, and the
    floor the reruns measure against the cells they repeat."""
    from ..measures import measured_floor

    ids = {c.cell_id for c in chosen} | {c.cell_id for c in reruns}
    frame = session.store.cells_frame()
    rows = frame[frame["cell_id"].isin(ids)]
    floor = measured_floor(rows, reruns_only=True)
    interval = None if floor is None else floor.interval
    return {
        "fraction": check.fraction,
        "seed": check.seed,
        "batch_size": size,
        "grid_batch_size": "auto" if session.auto_batch else session.batch_size,
        "order": "seeded shuffle",
        "cells_finished": len(finished),
        "cells_sampled": len(chosen),
        "cells_run": ran,
        "answers": None if floor is None else floor.answers,
        "moved": None if floor is None else floor.moved,
        "rate": None if floor is None else floor.rate,
        "ci": None if interval is None else list(interval),
        "floor": None if floor is None else floor.line(),
    }

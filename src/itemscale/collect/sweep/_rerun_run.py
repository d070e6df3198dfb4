"""Running `sweep --rerun-check` (`_rerun_check` says what is asked): the sample run again on the
loaded model as reruns, and the session's record of the floor they measure."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...core.responses import EXTRACTOR_VERSION, RERUN_REPEAT_BASE
from ..models import PROMPT_TEMPLATE_VERSION
from ..store import cell_identity
from ._batching import run_across_videos
from ._execute import VideoJobRunner, group_by_video, repeat_decoding
from ._rerun_check import RerunCheck

if TYPE_CHECKING:
    from ..models import VideoLM
    from ._context import SweepContext
    from ._plan import Cell


def as_rerun(cell: Cell, context: SweepContext) -> Cell:
    """The rerun of `cell`: repeat from `RERUN_REPEAT_BASE`, the cell's own seed and frames, its
    own id."""
    repeat = RERUN_REPEAT_BASE + cell.repeat
    decoding = repeat_decoding(context.protocol.decoding, cell.seed).canonical()
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


def run_rerun_check(
    context: SweepContext, backend: VideoLM, model: str, planned: list[Cell]
) -> None:
    """Run one loaded model's rerun check, commit the reruns, record the sample and floor in the
    session."""
    check = context.rerun_check
    if check is None:
        return
    answered = context.store.done_cell_ids(retry_errors=True)
    finished = [c for c in planned if c.cell_id in answered and c.rerun_of is None]
    chosen = check.sample(finished)
    reruns = [as_rerun(c, context) for c in chosen]
    stored = context.store.done_cell_ids()
    pending = [c for c in reruns if c.cell_id not in stored]
    size = check.size_for(context.batch_size, context.auto_batch)
    runner = VideoJobRunner(
        backend,
        batch_size=size,
        cache=context.frame_cache,
        decoding_base=context.protocol.decoding,
    )
    context.bar.total = (context.bar.total or 0) + len(pending)
    run_across_videos(context, runner, group_by_video(pending, context.known_hashes))
    record = _record(context, check, size, finished, chosen, reruns, len(pending))
    context.result.rerun_checks[model] = record
    if context.session_id is not None:
        context.store.add_session_info(context.session_id, "rerun_check", model, record)


def _record(
    context: SweepContext,
    check: RerunCheck,
    size: int,
    finished: list[Cell],
    chosen: list[Cell],
    reruns: list[Cell],
    ran: int,
) -> dict[str, Any]:
    from ...core.rerun_evidence import measured_floor

    ids = {c.cell_id for c in chosen} | {c.cell_id for c in reruns}
    frame = context.store.cells_frame()
    rows = frame[frame["cell_id"].isin(ids)]
    floor = measured_floor(rows, reruns_only=True)
    interval = None if floor is None else floor.interval
    return {
        "fraction": check.fraction,
        "seed": check.seed,
        "batch_size": size,
        "grid_batch_size": "auto" if context.auto_batch else context.batch_size,
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

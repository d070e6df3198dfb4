"""Does a served model see the budget it is sent? The budget probe and the per-cell check.

A server may cap, resample or drop frames (vLLM samples a video file to a fixed count unless told
otherwise; an SGLang release sampled Qwen-VL frames twice), and the sweep would finish with a
clean, wrong curve. The probe sends one item at the smallest and largest frame budget first and
compares the visual tokens' growth with the frames' (docs/backends.md, "Does the server honour
the budget?"); during the sweep, every cell whose tokens do not grow against the item's smaller
budget is counted.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any, ClassVar, Final

from ...core.errors import ItemscaleError
from ..store import CellRow
from ._plan import Cell
from ._records import BudgetProbeRecord, BudgetSide

#: The visual tokens must grow by at least this share of the frames' growth: from f1 to f2
#: frames, tokens t2 / t1 >= 1 + TOLERANCE * (f2 / f1 - 1). A server that sees every frame
#: grows in proportion (ratio f2 / f1, give or take markers and a temporal patch of two frames);
#: one that caps or resamples grows far less (a cap at 8 frames in a 4 -> 32 sweep: 2 of 8).
BUDGET_GROWTH_TOLERANCE: Final[float] = 0.5

#: Server settings known to cap or resample frames (docs/backends.md has the sources).
FRAME_CAPPING_SETTINGS: Final[tuple[str, ...]] = (
    "vLLM: --limit-mm-per-prompt (items per prompt and modality), --media-io-kwargs "
    '\'{"video": {"num_frames": N}}\' (frames sampled from a video file, default 32; recent '
    "vLLM also cuts a data:video/jpeg list to its first N: the frame_times option sends -1), "
    "and "
    "--mm-processor-kwargs or a request's mm_processor_kwargs with fps / do_sample_frames / "
    "max_frames (the model's video processor resamples, Qwen3-VL's at 2 fps by default)",
    "SGLang: --mm-process-config with a video fps or max_frames (from v0.5.11 Qwen-VL video "
    "frames are sampled twice, halving the visual tokens: sgl-project/sglang#31200)",
    "any server: a proxy or gateway that limits images per request",
)


class BudgetNotHonouredError(ItemscaleError, RuntimeError):
    """The server does not show the model the frames it is sent: the sweep stops (exit status 1),
    unless accepted with `--accept-budget-cap`, which run.json records."""

    exit_code: ClassVar[int] = 1


def _setting(cell: Cell) -> tuple[Any, ...]:
    """Everything of a cell but its frame count: two cells that differ only in frames."""
    config = cell.config
    sampling = json.dumps(config.sampling.model_dump(mode="json"), sort_keys=True)
    return (
        cell.item.item_id,
        cell.repeat,
        cell.planned.series,
        config.max_pixels,
        config.short_side,
        sampling,
        config.pipeline,
    )


def probe_pair(cells: Sequence[Cell]) -> tuple[Cell, Cell] | None:
    """The smallest and largest frame budget of one item at one setting (the widest ratio, first
    on a tie); fixed token budgets are left out (their tokens do not grow with frames)."""
    groups: dict[tuple[Any, ...], list[Cell]] = {}
    for cell in cells:
        if cell.config.frames > 0 and cell.config.token_budget is None:
            groups.setdefault(_setting(cell), []).append(cell)
    best: tuple[float, Cell, Cell] | None = None
    for group in groups.values():
        small = min(group, key=lambda c: c.config.frames)
        large = max(group, key=lambda c: c.config.frames)
        ratio = large.config.frames / small.config.frames
        if ratio > 1 and (best is None or ratio > best[0]):
            best = (ratio, small, large)
    return None if best is None else (best[1], best[2])


def _side(row: CellRow) -> BudgetSide:
    sent = row.effective_frames if row.effective_frames is not None else row.frames
    return {
        "label": row.config_label,
        "frames": row.frames,
        "frames_sent": sent,
        "visual_tokens": row.visual_tokens,
        "status": row.status,
    }


def budget_verdict(
    small: CellRow, large: CellRow, tolerance: float = BUDGET_GROWTH_TOLERANCE
) -> BudgetProbeRecord:
    """The probe's record (run.json `sweep.budget_probe[MODEL]`); `honoured` is None when the
    replies cannot tell (a failed cell, no `usage.prompt_tokens`)."""
    record: BudgetProbeRecord = {
        "item_id": small.item_id,
        "small": _side(small),
        "large": _side(large),
        "tolerance": tolerance,
        "frame_ratio": None,
        "token_ratio": None,
        "required_token_ratio": None,
        "honoured": None,
    }
    f1, f2 = record["small"]["frames_sent"], record["large"]["frames_sent"]
    t1, t2 = small.visual_tokens, large.visual_tokens
    answered = {"ok", "noanswer"}
    if small.status not in answered or large.status not in answered:
        record["reason"] = "a probe cell failed: the budget could not be checked"
        return record
    if t1 is None or t2 is None or not f1 or not f2:
        record["reason"] = (
            "the server reported no usage.prompt_tokens: the budget could not be checked"
        )
        return record
    if f2 <= f1:
        record["reason"] = (
            f"only {f2} frame(s) were sent at {large.config_label} against {f1} at "
            f"{small.config_label} (the video is short): nothing to compare"
        )
        return record
    frame_ratio = f2 / f1
    required = 1.0 + tolerance * (frame_ratio - 1.0)
    token_ratio = t2 / t1 if t1 > 0 else (float("inf") if t2 > 0 else 1.0)
    record["frame_ratio"] = frame_ratio
    record["token_ratio"] = token_ratio
    record["required_token_ratio"] = required
    record["honoured"] = bool(token_ratio >= required)
    return record


def budget_message(model: str, record: BudgetProbeRecord) -> str:
    """What the sweep says when the probe finds the budget not honoured."""
    s, g = record["small"], record["large"]
    settings = "; ".join(FRAME_CAPPING_SETTINGS)
    return (
        f"model {model!r}: the server does not show the model the frames it is sent. Item "
        f"{record['item_id']}: {s['label']} sent {s['frames_sent']} frames and added "
        f"{s['visual_tokens']} prompt tokens; {g['label']} sent {g['frames_sent']} frames and "
        f"added {g['visual_tokens']} ({record['frame_ratio']:.3g}x the frames, "
        f"{record['token_ratio']:.3g}x the tokens; at least {record['required_token_ratio']:.3g}x "
        f"expected, tolerance {record['tolerance']:g}). Settings known to cap frames: "
        f"{settings}. Fix the server, or run again with --accept-budget-cap to sweep anyway "
        "(run.json records it)"
    )


#: What the per-cell check keeps of a recorded cell: its setting, the frames and visual tokens.
TokenRecord = tuple[tuple[Any, ...], int, int]


def token_record(cell: Cell, row: CellRow) -> TokenRecord | None:
    """The per-cell check's record of one answered cell with frames and recorded tokens."""
    sent = row.effective_frames if row.effective_frames is not None else row.frames
    if row.visual_tokens is None or not sent or row.status not in ("ok", "noanswer"):
        return None
    if cell.config.token_budget is not None:
        return None  # a fixed token budget: tokens do not grow with frames by design
    return (_setting(cell), int(sent), int(row.visual_tokens))


def unfit_cells(records: Sequence[TokenRecord]) -> int:
    """Cells with more frames than the same item's next smaller budget at one setting, and no
    more tokens."""
    by_setting: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for setting, sent, tokens in records:
        by_setting.setdefault(setting, []).append((sent, tokens))
    unfit = 0
    for group in by_setting.values():
        group.sort()
        for (f1, t1), (f2, t2) in itertools.pairwise(group):
            unfit += int(f2 > f1 and t2 <= t1)
    return unfit

"""A response matrix turned into what a stopping rule needs: stages, a stopping score
(`prob` or the seed paper's `margin`), answers and every stage's cost under one stated cost
model (`_cost.py`); both choices change every saving reported, so both are recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from ..measures import ResponseMatrix
from ._cost import (
    AUTO_NONE_NOTE,
    Sharing,
    StageCosts,
    frame_counts_matrix,
    frame_union_costs,
    has_all_indices,
    stage_value_costs,
)

FloatArray = npt.NDArray[np.float64]

SharingChoice = Literal["auto", "union", "prefix", "none"]
ScoreName = Literal["prob", "margin"]
SCORE_DESCRIPTIONS: Final[dict[str, str]] = {
    "prob": "probability of the chosen option",
    "margin": "top option probability minus the runner-up's (the seed paper's base_margin)",
}
#: Stage names that mean the text-only answer (the seed paper's `--cascade 0,16,...` says `0`).
TEXT_STAGE_NAMES: Final[frozenset[str]] = frozenset({"0", "text", "textonly", "text-only"})


class CostModelError(ValueError):
    """A cost model this run cannot support (named with what is missing)."""


@dataclass(frozen=True)
class CascadeInputs:
    """The arrays a stopping rule needs. `costs[currency]` follows `sharing`; `bounds[currency]`
    is the same currency with nothing shared (`none`), beside a `prefix` cost as its upper end."""

    model: str
    series: str
    labels: tuple[str, ...]
    item_ids: npt.NDArray[np.object_]
    video_ids: npt.NDArray[np.object_]
    correct: FloatArray
    #: The stopping score per cell (`score_name`), nan where the cell has none.
    confidence: FloatArray
    answers: npt.NDArray[np.object_]
    costs: dict[str, StageCosts]
    sharing: Sharing = "none"
    bounds: dict[str, StageCosts] = field(default_factory=dict)
    score_name: ScoreName = "prob"
    #: Why a currency has no costs (cells without a count), for the report.
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.correct.shape[0])

    def cost(self, currency: str) -> StageCosts:
        found = self.costs.get(currency)
        if found is None:
            reason = self.missing.get(currency, "not recorded")
            raise CostModelError(
                f"model {self.model!r}, series {self.series!r}: cost cannot be counted in "
                f"{currency} ({reason}; use --cost frames)"
            )
        return found


def resolve_sharing(requested: SharingChoice, indices_recorded: bool) -> Sharing:
    """`auto`: the recorded frame union where every cell has its indices (what the record
    supports: nested frames share exactly as `prefix` charges), else `none`, since nothing
    recorded shows that the stages share frames (`AUTO_NONE_NOTE` says so)."""
    if requested == "auto":
        return "union" if indices_recorded else "none"
    if requested == "union" and not indices_recorded:
        raise CostModelError(
            "--sharing union counts the distinct frame indices of the stages that ran, and some "
            "cells have no recorded indices (an imported run); use --sharing prefix (shared "
            "as nested frames are) or none (nothing shared)"
        )
    return requested


def _value_costs(
    values: FloatArray,
    sharing: Sharing,
    bounds: dict[str, StageCosts],
    currency: str,
    note: str | None = None,
) -> StageCosts:
    """A per-cell cost under `sharing` (a `union` of frames is for frame indices only, so every
    other currency is paid in full there); the `none` bound beside a `prefix` cost."""
    own: Literal["prefix", "none"] = "prefix" if sharing == "prefix" else "none"
    if own == "prefix":
        bounds[currency] = stage_value_costs(values, "none")
    return stage_value_costs(values, own, note)


def inputs_from_matrix(
    matrix: ResponseMatrix,
    *,
    sharing: SharingChoice = "auto",
    score: ScoreName = "prob",
) -> CascadeInputs:
    """Policy inputs of one binary response matrix (repeat 0, matched grid).

    A text-only column (frames 0) costs nothing in frames and visual tokens; its latency is
    what the text-only call took.
    """
    if matrix.kind != "binary":
        raise ValueError(f"{matrix.model}/{matrix.series}: policies need binary correctness")
    n = matrix.n_items
    text_column = np.asarray(matrix.frames) == 0
    indices = matrix.frame_indices
    if text_column.any() and indices is not None and indices.size:
        indices = indices.copy()  # a text-only cell used no frames, whether or not it says so
        for k in np.flatnonzero(text_column):
            for i in range(n):
                if indices[i, k] is None:
                    indices[i, k] = np.zeros(0, dtype=np.int64)
    recorded = has_all_indices(indices, n) and n > 0
    resolved = resolve_sharing(sharing, recorded)
    note = AUTO_NONE_NOTE if sharing == "auto" and resolved == "none" else None
    bounds: dict[str, StageCosts] = {}
    costs: dict[str, StageCosts] = {}
    missing: dict[str, str] = {}
    if resolved == "union":
        costs["frames"] = frame_union_costs(indices)
    else:
        costs["frames"] = _value_costs(
            effective_frames_matrix(matrix), resolved, bounds, "frames", note
        )
    tokens = np.asarray(matrix.visual_tokens, dtype=np.float64).copy()
    tokens[:, text_column] = np.where(np.isnan(tokens[:, text_column]), 0.0, tokens[:, text_column])
    latency = np.asarray(matrix.latency, dtype=np.float64)
    for currency, values in (("tokens", tokens), ("latency", latency)):
        if n and np.all(np.isfinite(values)):
            costs[currency] = _value_costs(values, resolved, bounds, currency, note)
        else:
            missing[currency] = f"{int((~np.isfinite(values)).sum())} cell(s) lack a count"
    chosen = matrix.confidence if score == "prob" else matrix.margin
    return CascadeInputs(
        model=matrix.model,
        series=matrix.series,
        labels=tuple(matrix.labels),
        item_ids=np.asarray(matrix.item_ids, dtype=object),
        video_ids=np.asarray(matrix.video_ids, dtype=object),
        correct=np.asarray(matrix.y, dtype=np.float64),
        confidence=np.asarray(chosen, dtype=np.float64),
        answers=np.asarray(matrix.answers, dtype=object),
        costs=costs,
        sharing=resolved,
        bounds=bounds,
        score_name=score,
        missing=missing,
    )


def effective_frames_matrix(matrix: ResponseMatrix) -> FloatArray:
    """Every cell's frame count: the frames it used (`effective_frames`, else its recorded
    indices' count), else its configuration's count. An adaptive selection's frame count is a
    cap, so a cascade is charged what each cell used, not the cap."""
    n = matrix.n_items
    counts = frame_counts_matrix(matrix.frames, n)
    if not n:
        return counts
    used = np.asarray(matrix.effective_frames, dtype=np.float64)
    indices = matrix.frame_indices
    if indices is not None and indices.shape == counts.shape:
        listed = np.array(
            [np.nan if cell is None else float(len(cell)) for cell in indices.ravel()]
        ).reshape(counts.shape)
        used = np.where(np.isfinite(used), used, listed)
    used = np.where(np.asarray(matrix.frames)[None, :] == 0, 0.0, used)
    return np.where(np.isfinite(used), used, counts)


class StageError(ValueError):
    """A requested cascade stage this axis does not have (or has more than once)."""


def resolve_stages(
    requested: tuple[str, ...],
    labels: tuple[str, ...],
    frames: npt.NDArray[np.int64],
) -> tuple[int, ...]:
    """Positions of the requested stages, in the order given.

    A stage is a configuration label (`16f_151k`), a frame count that names one configuration
    (`16`), or the text-only answer (`0`, `text`, `textonly`, `text-only`, or its label).
    """
    positions: list[int] = []
    for name in requested:
        token = name.strip()
        if token in labels:
            pos = [labels.index(token)]
        elif token.lower() in TEXT_STAGE_NAMES:
            pos = [i for i, f in enumerate(frames) if int(f) == 0]
        elif token.isdigit():
            pos = [i for i, f in enumerate(frames) if int(f) == int(token)]
        else:
            pos = []
        if not pos:
            raise StageError(f"no configuration {token!r} (this axis has {', '.join(labels)})")
        if len(pos) > 1:
            raise StageError(
                f"stage {token!r} names {len(pos)} configurations "
                f"({', '.join(labels[p] for p in pos)}); name one by its label"
            )
        if pos[0] in positions:
            raise StageError(f"stage {token!r} is listed twice")
        positions.append(pos[0])
    if len(positions) < 2:
        raise StageError("a cascade needs at least two stages")
    return tuple(positions)

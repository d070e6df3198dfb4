"""Planning a sweep: the cells (models x items x configurations x repeats) and what they cost.
Planning is pure (backend specs, no model call, no decoded frame), so `--dry-run` and resumption
agree on exactly which cells exist."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..items import Item
from ..protocol import FRAMES_PER_TEMPORAL_PATCH, IMAGE_FACTOR, Configuration
from ..store import cell_identity
from ._records import PlanCostRecord


@dataclass(frozen=True)
class ExtraConfig:
    """A configuration added to the grid (the sampling intervention's): `series` makes it its own
    axis (`intervention:nested`); `item_ids` restricts it to some items."""

    config: Configuration
    series: str | None = None
    item_ids: frozenset[str] | None = None


@dataclass(frozen=True)
class PlannedConfig:
    """A configuration as the sweep runs it: the config plus the series it is recorded under."""

    config: Configuration
    series: str
    item_ids: frozenset[str] | None = None

    @property
    def config_id(self) -> str:
        return self.config.config_id

    def applies_to(self, item: Item) -> bool:
        return self.item_ids is None or item.item_id in self.item_ids


@dataclass(frozen=True)
class Cell:
    """One planned model call: its identity and everything needed to run and record it."""

    cell_id: str
    model: str
    spec_id: str
    item: Item
    planned: PlannedConfig
    repeat: int
    seed: int
    #: a rerun (`sweep --rerun-check`): the repeat of the same cell it executes again, whose
    #: seed and frames it takes (its own `repeat` is numbered from `RERUN_REPEAT_BASE`)
    rerun_of: int | None = None

    @property
    def config(self) -> Configuration:
        return self.planned.config

    @property
    def needs_video(self) -> bool:
        return not self.config.is_text_only

    @property
    def draw(self) -> int:
        """The repeat whose frames the cell samples: its own, or a rerun's original (the same
        seeded draw)."""
        return self.repeat if self.rerun_of is None else self.rerun_of


@dataclass(frozen=True)
class ModelPlanInfo:
    """What planning needs from a loaded backend."""

    name: str
    spec_id: str


def planned_configs(
    grid: Sequence[Configuration], extra: Sequence[Configuration | ExtraConfig] = ()
) -> list[PlannedConfig]:
    """The grid (each configuration on its own series), then the extra configurations; one given
    twice is planned once (the first wins), so a re-added grid budget duplicates no cells."""
    out: list[PlannedConfig] = []
    seen: set[str] = set()
    for cfg in grid:
        if cfg.config_id not in seen:
            seen.add(cfg.config_id)
            out.append(PlannedConfig(cfg, cfg.series))
    for entry in extra:
        extra_cfg = entry if isinstance(entry, ExtraConfig) else ExtraConfig(entry)
        if extra_cfg.config.config_id in seen:
            continue
        seen.add(extra_cfg.config.config_id)
        out.append(
            PlannedConfig(
                extra_cfg.config, extra_cfg.series or extra_cfg.config.series, extra_cfg.item_ids
            )
        )
    return out


def select_items(
    items: Sequence[Item],
    *,
    item_filter: Callable[[Item], bool] | Collection[str] | None = None,
    limit: int | None = None,
) -> list[Item]:
    """Items kept by `item_filter` (a predicate or item ids), then the first `limit` in benchmark
    order (so `--limit` is reproducible)."""
    if item_filter is None:
        chosen = list(items)
    elif callable(item_filter):
        chosen = [i for i in items if item_filter(i)]
    else:
        wanted = set(item_filter)
        chosen = [i for i in items if i.item_id in wanted]
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        chosen = chosen[:limit]
    return chosen


def plan_cells(
    model: ModelPlanInfo,
    items: Sequence[Item],
    configs: Sequence[PlannedConfig],
    *,
    repeat_seeds: Sequence[int],
    prompt_template_version: str,
    decoding_for_seed: Callable[[int], Mapping[str, Any]],
    extractor_version: str,
) -> list[Cell]:
    """Every cell of one model, ordered by video so a video's cells run together."""
    cells: list[Cell] = []
    decodings = {seed: dict(decoding_for_seed(seed)) for seed in repeat_seeds}
    order = sorted(range(len(items)), key=lambda i: (items[i].video_id, i))
    for index in order:
        item = items[index]
        for planned in configs:
            if not planned.applies_to(item):
                continue
            for repeat, seed in enumerate(repeat_seeds):
                cell_id = cell_identity(
                    item=item,
                    spec_id=model.spec_id,
                    config_id=planned.config_id,
                    prompt_template_version=prompt_template_version,
                    decoding=decodings[seed],
                    extractor_version=extractor_version,
                    repeat=repeat,
                )
                cells.append(Cell(cell_id, model.name, model.spec_id, item, planned, repeat, seed))
    return cells


@dataclass
class PlanCost:
    """What a plan will cost: cells, frames decoded for the model, visual tokens (estimated)."""

    cells: int = 0
    cells_done: int = 0
    cells_todo: int = 0
    frames: int = 0
    visual_tokens: int = 0
    visual_tokens_unknown_cells: int = 0
    by_config: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The videos those cells could not read (what a user must fix: a wrong `videos` folder).
    unreadable_videos: set[str] = field(default_factory=set)

    def as_dict(self) -> PlanCostRecord:
        return {
            "cells": self.cells,
            "cells_done": self.cells_done,
            "cells_todo": self.cells_todo,
            "frames": self.frames,
            "visual_tokens_estimated": self.visual_tokens,
            "visual_tokens_unknown_cells": self.visual_tokens_unknown_cells,
            "unreadable_videos": sorted(self.unreadable_videos),
            "by_config": self.by_config,
        }


#: The pixel bounds a Qwen2-VL server's image processor resizes each image part into (its
#: defaults in transformers: `shortest_edge` 56 x 56, `longest_edge` 28 x 28 x 1280).
SERVED_IMAGE_MIN_PIXELS = 56 * 56
SERVED_IMAGE_MAX_PIXELS = 28 * 28 * 1280


def _merged_patches(height: int, width: int, min_pixels: int, max_pixels: int) -> int:
    """Merged 28 x 28 patches after `smart_resize` (sides rounded to multiples of 28 within the
    bounds)."""
    from ..video import smart_resize

    h, w = smart_resize(height, width, min_pixels=min_pixels, max_pixels=max_pixels)
    return (h // IMAGE_FACTOR) * (w // IMAGE_FACTOR)


def estimate_visual_tokens(frames: int, height: int, width: int) -> int:
    """Visual tokens a Qwen2-VL-style processor makes of `frames` frames of height x width as the
    `hf` backend sends them (`tests/sweep/test_dry_run_estimates.py` checks it against
    transformers' processor). Other families count otherwise (LLaVA pools, InternVL tiles): the
    estimate sizes a run; the table records what the processor produced."""
    if frames <= 0:
        return 0
    ceiling = math.ceil(height / IMAGE_FACTOR) * math.ceil(width / IMAGE_FACTOR)
    per_patch = _merged_patches(
        height, width, IMAGE_FACTOR * IMAGE_FACTOR, ceiling * IMAGE_FACTOR * IMAGE_FACTOR
    )
    return math.ceil(frames / FRAMES_PER_TEMPORAL_PATCH) * per_patch


#: What a served model adds around each image part of a chat message (Qwen's
#: `<|vision_start|>` and `<|vision_end|>`).
IMAGE_MARKER_TOKENS = 2


def estimate_image_tokens(frames: int, height: int, width: int) -> int:
    """Prompt tokens of `frames` frames sent as image parts to a Qwen2-VL-style server (each
    image its own temporal patch, so twice a video frame's tokens, between two markers):
    `usage.prompt_tokens`."""
    if frames <= 0:
        return 0
    per_patch = _merged_patches(height, width, SERVED_IMAGE_MIN_PIXELS, SERVED_IMAGE_MAX_PIXELS)
    return frames * (per_patch + IMAGE_MARKER_TOKENS)


def estimate_cost(
    cells: Iterable[Cell],
    *,
    is_done: Callable[[Cell], bool],
    frame_size: Callable[[Cell], tuple[int, int] | None],
    video_frames: Callable[[Cell], int | None] | None = None,
    as_images: Callable[[Cell], bool] | None = None,
) -> PlanCost:
    """Cost of the cells still to run (done cells are counted but cost nothing).
    `frame_size(cell)`: the served (height, width); `video_frames(cell)`: the video's length in
    frames; either None when unknown; `as_images(cell)`: frames sent as separate image parts."""
    cost = PlanCost()
    for cell in cells:
        cost.cells += 1
        label = cell.planned.config.label
        entry = cost.by_config.setdefault(
            label, {"cells": 0, "cells_todo": 0, "frames": 0, "visual_tokens_estimated": 0}
        )
        entry["cells"] += 1
        if is_done(cell):
            cost.cells_done += 1
            continue
        cost.cells_todo += 1
        entry["cells_todo"] += 1
        if not cell.needs_video:
            continue
        count = cell.config.frames
        if video_frames is not None:
            effective = video_frames(cell)
            count = min(count, effective) if effective is not None else count
        cost.frames += count
        entry["frames"] += count
        size = frame_size(cell)
        if size is None:
            cost.visual_tokens_unknown_cells += 1
            if cell.item.video_path:
                cost.unreadable_videos.add(str(cell.item.video_path))
            continue
        images = as_images is not None and as_images(cell)
        tokens = (estimate_image_tokens if images else estimate_visual_tokens)(count, *size)
        cost.visual_tokens += tokens
        entry["visual_tokens_estimated"] += tokens
    return cost

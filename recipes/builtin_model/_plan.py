"""What each step of a run trains on, fixed in advance from the seed.

Why in advance: the whole data order (videos, item chunks, budgets, sampling phases) is drawn
from the seed before the first step, and the learning-rate and teacher schedules depend on the
step number alone, so a resumed run replays exactly the steps the uninterrupted run would have
taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from itemscale.collect.items import ITEMS_FILE, Item, read_items_jsonl
from itemscale.collect.synth import SuiteError
from itemscale.core.responses import TaskKind

from ._config import TrainSettings


def suite_items(suite_dir: Path) -> list[Item]:
    path = suite_dir / ITEMS_FILE
    if not path.is_file():
        raise SuiteError(f"{path}: no items file (is {suite_dir} a suite folder?)")
    return read_items_jsonl(path)


def video_path(suite_dir: Path, item: Item) -> Path:
    if item.video_path is None:
        raise SuiteError(f"{suite_dir / ITEMS_FILE}: item {item.item_id} has no video_path")
    path = Path(item.video_path)
    return path if path.is_absolute() else suite_dir / path


def group_by_video(items: list[Item]) -> dict[str, list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.video_id, []).append(item)
    return groups


def as_open_item(item: Item) -> Item:
    """A multiple-choice training item asked open-ended and answered with the correct option's
    text (the `option_text` target, for option-likelihood scoring)."""
    if item.task_kind != TaskKind.MCQA:
        return item
    if item.answer is None:
        raise ValueError(f"item {item.item_id}: a training mcqa item needs its answer")
    correct = item.options[item.option_letters.index(item.answer)]
    return item.model_copy(
        update={
            "task_kind": TaskKind.OPEN_QA,
            "options": (),
            "answer": None,
            "references": (correct,),
        }
    )


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """One step's data, fixed in advance from the seed: which items, which budget, which phase."""

    video_id: str
    item_ids: tuple[str, ...]
    frames: int
    short_side: int
    text_only: bool
    phase_seed: int


def plan_steps(
    groups: dict[str, list[Item]], settings: TrainSettings, rng: np.random.Generator
) -> list[PlannedStep]:
    """The whole run's data order: epochs over videos in a shuffled order, each video's items in
    chunks, each chunk with its own budget. Cheap budgets are drawn more often than
    32 frames at the largest size, which `max_step_pixels` rules out."""
    video_ids = sorted(groups)
    budgets = [
        (frames, side)
        for frames in settings.frame_counts
        for side in settings.short_sides
        if frames * side * side <= settings.max_step_pixels
    ]
    if not budgets:
        raise ValueError("no (frames, short side) pair fits max_step_pixels")
    plan: list[PlannedStep] = []
    while len(plan) < settings.steps:
        for vid in rng.permutation(len(video_ids)):
            video_id = video_ids[int(vid)]
            items = groups[video_id]
            order = rng.permutation(len(items))
            for start in range(0, len(items), settings.items_per_step):
                chunk = tuple(
                    items[int(i)].item_id for i in order[start : start + settings.items_per_step]
                )
                frames, side = budgets[int(rng.integers(len(budgets)))]
                plan.append(
                    PlannedStep(
                        video_id=video_id,
                        item_ids=chunk,
                        frames=frames,
                        short_side=side,
                        text_only=bool(rng.random() < settings.text_only_fraction),
                        phase_seed=int(rng.integers(2**31)),
                    )
                )
                if len(plan) == settings.steps:
                    return plan
    return plan


def learning_rate_factor(step: int, settings: TrainSettings) -> float:
    """Linear warm-up, then cosine decay to 5% over the planned steps (the alignment stage's,
    if any, then the suite's)."""
    total = settings.steps + settings.stage1_steps
    if step < settings.warmup_steps:
        return (step + 1) / settings.warmup_steps
    progress = (step - settings.warmup_steps) / max(1, total - settings.warmup_steps)
    return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def teacher_mix(step: int, total: int, settings: TrainSettings) -> float:
    """The teacher-token share at suite step `step` of `total` (see `TrainSettings`)."""
    if settings.teacher_until <= 0:
        return 0.0
    start, end = settings.teacher_until * total, settings.teacher_anneal_until * total
    if step < start:
        return 1.0
    if step >= end:
        return 0.0
    return 1.0 - (step - start) / (end - start)

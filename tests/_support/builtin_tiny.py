"""Shared set-up of the built-in model's recipe tests: a tiny architecture and one training step
over the first video of a small suite, built the way `train_builtin` builds them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from itemscale.collect.items import Item
from recipes.builtin_model import BuiltinArchitecture
from recipes.builtin_model._build import (
    build_model,
    build_processor,
    item_texts,
    train_tokenizer,
)
from recipes.builtin_model._data import DecodedVideo, decode_video
from recipes.builtin_model._plan import PlannedStep

TINY = BuiltinArchitecture(
    vocab_size=400,
    text_hidden=64,
    text_layers=2,
    text_heads=2,
    text_kv_heads=1,
    text_intermediate=128,
    vision_hidden=32,
    vision_depth=2,
    vision_heads=2,
    vision_intermediate=64,
)


def first_video_step(
    items: list[Item], suite: Path, arch: BuiltinArchitecture = TINY
) -> tuple[Any, Any, list[Item], DecodedVideo, PlannedStep]:
    """(model, processor, the first video's items, its decoded video, a 4-frame step at 56
    pixels over them), from seed 0."""
    torch.manual_seed(0)
    tokenizer = train_tokenizer(item_texts(items), arch.vocab_size)
    processor = build_processor(tokenizer)
    model = build_model(arch, tokenizer)
    group = [i for i in items if i.video_id == items[0].video_id]
    video = decode_video(suite / str(group[0].video_path))
    planned = PlannedStep(
        video_id=group[0].video_id,
        item_ids=tuple(i.item_id for i in group),
        frames=4,
        short_side=56,
        text_only=False,
        phase_seed=3,
    )
    return model, processor, group, video, planned

"""The loss of one training step: a suite step (answers, captions, auxiliary signals) or an
alignment-stage step.

Why apart from the loop: the tests and the research probes compute single steps' losses on
tiny models without running a training loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from itemscale.collect.items import Item
from itemscale.collect.synth import COLOURS
from itemscale.core.responses import TaskKind

from ._aux import (
    NO_COLOUR_WORD,
    aux_loss,
    caption_rows,
    palette_token_targets,
    region_colour_targets,
    word_alignment_loss,
    word_targets,
)
from ._config import TrainSettings
from ._data import (
    DecodedVideo,
    answer_target,
    encode_batch,
    expand_video_tokens,
    frame_size,
    per_example_loss,
    process_video,
    render_prompt,
    resize_frames,
    segment_indices,
    shared_prefix_logits,
)
from ._plan import PlannedStep


def step_loss(
    model: Any,
    processor: Any,
    items: list[Item],
    video: DecodedVideo | None,
    planned: PlannedStep,
    aux_head: Any | None = None,
    aux_weight: float = 0.0,
    caption_weight: float = 0.0,
    mcqa_weight: float = 1.0,
    word_align_weight: float = 0.0,
    teacher_mix: float = 0.0,
    captions_only: bool = False,
) -> tuple[Any, int, int, int]:
    """Mean per-example loss of one step (plus the weighted auxiliary colour loss when a head
    is given, and the word-alignment loss when weighted), and the frame count and size it used.

    `teacher_mix` in [0, 1]: how much of what the language model sees in place of each visual
    token is its word-alignment target rather than the tower's output (see `TrainSettings`)."""
    import torch

    targets = [answer_target(item) for item in items]
    if video is None or planned.text_only:
        prompts = [render_prompt(processor, item, with_video=False) for item in items]
        batch = encode_batch(processor, prompts, targets)
        out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
        return per_example_loss(out.logits, batch.labels).mean(), 0, 0, 0
    phase_rng = np.random.default_rng(planned.phase_seed)
    jitter = phase_rng if phase_rng.random() < 0.5 else None
    indices = segment_indices(video.video_frames, planned.frames, jitter)
    height, width = frame_size(
        int(video.array.shape[1]), int(video.array.shape[2]), planned.short_side
    )
    frames = resize_frames(video.array[indices], (height, width))
    inputs = process_video(processor, frames, fps=video.fps, indices=indices)
    video_id = items[0].video_id
    if captions_only and caption_weight > 0:
        items, targets = [], []
    real_rows = len(items)
    if caption_weight > 0:
        captions = [
            Item(
                item_id=f"{video_id}-caption-{n}",
                video_id=video_id,
                task_kind=TaskKind.OPEN_QA,
                question=question,
                references=(answer,),
            )
            for n, (question, answer) in enumerate(caption_rows(frames, COLOURS))
        ]
        items = [*items, *captions]
        targets = [*targets, *(answer_target(c) for c in captions)]
    prompts = [
        expand_video_tokens(render_prompt(processor, item, with_video=True), inputs.num_tokens)
        for item in items
    ]
    features = model.model.get_video_features(
        inputs.pixel_values, inputs.grid_thw, return_dict=True
    )
    (tokens,) = features.pooler_output
    alignment = None
    if word_align_weight > 0:
        presence = palette_token_targets(frames, COLOURS)
        colour_words, none_word, scale = colour_word_embeddings(model, processor)
        alignment = word_alignment_loss(tokens, presence, colour_words, none_word, scale)
        if teacher_mix > 0:
            teacher = word_targets(presence, colour_words.detach(), none_word.detach())
            # Straight through: the language model sees the mix, the tower gets its gradient.
            shown = teacher_mix * teacher + (1 - teacher_mix) * tokens
            shown = shown + teacher_mix * (tokens - tokens.detach())
            features.pooler_output = (shown,)
    logits, labels = shared_prefix_logits(
        model, processor, inputs, prompts, targets, video_features=features
    )
    per_example = per_example_loss(logits, labels)
    if real_rows == 0:  # a captions-only step
        loss = caption_weight * per_example.mean()
        if alignment is not None:
            loss = loss + word_align_weight * alignment
        return loss, planned.frames, height, width
    if mcqa_weight == 1.0:
        loss = per_example[:real_rows].mean()
    else:
        weights = torch.tensor(
            [mcqa_weight if i.task_kind == TaskKind.MCQA else 1.0 for i in items[:real_rows]]
        )
        loss = (per_example[:real_rows] * weights).sum() / weights.sum()
    if caption_weight > 0:
        loss = loss + caption_weight * per_example[real_rows:].mean()
    if aux_head is not None and aux_weight > 0:
        loss = loss + aux_weight * aux_loss(aux_head, tokens, region_colour_targets(frames))
    if alignment is not None:
        loss = loss + word_align_weight * alignment
    return loss, planned.frames, height, width


def colour_word_embeddings(model: Any, processor: Any) -> tuple[Any, Any, Any]:
    """The language model's input embeddings of the palette's colour words and of "none" (the
    first token of each, as an answer spells it), and the squared mean embedding norm that
    scales distances to them."""
    tokenizer = processor.tokenizer
    table = model.model.language_model.embed_tokens.weight

    def first_token(word: str) -> int:
        return int(tokenizer(word, add_special_tokens=False)["input_ids"][0])

    colour_ids = [first_token(name) for name in COLOURS]
    scale = table.detach().norm(dim=-1).mean() ** 2
    return table[colour_ids], table[first_token(NO_COLOUR_WORD)], scale


def stage1_loss(
    model: Any, processor: Any, settings: TrainSettings, step: int, rng: np.random.Generator
) -> tuple[Any, int, int]:
    """Mean answer loss over one alignment step's generated videos (`_stage1`)."""
    import torch

    from ._stage1 import alignment_video

    start_fill, end_fill = settings.stage1_fill
    progress = step / max(1, settings.stage1_steps - 1)
    fill = start_fill + (end_fill - start_fill) * progress
    height, width = frame_size(120, 160, settings.stage1_short_side)
    indices = np.linspace(0, 119, settings.stage1_frames).round().astype(np.int64)
    losses = []
    for _ in range(settings.stage1_videos_per_step):
        video = alignment_video(
            rng, frames=settings.stage1_frames, height=height, width=width, fill=fill
        )
        inputs = process_video(processor, video.array, fps=10.0, indices=indices)
        items = list(video.items)
        prompts = [
            expand_video_tokens(render_prompt(processor, item, with_video=True), inputs.num_tokens)
            for item in items
        ]
        targets = [answer_target(item) for item in items]
        features = model.model.get_video_features(
            inputs.pixel_values, inputs.grid_thw, return_dict=True
        )
        logits, labels = shared_prefix_logits(
            model, processor, inputs, prompts, targets, video_features=features
        )
        losses.append(per_example_loss(logits, labels).mean())
    return torch.stack(losses).mean(), height, width

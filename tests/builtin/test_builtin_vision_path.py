"""The built-in model's training path really lets the language model read its visual tokens.

A plumbing check, not a quality claim: on videos whose only content is one solid colour, a few
dozen steps through the same shared-prefix forward that the recipe uses must take the
colour token's loss far below chance (ln 4 for four colours). A broken path (visual features not
reaching the language model, wrong placeholders) stays at chance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

COLOURS = {
    "red": (230, 30, 30),
    "green": (30, 200, 30),
    "blue": (30, 30, 230),
    "yellow": (230, 230, 30),
}


@pytest.mark.slow
def test_visual_tokens_reach_the_language_model() -> None:
    from itemscale.collect.items import Item
    from recipes.builtin_model import BuiltinArchitecture
    from recipes.builtin_model._build import build_model, build_processor, train_tokenizer
    from recipes.builtin_model._data import (
        expand_video_tokens,
        per_example_loss,
        process_video,
        render_prompt,
        shared_prefix_logits,
    )

    torch.manual_seed(0)
    tokenizer = train_tokenizer(["What colour is the video? red green blue yellow"] * 20, 400)
    processor = build_processor(tokenizer)
    model = build_model(BuiltinArchitecture(), tokenizer)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    names = list(COLOURS)
    colour_losses = []
    for _ in range(45):
        losses = []
        for _ in range(4):
            colour = names[int(rng.integers(len(names)))]
            frames = np.zeros((2, 56, 56, 3), np.int64) + np.array(COLOURS[colour])
            frames = np.clip(frames + rng.integers(-20, 20, frames.shape), 0, 255).astype(np.uint8)
            video = process_video(processor, frames, fps=10.0, indices=np.array([0, 5]))
            item = Item(
                item_id="probe",
                video_id="probe",
                task_kind="open_qa",
                question="What colour is the video?",
                references=(colour,),
            )
            prompt = expand_video_tokens(
                render_prompt(processor, item, with_video=True), video.num_tokens
            )
            features = model.model.get_video_features(
                video.pixel_values, video.grid_thw, return_dict=True
            )
            logits, labels = shared_prefix_logits(
                model, processor, video, [prompt], [colour], video_features=features
            )
            losses.append(per_example_loss(logits, labels).mean())
        loss = torch.stack(losses).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        colour_losses.append(float(loss.detach()))
    # Mean over the colour token and <|im_end|>: chance on the colour alone is ln(4) / 2.
    assert np.mean(colour_losses[-5:]) < 0.25 * math.log(4)

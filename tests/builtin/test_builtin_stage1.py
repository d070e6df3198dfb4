"""Stage-1 alignment videos: their answers are what is drawn, and they are seeded."""

from __future__ import annotations

import numpy as np
import pytest

from itemscale.collect.synth import COLOURS, SHAPES
from recipes.builtin_model._stage1 import alignment_video


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_answers_describe_the_drawn_shape(seed: int) -> None:
    video = alignment_video(np.random.default_rng(seed), frames=2, height=56, width=84, fill=0.8)
    assert video.array.shape == (2, 56, 84, 3)
    by_id = {item.item_id: item for item in video.items}
    colour = by_id["s1-colour-open"].references[0]
    combo = by_id["s1-combo-open"].references[0]
    assert colour in COLOURS and combo.split()[0] == colour and combo.split()[1] in SHAPES
    # The most common pixel far from the dark background is the named colour (noise is +-6).
    pixels = video.array.reshape(-1, 3).astype(int)
    bright = pixels[pixels.max(axis=1) > 120]
    rgb = np.array(COLOURS[colour])
    assert np.mean(np.abs(bright - rgb).max(axis=1) <= 6) > 0.99
    for key, expected in [
        ("s1-colour-mcqa", colour),
        ("s1-combo-mcqa", combo),
        ("s1-colour-hint", colour),
        ("s1-combo-hint", combo),
    ]:
        item = by_id[key]
        assert item.answer is not None and len(item.options) == 4
        assert item.options["ABCD".index(item.answer)] == expected
        assert item.options.count(expected) == 1


def test_same_seed_same_video() -> None:
    a = alignment_video(np.random.default_rng(7), frames=4, height=56, width=84, fill=0.5)
    b = alignment_video(np.random.default_rng(7), frames=4, height=56, width=84, fill=0.5)
    assert np.array_equal(a.array, b.array) and a.items == b.items

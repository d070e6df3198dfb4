"""Stage-1 alignment videos for the built-in model: large shapes that fill most of the frame.

Why: on the suite itself the answer sits in a few of hundreds of visual tokens (small shapes on a
plain background), and the tiny model never learns, within its budget, to read them. The same
model learns solid-colour videos from chance to near-zero loss in a few dozen steps. So a short
first stage names colours and shapes on frames the shape dominates, in the suite's own question
wording and answer formats (option letters included), before the suite's training split.

The videos are made here in memory from a seeded generator, never taken from the suite, and the
questions are answered from what is drawn, so nothing about the audited items leaks in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from itemscale.collect.items import Item
from itemscale.collect.synth import COLOURS, SHAPES
from itemscale.core.responses import TaskKind

#: Dark backgrounds, like the suite's (every colour stands out against them).
_BACKGROUNDS = ((30, 30, 30), (55, 55, 60), (20, 30, 50))
_LETTERS = "ABCD"


@dataclass(frozen=True, slots=True)
class AlignmentVideo:
    array: npt.NDArray[np.uint8]  # [T, H, W, 3]
    items: tuple[Item, ...]


def _shape_mask(
    shape: str, height: int, width: int, box: tuple[int, int, int, int]
) -> npt.NDArray[np.bool_]:
    y0, x0, y1, x1 = box
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    cy, cx = (y0 + y1 - 1) / 2, (x0 + x1 - 1) / 2
    hy, hx = max(1.0, (y1 - y0) / 2), max(1.0, (x1 - x0) / 2)
    inside = (yy >= y0) & (yy < y1) & (xx >= x0) & (xx < x1)
    mask: npt.NDArray[np.bool_]
    if shape == "square":
        mask = inside
    elif shape == "circle":
        mask = ((yy - cy) / hy) ** 2 + ((xx - cx) / hx) ** 2 <= 1.0
    elif shape == "diamond":
        mask = np.abs(yy - cy) / hy + np.abs(xx - cx) / hx <= 1.0
    elif shape == "triangle":  # apex at the top, base at the bottom
        frac = (yy - y0) / max(1.0, y1 - y0)
        mask = inside & (np.abs(xx - cx) <= frac * hx)
    else:
        raise ValueError(f"unknown shape {shape!r}")
    return mask


def _mcqa(
    rng: np.random.Generator, item_id: str, question: str, correct: str, wrong: list[str]
) -> Item:
    picks = [wrong[int(i)] for i in rng.permutation(len(wrong))[:3]]
    position = int(rng.integers(4))
    options = [*picks]
    options.insert(position, correct)
    return Item(
        item_id=item_id,
        video_id="stage1",
        task_kind=TaskKind.MCQA,
        question=question,
        options=tuple(options),
        answer=_LETTERS[position],
    )


def _open(item_id: str, question: str, answer: str) -> Item:
    return Item(
        item_id=item_id,
        video_id="stage1",
        task_kind=TaskKind.OPEN_QA,
        question=question,
        references=(answer,),
    )


def alignment_video(
    rng: np.random.Generator, *, frames: int, height: int, width: int, fill: float
) -> AlignmentVideo:
    """One shape of one colour covering about `fill` of the frame's short side, drifting a
    little between frames, with questions in the suite's wording about its colour and shape."""
    names = list(COLOURS)
    colour = names[int(rng.integers(len(names)))]
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    background = np.array(_BACKGROUNDS[int(rng.integers(len(_BACKGROUNDS)))], dtype=np.int64)
    size = max(8, round(fill * min(height, width)))
    y = int(rng.integers(0, max(1, height - size + 1)))
    x = int(rng.integers(0, max(1, width - size + 1)))
    out = np.empty((frames, height, width, 3), dtype=np.uint8)
    for t in range(frames):
        dy, dx = (int(v) for v in rng.integers(-2, 3, size=2))
        yt = int(np.clip(y + dy * t, 0, height - size))
        xt = int(np.clip(x + dx * t, 0, width - size))
        mask = _shape_mask(shape, height, width, (yt, xt, yt + size, xt + size))
        frame = np.broadcast_to(background, (height, width, 3)).copy()
        frame[mask] = COLOURS[colour]
        noise = rng.integers(-6, 7, size=frame.shape)
        out[t] = np.clip(frame + noise, 0, 255).astype(np.uint8)
    combo = f"{colour} {shape}"
    other_colours = [c for c in names if c != colour]
    other_combos = [f"{c} {s}" for c in names for s in SHAPES if (c, s) != (colour, shape)]
    items = (
        _mcqa(
            rng,
            "s1-colour-mcqa",
            f"What colour is the {shape} that stays for a long time?",
            colour,
            other_colours,
        ),
        _mcqa(rng, "s1-combo-mcqa", "Which shape flashes briefly at the top?", combo, other_combos),
        # The same choices with the answer stated in the question: teaches the language model
        # to pick the letter of the option that matches what it knows, from text alone.
        _mcqa(
            rng,
            "s1-colour-hint",
            f"The {combo} stays. What colour is the {shape} that stays for a long time?",
            colour,
            other_colours,
        ),
        _mcqa(
            rng,
            "s1-combo-hint",
            f"The {combo} flashes. Which shape flashes briefly at the top?",
            combo,
            other_combos,
        ),
        _open("s1-colour-open", f"What colour is the {shape} that stays for a long time?", colour),
        _open("s1-combo-open", "Which shape flashes briefly at the top?", combo),
    )
    return AlignmentVideo(array=out, items=items)

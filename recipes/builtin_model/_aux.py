"""A dense auxiliary signal for the vision tower while the tiny model trains from scratch.

Without it the model falls into the language prior within a few hundred steps: the answer
tokens give the vision tower almost no gradient (one colour word per question, spread over a
hundred visual tokens), the language model learns to ignore the visual tokens, and the tower
collapses to a constant. Real Video LLMs start from a pretrained vision encoder; here the tower
is taught, alongside the answers, to say which colours are present in each visual token's own
28x28-pixel, two-frame region. The targets come from the pixels alone (hue bins of saturated
pixels, plus bright unsaturated "paper"), not from any label, question or answer, and the small
linear head that reads them is discarded after training: the shipped model is a plain
Qwen2.5-VL checkpoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from itemscale.collect.protocol import FRAMES_PER_TEMPORAL_PATCH, IMAGE_FACTOR

HUE_BINS = 12
#: Hue bins of saturated pixels, then one class for bright unsaturated pixels (paper, text).
AUX_CLASSES = HUE_BINS + 1
#: Pixels of a class a region needs before the class counts as present in it.
MIN_PIXELS_PRESENT = 6


def region_colour_targets(
    frames: npt.NDArray[np.uint8],
    *,
    region: int = IMAGE_FACTOR,
    temporal: int = FRAMES_PER_TEMPORAL_PATCH,
) -> Any:
    """Multi-hot [tokens, AUX_CLASSES] targets in the vision tower's merged-token order
    (temporal group, then region row, then region column)."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(frames)).float() / 255.0  # T, H, W, 3
    count, height, width, _ = x.shape
    if count % temporal:  # the processor repeats the last frame to fill a temporal patch
        x = torch.cat([x, x[-1:].expand(temporal - count % temporal, -1, -1, -1)])
        count = x.shape[0]
    if height % region or width % region:
        raise ValueError(f"frame size {height}x{width} is not a multiple of {region}")
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    high = x.max(dim=-1).values
    low = x.min(dim=-1).values
    delta = (high - low).clamp(min=1e-6)
    hue = torch.where(
        high == r,
        ((g - b) / delta) % 6,
        torch.where(high == g, (b - r) / delta + 2, (r - g) / delta + 4),
    )
    hue_bin = ((hue / 6.0) * HUE_BINS).long().clamp(0, HUE_BINS - 1)
    saturation = (high - low) / high.clamp(min=1e-6)
    saturated = (saturation > 0.5) & (high > 0.35)
    paper = (saturation < 0.2) & (high > 0.8)
    classes = torch.full(hue_bin.shape, -1, dtype=torch.long)
    classes[saturated] = hue_bin[saturated]
    classes[paper] = HUE_BINS
    onehot = torch.zeros((*classes.shape, AUX_CLASSES))
    valid = classes >= 0
    onehot[valid] = torch.nn.functional.one_hot(classes[valid], AUX_CLASSES).float()
    grouped = onehot.view(
        count // temporal,
        temporal,
        height // region,
        region,
        width // region,
        region,
        AUX_CLASSES,
    ).sum(dim=(1, 3, 5))
    return (grouped >= MIN_PIXELS_PRESENT).float().reshape(-1, AUX_CLASSES)


def make_aux_head(hidden: int, seed: int) -> Any:
    """The discarded linear read-out, initialised from its own seed (model init unchanged)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    head = torch.nn.Linear(hidden, AUX_CLASSES)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=generator) * 0.02)
        head.bias.zero_()
    return head


def aux_loss(head: Any, features: Any, targets: Any) -> Any:
    import torch.nn.functional as F

    if features.shape[0] != targets.shape[0]:
        raise ValueError(f"{features.shape[0]} visual tokens but {targets.shape[0]} targets")
    return F.binary_cross_entropy_with_logits(head(features), targets)


#: The auxiliary caption question; its answer is read off the frames' pixels.
CAPTION_QUESTION = "Which colours appear in the video?"
#: RGB distance within which a saturated pixel counts as a palette colour.
PALETTE_DISTANCE = 70.0


def colours_present(
    frames: npt.NDArray[np.uint8], palette: dict[str, tuple[int, int, int]], min_pixels: int = 6
) -> list[str]:
    """Palette colours with at least `min_pixels` (saturated) pixels in the frames shown, in
    palette order. This is the caption the model learns to give about what it was shown: it
    depends on the video only through its pixels, so the language model cannot answer it from
    the text and is pushed to read the visual tokens (the first thing a from-scratch Video LLM
    must learn, and the one it otherwise never starts learning in a few minutes)."""
    pixels = frames.reshape(-1, 3).astype(np.float32)
    high, low = pixels.max(axis=1), pixels.min(axis=1)
    saturated = pixels[(high - low) > 0.4 * np.maximum(high, 1.0)]
    if saturated.size == 0:
        return []
    names = list(palette)
    colours = np.array([palette[n] for n in names], dtype=np.float32)
    distance = np.linalg.norm(saturated[:, None, :] - colours[None, :, :], axis=2)
    nearest = distance.argmin(axis=1)
    close = distance[np.arange(len(nearest)), nearest] < PALETTE_DISTANCE
    counts = np.bincount(nearest[close], minlength=len(names))
    return [name for name, count in zip(names, counts, strict=True) if count >= min_pixels]


def caption_answer(frames: npt.NDArray[np.uint8], palette: dict[str, tuple[int, int, int]]) -> str:
    present = colours_present(frames, palette)
    return ", ".join(present) if present else "none"


#: Grid the region captions ask about (rows x columns of the frame), with the words for each.
ROW_WORDS: tuple[str, ...] = ("top", "bottom")
COLUMN_WORDS: tuple[str, ...] = ("left", "middle", "right")


def caption_rows(
    frames: npt.NDArray[np.uint8], palette: dict[str, tuple[int, int, int]]
) -> list[tuple[str, str]]:
    """(question, answer) pairs read off the pixels shown: the colours in the whole video, then
    in each cell of a 2x3 grid ("Which colours appear at the top left?"). Spatially grounded
    questions teach the language model to look at particular visual tokens, which is what the
    suite's questions need, with many examples per vision pass."""
    rows = [(CAPTION_QUESTION, caption_answer(frames, palette))]
    height, width = frames.shape[1:3]
    for r, row_word in enumerate(ROW_WORDS):
        for c, column_word in enumerate(COLUMN_WORDS):
            cell = frames[
                :,
                r * height // len(ROW_WORDS) : (r + 1) * height // len(ROW_WORDS),
                c * width // len(COLUMN_WORDS) : (c + 1) * width // len(COLUMN_WORDS),
            ]
            rows.append(
                (
                    f"Which colours appear at the {row_word} {column_word}?",
                    caption_answer(cell, palette),
                )
            )
    return rows


#: The word a visual token with no palette colour is aligned to.
NO_COLOUR_WORD = "none"


def palette_token_targets(
    frames: npt.NDArray[np.uint8],
    palette: dict[str, tuple[int, int, int]],
    *,
    region: int = IMAGE_FACTOR,
    temporal: int = FRAMES_PER_TEMPORAL_PATCH,
    min_pixels: int = MIN_PIXELS_PRESENT,
) -> Any:
    """Multi-hot [tokens, colours] presence of each palette colour in each merged visual token's
    region (two frames x 28 x 28 pixels), in the tower's token order, from the pixels alone."""
    import torch

    x = np.asarray(frames, dtype=np.float32)
    if x.shape[0] % temporal:  # the processor repeats the last frame to fill a temporal patch
        x = np.concatenate([x, np.repeat(x[-1:], temporal - x.shape[0] % temporal, axis=0)])
    count, height, width, _ = x.shape
    if height % region or width % region:
        raise ValueError(f"frame size {height}x{width} is not a multiple of {region}")
    colours = np.array([palette[name] for name in palette], dtype=np.float32)
    distance = np.linalg.norm(x[..., None, :] - colours, axis=-1)  # T, H, W, colours
    nearest = distance.argmin(axis=-1)
    close = distance.min(axis=-1) < PALETTE_DISTANCE
    onehot = np.zeros((*nearest.shape, len(colours)), dtype=np.float32)
    t, h, w = np.nonzero(close)
    onehot[t, h, w, nearest[close]] = 1.0
    grouped = onehot.reshape(
        count // temporal, temporal, height // region, region, width // region, region, -1
    ).sum(axis=(1, 3, 5))
    return torch.from_numpy((grouped >= min_pixels).reshape(-1, len(colours)).astype(np.float32))


def word_targets(presence: Any, colour_words: Any, none_word: Any) -> Any:
    """Per token: the mean embedding of the colour words present, or the "none" embedding."""
    counts = presence.sum(dim=1, keepdim=True)
    empty = (counts == 0).float()
    return (presence @ colour_words + empty * none_word) / counts.clamp(min=1)


def word_alignment_loss(
    tokens: Any, presence: Any, colour_words: Any, none_word: Any, scale: Any
) -> Any:
    """Pull each visual token towards `word_targets` (squared distance, averaged separately
    over coloured and empty tokens so the rare coloured ones count), plus a softmax over the
    distances to the candidate words (colours, then "none") so that the nearest word is the
    right one, not merely a nearby average. `scale`: squared typical embedding norm."""
    import torch

    targets = word_targets(presence, colour_words.detach(), none_word.detach())
    coloured = presence.sum(dim=1) > 0
    candidates = torch.cat([colour_words, none_word[None, :]])
    wanted = torch.cat([presence, (~coloured).float()[:, None]], dim=1)
    wanted = wanted / wanted.sum(dim=1, keepdim=True)
    log_p = torch.log_softmax(-(torch.cdist(tokens, candidates) ** 2) / scale, dim=1)
    per_token = ((tokens - targets) ** 2).sum(dim=-1) / scale - (wanted * log_p).sum(dim=1)
    if bool(coloured.any()) and bool((~coloured).any()):
        return per_token[coloured].mean() + per_token[~coloured].mean()
    return per_token.mean()

"""Scene plans and their rendering.

A video is planned first (a `VideoScene`: who appears where, in which frames, in frame numbers)
and only then drawn, so the ground truth the questions are written from is the very record the
renderer draws from, stored in `suite.json`. The layout is a fixed 3x2 grid of cells, one
storyline per cell, because the built-in model is tiny and trained for minutes on CPU: what it
then gets right depends on whether the sampled frames caught the event and resolved the detail.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Final, Literal

import numpy as np
from PIL import Image, ImageDraw
from pydantic import BaseModel, ConfigDict, Field

from ..items import EvidenceSpan
from ._vocab import (
    BACKGROUNDS,
    COLOURS,
    DIGIT_CONFUSIONS,
    GLYPH_HEIGHT,
    GLYPH_WIDTH,
    GLYPHS,
    SHAPES,
    SIGN_INK,
    SIGN_PAPER,
    SIGN_WORDS,
)

EventRole = Literal[
    "brief", "sign", "count", "turn", "stay", "lookalike", "flash", "blink", "block"
]

#: Which grid cell (column, row) each storyline occupies; look-alikes share the stayer's cell.
CELLS: Final[dict[str, tuple[int, int]]] = {
    "sign": (0, 0),
    "brief": (1, 0),
    "turn": (2, 0),
    "count": (0, 1),
    "stay": (1, 1),
    "lookalike": (1, 1),
}
GRID_COLUMNS: Final[int] = 3
GRID_ROWS: Final[int] = 2

MIN_DURATION_S: Final[float] = 8.0
MIN_FPS: Final[int] = 5
MAX_COUNT: Final[int] = 6
MAX_LOOKALIKES: Final[int] = 4

# Storyline timing, in seconds (ranges are drawn uniformly) or as a fraction of the video.
MARGIN_S: Final[float] = 0.5
BRIEF_S: Final[float] = 0.2
SIGN_FRACTION: Final[tuple[float, float]] = (0.3, 0.45)
COUNT_S: Final[tuple[float, float]] = (0.4, 0.7)
COUNT_GAP_S: Final[float] = 0.4
TURN_S: Final[tuple[float, float]] = (0.8, 1.3)
TURN_GAP_S: Final[float] = 0.6
STAY_FRACTION: Final[tuple[float, float]] = (0.3, 0.4)
LOOKALIKE_GAP_S: Final[float] = 0.5


class SceneEvent(BaseModel):
    """Something drawn in frames [start_frame, end_frame) inside `bbox` (x0, y0, x1, y1),
    exclusive ends."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: EventRole
    colour: str | None = None
    shape: str | None = None
    text: str | None = None
    #: For a sign: texts a low-resolution view confuses with `text` (the wrong options).
    alternatives: tuple[str, ...] = ()
    bbox: tuple[int, int, int, int]
    start_frame: int = Field(ge=0)
    end_frame: int = Field(ge=1)

    def span(self, fps: int) -> EvidenceSpan:
        """The frames it is drawn on as seconds, half-open like them: [start, end)."""
        return EvidenceSpan(start=self.start_frame / fps, end=self.end_frame / fps)

    def visible(self, frame: int) -> bool:
        return self.start_frame <= frame < self.end_frame


class MovingActor(BaseModel):
    """A shape that drifts and bounces off the frame edges for the whole video: visible in every
    frame, so it is what a model sees when its frames miss the brief events."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    colour: str
    shape: str
    size: int = Field(ge=2)
    x0: float
    y0: float
    vx: float
    vy: float

    def bbox(self, frame: int, width: int, height: int) -> tuple[int, int, int, int]:
        x = _bounce(self.x0 + self.vx * frame, width - self.size)
        y = _bounce(self.y0 + self.vy * frame, height - self.size)
        return (x, y, x + self.size, y + self.size)


class VideoScene(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    video_id: str
    width: int
    height: int
    fps: int
    n_frames: int
    background: tuple[int, int, int]
    actors: tuple[MovingActor, ...]
    events: tuple[SceneEvent, ...]

    @property
    def duration_s(self) -> float:
        return self.n_frames / self.fps

    def by_role(self, role: EventRole) -> list[SceneEvent]:
        """Events of one storyline in time order."""
        return sorted((e for e in self.events if e.role == role), key=lambda e: e.start_frame)


def _bounce(position: float, limit: int) -> int:
    """Position reflected into [0, limit], as a ball bouncing between two walls."""
    if limit <= 0:
        return 0
    period = 2 * limit
    m = position % period
    return round(m if m <= limit else period - m)


def frames_for(seconds: float, fps: int) -> int:
    return max(1, round(seconds * fps))


def place_intervals(
    rng: np.random.Generator, n_frames: int, lengths: Sequence[int], min_gap: int, margin: int
) -> list[tuple[int, int]]:
    """Non-overlapping [start, end) intervals, in the given order, at least `min_gap` frames
    apart and `margin` frames from either end; the spare frames are spread uniformly."""
    k = len(lengths)
    spare = n_frames - 2 * margin - sum(lengths) - min_gap * (k - 1)
    if spare < 0:
        raise ValueError(
            f"{k} events of {sum(lengths)} frames do not fit in {n_frames} frames "
            f"(gap {min_gap}, margin {margin}); use a longer video or a higher fps"
        )
    cuts = np.sort(rng.integers(0, spare + 1, size=k))
    intervals: list[tuple[int, int]] = []
    cursor = margin
    previous_cut = 0
    for i, (length, cut) in enumerate(zip(lengths, cuts, strict=True)):
        start = cursor + int(cut) - previous_cut + (min_gap if i else 0)
        intervals.append((start, start + length))
        cursor = start + length
        previous_cut = int(cut)
    return intervals


def _cell_box(role: str, width: int, height: int) -> tuple[int, int, int, int]:
    col, row = CELLS[role]
    cw, ch = width // GRID_COLUMNS, height // GRID_ROWS
    return (col * cw, row * ch, (col + 1) * cw, (row + 1) * ch)


def shape_size(width: int, height: int) -> int:
    return int(min(width // GRID_COLUMNS, height // GRID_ROWS) * 0.6)


def glyph_scale(height: int) -> int:
    """Pixels per glyph dot: small on purpose, so the sign is legible only near full resolution."""
    return max(1, round(height / 80))


def _jittered_box(
    rng: np.random.Generator, cell: tuple[int, int, int, int], w: int, h: int
) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = cell
    if x1 - x0 < w or y1 - y0 < h:
        raise ValueError(f"a {w}x{h} drawing does not fit its {x1 - x0}x{y1 - y0} cell")
    x = x0 + int(rng.integers(0, x1 - x0 - w + 1))
    y = y0 + int(rng.integers(0, y1 - y0 - h + 1))
    return (x, y, x + w, y + h)


def sign_box_size(text: str, height: int) -> tuple[int, int]:
    g = glyph_scale(height)
    n = len(text)
    return (n * GLYPH_WIDTH * g + (n - 1) * g + 2 * g, GLYPH_HEIGHT * g + 2 * g)


def brief_frames(fps: int) -> int:
    """A brief flash: about 0.2 s, and never a single frame, so it is an event, not a glitch."""
    return max(2, round(BRIEF_S * fps))


def frames_needed(fps: int, duration_s: float) -> int:
    """The most frames any storyline can need (its longest draws, tightest packing), so a
    video that is long enough for this never fails to place its events."""
    margins = 2 * frames_for(MARGIN_S, fps)
    count = MAX_COUNT * frames_for(COUNT_S[1], fps) + (MAX_COUNT - 1) * frames_for(COUNT_GAP_S, fps)
    turns = 3 * frames_for(TURN_S[1], fps) + 2 * frames_for(TURN_GAP_S, fps)
    stay = frames_for(STAY_FRACTION[1] * duration_s, fps) + MAX_LOOKALIKES * (
        brief_frames(fps) + frames_for(LOOKALIKE_GAP_S, fps)
    )
    sign = frames_for(SIGN_FRACTION[1] * duration_s, fps)
    return margins + max(count, turns, stay, sign)


def check_scene_parameters(*, width: int, height: int, fps: int, duration_s: float) -> None:
    """Refuse, before any video is made, a frame or timeline too small for the storylines."""
    if fps < MIN_FPS:
        raise ValueError(f"fps must be at least {MIN_FPS} (brief events last a few frames)")
    if duration_s < MIN_DURATION_S:
        raise ValueError(f"duration_s must be at least {MIN_DURATION_S} s, got {duration_s}")
    needed = frames_needed(fps, duration_s)
    if needed > round(duration_s * fps):
        raise ValueError(
            f"{duration_s} s at {fps} fps is {round(duration_s * fps)} frames; the storylines "
            f"may need {needed}: use a longer video"
        )
    size = shape_size(width, height)
    if size < 6:
        raise ValueError(f"a {width}x{height} frame is too small for the suite's shapes")
    cell_w, cell_h = width // GRID_COLUMNS, height // GRID_ROWS
    sign_w, sign_h = sign_box_size("x" * max(len(w) for w in SIGN_WORDS), height)
    if sign_w > cell_w or sign_h > cell_h:
        raise ValueError(
            f"a {width}x{height} frame is too narrow for the sign ({sign_w}x{sign_h} pixels in a "
            f"{cell_w}x{cell_h} cell); use a wider frame"
        )


def _plan_sign_text(rng: np.random.Generator) -> tuple[str, tuple[str, ...]]:
    """The sign's text and three confusable alternatives, drawn so that the text is uniform
    within its set of four: the set itself says nothing about which one is shown."""
    if rng.random() < 0.5:
        candidates = list(SIGN_WORDS)
        chosen = [candidates[int(i)] for i in rng.choice(len(candidates), 4, replace=False)]
        return chosen[0], tuple(chosen[1:])
    varying = int(rng.integers(2))
    groups = [g for g in DIGIT_CONFUSIONS if varying == 1 or "0" not in g]
    group = groups[int(rng.integers(len(groups)))]
    fixed = str(int(rng.integers(1 if varying == 1 else 0, 10)))
    digits = [group[int(i)] for i in rng.permutation(len(group))]
    numbers = [d + fixed if varying == 0 else fixed + d for d in digits]
    return numbers[0], tuple(numbers[1:])


def plan_scene(
    rng: np.random.Generator, video_id: str, *, width: int, height: int, fps: int, duration_s: float
) -> VideoScene:
    """Draw one video's storylines from `rng`: a brief flash, a sign, a shape that comes back a
    few times, three shapes that take turns, and a shape that stays while look-alikes of another
    colour flash in its place; two shapes drift over everything."""
    n_frames = round(duration_s * fps)
    size = shape_size(width, height)
    check_scene_parameters(width=width, height=height, fps=fps, duration_s=duration_s)
    margin = frames_for(MARGIN_S, fps)
    brief_len = brief_frames(fps)

    colours = list(COLOURS)
    # The stayer and its look-alikes share a shape and differ in colour.
    stay_shape = SHAPES[int(rng.integers(len(SHAPES)))]
    stay_colour, lookalike_colour = (colours[int(i)] for i in rng.choice(len(colours), 2, False))
    taken = {(stay_colour, stay_shape), (lookalike_colour, stay_shape)}
    free = [(c, s) for c in colours for s in SHAPES if (c, s) not in taken]
    picks = [free[int(i)] for i in rng.choice(len(free), 7, replace=False)]
    brief_combo, count_combo = picks[0], picks[1]
    turn_combos, actor_combos = picks[2:5], picks[5:7]

    events: list[SceneEvent] = []

    def shape_event(role: EventRole, combo: tuple[str, str], start: int, end: int) -> SceneEvent:
        box = _jittered_box(rng, _cell_box(role, width, height), size, size)
        return SceneEvent(
            role=role, colour=combo[0], shape=combo[1], bbox=box, start_frame=start, end_frame=end
        )

    ((start, end),) = place_intervals(rng, n_frames, [brief_len], 0, margin)
    events.append(shape_event("brief", brief_combo, start, end))

    sign_text, alternatives = _plan_sign_text(rng)
    sign_len = frames_for(float(rng.uniform(*SIGN_FRACTION)) * duration_s, fps)
    ((start, end),) = place_intervals(rng, n_frames, [sign_len], 0, margin)
    w, h = sign_box_size(sign_text, height)
    box = _jittered_box(rng, _cell_box("sign", width, height), w, h)
    events.append(
        SceneEvent(
            role="sign",
            text=sign_text,
            alternatives=alternatives,
            bbox=box,
            start_frame=start,
            end_frame=end,
        )
    )

    count = int(rng.integers(1, MAX_COUNT + 1))
    lengths = [frames_for(float(rng.uniform(*COUNT_S)), fps) for _ in range(count)]
    gap = frames_for(COUNT_GAP_S, fps)
    for start, end in place_intervals(rng, n_frames, lengths, gap, margin):
        events.append(shape_event("count", count_combo, start, end))

    lengths = [frames_for(float(rng.uniform(*TURN_S)), fps) for _ in range(3)]
    for combo, (start, end) in zip(
        turn_combos,
        place_intervals(rng, n_frames, lengths, frames_for(TURN_GAP_S, fps), margin),
        strict=True,
    ):
        events.append(shape_event("turn", combo, start, end))

    n_lookalikes = int(rng.integers(3, MAX_LOOKALIKES + 1))
    stay_at = int(rng.integers(0, n_lookalikes + 1))
    stay_len = frames_for(float(rng.uniform(*STAY_FRACTION)) * duration_s, fps)
    lengths = [brief_len] * n_lookalikes
    lengths.insert(stay_at, stay_len)
    intervals = place_intervals(rng, n_frames, lengths, frames_for(LOOKALIKE_GAP_S, fps), margin)
    for i, (start, end) in enumerate(intervals):
        if i == stay_at:
            events.append(shape_event("stay", (stay_colour, stay_shape), start, end))
        else:
            events.append(shape_event("lookalike", (lookalike_colour, stay_shape), start, end))

    actor_size = max(4, round(size * 0.6))
    actors = []
    for colour, shape in actor_combos:
        speed = float(rng.uniform(0.25, 0.5)) * width / fps  # pixels per frame
        angle = float(rng.uniform(0, 2 * math.pi))
        actors.append(
            MovingActor(
                colour=colour,
                shape=shape,
                size=actor_size,
                x0=round(float(rng.uniform(0, width - actor_size)), 3),
                y0=round(float(rng.uniform(0, height - actor_size)), 3),
                vx=round(speed * math.cos(angle), 4),
                vy=round(speed * math.sin(angle), 4),
            )
        )
    background = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
    return VideoScene(
        video_id=video_id,
        width=width,
        height=height,
        fps=fps,
        n_frames=n_frames,
        background=background,
        actors=tuple(actors),
        events=tuple(events),
    )


def _draw_shape(
    draw: ImageDraw.ImageDraw, shape: str, box: tuple[int, int, int, int], colour: str
) -> None:
    rgb = COLOURS[colour]
    x0, y0, x1, y1 = box
    # Pillow's boxes include their right/bottom edge; ours exclude it.
    r, b = x1 - 1, y1 - 1
    cx = (x0 + r) / 2
    cy = (y0 + b) / 2
    if shape == "circle":
        draw.ellipse((x0, y0, r, b), fill=rgb)
    elif shape == "square":
        draw.rectangle((x0, y0, r, b), fill=rgb)
    elif shape == "triangle":
        draw.polygon([(cx, y0), (r, b), (x0, b)], fill=rgb)
    elif shape == "diamond":
        draw.polygon([(cx, y0), (r, cy), (cx, b), (x0, cy)], fill=rgb)
    else:
        raise ValueError(f"unknown shape {shape!r}")


def _draw_sign(
    draw: ImageDraw.ImageDraw, text: str, box: tuple[int, int, int, int], g: int
) -> None:
    x0, y0, x1, y1 = box
    draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=SIGN_PAPER)
    x = x0 + g
    for char in text.upper():
        for row, line in enumerate(GLYPHS[char]):
            for col, dot in enumerate(line):
                if dot == "#":
                    px, py = x + col * g, y0 + g + row * g
                    draw.rectangle((px, py, px + g - 1, py + g - 1), fill=SIGN_INK)
        x += (GLYPH_WIDTH + 1) * g


def render_frame(scene: VideoScene, frame: int) -> Image.Image:
    """Frame `frame` of the scene: drifting actors below, the storylines' events above them."""
    image = Image.new("RGB", (scene.width, scene.height), scene.background)
    draw = ImageDraw.Draw(image)
    for actor in scene.actors:
        _draw_shape(draw, actor.shape, actor.bbox(frame, scene.width, scene.height), actor.colour)
    g = glyph_scale(scene.height)
    for event in scene.events:
        if not event.visible(frame):
            continue
        if event.role == "sign":
            assert event.text is not None
            _draw_sign(draw, event.text, event.bbox, g)
        else:
            assert event.colour is not None and event.shape is not None
            _draw_shape(draw, event.shape, event.bbox, event.colour)
    return image


def iter_frames(scene: VideoScene) -> Iterator[np.ndarray]:
    """RGB frames (height x width x 3, uint8) in display order."""
    for frame in range(scene.n_frames):
        yield np.asarray(render_frame(scene, frame), dtype=np.uint8)

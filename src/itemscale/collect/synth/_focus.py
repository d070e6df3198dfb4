"""The `focus` layout: one large storyline per video, for a model that must learn from scratch.

A from-scratch 4-layer language model needs far more examples to learn *which* of several
objects a question is about than to learn to read one (docs/builtin-model.md), so the built-in
model trains and is audited on this layout: each video holds one storyline (`flash`, `blink`,
`longest`; docs/synthetic-suite.md) drawn large in the middle of the frame, asked as 4-option
multiple choice and as an open question, its correct position balanced by the caller.
"""

from __future__ import annotations

from typing import Final, Literal

import numpy as np

from ...core.responses import TaskKind
from ..items import Item
from ._scene import SceneEvent, VideoScene, frames_for
from ._vocab import BACKGROUNDS, COLOURS

FocusKind = Literal["flash", "longest", "blink"]
#: The kinds a focus suite holds unless asked otherwise (the built-in model's training suite).
FOCUS_KINDS: Final[tuple[FocusKind, ...]] = ("flash", "longest")
ALL_FOCUS_KINDS: Final[tuple[FocusKind, ...]] = ("flash", "longest", "blink")
FOCUS_BUDGET_AXIS: Final[dict[str, str]] = {
    "flash": "frame_rate",
    "longest": "coverage",
    "blink": "sampling_phase",
}
FOCUS_QUESTIONS: Final[dict[str, str]] = {
    "flash": "Which colour flashes?",
    "longest": "Which colour is shown the longest?",
    # the same question as a flash: the model is asked about the event, not told how long it is
    "blink": "Which colour flashes?",
}

#: Share of the frame's short side the square covers (centred).
SQUARE_FILL: Final[float] = 0.7
FLASH_S: Final[tuple[float, float]] = (0.4, 0.6)
#: A blink: shorter than the sampling gap of the largest budgets (docs/synthetic-suite.md).
BLINK_S: Final[tuple[float, float]] = (0.15, 0.3)
FLASH_MARGIN_S: Final[float] = 0.5
#: Shares of the video of the longest block, and how much shorter the runner-up is.
LONGEST_SHARE: Final[tuple[float, float]] = (0.38, 0.46)
RUNNER_UP_GAP: Final[tuple[float, float]] = (0.05, 0.12)
N_OPTIONS: Final[int] = 4


def square_box(width: int, height: int) -> tuple[int, int, int, int]:
    side = round(min(width, height) * SQUARE_FILL)
    x0, y0 = (width - side) // 2, (height - side) // 2
    return (x0, y0, x0 + side, y0 + side)


def check_focus_parameters(*, width: int, height: int, fps: int, duration_s: float) -> None:
    """Refuse a frame or timeline the focus storylines cannot fit."""
    if fps < 5:
        raise ValueError("fps must be at least 5 (a flash lasts a few frames)")
    if duration_s < 4.0:
        raise ValueError(f"duration_s must be at least 4 s for the focus layout, got {duration_s}")
    if min(width, height) < 28:
        raise ValueError(f"a {width}x{height} frame is too small for the focus layout")


def plan_focus_scene(
    rng: np.random.Generator,
    video_id: str,
    kind: FocusKind,
    *,
    width: int,
    height: int,
    fps: int,
    duration_s: float,
) -> VideoScene:
    """One video of one storyline (`kind`), drawn from `rng`."""
    check_focus_parameters(width=width, height=height, fps=fps, duration_s=duration_s)
    n_frames = round(duration_s * fps)
    box = square_box(width, height)
    colours = [str(c) for c in COLOURS]
    events: list[SceneEvent] = []
    if kind in ("flash", "blink"):
        colour = colours[int(rng.integers(len(colours)))]
        length = frames_for(float(rng.uniform(*(FLASH_S if kind == "flash" else BLINK_S))), fps)
        margin = frames_for(FLASH_MARGIN_S, fps)
        start = int(rng.integers(margin, n_frames - margin - length + 1))
        events.append(
            SceneEvent(
                role=kind,
                colour=colour,
                shape="square",
                bbox=box,
                start_frame=start,
                end_frame=start + length,
            )
        )
    else:
        picked = [colours[int(i)] for i in rng.choice(len(colours), 3, replace=False)]
        longest = float(rng.uniform(*LONGEST_SHARE))
        runner_up = longest - float(rng.uniform(*RUNNER_UP_GAP))
        shares = [longest, runner_up, 1.0 - longest - runner_up]
        lengths = [max(1, round(s * n_frames)) for s in shares]
        lengths[2] = n_frames - lengths[0] - lengths[1]
        order = rng.permutation(3)
        cursor = 0
        for block in order:
            events.append(
                SceneEvent(
                    role="block",
                    colour=picked[int(block)],
                    shape="square",
                    bbox=box,
                    start_frame=cursor,
                    end_frame=cursor + lengths[int(block)],
                )
            )
            cursor += lengths[int(block)]
    background = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
    return VideoScene(
        video_id=video_id,
        width=width,
        height=height,
        fps=fps,
        n_frames=n_frames,
        background=background,
        actors=(),
        events=tuple(events),
    )


def focus_kind_of(scene: VideoScene) -> FocusKind:
    roles = {e.role for e in scene.events}
    return "blink" if "blink" in roles else "flash" if "flash" in roles else "longest"


def _answer_event(scene: VideoScene) -> SceneEvent:
    """The event whose colour is the answer: the flash, or the longest block."""
    events = [e for e in scene.events if e.role in ("flash", "blink", "block")]
    return max(events, key=lambda e: (e.end_frame - e.start_frame) if e.role == "block" else 1)


def build_focus_items(
    rng: np.random.Generator, scene: VideoScene, *, video_path: str, split: str, position: int
) -> list[Item]:
    """The video's MCQA item (correct option at `position`) and its open question."""
    kind = focus_kind_of(scene)
    answer = _answer_event(scene)
    assert answer.colour is not None
    on_screen = [e.colour for e in scene.events if e.colour and e.colour != answer.colour]
    others = [c for c in COLOURS if c != answer.colour and c not in on_screen]
    others = [others[int(i)] for i in rng.permutation(len(others))]
    # `longest`: both other blocks are options (the runner-up is the distractor being tested)
    wrong = list(dict.fromkeys([*on_screen, *others]))[: N_OPTIONS - 1]
    wrong = [wrong[int(i)] for i in rng.permutation(len(wrong))]
    options = [*wrong[:position], answer.colour, *wrong[position:]]
    attributes = {
        "question_kind": kind,
        "budget_axis": FOCUS_BUDGET_AXIS[kind],
        "split": split,
    }
    common = {
        "video_id": scene.video_id,
        "video_path": video_path,
        "duration_s": scene.duration_s,
        "split": split,
        "question": FOCUS_QUESTIONS[kind],
        "evidence": (answer.span(scene.fps),),
        "attributes": attributes,
    }
    return [
        Item(
            item_id=f"{scene.video_id}-{kind}-mcqa",
            task_kind=TaskKind.MCQA,
            options=tuple(options),
            answer="ABCD"[position],
            **common,
        ),
        Item(
            item_id=f"{scene.video_id}-{kind}-open",
            task_kind=TaskKind.OPEN_QA,
            references=(answer.colour,),
            **common,
        ),
    ]

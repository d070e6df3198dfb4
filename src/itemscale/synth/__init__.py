"""The synthetic video suite: procedurally generated H.264 videos with ground-truth evidence.

It lets `make demo` and the built-in model run offline: each video holds storylines that need a
different visual budget (a brief flash needs frame rate, a small sign needs resolution, counting
and turn order need coverage, a stayer with look-alikes punishes dense sampling), and every
question carries the time spans that hold its evidence. `docs/synthetic-suite.md` describes it.
"""

from ..items import ITEMS_FILE
from ._focus import (
    ALL_FOCUS_KINDS,
    FOCUS_KINDS,
    FOCUS_QUESTIONS,
    FocusKind,
    build_focus_items,
    plan_focus_scene,
)
from ._questions import BUDGET_AXIS, QUESTION_KINDS, QuestionKind, build_items
from ._scene import MovingActor, SceneEvent, VideoScene, iter_frames, plan_scene, render_frame
from ._suite import (
    FOCUS_GENERATOR_VERSION,
    GENERATOR_VERSION,
    SUITE_FILE,
    SUITE_SCHEMA_VERSION,
    VIDEOS_DIR,
    SuiteError,
    SuiteManifest,
    SuiteVideo,
    ensure_suite,
    generate_suite,
    read_manifest,
    reusable_suite,
    verify_suite,
)
from ._vocab import COLOURS, COUNT_WORDS, SHAPES, SIGN_WORDS

__all__ = [
    "ALL_FOCUS_KINDS",
    "BUDGET_AXIS",
    "COLOURS",
    "COUNT_WORDS",
    "FOCUS_GENERATOR_VERSION",
    "FOCUS_KINDS",
    "FOCUS_QUESTIONS",
    "GENERATOR_VERSION",
    "ITEMS_FILE",
    "QUESTION_KINDS",
    "SHAPES",
    "SIGN_WORDS",
    "SUITE_FILE",
    "SUITE_SCHEMA_VERSION",
    "VIDEOS_DIR",
    "FocusKind",
    "MovingActor",
    "QuestionKind",
    "SceneEvent",
    "SuiteError",
    "SuiteManifest",
    "SuiteVideo",
    "VideoScene",
    "build_focus_items",
    "build_items",
    "ensure_suite",
    "generate_suite",
    "iter_frames",
    "plan_focus_scene",
    "plan_scene",
    "read_manifest",
    "render_frame",
    "reusable_suite",
    "verify_suite",
]

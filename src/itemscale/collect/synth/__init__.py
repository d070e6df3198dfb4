"""The synthetic video suite: procedurally generated H.264 videos with ground-truth evidence.

It lets `make demo` and the built-in model run offline: each video holds storylines that need a
different visual budget (a brief flash needs frame rate, a small sign needs resolution, counting
and turn order need coverage, a stayer with look-alikes punishes dense sampling), and every
question carries the time spans that hold its evidence. `docs/synthetic-suite.md` describes it.
"""

from ._focus import FocusKind
from ._scene import VideoScene, plan_scene
from ._suite import (
    SuiteError,
    SuiteManifest,
    ensure_suite,
    generate_suite,
    read_manifest,
    reusable_suite,
    verify_suite,
)
from ._vocab import COLOURS, SHAPES

__all__ = [
    "COLOURS",
    "SHAPES",
    "FocusKind",
    "SuiteError",
    "SuiteManifest",
    "VideoScene",
    "ensure_suite",
    "generate_suite",
    "plan_scene",
    "read_manifest",
    "reusable_suite",
    "verify_suite",
]

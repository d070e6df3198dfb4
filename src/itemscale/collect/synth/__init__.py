"""The synthetic video suite: procedurally generated H.264 videos with ground-truth evidence,
each storyline needing a different visual budget, so `make demo` and the built-in model run
offline (docs/synthetic-suite.md).
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

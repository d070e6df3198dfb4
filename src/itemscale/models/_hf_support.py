"""What running a transformers video model needs around the model call, shared by the `hf`
backend and the built-in model's training (`itemscale.builtin`), so both hand frames to a
processor and load weights the same way. Importing it costs neither torch nor transformers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def writable(frame: Any) -> Any:
    """The frame itself when torch may wrap it, else a copy (read-only arrays warn)."""
    flags = getattr(frame, "flags", None)
    return frame if flags is None or flags.writeable else frame.copy()


@contextlib.contextmanager
def no_loading_bars() -> Iterator[None]:
    """transformers' "Loading weights" bars off while a model loads, as they were after."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]

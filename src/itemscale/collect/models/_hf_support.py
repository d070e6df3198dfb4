"""What running a transformers video model needs around the model call, shared by the `hf`
backend and the built-in model's training (`recipes/builtin_model/`), so both hand frames to a
processor and load weights the same way. Importing it costs neither torch nor transformers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._types import BackendError

#: `HFBackend.serving.bytes_per_visual_token` in hidden vectors of the language model: about
#: 230 KiB per visual token measured on Qwen2.5-VL-7B (hidden 3584) in bf16 on an H200.
BYTES_PER_VISUAL_TOKEN_WIDTHS = 32


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


#: The attention a model loads with when its entry names none (`options.attn_implementation`).
DEFAULT_ATTENTION = "sdpa"


def resolve_dtype(dtype: str, device: str, *, builtin: bool = False) -> str:
    """The dtype a model loads in: `auto` is bfloat16 on CUDA and float32 elsewhere; the
    built-in model stays float32 everywhere, so its answers do not depend on the device."""
    if dtype != "auto":
        return dtype
    if builtin:
        return "float32"
    return "bfloat16" if device.startswith("cuda") else "float32"


def check_model_location(name: str, model: str, local_files_only: bool) -> None:
    """Say plainly what is wrong with a model path before transformers says it obscurely: a
    folder that does not exist, or a hub id that is not in the local cache."""
    path = Path(model).expanduser()
    looks_like_path = model.startswith(("/", "./", "../", "~")) or model.count("/") > 1
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BackendError(f"model {name!r}: {path} is a folder without a config.json")
        return
    if looks_like_path or path.exists():
        raise BackendError(f"model {name!r}: the model folder {path} does not exist")
    if local_files_only:
        from transformers.utils.hub import cached_file

        try:
            cached_file(model, "config.json", local_files_only=True)
        except (OSError, ValueError):
            raise BackendError(
                f"model {name!r}: {model!r} is not a local folder and not in the local Hugging "
                "Face cache; nothing was downloaded (options.local_files_only = true, the "
                f"default). Download it first (`huggingface-cli download {model}`), give its "
                "folder, or set local_files_only = false"
            ) from None

"""Device memory and batch sizes. `--batch-size auto` picks per configuration the largest power
of two whose visual tokens fit in half the free memory at the backend's cost per token; a call
that runs out of memory anyway is halved and run again, so a wrong estimate costs time, never a
cell."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..video import FrameSet

#: The largest batch `auto` picks: beyond it a sweep's batches rarely fill (a configuration of
#: a few hundred items) and the time per call no longer falls.
AUTO_MAX_BATCH = 64
#: The share of the free memory `auto` plans to fill (the rest is the allocator's slack and
#: what the estimate misses).
AUTO_MEMORY_SHARE = 0.5
#: What one more visual token in a batch costs a backend that does not say (256 KiB: a
#: Qwen2.5-VL-7B in bf16 measured about 230 KiB per visual token, KV cache and activations of
#: the language model and the vision tower together, docs/performance.md).
DEFAULT_BYTES_PER_VISUAL_TOKEN = 256 * 2**10
#: Pixels per visual token when a backend cannot count them: 14 px patches, 2x2, two frames each.
PIXELS_PER_VISUAL_TOKEN = 28 * 28 * 2
#: The decoded frames the local executor holds while it fills batches across videos (2 GiB);
#: past it, the oldest partial batch runs as it is (a video is still decoded whole).
FRAMES_HELD_BYTES = 2 * 2**30


def is_out_of_memory(exc: BaseException) -> bool:
    """torch's out-of-memory error, without importing torch when the backend never did."""
    torch = sys.modules.get("torch")
    kind = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if isinstance(kind, type) and isinstance(exc, kind):
        return True
    return type(exc).__name__ == "OutOfMemoryError"


def release_device_memory() -> None:
    """Hand the allocator's cached blocks back, so the halved batch starts from what the failed
    one left."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def free_memory_bytes(device: str) -> int | None:
    """The CUDA device's free memory, else the host's available memory; None when neither can be
    read."""
    if device.startswith("cuda"):
        import torch

        index = torch.device(device).index
        free, _ = torch.cuda.mem_get_info(index if index is not None else 0)
        return int(free)
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def estimated_visual_tokens(frame_set: FrameSet | None) -> int:
    """A cell's visual tokens from its frames' geometry; a text-only cell has none."""
    if frame_set is None:
        return 0
    shape = tuple(getattr(frame_set.array, "shape", ()))
    if len(shape) < 3:
        return 0
    count, height, width = int(shape[0]), int(shape[1]), int(shape[2])
    return max(1, count * height * width // PIXELS_PER_VISUAL_TOKEN)


def auto_batch_size(visual_tokens: int, bytes_per_token: int, free_bytes: int | None) -> int:
    """The largest power of two up to `AUTO_MAX_BATCH` that fits `AUTO_MEMORY_SHARE` of the free
    memory; 1 when it cannot be read, the maximum for text-only cells."""
    if free_bytes is None:
        return 1
    if visual_tokens <= 0:
        return AUTO_MAX_BATCH
    fits = int(AUTO_MEMORY_SHARE * free_bytes) // (visual_tokens * max(bytes_per_token, 1))
    size = 1
    while size * 2 <= min(fits, AUTO_MAX_BATCH):
        size *= 2
    return size

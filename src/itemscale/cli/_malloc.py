"""Large blocks of memory handed back to the system once freed (glibc's `mallopt`).

glibc serves a request above its mmap threshold (128 kB at first) with its own mapping, which
`free` returns to the system at once; but each such block freed raises the threshold up to
32 MB, after which arrays of a few MB (a 10^6-row column is 8 MB) come from the heap, whose
freed middle stays resident. `analyze` on 2 x 10^6 rows builds and drops dozens of 16 MB arrays
and kept ~400 MB resident that way. Fixing the threshold (which also stops it from moving)
keeps every block from 1 MB up in its own mapping. Elsewhere than glibc on Linux it does nothing.
Only the commands that read whole tables call it (`cli.TABLE_COMMANDS`): a sweep's model tensors
would each be mapped and unmapped, which made the demo's sweep 25% slower.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Final

#: glibc's `M_MMAP_THRESHOLD` parameter of `mallopt`.
_M_MMAP_THRESHOLD: Final[int] = -3
#: Blocks from this size up get their own mapping (returned to the system when freed).
MMAP_THRESHOLD: Final[int] = 1 << 20


def unmap_large_blocks(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes for this process; False where that
    cannot be done (not Linux, not glibc) or the environment already sets it
    (`MALLOC_MMAP_THRESHOLD_`)."""
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: left as they are
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))

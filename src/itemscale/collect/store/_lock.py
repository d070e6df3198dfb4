"""One sweep per run directory at a time: two drivers would not corrupt the store but would pay
for every pending cell twice. A sweep holds the run folder's lock (`responses.run_lock`) for its
whole run without waiting; the kernel drops it when the process dies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from ...core.responses import LOCK_FILE, RunLockedError, run_lock
from ._store import StoreError

__all__ = ["LOCK_FILE", "run_dir_lock"]


@contextmanager
def run_dir_lock(run_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the run directory's lock, or raise `StoreError` naming the process holding it."""
    with ExitStack() as stack:
        try:
            stack.enter_context(run_lock(run_dir, wait_s=0, what="sweep"))
        except RunLockedError as exc:
            raise StoreError(
                f"{run_dir}: another itemscale command is running on this run directory "
                f"({exc.holder}); wait for it or stop it first"
            ) from None
        yield

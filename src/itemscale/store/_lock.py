"""One sweep per run directory at a time.

Two drivers on one store would not corrupt it (SQLite serialises their writes) but would run the
same pending cells twice, paying for every model call twice. An advisory `flock` on a lock file
beside the store prevents it; the kernel drops the lock when its process dies, so a killed sweep
never leaves a stale lock behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._store import StoreError

LOCK_FILE = "store.lock"


@contextmanager
def run_dir_lock(run_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the run directory's lock, or raise `StoreError` naming the process holding it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, documented
        yield
        return
    path = Path(run_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise StoreError(
                f"{run_dir}: another sweep is running on this run directory (pid {holder}); "
                "wait for it or stop it first"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

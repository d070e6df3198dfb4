"""The resumable run store (SQLite) behind a sweep, and its export to the response table."""

from ._identity import cell_identity
from ._lock import run_dir_lock
from ._migrations import MIGRATIONS, cells_layout
from ._store import (
    STORE_FILE,
    CellRow,
    RunStore,
    StoreError,
    full_store_error,
    is_full,
    open_store,
    utc_now,
)

__all__ = [
    "MIGRATIONS",
    "STORE_FILE",
    "CellRow",
    "RunStore",
    "StoreError",
    "cell_identity",
    "cells_layout",
    "full_store_error",
    "is_full",
    "open_store",
    "run_dir_lock",
    "utc_now",
]

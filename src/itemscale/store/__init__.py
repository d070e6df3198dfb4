"""The resumable run store (SQLite) behind a sweep, and its export to the response table."""

from ._identity import IDENTITY_VERSION, cell_identity, item_fingerprint
from ._lock import LOCK_FILE, run_dir_lock
from ._migrations import MIGRATIONS, SCHEMA_VERSION
from ._store import (
    STORE_FILE,
    WAL_CHECKPOINT_PAGES,
    CellRow,
    RunStore,
    StoreError,
    full_store_error,
    is_full,
    open_store,
    utc_now,
)

__all__ = [
    "IDENTITY_VERSION",
    "LOCK_FILE",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "WAL_CHECKPOINT_PAGES",
    "CellRow",
    "RunStore",
    "StoreError",
    "cell_identity",
    "full_store_error",
    "is_full",
    "item_fingerprint",
    "open_store",
    "run_dir_lock",
    "utc_now",
]

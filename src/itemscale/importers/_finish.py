"""The last step of every importer: merge into the run and summarise what happened."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ._common import merge_into_run
from ._summary import ImportSummary, summarise


def finish_import(
    *,
    importer: str,
    run_dir: str | os.PathLike[str],
    files: list[str],
    rows: pd.DataFrame,
    record: Mapping[str, Any],
    skipped: Counter[str] | None = None,
    notes: list[str] | None = None,
    dry_run: bool = False,
) -> ImportSummary:
    merged = merge_into_run(run_dir, rows, record, dry_run=dry_run)
    return summarise(
        importer=importer,
        run_dir=str(Path(run_dir)),
        files=files,
        imported=rows,
        run_table=merged.table,
        rows_added=merged.added,
        rows_unchanged=merged.unchanged,
        skipped=skipped or Counter(),
        notes=notes,
    )

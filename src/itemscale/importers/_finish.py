"""The last step of every importer: merge into the run and summarise what happened."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ._common import ImportInputError, import_record, merge_into_run, rows_frame
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


def finish_parsed_import(
    *,
    importer: str,
    tool: str,
    rows: list[dict[str, Any]],
    extractor_version: str,
    sources: list[dict[str, Any]],
    jobs: Sequence[tuple[Path, Any]],
    model: str | None,
    benchmark: str | os.PathLike[str] | None,
    configs: Sequence[str],
    skipped: Counter[str],
    notes: list[str],
    run_dir: str | os.PathLike[str],
    dry_run: bool,
) -> ImportSummary:
    """The shared ending of the per-file importers (lmms-eval, VLMEvalKit): refuse an import
    with no rows (saying why each was skipped), record the options and sources, then merge."""
    table = rows_frame(rows, where_=f"{tool} import") if rows else pd.DataFrame()
    if table.empty:
        raise ImportInputError(
            "no rows to import: " + ", ".join(f"{k}: {v}" for k, v in skipped.items())
        )
    record = import_record(
        importer,
        sources,
        model=model,
        benchmark=str(Path(benchmark).resolve()) if benchmark else None,
        extractor_version=extractor_version,
        configs=list(configs) or None,
    )
    return finish_import(
        importer=importer,
        run_dir=run_dir,
        files=[str(p) for p, _ in jobs],
        rows=table,
        record=record,
        skipped=skipped,
        notes=notes,
        dry_run=dry_run,
    )

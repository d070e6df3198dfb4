"""`analyze`: the main job from Python, computing what the command line does
(`analyze_responses`) from a run folder, a response table or a results table of one's own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.measures import AnalysisOptions, AnalysisResult, AnalysisSettings
    from ..collect.importers import TableOptions


def response_table(
    source: str | os.PathLike[str] | pd.DataFrame, table_options: TableOptions | None = None
) -> pd.DataFrame:
    """The response table of a run folder, a results table file or a DataFrame, checked and in
    the schema's types: what `analyze`, `per_item_labels` and `cascade_report` read. A
    DataFrame in the shape `itemscale import table` reads gets that importer's located errors
    (`DataFrame: row 6: column 'correct': ...`)."""
    import pandas as pd

    from ..collect.importers import frame_records, import_table
    from ..core.responses import REQUIRED_COLUMNS, normalise_responses, read_run

    if not isinstance(source, pd.DataFrame):
        path = Path(source)
        if path.is_dir():
            df, _ = read_run(path)
            return df
        # a results table file (csv, tsv, jsonl, parquet), as `itemscale import table` reads it
        rows, _ = import_table(path, table_options)
        return rows
    if set(source.columns) >= REQUIRED_COLUMNS:  # already the response table
        return normalise_responses(source, where="DataFrame")
    rows, _ = import_table(frame_records(source), table_options)
    return rows


def analyze(
    source: str | os.PathLike[str] | pd.DataFrame,
    settings: AnalysisSettings | None = None,
    *,
    table_options: TableOptions | None = None,
    **options: Unpack[AnalysisOptions],
) -> AnalysisResult:
    """Every measure of docs/measures.md for every model, as `itemscale analyze` computes it.

    `source` is a run folder (what `sweep` and `import` write), a results table file, or a
    pandas DataFrame: the response table itself (`read_run`'s), or a results table in the shape
    `itemscale import table` reads (columns `model`, `item_id`, `config`, and `correct` or
    `score` or an `answer` with a `gold`; `table_options` for wide tables and renamed columns),
    checked with the same located errors. How to analyse is an `AnalysisSettings`, or its
    fields as keywords (`AnalysisOptions`, typed one by one; `itemscale analyze`'s options):
    `bootstrap` resamples (default 1000), `seed`, `ci` (`bca` or `percentile`), `configs`,
    `control` (the reference among configurations that ask one budget), `axis`, `by`,
    `metric`, `eps`, `power_target` (points, as `--power-target`), `test_pairs`,
    `heterogeneity_draws`. A bad value is refused (naming the setting) before the table is read.
    """
    from ..analysis.measures import AnalysisSettings, analyze_responses

    chosen = AnalysisSettings.of(settings, options)
    df = response_table(source, table_options)
    return analyze_responses(df, chosen)


#: The files `--per-item` writes, by suffix.
PER_ITEM_SUFFIXES = (".csv", ".parquet")


def check_per_item_path(path: str | os.PathLike[str]) -> Path:
    """Checked before the measures are computed, so a typo costs nothing."""
    from ..core.files import check_output_path

    out = check_output_path(path, flag="per-item file")
    if out.suffix.lower() not in PER_ITEM_SUFFIXES:
        raise ValueError(f"{out}: the file must end in .csv or .parquet")
    return out


def write_per_item(labels: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """The per-item table, whole or not at all, as CSV or Parquet by the suffix (Parquet also
    carries its schema version in the file's metadata); strings redacted."""
    import pyarrow as pa

    from ..analysis.measures import PER_ITEM_SCHEMA_VERSION
    from ..core.files import atomic_text_file
    from ..core.responses import write_parquet_atomic

    out = check_per_item_path(path)
    labels = _redacted(labels)
    if out.suffix.lower() == ".parquet":
        table = pa.Table.from_pandas(labels, preserve_index=False)
        meta = {b"itemscale.per_item_schema_version": str(PER_ITEM_SCHEMA_VERSION).encode()}
        write_parquet_atomic(table, out, meta)
        return
    with atomic_text_file(out) as fh:
        labels.to_csv(fh, index=False, lineterminator="\n")


def _redacted(labels: pd.DataFrame) -> pd.DataFrame:
    from ..core.responses import redact

    out = labels.copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: redact(v) if isinstance(v, str) else v)
    return out

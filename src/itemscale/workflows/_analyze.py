"""`analyze`: the main job from Python. A run folder, a response table, or a results table
of one's own (the shape `itemscale import table` reads) in; the typed result out.

The command line and this function compute the same thing (`analyze_responses`); this one
returns `AnalysisResult`, whose `to_json()` is what `analyze --json` writes and whose
`to_frame()` is a tidy table for pandas.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from ..importers import TableOptions
    from ..measures import AnalysisResult


def response_table(
    source: str | os.PathLike[str] | pd.DataFrame, table_options: TableOptions | None = None
) -> pd.DataFrame:
    """The response table of a run folder, a results table file or a DataFrame, checked and in
    the schema's types: what `analyze`, `per_item_labels` and `cascade_report` read. A
    DataFrame in the shape `itemscale import table` reads gets that importer's located errors
    (`DataFrame: row 6: column 'correct': ...`)."""
    import pandas as pd

    from ..importers import frame_records, import_table
    from ..responses import REQUIRED_COLUMNS, normalise_responses, read_run

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
    *,
    bootstrap: int | None = None,
    seed: int = 0,
    ci: str | None = None,
    configs: Sequence[str] | None = None,
    axis: str | None = None,
    by: Sequence[str] | None = None,
    metric: str = "score",
    eps: float = 0.1,
    power_target: float | None = None,
    test_pairs: Sequence[tuple[str, str]] = (),
    heterogeneity_draws: int | None = None,
    table_options: TableOptions | None = None,
) -> AnalysisResult:
    """Every measure of docs/measures.md for every model, as `itemscale analyze` computes it.

    `source` is a run folder (what `sweep` and `import` write), a results table file, or a
    pandas DataFrame: the response table itself (`read_run`'s), or a results table in the shape
    `itemscale import table` reads (columns `model`, `item_id`, `config`, and `correct` or
    `score` or an `answer` with a `gold`; `table_options` for wide tables and renamed columns),
    checked with the same located errors. The keywords are `itemscale analyze`'s options:
    `bootstrap` resamples (default 1000), `seed`, `ci` (`bca` or `percentile`), `configs`,
    `axis`, `by`, `metric`, `eps`, `power_target` (points, as `--power-target`), `test_pairs`,
    `heterogeneity_draws`.
    """
    from ..measures import (
        CI_METHODS,
        DEFAULT_BOOTSTRAP,
        DEFAULT_CI,
        DEFAULT_DRAWS,
        DEFAULT_POWER_TARGET,
        AnalysisResult,
        analyze_responses,
    )

    n_boot = DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap
    method = DEFAULT_CI if ci is None else ci
    target = 100 * DEFAULT_POWER_TARGET if power_target is None else power_target
    draws = DEFAULT_DRAWS if heterogeneity_draws is None else heterogeneity_draws
    if n_boot < 0:
        raise ValueError(f"bootstrap={n_boot}: resamples must be >= 0")
    if method not in CI_METHODS:
        raise ValueError(f"ci={method!r}: use one of {', '.join(CI_METHODS)}")
    if not 0 < target <= 100:
        raise ValueError(f"power_target={target}: give points in (0, 100]")
    if draws < 0:
        raise ValueError(f"heterogeneity_draws={draws}: must be >= 0")
    df = response_table(source, table_options)
    result = analyze_responses(
        df,
        n_boot=n_boot,
        seed=seed,
        by=list(by) if by else None,
        metric=metric,
        eps=eps,
        configs=configs,
        ci=method,
        axis=axis,
        power_target=target / 100,
        test_pairs=tuple(test_pairs),
        heterogeneity_draws=draws,
    )
    return AnalysisResult.from_json(result)

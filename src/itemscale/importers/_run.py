"""`run_import(kind, files, ...)`: every importer behind one call, the CLI's and a notebook's.

The CLI builds its options into this call and prints what it returns, so an import run from
Python writes the same run folder and gets the same summary as `itemscale import KIND`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Final

from ._common import ImportInputError
from ._lmms_eval import run_lmms_eval_import
from ._summary import ImportSummary
from ._table_run import run_table_import
from ._vlmevalkit import run_vlmevalkit_import

#: Every importer, by the KIND of `itemscale import KIND`. An importer is a module with a
#: `run_<tool>_import(*, files, run_dir, dry_run, **options) -> ImportSummary` plus one line
#: here (and its subcommand in `cli/cmd_import.py`); see docs/extending.md.
IMPORTERS: Final[dict[str, Callable[..., ImportSummary]]] = {
    "table": run_table_import,
    "lmms-eval": run_lmms_eval_import,
    "vlmevalkit": run_vlmevalkit_import,
}


def run_import(
    kind: str,
    files: Sequence[str | os.PathLike[str]] = (),
    *,
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    **options: Any,
) -> ImportSummary:
    """Parse and validate every file, then merge the rows into `run_dir` (nothing is written
    on any error, or with `dry_run`). Returns the summary `itemscale import` prints.

    `options` are the CLI's flags as keywords: `table` takes `wide`, `id_column`, `model`,
    `frames` and `rename` (lists of `LABEL=N` / `SRC=DST`), `wide_values`, `empty`,
    `benchmark`, `answer_key`, `absent` (`skip` or `noanswer`) and `video_from_id`;
    `lmms-eval` and `vlmevalkit` take `configs` (the `--config LABEL[:FRAMES]=PATH` values),
    `model`, `benchmark` and `absent`.
    """
    importer = IMPORTERS.get(kind)
    if importer is None:
        raise ImportInputError(f"unknown importer {kind!r}; known: {', '.join(IMPORTERS)}")
    paths = [os.fspath(f) for f in files]
    return importer(files=paths, run_dir=run_dir, dry_run=dry_run, **options)

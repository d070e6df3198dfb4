"""The whole `table` import: its options, the answer key, every file, one merge.

`import_table` parses one file and writes nothing; this is the run the CLI's `import table`
makes of several, and `run_import("table", ...)` makes the same one from Python, so that the
two cannot record different options in `run.json`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

import pandas as pd

from ._absent import DEFAULT_ABSENT, check_absent_mode
from ._common import ImportInputError, ImportOptions, import_record, source_record
from ._finish import finish_import
from ._summary import ImportSummary
from ._table import import_table
from ._table_shape import (
    AnswerKey,
    EmptyCells,
    TableOptions,
    WideValues,
    key_from_benchmark,
    load_answer_key,
    parse_assignments,
)
from ._video_ids import video_of_id, video_pattern


def run_table_import(
    *,
    files: Sequence[str | os.PathLike[str]],
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    wide: bool = False,
    id_column: str | None = None,
    model: str | None = None,
    frames: Sequence[str] = (),
    rename: Sequence[str] = (),
    wide_values: WideValues = "answer",
    empty: EmptyCells = "noanswer",
    benchmark: str | os.PathLike[str] | None = None,
    answer_key: str | os.PathLike[str] | None = None,
    absent: str = DEFAULT_ABSENT,
    video_from_id: str | None = None,
) -> ImportSummary:
    """Import results tables into `run_dir`. `frames` and `rename` are `LABEL=N` and `SRC=DST`
    strings, as `--frames` and `--rename` take them; every other option is its CLI flag's."""
    if not files:
        raise ImportInputError("no input files (give one or more tables)")
    if benchmark and answer_key:
        raise ImportInputError("give --benchmark or --answer-key, not both")
    pattern = video_pattern(video_from_id) if video_from_id is not None else None
    renames = parse_assignments(rename, "--rename", integer=False)
    options = TableOptions(
        wide=wide,
        id_column=id_column,
        model=model,
        frames=parse_assignments(frames, "--frames", integer=True),
        rename=renames,
        wide_values=wide_values,
        empty=empty,
        video_from_id=video_from_id,
    )
    key: AnswerKey | None = None
    if benchmark:
        key = key_from_benchmark(benchmark)
    elif answer_key:
        key = load_answer_key(answer_key)
    check_absent_mode(absent, key)
    recorded: ImportOptions = {
        "wide": wide or None,
        "id_column": id_column,
        "model": model,
        "frames": options.frames or None,
        "rename": renames or None,
        "wide_values": wide_values if wide else None,
        "empty": empty if wide else None,
        "benchmark": source_record(benchmark) if benchmark else None,
        "answer_key": source_record(answer_key) if answer_key else None,
        "absent": absent if key is not None else None,
        "video_from_id": video_from_id,
    }
    tables: list[pd.DataFrame] = []
    notes: list[str] = []
    sources = []
    left_out: Counter[str] = Counter()
    for f in files:
        rows, file_notes = import_table(f, options, key=key, left_out=left_out)
        tables.append(rows)
        notes.extend(file_notes)
        sources.append(source_record(f, rows=len(rows)))
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    video_of = None
    if pattern is not None:

        def video_of(item_id: str) -> str:
            return video_of_id(pattern, item_id) or item_id

    return finish_import(
        importer="table",
        run_dir=run_dir,
        files=[str(f) for f in files],
        rows=table,
        record=import_record("table", sources, **recorded),
        skipped=left_out,
        notes=notes,
        dry_run=dry_run,
        key=key,
        absent=absent,
        video_of=video_of,
    )

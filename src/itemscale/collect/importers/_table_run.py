"""The whole `table` import: its options, the answer key, every file, one merge.

`import_table` parses one file and writes nothing; this is the run the CLI's `import table`
makes of several, and `run_import("table", ...)` makes the same one from Python, so that the
two cannot record different options in `run.json`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ...core.responses import duplicated_keys
from ._absent import DEFAULT_ABSENT, check_absent_mode
from ._common import ImportInputError, ImportOptions, import_record, source_record
from ._finish import finish_import
from ._run import TABLE_OPTIONS, importer
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
    suggested_pattern,
)
from ._video_ids import video_of_id, video_pattern

#: `{model}` in a `--model-from-name` pattern: the part of the file name that is the model.
MODEL_FIELD = "{model}"


def file_name_pattern(pattern: str) -> re.Pattern[str]:
    """`--model-from-name PATTERN` as a regular expression over a file's name: `{model}` (once)
    is the model, as short as the rest allows; `*` is any run of characters; everything else
    is literal (`{model}_V1_short_predictions_wide.csv`, `{model}_*.csv`)."""
    if pattern.count(MODEL_FIELD) != 1:
        raise ImportInputError(
            f"--model-from-name {pattern!r}: name the model's place once with {MODEL_FIELD} "
            "(e.g. '{model}_V1_short_predictions_wide.csv')"
        )
    before, after = pattern.split(MODEL_FIELD)

    def literal(text: str) -> str:
        return ".*".join(re.escape(part) for part in text.split("*"))

    return re.compile(f"{literal(before)}(?P<model>.+?){literal(after)}")


def model_of_file(pattern: re.Pattern[str], path: str | os.PathLike[str]) -> str:
    """The model a file's name holds, by `file_name_pattern`; a name it does not match is an
    error naming the file."""
    name = Path(path).name
    m = pattern.fullmatch(name)
    if m is None:
        raise ImportInputError(
            f"{path}: the file name does not match --model-from-name (as a regular expression: "
            f"{pattern.pattern}), so it names no model"
        )
    return m["model"]


def _one_model_twice(table: pd.DataFrame, model: str) -> None:
    """Several files under one `--model` that answer one (item, configuration) each: most
    likely one file per model, which `--model-from-name` imports (said before the merge's
    'imported twice')."""
    key = ["model", "item_id", "series", "config_id", "repeat"]
    dup = duplicated_keys(table, key, keep=False)
    if not dup.any():
        return
    twice = table.loc[dup].sort_values(key).head(2)
    # a row's source is `table:NAME:LINE`
    first, second = (str(s).split(":", 1)[-1].rsplit(":", 1)[0] for s in twice["source"])
    item, label = twice.iloc[0]["item_id"], twice.iloc[0]["config_label"]
    raise ImportInputError(
        f"--model {model}: {first} and {second} both answer item {item!r} at {label!r} for "
        "this one model; --model applies to every file (one model's results split across "
        "files). One file per model? Give --model-from-name PATTERN instead, e.g. "
        f"'{suggested_pattern(second)}'"
    )


@importer(
    "table",
    order=10,
    help="CSV, TSV, JSONL or Parquet with one row per (model, item, config, repeat)",
    # a space after each comma, so the help wraps between column names, never inside one
    description="Columns: model, item_id, config, frames and correct (0/1) or score "
    "([0,1]); optional video_id, order, answer, confidence, repeat, prediction, reference, "
    "status, series, task_kind, pixels, visual_tokens, latency_s and attr_* item "
    "attributes. frames == 0 is the text-only baseline. See docs/importers.md.",
    options=TABLE_OPTIONS,
)
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
    model_from_name: str | None = None,
) -> ImportSummary:
    """Import results tables into `run_dir`. `frames` and `rename` are `LABEL=N` and `SRC=DST`
    strings, as `--frames` and `--rename` take them; every other option is its CLI flag's.
    `model_from_name` (`--model-from-name PATTERN`) gives each file the model its name holds,
    so that one call imports a release's file per model."""
    if not files:
        raise ImportInputError("no input files (give one or more tables)")
    if benchmark and answer_key:
        raise ImportInputError("give --benchmark or --answer-key, not both")
    if model and model_from_name:
        raise ImportInputError(
            "give --model (one model for every file) or --model-from-name (each file's model "
            "from its name), not both"
        )
    name_pattern = file_name_pattern(model_from_name) if model_from_name else None
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
        "model_from_name": model_from_name,
    }
    tables: list[pd.DataFrame] = []
    notes: list[str] = []
    sources = []
    left_out: Counter[str] = Counter()
    for f in files:
        file_options = options
        if name_pattern is not None:
            file_options = replace(options, model=model_of_file(name_pattern, f))
        rows, file_notes = import_table(f, file_options, key=key, left_out=left_out)
        tables.append(rows)
        notes.extend(n for n in file_notes if n not in notes)  # one line for what files share
        sources.append(source_record(f, rows=len(rows)))
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if model and len(tables) > 1:
        _one_model_twice(table, model)
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

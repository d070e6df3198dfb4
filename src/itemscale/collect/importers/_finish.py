"""The last step of every importer: the key's absent items, the merge into the run, and the
summary of what happened."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator

from ...core.responses import ResponseRow
from ..items import Item
from ._absent import DEFAULT_ABSENT, AbsentItems, absent_items, check_absent_mode
from ._common import (
    ImportInputError,
    ImportRecord,
    SourceRecord,
    import_record,
    merge_into_run,
    rows_frame,
    rows_frame_from,
)
from ._summary import ImportSummary, summarise
from ._table_shape import AnswerKey, key_from_benchmark
from ._video_ids import video_pattern, videos_from_ids

#: What an import says when items name no video, and how to give them one.
NO_VIDEO_HINT = (
    "give --benchmark FILE (its video ids) or --video-from-id PATTERN (a regular expression "
    "matching the whole item id, its group 'video' the video; preset videomme: '001-1' is a "
    "question about video '001')"
)


def video_clusters(
    table: pd.DataFrame, video_from_id: str | None
) -> tuple[pd.DataFrame, str | None]:
    """Video ids read from item ids with `--video-from-id` (the same rule as `import table`),
    or, without it, a note counting the items that name no video: each is then its own
    bootstrap cluster, and items that share an unnamed video make every interval too narrow."""
    if video_from_id is not None:
        return videos_from_ids(table, video_pattern(video_from_id), video_from_id)
    own = sorted(set(table.loc[table["video_id"] == table["item_id"], "item_id"].tolist()))
    if not own:
        return table, None
    total = table["item_id"].nunique()
    return table, (
        f"{len(own)} of {total} items name no video (e.g. {', '.join(own[:3])}): each is its "
        f"own bootstrap cluster, so where items share a video the intervals are too narrow; "
        + NO_VIDEO_HINT
    )


def finish_import(
    *,
    importer: str,
    run_dir: str | os.PathLike[str],
    files: list[str],
    rows: pd.DataFrame,
    record: ImportRecord,
    skipped: Counter[str] | None = None,
    notes: list[str] | None = None,
    dry_run: bool = False,
    key: AnswerKey | None = None,
    absent: str = DEFAULT_ABSENT,
    video_of: Callable[[str], str] | None = None,
    items: Sequence[Item] = (),
) -> ImportSummary:
    """Merge `rows` into the run and summarise. With a `key` (the benchmark or answer key),
    its items without any row for a model are reported, and with `absent="noanswer"` added as
    wrong answers at every configuration of that model (`video_of` names their videos when the
    key does not). `items` are added to the run's items.jsonl where it lacks them."""
    mode = check_absent_mode(absent, key)
    reports: list[AbsentItems] = []
    if key is not None:
        extra, reports = absent_items(rows, key, mode, video_of=video_of)
        if extra is not None:
            added = rows_frame_from(extra, where_=f"absent items of {key.path}")
            rows = pd.concat([rows, added], ignore_index=True)
    merged = merge_into_run(run_dir, rows, record, dry_run=dry_run, items=items)
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
        absent=reports,
    )


class ImportContext(BaseModel):
    """What one import of a per-file tool was asked to do: the importer, and the values of its
    command line, built once by a run function for `finish_parsed_import`, so that every
    importer records the same options the same way."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: the registry name (`itemscale import KIND`), written into run.json's import record
    importer: str
    #: the tool's name in messages ("no rows in the VLMEvalKit import")
    tool: str
    #: `itemscale.core.responses.EXTRACTOR_VERSION` when the answers were re-extracted with it
    extractor_version: str
    run_dir: str
    configs: tuple[str, ...] = ()
    model: str | None = None
    benchmark: str | None = None
    dry_run: bool = False
    absent: str = DEFAULT_ABSENT
    video_from_id: str | None = None
    #: `--series NAME`: the series every file of the call is in (None: `default`)
    series: str | None = None
    #: `--rerun-of LABEL`: the import's other `--config` labels are a rerun of LABEL
    rerun_of: str | None = None

    @field_validator("run_dir", "benchmark", mode="before")
    @classmethod
    def _path_text(cls, value: object) -> object:
        return os.fspath(value) if isinstance(value, os.PathLike) else value


def finish_parsed_import(
    context: ImportContext,
    *,
    rows: list[ResponseRow],
    sources: list[SourceRecord],
    jobs: Sequence[tuple[Path, Any]],
    skipped: Counter[str],
    notes: list[str],
    items: Sequence[Item] = (),
) -> ImportSummary:
    """The shared ending of the per-file importers (lmms-eval, VLMEvalKit, and one of another
    package): refuse an import with no rows (saying why each was skipped), record the options
    and sources, then merge; the benchmark's items without a row are reported (and added with
    `absent="noanswer"`); items that name no video are counted, or given one by
    `video_from_id`. `items` (the questions the files asked) join the run's items.jsonl."""
    benchmark = context.benchmark
    table = rows_frame(rows, where_=f"{context.tool} import") if rows else pd.DataFrame()
    if table.empty:
        raise ImportInputError(
            "no rows to import: " + ", ".join(f"{k}: {v}" for k, v in skipped.items())
        )
    table, video_note = video_clusters(table, context.video_from_id)
    if video_note is not None:
        notes = [*notes, video_note]
    record = import_record(
        context.importer,
        sources,
        model=context.model,
        benchmark=str(Path(benchmark).resolve()) if benchmark else None,
        extractor_version=context.extractor_version,
        configs=list(context.configs) or None,
        absent=context.absent if benchmark else None,
        video_from_id=context.video_from_id,
        series=context.series,
        rerun_of=context.rerun_of,
    )
    return finish_import(
        importer=context.importer,
        run_dir=context.run_dir,
        files=[str(p) for p, _ in jobs],
        rows=table,
        record=record,
        skipped=skipped,
        notes=notes,
        dry_run=context.dry_run,
        key=key_from_benchmark(benchmark) if benchmark else None,
        absent=context.absent,
        items=items,
    )

"""Selections checked before a sweep runs: every item of every `selection` configuration has its
frames in the file, as many as the budget, inside its video; and what run.json records of them. A
bad selection stops the sweep before any model loads, naming the file, item and value."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING

from ..items import Item
from ..protocol import ListedFrames, Selection, SelectionError
from ._plan import PlannedConfig
from ._records import SelectionRecord, SessionSelection, SupersededSelection

if TYPE_CHECKING:
    from ..video import StreamIndex


def check_selections(
    configs: Sequence[PlannedConfig], items: Sequence[Item]
) -> tuple[list[PlannedConfig], dict[str, SelectionRecord]]:
    """The configurations as they run, and the run.json `selections` record per label. Frames
    count once duplicates are merged (an index listed twice, timestamps on one frame): a
    configuration in which a record gives fewer frames than its budget is a cap, `<=Kf` (same
    id). Raises `SelectionError`."""
    chosen = [p for p in configs if p.config.sampling.name == "selection"]
    if not chosen:
        return list(configs), {}
    import numpy as np

    from ..video import (
        MediaError,
        check_selection_count,
        policy_selection,
        remember_questions,
        selected_frames,
        selection_entry,
        stream_index,
    )

    remember_questions(items)

    indexes: dict[str, StreamIndex | None] = {}

    def index_of(path: str) -> StreamIndex | None:
        if path not in indexes:
            try:
                indexes[path] = stream_index(path)
            except (MediaError, OSError):
                indexes[path] = None  # the sweep records the cell's media_error
        return indexes[path]

    record: dict[str, SelectionRecord] = {}
    capped: dict[str, PlannedConfig] = {}
    for planned in chosen:
        config = planned.config
        selection = policy_selection(config.sampling)
        duplicates = items_with_duplicates = checked = 0
        listed: list[int] = []
        scored: list[float | None] = []
        if selection.by_question:  # a record no question matched is named before the items
            _check_every_record_matched(selection, planned, items, selection_entry)
        for item in items:
            if not planned.applies_to(item):
                continue
            entry = check_selection_count(selection, item.item_id, config.frames)
            scored.append(entry.frames_scored)
            index = index_of(item.video_path) if item.video_path is not None else None
            if index is None:  # what the file alone says: its distinct values
                listed.append(len(set(entry.values)))
                continue
            frames = selected_frames(
                selection,
                item.item_id,
                config.frames,
                video_frames=index.info.video_frames,
                frame_times=index.timestamps(np.arange(index.info.video_frames)),
            )
            listed.append(int(frames.indices.size))
            checked += 1
            duplicates += frames.duplicates
            items_with_duplicates += frames.duplicates > 0
        if not config.sampling.selection_cap and min(listed, default=config.frames) < config.frames:
            planned = _as_cap(planned)
            config = planned.config
            capped[planned.config_id] = planned
        known = [c for c in scored if c is not None]
        record[config.label] = {
            "selection": config.sampling.selection,
            "series": planned.series,
            "frames": config.frames,
            "path": selection.path,
            "format": selection.format,
            "unit": selection.unit,
            "sha256": selection.digest,
            "items_in_file": selection.n_records,
            "items_checked": checked,
            "duplicate_frames_removed": duplicates,
            "items_with_duplicates": items_with_duplicates,
            "config_id": config.config_id,
            "cap": bool(config.sampling.selection_cap),
            "frames_listed_min": min(listed, default=0),
            "frames_listed_mean": round(sum(listed) / len(listed), 4) if listed else 0.0,
            "frames_listed_max": max(listed, default=0),
            "frames_scored_mean": (
                round(sum(known) / len(known), 4) if known and len(known) == len(scored) else None
            ),
            "matched_by": "question" if selection.by_question else "id",
        }
    return [capped.get(p.config_id, p) for p in configs], record


def _as_cap(planned: PlannedConfig) -> PlannedConfig:
    """`selection_cap` set: the label reads `<=Kf`; the id, which carries the file's digest, is
    the same."""
    sampling = planned.config.sampling.model_copy(update={"selection_cap": True})
    config = planned.config.model_copy(update={"sampling": sampling})
    assert config.config_id == planned.config_id
    return replace(planned, config=config)


def _check_every_record_matched(
    selection: Selection,
    planned: PlannedConfig,
    items: Sequence[Item],
    entry_of: Callable[[Selection, str], ListedFrames | None],
) -> None:
    """In a file matched by question text, a record of a swept video that no item matched is an
    error."""
    chosen = [i for i in items if planned.applies_to(i)]
    used = {id(entry_of(selection, i.item_id)) for i in chosen}
    videos = {i.video_id for i in chosen} | {
        PurePath(i.video_path).stem for i in chosen if i.video_path
    }
    for (qid, question), entry in selection.by_question.items():
        if id(entry) not in used and (qid in videos or PurePath(qid).stem in videos):
            raise SelectionError(
                selection.path,
                f"{entry.where}: question {question!r} matches no question of video {qid!r} "
                "(ids repeat in this file: records are matched by (video, `question`))",
            )


def session_selections(record: Mapping[str, SelectionRecord]) -> dict[str, SessionSelection]:
    """Each session keeps its selections' digests (a later sweep's run.json `sweep` replaces this
    one's)."""
    return {
        label: {
            "path": v["path"],
            "sha256": v["sha256"],
            "duplicate_frames_removed": v["duplicate_frames_removed"],
        }
        for label, v in record.items()
    }


def _axis_place(series: str, label: str) -> tuple[str, str]:
    """The series and the label without the cap mark: `<=8f@56/selection:s` and
    `8f@56/selection:s` are one place."""
    return series, label.removeprefix("<=")


def superseded_selections(
    stored: Sequence[tuple[str, str, str, int]], configs: Sequence[PlannedConfig]
) -> dict[str, SupersededSelection]:
    """The stored selection configurations (config id, series, label, cells) whose place on the
    axis this sweep's configuration now holds under another id: one file per place, so an edited
    file's earlier cells are superseded, never a second budget under one label."""
    current = {
        _axis_place(p.series, p.config.label): p.config
        for p in configs
        if p.config.sampling.name == "selection"
    }
    out: dict[str, SupersededSelection] = {}
    for config_id, series, label, cells in stored:
        now = current.get(_axis_place(series, label))
        if now is not None and now.config_id != config_id:
            out[config_id] = {
                "label": label,
                "series": series,
                "cells": cells,
                "superseded_by": now.config_id,
                "current_label": now.label,
            }
    return out


def superseded_warning(config_id: str, record: SupersededSelection) -> str:
    """The sweep's warning for one superseded selection configuration."""
    return (
        f"selection {record['current_label']}: the file changed since {record['cells']} "
        f"cells were run with it (configuration {config_id}, now {record['superseded_by']}); "
        "the earlier cells stay stored but are superseded: analyze, report and compare read "
        "the current file's cells only"
    )

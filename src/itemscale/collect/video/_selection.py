"""Replaying a frame selection on a video: an item's listed frames, checked against the video
(the files are read by `itemscale.collect.protocol.read_selection`). Under a selection, a
configuration's frame count is a cap: a record lists 1..K frames.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np

from ..items import Item
from ..protocol import ListedFrames, SamplingPolicy, Selection, SelectionError, cached_selection


@dataclass(frozen=True)
class SelectedFrames:
    """The frames an item's selection gives one video: sorted unique indices, and how many
    frames the file repeated (removed, as every sampling policy never duplicates a frame)."""

    indices: np.ndarray
    duplicates: int
    listed: int


def policy_selection(sampling: SamplingPolicy) -> Selection:
    """The selection a `selection` sampling policy (as the protocol filled it in) replays."""
    path, digest = sampling.selection_path, sampling.selection_digest
    if sampling.name != "selection" or path is None or digest is None:
        raise ValueError(
            "a selection policy needs its file: build configurations with "
            "Protocol.configurations(), which fills in the path and digest"
        )
    return cached_selection(
        path,
        sampling.selection_format or "auto",
        digest,
        sampling.selection_order,
        sampling.selection_order_key,
    )


#: item id -> (video id, video file stem, question text) of the items a sweep runs: what a
#: file whose ids repeat (BOLT on MLVU names the video as `question_id`) is matched by
_QUESTIONS: dict[str, tuple[str, str, str]] = {}


def _text_key(text: str) -> str:
    return " ".join(text.split())


def remember_questions(items: Iterable[Item]) -> None:
    """Make the items' (video, question text) known to the selections replayed in this
    process: a file whose ids repeat is matched by them, not by id."""
    for item in items:
        stem = PurePath(item.video_path).stem if item.video_path else item.video_id
        _QUESTIONS[item.item_id] = (item.video_id, stem, _text_key(item.question))


def selection_entry(selection: Selection, item_id: str) -> ListedFrames | None:
    """The item's record: by id, or, in a file whose ids repeat, by (video, question text),
    whitespace runs read as one space."""
    entry = selection.entries.get(item_id)
    if entry is not None or not selection.by_question:
        return entry
    known = _QUESTIONS.get(item_id)
    if known is None:
        return None
    video, stem, question = known
    found = [
        e
        for (qid, text), e in selection.by_question.items()
        if _text_key(text) == question and qid in (video, stem, PurePath(qid).stem)
    ]
    return found[0] if len(found) == 1 else None


def check_selection_count(selection: Selection, item_id: str, frames: int) -> ListedFrames:
    """The item's entry, refused when missing, or when it lists more frames than the budget
    (the configuration's frame count is a cap: 1..K frames are replayed as listed)."""
    entry = selection_entry(selection, item_id)
    if entry is None:
        how = (
            "no record with its video and question text (ids repeat in this file: records "
            "are matched by (video, `question`))"
            if selection.by_question
            else "not in the selection"
        )
        raise SelectionError(
            selection.path,
            f"{how} ({selection.n_records} items there)",
            item_id=item_id,
        )
    if len(entry.values) > frames:
        raise SelectionError(
            selection.path,
            f"{len(entry.values)} frames listed ({entry.where}), more than the configuration's "
            f"{frames}",
            item_id=item_id,
        )
    return entry


def selected_frames(
    selection: Selection,
    item_id: str,
    frames: int,
    *,
    video_frames: int,
    frame_times: np.ndarray,
) -> SelectedFrames:
    """An item's selected frame indices for a video whose frames start at `frame_times`
    (seconds). A timestamp selects the frame on screen then (the last starting at or before
    it). Raises `SelectionError` for a missing item, more frames than `frames`, an index past
    the video's end or a timestamp past its duration (the last frame's start plus one frame)."""
    entry = check_selection_count(selection, item_id, frames)
    values = np.asarray(entry.values, dtype=np.float64)
    if entry.unit == "index":
        past = values[values >= video_frames]
        if past.size:
            raise SelectionError(
                selection.path,
                f"frame index {int(past[0])} is past the video's end ({video_frames} frames: "
                f"0..{video_frames - 1})",
                item_id=item_id,
            )
        raw = values.astype(np.int64)
    else:
        step = float(np.median(np.diff(frame_times))) if frame_times.size > 1 else 0.0
        duration = float(frame_times[-1]) + step if frame_times.size else 0.0
        past = values[values > duration + 1e-6]
        if past.size:
            raise SelectionError(
                selection.path,
                f"timestamp {past[0]:g} s is past the video's duration ({duration:g} s)",
                item_id=item_id,
            )
        raw = np.searchsorted(frame_times, values + 1e-6, side="right") - 1
        raw = np.clip(raw, 0, video_frames - 1).astype(np.int64)
    indices = np.unique(raw)
    return SelectedFrames(indices, int(raw.size - indices.size), int(raw.size))

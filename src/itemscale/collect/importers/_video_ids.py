"""Video ids read from item ids: `--video-from-id PATTERN`, for tables that name no videos.

The bootstrap resamples videos, because the questions of one video are not independent. A
table without video ids makes every item its own cluster, which narrows every interval; yet
Video-MME's question ids say their video (`001-1`, `001-2` and `001-3` ask about video `001`).
Reading it from the id is a guess about someone else's naming, so it is never done unasked: the
user names the pattern, and the summary says how many items it grouped.
"""

from __future__ import annotations

import re
from typing import Final

import pandas as pd

from ._common import ImportInputError

#: `--video-from-id videomme`: Video-MME's question ids (`001-1`, `001-2`) name their video.
VIDEO_ID_PRESETS: Final[dict[str, str]] = {"videomme": r"(?P<video>\d+)-\d+"}


def video_pattern(text: str) -> re.Pattern[str]:
    """`--video-from-id PATTERN`: a preset name or a regular expression matched against the
    whole item id, whose group `video` (or first group) is the video id."""
    source = VIDEO_ID_PRESETS.get(text, text)
    try:
        pattern = re.compile(source)
    except re.error as exc:
        raise ImportInputError(
            f"--video-from-id {text!r}: not a regular expression ({exc})"
        ) from None
    if pattern.groups < 1:
        raise ImportInputError(
            f"--video-from-id {text!r}: the pattern needs a group for the video id, e.g. "
            r"'(?P<video>\d+)-\d+' (or the preset: " + ", ".join(VIDEO_ID_PRESETS) + ")"
        )
    return pattern


def video_of_id(pattern: re.Pattern[str], item_id: str) -> str | None:
    m = pattern.fullmatch(item_id)
    if m is None:
        return None
    video = m.group("video") if "video" in pattern.groupindex else m.group(1)
    return video or None


def videos_from_ids(
    table: pd.DataFrame, pattern: re.Pattern[str], text: str
) -> tuple[pd.DataFrame, str]:
    """Video ids read from the item ids of the rows that have no other (their video is their
    own id): the bootstrap's clusters when neither the table nor a key names videos."""
    own = (table["video_id"] == table["item_id"]).to_numpy()
    ids = sorted(set(table.loc[own, "item_id"].tolist()))
    found = {i: video_of_id(pattern, i) for i in ids}
    unmatched = [i for i, v in found.items() if v is None]
    if ids and len(unmatched) == len(ids):
        raise ImportInputError(
            f"--video-from-id {text!r}: no item id matches it (e.g. {ids[0]!r}); the pattern "
            "must match a whole id"
        )
    mapped = table.loc[own, "item_id"].map(lambda i: found[i] or i)
    table = table.copy()
    table.loc[own, "video_id"] = mapped.to_numpy()
    videos = {v for v in found.values() if v is not None}
    note = (
        f"video ids from item ids (--video-from-id {text}): {len(ids) - len(unmatched)} items "
        f"on {len(videos)} videos are resampled by video"
    )
    if unmatched:
        note += (
            f"; {len(unmatched)} id(s) do not match and stay their own cluster "
            f"(e.g. {', '.join(unmatched[:3])})"
        )
    return table, note

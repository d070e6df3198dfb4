"""Typed media failures: a sweep records the reason per cell (`media_error`) and moves on."""

from __future__ import annotations

from typing import Final, Literal, get_args

from ...core.errors import ItemscaleError

MediaErrorReason = Literal[
    "missing_file", "empty_file", "truncated", "unsupported_codec", "unseekable", "decode_error"
]
MEDIA_ERROR_REASONS: Final[tuple[str, ...]] = get_args(MediaErrorReason)


class MediaError(ItemscaleError):
    """A video that cannot give the frames asked for. `reason` is one of `MEDIA_ERROR_REASONS`."""

    def __init__(self, reason: MediaErrorReason, path: str, detail: str = "") -> None:
        if reason not in MEDIA_ERROR_REASONS:
            raise ValueError(f"unknown media error reason {reason!r}")
        self.reason: MediaErrorReason = reason
        self.path = path
        self.detail = detail
        super().__init__(f"{path}: {reason}" + (f": {detail}" if detail else ""))

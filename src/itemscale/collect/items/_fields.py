"""What every benchmark loader shares: its error type and the steps from a raw record to an `Item`.

The Parquet loaders (Video-MME, MLVU, LongVideoBench) and the JSON loaders (MLVU's generation
tasks, AVSD) read different containers but must name a bad record the same way (file, row,
field) and build items through the same validation, so a fault is never a bare pydantic trace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...core.errors import ItemscaleError, location_text
from ...core.items import Item


class BenchmarkFileError(ItemscaleError, ValueError):
    """A benchmark file that cannot be read as the benchmark it claims to be."""


def video_path(video_dir: str | os.PathLike[str] | None, name: str) -> str:
    return str(Path(video_dir) / name) if video_dir is not None else name


def checked_item(where: str, **fields: Any) -> Item:
    try:
        return Item(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = location_text(err["loc"], empty="(item)")
        raise BenchmarkFileError(f"{where}: field '{loc}': {err['msg']}") from exc


def text_of(value: Any) -> str:
    return "" if value is None else str(value).strip()

"""Whether an existing file is one that `itemscale compare` wrote, so that `--force` may
overwrite it (and nothing else: a run's data, a report, a user's notes).

A page is compare's when its head carries the generator mark compare writes; a JSON file when
it is an object with the comparison's top-level keys (the `CompareResult` layout, which carries
no mark of its own so that `CompareResult.model_validate_json` reads it back unchanged).
"""

from __future__ import annotations

import json
from pathlib import Path

#: a file larger than this is not read to recognise it (compare's own outputs are far smaller)
MAX_RECOGNISED_BYTES = 64 * 2**20
#: the top-level keys of every `compare --json` layout
_JSON_KEYS = frozenset({"schema_version", "a", "b", "counts", "answers", "verdicts"})
#: how far into a page its head (and the generator mark) is looked for
_HEAD_BYTES = 4096


def is_compare_output(path: Path) -> bool:
    """True when `path` is a regular file that an earlier `compare --json` or `--html` wrote."""
    from ..report import COMPARE_PAGE_GENERATOR

    if path.is_symlink() or not path.is_file():
        return False
    if path.stat().st_size > MAX_RECOGNISED_BYTES:
        return False
    with path.open("rb") as fh:
        head = fh.read(_HEAD_BYTES)
        if head.lstrip().startswith(b"<!DOCTYPE html>"):
            return COMPARE_PAGE_GENERATOR.encode() in head
        text = head + fh.read()
    try:
        data = json.loads(text.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError too
        return False
    return (
        isinstance(data, dict)
        and data.keys() >= _JSON_KEYS
        and isinstance(data["a"], dict)
        and data["a"].get("name") == "A"
    )

"""The run folder's items.jsonl as an import adds to it: the questions the imported files asked.

The report's item explorer shows and searches each item's question from the run's items.jsonl
(`itemscale.report.find_items_file`). An lmms-eval log holds every question in its samples'
`input`, so its import keeps them there, where a run imported from a log would otherwise show
an empty question column. Items already in the file are kept as they are (the first import, or
a user's own item file, decides an item's record); a file that is not an item file is the
user's and is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..items import ITEMS_FILE, Item, ItemFileError, read_items_jsonl, write_items_jsonl


def add_items(run_path: Path, items: Sequence[Item]) -> int:
    """Add to RUN/items.jsonl the items it lacks (by item id; the first record of an id in
    `items` wins); returns how many were added. Called under the run's lock."""
    if not items:
        return 0
    path = run_path / ITEMS_FILE
    stored: list[Item] = []
    if path.exists():
        try:
            stored = read_items_jsonl(path)
        except ItemFileError:
            return 0
    known = {item.item_id for item in stored}
    added: dict[str, Item] = {}
    for item in items:
        if item.item_id not in known:
            added.setdefault(item.item_id, item)
    if added:
        write_items_jsonl(path, [*stored, *added.values()])
    return len(added)

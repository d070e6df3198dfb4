"""Item records and the loaders that produce them."""

from ._records import (
    ITEMS_SCHEMA_VERSION,
    OPTION_LETTERS,
    DialogueTurn,
    EvidenceSpan,
    Item,
    ItemFileError,
    read_items_jsonl,
    write_items_jsonl,
)

__all__ = [
    "ITEMS_SCHEMA_VERSION",
    "OPTION_LETTERS",
    "DialogueTurn",
    "EvidenceSpan",
    "Item",
    "ItemFileError",
    "read_items_jsonl",
    "write_items_jsonl",
]

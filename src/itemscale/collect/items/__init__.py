"""Item records and the loaders that produce them."""

from ...core.items import (
    ITEMS_FILE,
    OPTION_LETTERS,
    DialogueTurn,
    EvidenceSpan,
    Item,
    ItemFileError,
    read_items_jsonl,
    write_items_jsonl,
)
from ._benchmarks import (
    load_benchmark,
    load_longvideobench,
    load_mlvu,
    load_videomme,
    strip_option_prefix,
)
from ._fields import BENCHMARK_LOADERS, BenchmarkFileError, BenchmarkLoader
from ._generation import load_avsd, load_mlvu_generation

__all__ = [
    "BENCHMARK_LOADERS",
    "ITEMS_FILE",
    "OPTION_LETTERS",
    "BenchmarkFileError",
    "BenchmarkLoader",
    "DialogueTurn",
    "EvidenceSpan",
    "Item",
    "ItemFileError",
    "load_avsd",
    "load_benchmark",
    "load_longvideobench",
    "load_mlvu",
    "load_mlvu_generation",
    "load_videomme",
    "read_items_jsonl",
    "strip_option_prefix",
    "write_items_jsonl",
]

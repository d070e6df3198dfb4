"""Item records and the loaders that produce them."""

from ._benchmarks import (
    BENCHMARK_LOADERS,
    BenchmarkFileError,
    BenchmarkLoader,
    detect_benchmark,
    load_avsd,
    load_benchmark,
    load_longvideobench,
    load_mlvu,
    load_mlvu_generation,
    load_videomme,
    strip_option_prefix,
)
from ._generation import AVSD_TASK_TYPE, AVSD_UNDISCLOSED
from ._records import (
    ITEMS_FILE,
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
    "AVSD_TASK_TYPE",
    "AVSD_UNDISCLOSED",
    "BENCHMARK_LOADERS",
    "ITEMS_FILE",
    "ITEMS_SCHEMA_VERSION",
    "OPTION_LETTERS",
    "BenchmarkFileError",
    "BenchmarkLoader",
    "DialogueTurn",
    "EvidenceSpan",
    "Item",
    "ItemFileError",
    "detect_benchmark",
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

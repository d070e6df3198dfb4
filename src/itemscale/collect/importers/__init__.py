"""Importers: results of other tools (lmms-eval, VLMEvalKit, any table) into the response table.

Each importer only parses; `finish_import` merges the rows into a run directory (idempotently,
refusing conflicting answers) and returns the summary the CLI prints. `run_import(kind, ...)` is
the whole import the CLI runs, by kind (`IMPORTERS`). `itemscale.collect.importers.kit` is what an
importer of another tool needs, public (docs/extending.md, "An importer").
"""

from . import kit
from ._absent import ABSENT_MARKER, ABSENT_MODES, DEFAULT_ABSENT, AbsentItems
from ._common import (
    ImportConflictError,
    ImportInputError,
    MergeResult,
    import_record,
    merge_into_run,
    source_record,
)
from ._config_ids import LABEL_CONFIG_ID_VERSION, label_config_id, series_config_id
from ._finish import finish_import
from ._run import IMPORTERS, Importer, ImportOption, run_import
from ._summary import ImportSummary, summarise
from ._table import import_table
from ._table_records import frame_records, read_table_records
from ._table_shape import (
    AnswerKey,
    KeyEntry,
    TableOptions,
    frames_from_label,
    key_from_benchmark,
    load_answer_key,
    parse_assignments,
    pixels_from_label,
)

__all__ = [
    "ABSENT_MARKER",
    "ABSENT_MODES",
    "DEFAULT_ABSENT",
    "IMPORTERS",
    "LABEL_CONFIG_ID_VERSION",
    "AbsentItems",
    "AnswerKey",
    "ImportConflictError",
    "ImportInputError",
    "ImportOption",
    "ImportSummary",
    "Importer",
    "KeyEntry",
    "MergeResult",
    "TableOptions",
    "finish_import",
    "frame_records",
    "frames_from_label",
    "import_record",
    "import_table",
    "key_from_benchmark",
    "kit",
    "label_config_id",
    "load_answer_key",
    "merge_into_run",
    "parse_assignments",
    "pixels_from_label",
    "read_table_records",
    "run_import",
    "series_config_id",
    "source_record",
    "summarise",
]

"""Importers: results of other tools (lmms-eval, VLMEvalKit, any table) into the response table.

Each importer only parses; `finish_import` merges the rows into a run directory (idempotently,
refusing conflicting answers) and returns the summary the CLI prints.
"""

from ._common import (
    LABEL_CONFIG_ID_VERSION,
    ImportConflictError,
    ImportInputError,
    MergeResult,
    label_config_id,
    merge_into_run,
)
from ._finish import finish_import
from ._summary import ImportSummary, summarise
from ._table import import_table, read_table_records

__all__ = [
    "LABEL_CONFIG_ID_VERSION",
    "ImportConflictError",
    "ImportInputError",
    "ImportSummary",
    "MergeResult",
    "finish_import",
    "import_table",
    "label_config_id",
    "merge_into_run",
    "read_table_records",
    "summarise",
]

"""The response table (schema, Parquet IO, run directories), shared by every stage."""

from ._extract import EXTRACTOR_VERSION, extract_choice
from ._io import (
    RESPONSES_FILE,
    RUN_FILE,
    SchemaError,
    empty_responses,
    normalise_responses,
    read_responses,
    read_run,
    write_json_atomic,
    write_responses,
    write_run,
)
from ._schema import (
    ANSWERED_STATUSES,
    COLUMNS,
    NOANSWER,
    RESPONSE_SCHEMA,
    ROW_KEY,
    SCHEMA_VERSION,
    TEXT_ONLY_LABEL,
    Status,
    TaskKind,
)
from ._scoring import exact_match, normalize_answer, rouge_l, token_f1

__all__ = [
    "ANSWERED_STATUSES",
    "COLUMNS",
    "EXTRACTOR_VERSION",
    "NOANSWER",
    "RESPONSES_FILE",
    "RESPONSE_SCHEMA",
    "ROW_KEY",
    "RUN_FILE",
    "SCHEMA_VERSION",
    "TEXT_ONLY_LABEL",
    "SchemaError",
    "Status",
    "TaskKind",
    "empty_responses",
    "exact_match",
    "extract_choice",
    "normalise_responses",
    "normalize_answer",
    "read_responses",
    "read_run",
    "rouge_l",
    "token_f1",
    "write_json_atomic",
    "write_responses",
    "write_run",
]

"""The response table (schema, Parquet IO, run directories), shared by every stage."""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ..errors import renamed_attribute as _renamed_attribute
from ._extract import EXTRACTOR_VERSION, extract_choice
from ._io import (
    IMPORT_MARKER,
    RESPONSES_DIGEST_KEY,
    RESPONSES_FILE,
    RUN_FILE,
    UNUSED_BY_ANALYSIS,
    IncompleteRunError,
    SchemaError,
    duplicated_keys,
    empty_responses,
    mark_import_started,
    normalise_responses,
    read_provenance,
    read_response_columns,
    read_responses,
    read_run,
    responses_digest,
    superseded_configs,
    write_json_atomic,
    write_parquet_atomic,
    write_responses,
    write_run,
)
from ._safety import (
    ARTIFACT_MARKER,
    LOCK_FILE,
    MANIFEST_FILE,
    OutputFolderError,
    RunLockedError,
    check_replaceable,
    command_line,
    excerpt,
    redact,
    redact_value,
    register_secret,
    run_lock,
)
from ._schema import (
    ANSWERED_STATUSES,
    COLUMNS,
    NOANSWER,
    REQUIRED_COLUMNS,
    RERUN_REPEAT_BASE,
    RESPONSE_COLUMNS,
    ROW_KEY,
    SCORING_RULES,
    TEXT_ONLY_LABEL,
    ResponseColumn,
    ResponseRow,
    Status,
    TaskKind,
    option_margin,
    rerun_mask,
    without_reruns,
)
from ._scoring import (
    OpenAnswerScores,
    exact_match,
    normalise_answer,
    rouge_l,
    score_open_answer,
    token_f1,
)
from ._sources import SourceFile, same_file_pairs, same_file_sentence, source_files
from ._stack import (
    STACK_PACKAGES,
    repeated_sessions,
    stack_changes,
    stack_disagreements,
    stack_fields,
    stack_sources,
    stack_warnings,
    unrecorded_sessions,
)

__all__ = [
    "ANSWERED_STATUSES",
    "ARTIFACT_MARKER",
    "COLUMNS",
    "EXTRACTOR_VERSION",
    "IMPORT_MARKER",
    "LOCK_FILE",
    "MANIFEST_FILE",
    "NOANSWER",
    "REQUIRED_COLUMNS",
    "RERUN_REPEAT_BASE",
    "RESPONSES_DIGEST_KEY",
    "RESPONSES_FILE",
    "RESPONSE_COLUMNS",
    "ROW_KEY",
    "RUN_FILE",
    "SCORING_RULES",
    "STACK_PACKAGES",
    "TEXT_ONLY_LABEL",
    "UNUSED_BY_ANALYSIS",
    "IncompleteRunError",
    "OpenAnswerScores",
    "OutputFolderError",
    "ResponseColumn",
    "ResponseRow",
    "RunLockedError",
    "SchemaError",
    "SourceFile",
    "Status",
    "TaskKind",
    "check_replaceable",
    "command_line",
    "duplicated_keys",
    "empty_responses",
    "exact_match",
    "excerpt",
    "extract_choice",
    "mark_import_started",
    "normalise_answer",
    "normalise_responses",
    "option_margin",
    "read_provenance",
    "read_response_columns",
    "read_responses",
    "read_run",
    "redact",
    "redact_value",
    "register_secret",
    "repeated_sessions",
    "rerun_mask",
    "responses_digest",
    "rouge_l",
    "run_lock",
    "same_file_pairs",
    "same_file_sentence",
    "score_open_answer",
    "source_files",
    "stack_changes",
    "stack_disagreements",
    "stack_fields",
    "stack_sources",
    "stack_warnings",
    "superseded_configs",
    "token_f1",
    "unrecorded_sessions",
    "without_reruns",
    "write_json_atomic",
    "write_parquet_atomic",
    "write_responses",
    "write_run",
]


#: Names renamed by issue 27 (one spelling: the project writes British English), kept for one
#: release with a DeprecationWarning.
_RENAMED = {"normalize_answer": "normalise_answer"}


if not _TYPE_CHECKING:  # mypy checks every name imported from this face, old ones refused

    def __getattr__(name: str) -> _Any:
        return _renamed_attribute(__name__, globals(), _RENAMED, name)

"""The response table: the one format every stage writes or reads, one row per (model, item,
configuration, repeat). Upstream stages only write it, downstream stages only read it; the column
list below is the contract, and `SCHEMA_VERSION` in the Parquet metadata lets a reader refuse a
newer file and migrate an older one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal, TypedDict

import numpy as np
import pandas as pd
import pyarrow as pa

#: Metadata key (in the Parquet schema metadata) that carries the schema version.
SCHEMA_VERSION_KEY: Final[bytes] = b"itemscale.schema_version"

#: The parsed answer recorded when a multiple-choice output names no option (never a guess).
NOANSWER: Final[str] = "NOANSWER"

#: The rules by which a multiple-choice answer is chosen (the response table's `scoring_rule`):
#: `letter`, the model generates the option's letter (its probability, where the backend gives
#: one, read off the next-token distribution over the letters); `likelihood`, each option's text
#: is scored as the reply and the most likely option is the answer.
SCORING_RULES: Final[tuple[str, ...]] = ("letter", "likelihood")

#: Label of the zero-frame, text-only baseline configuration.
TEXT_ONLY_LABEL: Final[str] = "text-only"


class Status(StrEnum):
    """Outcome of one cell. Only `ok` and `noanswer` are answers; the rest are failures that the
    matched grid reports instead of silently dropping."""

    OK = "ok"
    NOANSWER = "noanswer"
    MEDIA_ERROR = "media_error"
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"

    @property
    def answered(self) -> bool:
        return self in (Status.OK, Status.NOANSWER)


ANSWERED_STATUSES: Final[frozenset[str]] = frozenset({Status.OK.value, Status.NOANSWER.value})


class TaskKind(StrEnum):
    MCQA = "mcqa"
    OPEN_QA = "open_qa"
    SUMMARY = "summary"
    DIALOGUE = "dialogue"


#: The kinds of value a response column holds: each has one Arrow type (the Parquet file), one
#: SQLite type (the run store; a list is stored as JSON text) and one Python type (a row).
ColumnKind = Literal["text", "real", "integer", "integer_list", "real_list"]

_ARROW: Final[dict[str, pa.DataType]] = {
    "text": pa.string(),
    "real": pa.float64(),
    "integer": pa.int64(),
    "integer_list": pa.list_(pa.int64()),
    "real_list": pa.list_(pa.float64()),
}
_SQL: Final[dict[str, str]] = {
    "text": "TEXT",
    "real": "REAL",
    "integer": "INTEGER",
    "integer_list": "TEXT",
    "real_list": "TEXT",
}


#: Which part of a row a column belongs to, by what decides its value: `cell` (before anything
#: runs), `frames` (the frames sent), `outcome` (the reply and its scores), `session` (the sweep
#: session that recorded it). The sweep builds a row from these parts.
RowPart = Literal["cell", "frames", "outcome", "session"]
ROW_PARTS: Final[tuple[RowPart, ...]] = ("cell", "frames", "outcome", "session")


@dataclass(frozen=True, slots=True)
class ResponseColumn:
    """One column: the single definition the Parquet schema, the store's `cells` table and its
    migrations and the static row shapes (`_row_fields`) derive from."""

    name: str
    kind: ColumnKind
    part: RowPart
    #: A required column is never null (Parquet `nullable=False`, SQLite `NOT NULL`).
    required: bool = False
    #: The `SCHEMA_VERSION` that added it (the store appends later columns by migration).
    since: int = 1

    @property
    def arrow_type(self) -> pa.DataType:
        return _ARROW[self.kind]

    @property
    def sql_type(self) -> str:
        return _SQL[self.kind]

    def arrow_field(self) -> pa.Field:
        return pa.field(self.name, self.arrow_type, nullable=not self.required)


#: The response table's columns, in order: the one definition of a row.
RESPONSE_COLUMNS: Final[tuple[ResponseColumn, ...]] = (
    ResponseColumn("model", "text", "cell", required=True),
    ResponseColumn("item_id", "text", "cell", required=True),
    ResponseColumn("video_id", "text", "cell", required=True),
    ResponseColumn("task_kind", "text", "cell", required=True),
    # The budget axis the configuration belongs to ("default" unless a run compares
    # protocols, e.g. two sampling policies or cached vs raw pipelines).
    ResponseColumn("series", "text", "cell", required=True),
    ResponseColumn("config_id", "text", "cell", required=True),
    ResponseColumn("config_label", "text", "cell", required=True),
    ResponseColumn("axis_order", "real", "cell", required=True),
    ResponseColumn("frames", "integer", "cell", required=True),
    ResponseColumn("effective_frames", "integer", "frames"),
    ResponseColumn("pixels", "integer", "frames"),
    ResponseColumn("sampling", "text", "cell"),
    ResponseColumn("pipeline", "text", "cell"),
    ResponseColumn("repeat", "integer", "cell", required=True),
    ResponseColumn("status", "text", "outcome", required=True),
    ResponseColumn("error", "text", "outcome"),
    ResponseColumn("raw_text", "text", "outcome"),
    ResponseColumn("answer", "text", "outcome"),
    ResponseColumn("correct", "real", "outcome"),
    ResponseColumn("score", "real", "outcome"),
    ResponseColumn("token_f1", "real", "outcome"),
    ResponseColumn("rouge_l", "real", "outcome"),
    ResponseColumn("exact_match", "real", "outcome"),
    ResponseColumn("confidence", "real", "outcome"),
    # JSON object {option letter: probability}; JSON keeps Parquet readers of every
    # language able to read it without map-type support.
    ResponseColumn("option_probs", "text", "outcome"),
    # Top minus runner-up option probability (the seed paper's `base_margin`): unlike
    # `confidence`, it says how close the second choice was.
    ResponseColumn("margin", "real", "outcome", since=2),
    # `SCORING_RULES`; None: open-ended items, failures, unknown (imports).
    ResponseColumn("scoring_rule", "text", "outcome", since=3),
    ResponseColumn("reference", "text", "cell"),
    ResponseColumn("visual_tokens", "integer", "outcome"),
    ResponseColumn("frame_indices", "integer_list", "frames"),
    ResponseColumn("frame_timestamps", "real_list", "frames"),
    ResponseColumn("latency_s", "real", "outcome"),
    # JSON object of item attributes (duration group, task type, category, ...) used by
    # `analyze --by`.
    ResponseColumn("attributes", "text", "cell"),
    ResponseColumn("cell_id", "text", "cell"),
    ResponseColumn("source", "text", "cell"),
    # The sweep session (run.json `sessions[].session_id`) that produced the row, so its
    # software stack is known; None: imported rows, cells stored before the column.
    ResponseColumn("session_id", "integer", "session", since=4),
    # A rerun (`RERUN_REPEAT_BASE`): the repeat it executes again; no measure's matched grid
    # holds it. None: an ordinary row.
    ResponseColumn("rerun_of", "integer", "cell", since=5),
)

#: The first repeat number a rerun row takes (`rerun_of`): above every repeat a protocol may
#: ask for (`protocol.MAX_REPEATS`), so a rerun never takes the place of a planned cell and
#: every reader of repeat 0 (the binary measures, the explorer, the audit) never sees one.
RERUN_REPEAT_BASE: Final[int] = 1000

#: The response table's schema version, the version of its newest column (2 `margin`, 3
#: `scoring_rule`, 4 `session_id`, 5 `rerun_of`); a change that added no column would write its
#: number here instead.
SCHEMA_VERSION: Final[int] = max(c.since for c in RESPONSE_COLUMNS)


class ResponseRow(TypedDict, total=False):
    """One row as a producer builds it before `normalise_responses`: `RESPONSE_COLUMNS`' names
    and Python types, every key optional (normalising fills the rest with null). Written by
    `python -m itemscale.core.responses._row_fields`, never by hand: mypy needs the fields
    spelled out."""

    # <row fields sequence=list>
    model: str
    item_id: str
    video_id: str
    task_kind: str
    series: str
    config_id: str
    config_label: str
    axis_order: float
    frames: int
    effective_frames: int | None
    pixels: int | None
    sampling: str | None
    pipeline: str | None
    repeat: int
    status: str
    error: str | None
    raw_text: str | None
    answer: str | None
    correct: float | None
    score: float | None
    token_f1: float | None
    rouge_l: float | None
    exact_match: float | None
    confidence: float | None
    option_probs: str | None
    margin: float | None
    scoring_rule: str | None
    reference: str | None
    visual_tokens: int | None
    frame_indices: list[int] | None
    frame_timestamps: list[float] | None
    latency_s: float | None
    attributes: str | None
    cell_id: str | None
    source: str | None
    session_id: int | None
    rerun_of: int | None
    # </row fields>


#: The Parquet schema of `responses.parquet`, derived from `RESPONSE_COLUMNS`.
RESPONSE_SCHEMA: Final[pa.Schema] = pa.schema([c.arrow_field() for c in RESPONSE_COLUMNS])

COLUMNS: Final[tuple[str, ...]] = tuple(RESPONSE_SCHEMA.names)
REQUIRED_COLUMNS: Final[frozenset[str]] = frozenset(
    f.name for f in RESPONSE_SCHEMA if not f.nullable
)
#: Identity of a row: no two rows may share it.
ROW_KEY: Final[tuple[str, ...]] = ("model", "item_id", "config_id", "repeat")


def rerun_mask(df: pd.DataFrame) -> np.ndarray:
    """Rows with `rerun_of` set (none without the column): no measure's grid holds them."""
    if "rerun_of" not in df.columns or df.empty:
        return np.zeros(len(df), dtype=bool)
    return np.asarray(df["rerun_of"].notna().to_numpy(), dtype=bool)


def without_reruns(df: pd.DataFrame) -> pd.DataFrame:
    """The table without its rerun rows (the same frame when it has none)."""
    mask = rerun_mask(df)
    return df.loc[~mask].reset_index(drop=True) if mask.any() else df


def option_margin(option_probs: Mapping[str, float] | None) -> float | None:
    """Top option probability minus the runner-up's (the top alone with one option); None
    without."""
    if not option_probs:
        return None
    top = sorted((float(p) for p in option_probs.values()), reverse=True)
    return top[0] - (top[1] if len(top) > 1 else 0.0)

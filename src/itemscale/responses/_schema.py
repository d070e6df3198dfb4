"""The response table: the one format every stage writes or reads.

Long format, one row per (model, item, configuration, repeat). Upstream stages (sweeps,
importers) only write it; downstream stages (measures, policies, audit, artifact) only read it.
The column list below is the contract; `SCHEMA_VERSION` goes into the Parquet metadata so a
reader can refuse a file written by a newer itemscale and migrate an older one.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

import pyarrow as pa

#: 2 added `margin` (top-two option probability margin); 3 added `scoring_rule`.
SCHEMA_VERSION: Final[int] = 3

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


#: The response table's columns, in order. Nullable unless listed in REQUIRED_COLUMNS.
RESPONSE_SCHEMA: Final[pa.Schema] = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("item_id", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("task_kind", pa.string(), nullable=False),
        # The budget axis the configuration belongs to ("default" unless a run compares
        # protocols, e.g. two sampling policies or cached vs raw pipelines).
        pa.field("series", pa.string(), nullable=False),
        pa.field("config_id", pa.string(), nullable=False),
        pa.field("config_label", pa.string(), nullable=False),
        pa.field("axis_order", pa.float64(), nullable=False),
        pa.field("frames", pa.int64(), nullable=False),
        pa.field("effective_frames", pa.int64()),
        pa.field("pixels", pa.int64()),
        pa.field("sampling", pa.string()),
        pa.field("pipeline", pa.string()),
        pa.field("repeat", pa.int64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("raw_text", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("correct", pa.float64()),
        pa.field("score", pa.float64()),
        pa.field("token_f1", pa.float64()),
        pa.field("rouge_l", pa.float64()),
        pa.field("exact_match", pa.float64()),
        pa.field("confidence", pa.float64()),
        # JSON object {option letter: probability}; JSON keeps Parquet readers of every
        # language able to read it without map-type support.
        pa.field("option_probs", pa.string()),
        # Probability of the most likely option minus that of the runner-up (the seed paper's
        # `base_margin`): a stopping score that, unlike `confidence`, also says how close the
        # second choice was.
        pa.field("margin", pa.float64()),
        # How a multiple-choice answer was chosen (`SCORING_RULES`): `letter` (the model
        # generated the option's letter) or `likelihood` (each option's text scored as the
        # reply, the most likely one taken). None: open-ended items, failures, unknown (imports).
        pa.field("scoring_rule", pa.string()),
        pa.field("reference", pa.string()),
        pa.field("visual_tokens", pa.int64()),
        pa.field("frame_indices", pa.list_(pa.int64())),
        pa.field("frame_timestamps", pa.list_(pa.float64())),
        pa.field("latency_s", pa.float64()),
        # JSON object of item attributes (duration group, task type, category, ...) used by
        # `analyze --by`.
        pa.field("attributes", pa.string()),
        pa.field("cell_id", pa.string()),
        pa.field("source", pa.string()),
    ]
)

COLUMNS: Final[tuple[str, ...]] = tuple(RESPONSE_SCHEMA.names)
REQUIRED_COLUMNS: Final[frozenset[str]] = frozenset(
    f.name for f in RESPONSE_SCHEMA if not f.nullable
)
#: Identity of a row: no two rows may share it.
ROW_KEY: Final[tuple[str, ...]] = ("model", "item_id", "config_id", "repeat")


def option_margin(option_probs: Mapping[str, float] | None) -> float | None:
    """Top option probability minus the runner-up's (the top one alone with a single option);
    None without probabilities."""
    if not option_probs:
        return None
    top = sorted((float(p) for p in option_probs.values()), reverse=True)
    return top[0] - (top[1] if len(top) > 1 else 0.0)

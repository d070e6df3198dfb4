"""Two sides of the response table, item by item: the analysis behind `itemscale compare`.

It matches two chosen slices (`Side`: one model, series and configuration of one run folder) by
(item id, repeat), diffs their recorded set-up and their answers (video bootstrap, paired
tests), sets the gap against rerun noise and the one "same input" rule, and says what it found
in sentences (`CompareResult`). Choosing the sides, and asking the installed backends how frames
reached a model (`transport`), is the workflow's (`itemscale.workflows.compare`).
"""

from ._analysis import MAX_GROUPS, TOP_VIDEOS, compare_settings, compare_sides
from ._errors import CompareError
from ._floor import input_scale, named_rerun_floor, rerun_floor
from ._pairs import PAIR_COLUMNS, Matched, NamedRerun, Side, match_pairs
from ._provenance import Transport
from ._records import (
    COMPARE_SCHEMA_VERSION,
    STACK_FIELDS,
    AnswerDiff,
    AttributeGaps,
    BootstrapInfo,
    CompareResult,
    CompareSide,
    CompareTaskKind,
    FieldStatus,
    GroupGap,
    InputScale,
    MatchCounts,
    ProvenanceField,
    RerunNoise,
    SelectionSide,
    Verdict,
)

__all__ = [
    "COMPARE_SCHEMA_VERSION",
    "MAX_GROUPS",
    "PAIR_COLUMNS",
    "STACK_FIELDS",
    "TOP_VIDEOS",
    "AnswerDiff",
    "AttributeGaps",
    "BootstrapInfo",
    "CompareError",
    "CompareResult",
    "CompareSide",
    "CompareTaskKind",
    "FieldStatus",
    "GroupGap",
    "InputScale",
    "MatchCounts",
    "Matched",
    "NamedRerun",
    "ProvenanceField",
    "RerunNoise",
    "SelectionSide",
    "Side",
    "Transport",
    "Verdict",
    "compare_settings",
    "compare_sides",
    "input_scale",
    "match_pairs",
    "named_rerun_floor",
    "rerun_floor",
]

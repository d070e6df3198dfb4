"""Two sides of the response table, item by item: the analysis behind `itemscale compare`.

A comparison reads two chosen slices of response tables (`Side`: one model, series and
configuration of one run folder) and nothing else: it matches their rows by (item id, repeat),
diffs what each side recorded about its set-up, diffs the answers with the measures' video
bootstrap and paired tests, sets the gap against rerun noise and the one "same input" rule,
and says what it found in sentences (`CompareResult`, whose JSON is `compare --json`). It sits
beside the measures, below every box that runs a model: choosing the sides from run folders
and flags, and asking the installed backends how frames reached a model, is the workflow's
(`itemscale.workflows.compare`), which passes that in (`transport`).
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

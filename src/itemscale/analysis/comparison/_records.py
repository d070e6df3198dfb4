"""`compare`'s typed result: frozen records whose `model_dump_json()` is `compare --json`
(docs/compare.md, "JSON layout"); `schema_version` lets a reader refuse a newer layout, and a
layout-2 file's `{"value", "ci_low", "ci_high"}` intervals are still read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from ...core.errors import STORED, renamed_fields
from ..measures import AnswerAgreement, BootstrapRecord, Estimate, RerunFloor, SameInput

#: Version of the `compare --json` layout; bump it (and say so in docs/compare.md) on any change.
#: 2 added `task_kind`, `outcomes` (multiple choice and open-ended apart), the graded answers
#: of `same_input`, the `gap_open_ended` verdict, each side's frames used and selector record
#: and the `cost` verdict. 3: every interval is an `Estimate`, `{"value", "ci": [low, high]}`
#: (was `{"value", "ci_low", "ci_high"}`), as `analyze --json` writes one. 4: the resample
#: count is `bootstrap.bootstrap` (layouts 1 to 3 hold `bootstrap.n_boot`, read alike). 5: the
#: rerun floor the verdicts used (`rerun_floor`, measured or stated: no default), the answers
#: graded against it (`answer_agreement`) and the runs' own scale (`input_scale`); the graded
#: answers may be `cannot_tell`.
COMPARE_SCHEMA_VERSION = 5

#: `compare --task-kind`: multiple-choice items, or the open-ended ones
CompareTaskKind = Literal["mcqa", "open_ended"]

#: the set-up fields of the sessions' software stack (`itemscale.core.responses.stack_fields`)
STACK_FIELDS = (
    "transformers",
    "tokenizers",
    "torch",
    "CUDA",
    "cuDNN",
    "GPU",
    "numerics flags",
    "Pillow",
    "numpy",
    "PyAV",
    "FFmpeg",
    "Python",
    "itemscale",
)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SelectionSide(_Frozen):
    """A side that replays a frame selector's file (a `selection` series). An adaptive selector's
    frame count is a cap (`cap`): it is charged `frames_used_mean`, not the configuration's."""

    selection: str
    #: as run.json `sweep.selections` records them (None: not recorded, e.g. an import)
    path: str | None = None
    format: str | None = None
    sha256: str | None = None
    cap: bool
    frames_cap: int | None
    frames_used_mean: float | None
    frames_used_min: int | None
    frames_used_max: int | None
    #: the mean of the file's declared `frames_scored` (the selector's own cost), when given
    frames_scored_mean: float | None = None


class CompareSide(_Frozen):
    """One side: one (model, series, configuration) of one run folder."""

    name: Literal["A", "B"]
    run: str
    model: str
    series: str
    config: str
    config_id: str
    #: every repeat, every status
    rows: int
    items: int
    videos: int
    repeats: int
    #: mean recorded `effective_frames`
    frames_used_mean: float | None = None
    selection: SelectionSide | None = None


FieldStatus = Literal["differs", "same", "unknown"]


class ProvenanceField(_Frozen):
    """One set-up field as each side recorded it; None is unknown (not recorded), and a field
    unknown on either side is `unknown`, never `same`."""

    field: str
    a: str | None
    b: str | None
    status: FieldStatus
    #: e.g. the first line where two prompt texts differ
    note: str | None = None


class MatchCounts(_Frozen):
    """How the two sides' rows were matched, by (item id, repeat)."""

    #: (item, repeat) pairs answered (`ok` or `noanswer`) on both sides
    matched: int
    matched_items: int
    matched_videos: int
    only_a: int
    only_b: int
    #: pairs whose row on that side is a failure (no answer to compare)
    failed_a: int
    failed_b: int
    #: of the pairs whose raw text both sides recorded
    identical_raw: int
    raw_recorded: int
    #: parsed answers (option letter or NOANSWER), of the pairs with both
    identical_answers: int
    answers_recorded: int


class AnswerDiff(_Frozen):
    """Correctness on the matched pairs: the 2x2 table, each side's accuracy (or mean score),
    the difference B - A with its video-bootstrap interval and the clustered paired test."""

    kind: Literal["binary", "continuous"]
    #: binary only (None for scored answers)
    both_right: int | None
    both_wrong: int | None
    right_only_a: int | None
    right_only_b: int | None
    accuracy_a: Estimate
    accuracy_b: Estimate
    difference: Estimate
    #: Durkalski et al.'s clustered McNemar (videos as clusters); binary only
    clustered_statistic: float | None
    clustered_p: float | None
    exact_mcnemar_p: float | None
    #: two-sided p of a zero difference from the paired video bootstrap
    bootstrap_p: float | None


class RerunNoise(_Frozen):
    """With repeats: how often two runs of one side disagree on correctness (its noise floor)
    beside how often a run of A and a run of B disagree, on the items every repeat of both
    sides answered."""

    repeats_a: int
    repeats_b: int
    items: int
    noise_a: Estimate | None
    noise_b: Estimate | None
    between: Estimate


class GroupGap(_Frozen):
    """The gap inside one group of items (one value of an attribute, or one video)."""

    value: str
    pairs: int
    right_only_a: int
    right_only_b: int
    #: B minus A
    difference: float


class AttributeGaps(_Frozen):
    attribute: str
    groups: tuple[GroupGap, ...]


class InputScale(_Frozen):
    """The scale a comparison's own runs give where no rerun floor is known: the smallest share
    of answers that changes between two configurations of one series whose recorded input
    (visual tokens, else frames sent) differs on most of their matched items."""

    config_a: str
    config_b: str
    basis: Literal["visual_tokens", "effective_frames"]
    #: matched items (answered at both, not NOANSWER at both) whose answers differ
    changed: int
    items: int

    def sentence(self) -> str:
        what = "visual tokens" if self.basis == "visual_tokens" else "frames sent"
        return (
            f"the runs' own scale: {self.config_a} and {self.config_b}, whose recorded {what} "
            f"differ, change {self.changed} of {self.items} answers "
            f"({100 * self.changed / self.items:.2f}%)"
        )


class Verdict(_Frozen):
    """One sentence a reader can act on, with a key a program can test."""

    key: Literal["gap", "gap_open_ended", "same_input", "setup", "where", "cost"]
    sentence: str


class BootstrapInfo(BootstrapRecord):
    """The bootstrap behind compare's intervals: the resample count (`bootstrap`; a file of
    layout 1 to 3 holds it as `n_boot`, read as `bootstrap`), its seed and interval method."""

    method: str


class CompareResult(_Frozen):
    """What `itemscale compare` computes (docs/compare.md)."""

    schema_version: int = COMPARE_SCHEMA_VERSION
    a: CompareSide
    b: CompareSide
    #: differences first, then fields unknown on a side, then fields that agree
    provenance: tuple[ProvenanceField, ...]
    counts: MatchCounts
    #: `--task-kind` (None: every item)
    task_kind: CompareTaskKind | None = None
    #: multiple-choice accuracy where the matched pairs hold multiple-choice items, else the
    #: open-ended score (`outcomes` holds each kind apart)
    answers: AnswerDiff
    #: each task kind present on its own matched pairs, with its own interval and test
    outcomes: dict[CompareTaskKind, AnswerDiff]
    repeats: RerunNoise | None
    #: the one "same input" rule applied to the two sides (None: they look like different
    #: inputs, or the rule cannot tell)
    same_input: SameInput | None
    #: the rerun floor the verdicts grade answers against, measured or stated (schema 5)
    rerun_floor: RerunFloor | None = None
    #: the answers graded against it, whatever the rule decided (schema 5)
    answer_agreement: AnswerAgreement | None = None
    #: without a floor: the smallest answer change the runs show between configurations whose
    #: recorded input differs (schema 5; None: nothing recorded tells inputs apart)
    input_scale: InputScale | None = None
    by_attribute: tuple[AttributeGaps, ...]
    #: the videos whose items move the gap most (|right only in B - right only in A|)
    top_videos: tuple[GroupGap, ...]
    verdicts: tuple[Verdict, ...]
    bootstrap: BootstrapInfo

    @model_validator(mode="before")
    @classmethod
    def _layout_2_intervals(cls, data: Any) -> Any:
        """A layout-2 file's intervals (`ci_low`, `ci_high`) as the `ci` pair of an `Estimate`,
        and a layout 1 to 3 file's `bootstrap.n_boot` as `bootstrap`; its `schema_version` is
        kept, so a reader still sees which layout it read."""
        if not isinstance(data, dict) or data.get("schema_version") not in (1, 2, 3):
            return data
        boot = data.get("bootstrap")
        if isinstance(boot, dict):  # layouts 1 to 3 hold the count as n_boot: read silently
            stored = renamed_fields(boot, "BootstrapInfo", STORED, n_boot="bootstrap")
            data = {**data, "bootstrap": stored}
        if data["schema_version"] == 3:
            return data
        diff_keys = ("accuracy_a", "accuracy_b", "difference")
        out = {**data, "answers": _layout_2_block(data.get("answers"), diff_keys)}
        if isinstance(data.get("outcomes"), dict):
            out["outcomes"] = {
                kind: _layout_2_block(diff, diff_keys) for kind, diff in data["outcomes"].items()
            }
        out["repeats"] = _layout_2_block(data.get("repeats"), ("noise_a", "noise_b", "between"))
        return {k: v for k, v in out.items() if k in data}

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def _layout_2_block(block: Any, keys: tuple[str, ...]) -> Any:
    """A record of a layout-2 file with its intervals at `keys` read as `Estimate`s."""
    if not isinstance(block, dict):
        return block
    out = dict(block)
    for key in keys:
        interval = out.get(key)
        if isinstance(interval, dict) and "ci" not in interval:
            low, high = interval.get("ci_low"), interval.get("ci_high")
            ci = None if low is None or high is None else [low, high]
            out[key] = {"value": interval.get("value"), "ci": ci}
    return out

"""The typed records of `analyze --json`: an estimate, and the small records inside a block
(counts, the budget order, the same-input flags, the greedy cover, the paired tests, power,
the additive-model test, churn, membership, the small-sample record).

Every record is a frozen pydantic model that forbids unknown keys, and its
`model_dump(mode="json")` is the documented layout (docs/measures.md, "JSON layout") byte for
byte: fields are in the layout's key order, a key the layout leaves out is left out of the dump
(an optional field that was never set is not written, where one set to None is written as
null), integers stay integers and floats floats. The series blocks are in `_result_series`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from ...core.errors import renamed_fields, warn_renamed
from ...core.rerun_floor import AnswersGrade, RerunFloor
from ._same_input import SameInput


#: A number as the layout writes it: an integer stays one (`1`), a float stays one (`1.0`), so
#: that a record reads back to the same text; a boolean is not a number here. NaN is kept.
def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    return value


Number = Annotated[int | float, PlainValidator(_number)]


def omit_unset(record: BaseModel, out: Any) -> Any:
    """`out` (a record's dump) without the optional fields that were never set."""
    if isinstance(out, dict):
        fields = type(record).model_fields
        for name in fields.keys() - record.model_fields_set:
            field = fields[name]
            out.pop(field.serialization_alias or field.alias or name, None)
    return out


def given(**fields: object) -> dict[str, object]:
    """The keyword arguments that are not None: the optional keys a record is to write (an
    optional field never set is left out of its dump, where one set to None is written)."""
    return {name: value for name, value in fields.items() if value is not None}


class Record(BaseModel):
    """Base of every record of a JSON layout (the analysis's here, the cascade's and the
    intervention's in `policies`): frozen, unknown keys refused, an optional key the layout
    leaves out not written.

    `OMIT_UNSET`: an optional field never set is left out (the analysis layout); a layout that
    writes its defaults (a report's `schema_version`) sets it False. `OMIT_NONE`: fields left
    out whenever they are None (keys that only some blocks of a layout have)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, serialize_by_alias=True, ser_json_inf_nan="constants"
    )

    OMIT_UNSET: ClassVar[bool] = True
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> Any:
        out = handler(self)
        if self.OMIT_UNSET:
            out = omit_unset(self, out)
        if isinstance(out, dict):
            for name in self.OMIT_NONE:
                if name in out and out[name] is None:
                    del out[name]
        return out

    def as_json(self) -> dict[str, object]:
        """The record as its JSON object (what a file holds)."""
        return self.model_dump(mode="json")


class Count(Record):
    """What an estimate comes from: `k` items (or transitions) of `n`; `k` None: a mean score."""

    k: StrictInt | None
    n: StrictInt


class _Interval:
    """The interval ends of a record with a `ci` (an estimate, a best fixed budget)."""

    if TYPE_CHECKING:  # each record's own field, in its place among the others
        ci: list[int | float] | None

    @property
    def ci_low(self) -> float | None:
        return None if self.ci is None else self.ci[0]

    @property
    def ci_high(self) -> float | None:
        return None if self.ci is None else self.ci[1]


class _Unset:
    """No positional value given (`Estimate(value=..., ci=...)`)."""


_UNSET = _Unset()


class Estimate(_Interval, Record):
    """A point estimate and its 95% interval (None where undefined: no items, no resamples),
    with the count it comes from where it is a share or a mean of items.

    Its JSON form is `{"value": v, "ci": [low, high]}` (plus `"count": {"k", "n"}` where the
    layout has one); `ci_low` and `ci_high` are the interval's ends."""

    value: Number | None
    ci: Annotated[list[Number], Field(min_length=2, max_length=2)] | None
    count: Count | None = None

    def __init__(
        self,
        value: float | _Unset | None = _UNSET,
        ci_low: float | None = None,
        ci_high: float | None = None,
        /,
        **data: Any,
    ) -> None:
        """`Estimate(value, ci_low, ci_high)` as before, or by the JSON keys
        (`Estimate(value=v, ci=[low, high], count=...)`, which is how a file is read: there a
        missing `ci` is an error)."""
        if not isinstance(value, _Unset):
            data["value"] = value
            data.setdefault("ci", None if ci_low is None or ci_high is None else [ci_low, ci_high])
        super().__init__(**data)

    @classmethod
    def from_json(cls, data: Any) -> Estimate:
        """The estimate of a `{"value", "ci"}` entry (a `best_fixed`'s `config` left out)."""
        if isinstance(data, Estimate):
            return data
        keep = {k: v for k, v in dict(data).items() if k in ("value", "ci", "count")}
        return cls.model_validate(keep)

    def to_json(self) -> dict[str, Any]:
        """The layout's form: `{"value", "ci"}`, and `count` where it has one."""
        out: dict[str, Any] = self.model_dump(mode="json")
        return out


class BestFixed(_Interval, Record):
    """The best fixed budget: its configuration and its estimate (None without items)."""

    config: StrictStr | None
    value: Number | None
    ci: Annotated[list[Number], Field(min_length=2, max_length=2)] | None
    count: Count | None = None

    @property
    def estimate(self) -> Estimate:
        """The estimate without its configuration."""
        return Estimate.from_json(self.model_dump())


class Overlap(Record):
    """Items flagged under two protocols: each side's count, both, Jaccard, the share kept."""

    n_p: StrictInt
    n_q: StrictInt
    n_both: StrictInt
    jaccard: Number | None
    kept_share: Number | None


class Membership(Record):
    """The overlap of the harmful and terminal-regression items of two series or repeats."""

    n_common_items: StrictInt
    harmful: Overlap
    terminal_regression: Overlap


class BudgetOrderRecord(Record):
    """The budget order a block used: its axes, whether it is a partial order, its chains."""

    axes: list[StrictStr]
    multi_axis: StrictBool
    chains: dict[str, list[StrictStr]]


class Evidence(Record):
    basis: Literal["visual_tokens", "effective_frames", "identical_answers", "rerun_answers"]
    recorded: StrictInt
    median_from: Number | None
    median_to: Number | None
    sentence: StrictStr


class EffectiveBudgetEntry(Record):
    """An adjacent step that looks like the same input (`_same_input`)."""

    from_: StrictStr = Field(alias="from")
    to: StrictStr
    identical: StrictInt
    items: StrictInt
    evidence: Evidence


class CoverStep(Record):
    config: StrictStr
    gain: Number
    oracle: Number


class TextOverwriteCounts(Record):
    harmful_transitions: StrictInt
    overwrite_transitions: StrictInt
    harmful_items: StrictInt
    overwrite_items: StrictInt


class PairedTestRecord(Record):
    """One pair's tests: `TEST` of docs/measures.md."""

    n_items: StrictInt
    n_videos: StrictInt
    n_down: StrictInt
    n_up: StrictInt
    difference: Estimate
    exact_mcnemar_p: Number | None
    clustered_mcnemar_statistic: Number | None
    clustered_mcnemar_p: Number | None
    bootstrap_p: Number | None
    holm_p: Number | None
    significant_after_holm: StrictBool


class PairedTests(Record):
    """The adjacent pairs (one Holm family) and the requested ones (another)."""

    default: StrictStr
    family: StrictStr
    n_family: StrictInt
    alpha: Number
    adjacent: dict[str, PairedTestRecord]
    requested: dict[str, PairedTestRecord] | None = None
    #: the resamples behind each `bootstrap_p` (its floor is 1 / (draws + 1)); written only
    #: where there are some
    bootstrap_draws: StrictInt | None = None


class PairPowerRecord(Record):
    """One adjacent pair's power figures; one not estimable is null, with its reason."""

    sd_per_video: Number | None
    mde: Number | None
    videos_needed: Number | None
    mde_not_estimable: StrictStr | None = None
    videos_needed_not_estimable: StrictStr | None = None


class AxisPowerRecord(Record):
    """An axis' power figures from its pairs' pooled variance (reasons as a pair's)."""

    pairs: list[StrictStr]
    sd_per_video: Number | None
    mde: Number | None
    videos_needed: Number | None
    mde_not_estimable: StrictStr | None = None
    videos_needed_not_estimable: StrictStr | None = None


class Power(Record):
    """Minimum detectable effect and videos needed, per axis and adjacent pair (`_power`)."""

    test: StrictStr | None = None
    alpha: Number
    power: Number
    target: Number
    n_videos: StrictInt | None = None
    items_per_video: Number | None = None
    axes: dict[str, AxisPowerRecord]
    pairs: dict[str, PairPowerRecord]


class ComparisonRecord(Record):
    """Observed against the additive model: both with intervals, their difference, its p."""

    observed: Estimate
    additive: Estimate
    difference: Estimate
    p_value: Number | None


class HeadroomComparison(Record):
    observed: Number | None
    additive: Number | None


class NoiseRecord(Record):
    noise_bound: Estimate
    difference: Estimate
    p_value: Number | None


class Heterogeneity(Record):
    """The additive-model (Rasch) test of a block."""

    model: StrictStr
    n_items: StrictInt
    n_informative: StrictInt
    budget_effects: dict[str, Number | None]
    observed: Estimate
    additive: Estimate
    difference: Estimate
    p_value: Number | None
    n_null: StrictInt
    interval: StrictStr

    oracle_headroom: HeadroomComparison
    trajectories: dict[str, ComparisonRecord]
    noise: NoiseRecord | None = None


class HeterogeneitySkipped(Record):
    """Why the test did not run (too few or too many budgets, no item)."""

    skipped: StrictStr


def _skipped_or_not(data: Any) -> str:
    if isinstance(data, dict):
        return "skipped" if "skipped" in data else "tested"
    return "skipped" if isinstance(data, HeterogeneitySkipped) else "tested"


HeterogeneityEntry = Annotated[
    Annotated[Heterogeneity, Tag("tested")] | Annotated[HeterogeneitySkipped, Tag("skipped")],
    Discriminator(_skipped_or_not),
]


class MatchedCost(Record):
    """Uniform sampling at the selector's mean frames used: its per-item correctness
    interpolated linearly between the two uniform budgets around that mean (the nearest
    budget when the mean is outside the uniform grid), on the items both ran."""

    frames: Number
    uniform_below: StrictStr
    uniform_above: StrictStr
    #: the weight of `uniform_above` (0 at `uniform_below`'s frames, 1 at `uniform_above`'s)
    weight_above: Number
    #: the mean lies outside the uniform grid: the nearest budget stands for it
    nearest: bool
    accuracy_uniform: Estimate
    #: selector minus uniform at matched mean cost
    accuracy_difference: Estimate


class Selector(Record):
    """A selector's series against a formula's at one budget (`churn`). An adaptive selector's
    frame count is a cap: `frames_used_*` are the frames its cells used (recorded
    `effective_frames`), and `matched_cost` compares it with uniform sampling at that mean."""

    selector_series: StrictStr
    uniform_series: StrictStr
    accuracy_selector: Estimate
    accuracy_uniform: Estimate
    accuracy_difference: Estimate
    clustered_mcnemar_p: Number | None
    exact_mcnemar_p: Number | None
    n_fixed: StrictInt
    n_broken: StrictInt
    n_uniform_wrong_everywhere: StrictInt
    n_headroom_fixed: StrictInt
    headroom_share: Estimate
    n_frames_recorded: StrictInt
    n_same_frames: StrictInt
    same_input: SameInput | None
    frames_cap: StrictInt | None = None
    frames_used_mean: Number | None = None
    frames_used_min: StrictInt | None = None
    frames_used_max: StrictInt | None = None
    uniform_frames_used_mean: Number | None = None
    matched_cost: MatchedCost | None = None


class BudgetChurnRecord(Record):
    """One budget both series ran (`_churn`)."""

    config_p: StrictStr
    config_q: StrictStr
    answer_change: Estimate
    accuracy_difference: Estimate
    flip_down: Estimate
    flip_up: Estimate
    noise_floor_p: Estimate | None = None
    noise_floor_q: Estimate | None = None
    selector: Selector | None = None


class Churn(Record):
    n_common_items: StrictInt
    n_videos: StrictInt
    budgets: dict[str, BudgetChurnRecord]


class SmallSample(Record):
    """Fewer videos than `min_videos`: which numbers are not estimable, each with why."""

    n_videos: StrictInt
    min_videos: StrictInt
    not_estimable: dict[str, StrictStr]


class GridSelection(Record):
    """`--configs`: the grid every measure was restricted to, and the models left out."""

    configs: list[StrictStr]
    excluded_models: dict[str, list[StrictStr]]


class WithBootstrapCount(BaseModel):
    """A model holding the video bootstrap's resample count as `bootstrap`, its one name: the
    retired `n_boot` is still taken in 0.1.x, with a warning, and read from stored files
    (under `STORED`) silently. Every record and setting of the count shares this one check."""

    if TYPE_CHECKING:  # each model's own field, in its place among the others
        bootstrap: int

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any, info: ValidationInfo) -> Any:
        return renamed_fields(data, cls.__name__, info.context, n_boot="bootstrap")

    @property
    def n_boot(self) -> int:
        """The retired name of `bootstrap` (docs/glossary.md, 'One name per concept')."""
        warn_renamed(f"{type(self).__name__}.n_boot", f"{type(self).__name__}.bootstrap")
        return self.bootstrap


class BootstrapRecord(WithBootstrapCount, Record):
    """The intervals' video bootstrap: its resample count (`bootstrap`) and seed, as an
    intervention's result records it; `BootstrapSettings` (analyze) and the comparison's
    `BootstrapInfo` add how the intervals were made, under their layouts' keys."""

    bootstrap: StrictInt
    seed: StrictInt


class BootstrapSettings(BootstrapRecord):
    """How the intervals were made: resamples of whole videos, their seed and method (a file
    of layout 1 or 2 holds the count as `n_boot`)."""

    unit: StrictStr
    ci_level: Number
    interval: StrictStr


class AlternativePair(Record):
    """Alternative `b` against `a` (the control, or an alternative listed before `b`) on the
    matched items: the selector record between two configurations that ask one budget
    (docs/measures.md, "Alternatives at one budget")."""

    a: StrictStr
    b: StrictStr
    accuracy_difference: Estimate
    clustered_mcnemar_p: Number | None
    exact_mcnemar_p: Number | None
    n_fixed: StrictInt
    n_broken: StrictInt
    n_headroom: StrictInt
    headroom_share: Estimate
    #: the same-input rule's grading of the answers (`AnswerAgreement`'s fields)
    answered: StrictInt
    differ: StrictInt
    answers: AnswersGrade
    rerun_bound: StrictInt | None = None
    floor: RerunFloor | None = None
    no_answer: StrictInt = 0
    #: the same-input rule's verdict on the pair (None: different inputs, or it cannot tell)
    same_input: SameInput | None

"""The typed series blocks of `analyze --json` (binary, continuous, each with the text-only
answer as budget 0, the series entry of a model) and the whole layout (`AnalysisLayout`).

Field order is the layout's key order and an unset optional field is not written, so
`model_dump(mode="json")` is the layout byte for byte (`_result_models`). Two things field
order cannot say are kept by the blocks: a measure registered with `register_measure` adds its
key to every block of its kinds (kept as JSON where it was, only while registered), and a
series of open-ended items only is `{"continuous": ..., "axis": [...]}` then the model keys.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    JsonValue,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    model_serializer,
    model_validator,
)

from ...core.rerun_floor import RerunFloor
from ._result_models import (
    AlternativePair,
    BestFixed,
    BootstrapSettings,
    BudgetOrderRecord,
    Churn,
    CoverStep,
    EffectiveBudgetEntry,
    Estimate,
    GridSelection,
    HeterogeneityEntry,
    Membership,
    Number,
    PairedTests,
    Power,
    Record,
    SmallSample,
    TextOverwriteCounts,
    omit_unset,
)

Curve = dict[str, Estimate]


def _extension_keys(kinds: tuple[str, ...]) -> set[str]:
    """The keys of the measures registered for these kinds of block."""
    from ._registry import MEASURES

    return {m.key for m in MEASURES.values() if set(m.kinds) & set(kinds)}


class Block(Record):
    """A block that may hold registered measures' keys beside its fields (`MEASURE_KINDS`)."""

    #: the measure kinds (docs/extending.md) whose registered keys this block takes
    MEASURE_KINDS: ClassVar[tuple[str, ...]] = ()
    #: registered measures' entries that are not fields, with the key each follows
    _extensions: tuple[tuple[str, str | None, JsonValue], ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _registered(cls, data: Any, handler: ModelWrapValidatorHandler[Block]) -> Block:
        if not cls.MEASURE_KINDS or not isinstance(data, dict):
            return handler(data)
        fields = {f.alias or name for name, f in cls.model_fields.items()}
        unknown = [k for k in data if k not in fields]
        registered = _extension_keys(cls.MEASURE_KINDS) & set(unknown)
        if not registered:
            return handler(data)
        keys = list(data)
        kept = []
        for key in keys:
            if key in registered:
                before = keys[keys.index(key) - 1] if keys.index(key) else None
                kept.append((key, before, _json_value(data[key])))
        block = handler({k: v for k, v in data.items() if k not in registered})
        block._extensions = tuple(kept)
        return block

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> Any:
        out = omit_unset(self, handler(self))
        if self._extensions and isinstance(out, dict):
            for key, before, value in self._extensions:
                items = list(out.items())
                at = next((i + 1 for i, (k, _) in enumerate(items) if k == before), len(items))
                items.insert(at, (key, value))
                out = dict(items)
        return out

    def entry(self, key: str) -> Any:
        """A measure's entry by its JSON key: the field's record or a registered measure's JSON
        value (so a registered measure needs no field); None where the block has none."""
        name = _field_names(type(self)).get(key)
        if name is not None:
            return getattr(self, name)
        return self.registered.get(key)

    @property
    def registered(self) -> dict[str, JsonValue]:
        """The entries of measures registered with `register_measure` (their JSON values)."""
        return {key: value for key, _, value in self._extensions}


def _field_names(cls: type[Block]) -> dict[str, str]:
    """A block's JSON keys and the field each is (`from` is `from_`)."""
    return {field.alias or name: name for name, field in cls.model_fields.items()}


def _json_value(value: object) -> JsonValue:
    """A registered measure's entry as JSON: a record it returned (`Resolved.share` gives an
    `Estimate`) as its dump, a JSON value as it is (checked)."""
    from pydantic import TypeAdapter

    checked: JsonValue = TypeAdapter(JsonValue).validate_python(_dumped(value))
    return checked


def _dumped(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _dumped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dumped(v) for v in value]
    return value


class _WithTextGrid(Block):
    """What both `grid_with_text` blocks open with: the grid (text-only first) and its items."""

    configs: list[StrictStr]
    multi_axis: StrictBool | None = None  # absent in files written before it was added
    n_items: StrictInt
    n_videos: StrictInt
    n_dropped: StrictInt
    drop_reasons: dict[str, StrictInt]


class BinaryWithText(_WithTextGrid):
    """`grid_with_text` of a binary block: the text-only answer as budget 0."""

    MEASURE_KINDS: ClassVar[tuple[str, ...]] = ("binary_with_text",)

    accuracy: Curve
    best_fixed: BestFixed
    oracle: Estimate
    oracle_headroom: Estimate
    harmful_rate: Estimate
    overwrite_rate: Estimate
    heterogeneity: HeterogeneityEntry | None = None


class ContinuousWithText(_WithTextGrid):
    """`grid_with_text` of a continuous block."""

    MEASURE_KINDS: ClassVar[tuple[str, ...]] = ("continuous_with_text",)

    metric: StrictStr
    eps: Number
    mean_score: Curve
    best_fixed: BestFixed
    oracle_score: Estimate
    oracle_gap: Estimate
    harmful_rate_eps: Estimate
    overwrite_rate_eps: Estimate


class ByAttribute(Record):
    """`--by ATTR`: the block of each value's items, and how many items lack the attribute."""

    groups: dict[str, SeriesEntry]
    n_items_without: StrictInt


class BinaryBlock(Block):
    """A binary block on the visual budgets (a chain's block is one of these)."""

    MEASURE_KINDS: ClassVar[tuple[str, ...]] = ("binary",)

    kind: Literal["binary"]
    axis: list[StrictStr]
    frames: list[StrictInt]
    n_items: StrictInt
    n_videos: StrictInt
    n_dropped: StrictInt
    drop_reasons: dict[str, StrictInt]
    noanswer_rate: Curve
    accuracy: Curve
    best_fixed: BestFixed
    oracle: Estimate
    oracle_headroom: Estimate
    harmful_rate: Estimate
    beneficial_rate: Estimate
    terminal_regression_rate: Estimate
    flip_down: Curve
    flip_up: Curve
    adjacent: list[StrictStr]
    # added within schema 1: absent in files written before them, so optional on reading
    effective_budget: list[EffectiveBudgetEntry] | None = None
    #: the rerun floor the same-input verdicts used (measured or stated; absent: none)
    rerun_floor: RerunFloor | None = None
    scoring_rules: list[StrictStr] | None = None
    order: BudgetOrderRecord | None = None
    mcnemar_p: dict[str, Number | None]
    complementarity: Curve
    greedy_cover: list[CoverStep]
    n_text_only: StrictInt
    text_answerable_rate: Estimate
    text_overwrite_rate: Estimate
    text_overwrite_item_rate: Estimate
    text_overwrite_counts: TextOverwriteCounts | None = None
    # repeats (R > 1)
    n_repeats: StrictInt | None = None
    delta: Number | None = None
    item_rate_harmful_rate: Estimate | None = None
    expected_harmful_rate: Estimate | None = None
    noise_floor: Curve | None = None
    repeat_mean_accuracy: Curve | None = None
    chains: dict[str, BinaryBlock] | None = None

    @property
    def curve(self) -> Curve:
        """Accuracy by configuration."""
        return self.accuracy


class ContinuousBlock(Block):
    """A continuous block: a model's `continuous`, a task's, a chain's, or a `--by` group's."""

    MEASURE_KINDS: ClassVar[tuple[str, ...]] = ("continuous",)

    kind: Literal["continuous"]
    metric: StrictStr
    axis: list[StrictStr]
    frames: list[StrictInt]
    n_items: StrictInt
    n_videos: StrictInt
    n_dropped: StrictInt
    drop_reasons: dict[str, StrictInt]
    eps: Number
    mean_score: Curve
    best_fixed: BestFixed
    oracle_score: Estimate
    oracle_gap: Estimate
    harmful_rate_eps: Estimate
    beneficial_rate_eps: Estimate
    # added within schema 1: absent in files written before them, so optional on reading
    order: BudgetOrderRecord | None = None
    effective_budget: list[EffectiveBudgetEntry] | None = None
    rerun_floor: RerunFloor | None = None
    scoring_rules: list[StrictStr] | None = None
    chains: dict[str, ContinuousBlock] | None = None
    n_text_only: StrictInt
    text_mean_score: Estimate
    task_attribute: StrictStr | None = None
    tasks: dict[str, ContinuousBlock] | None = None
    grid_with_text: ContinuousWithText | None = None
    series: StrictStr | None = None
    #: groups of the axis's configurations that ask one recorded budget, a sentence each: the
    #: axis orders them as the table lists them, an order nobody chose (docs/measures.md)
    axis_warnings: list[StrictStr] | None = None
    small_sample: SmallSample | None = None
    by: dict[str, ByAttribute] | None = None

    @property
    def curve(self) -> Curve:
        """Mean score by configuration."""
        return self.mean_score


class BinarySeries(BinaryBlock):
    """A series with multiple-choice items: its binary block, the tests, power and the
    additive-model test, the text-only grid, and (as a model's entry) the open-ended block,
    the other series, interventions, membership and churn."""

    # added within schema 1: absent in files written before them, so optional on reading
    paired_tests: PairedTests | None = None
    power: Power | None = None
    heterogeneity: HeterogeneityEntry | None = None
    grid_with_text: BinaryWithText | None = None
    series: StrictStr
    axis_warnings: list[StrictStr] | None = None  # as `ContinuousBlock.axis_warnings`
    small_sample: SmallSample | None = None
    by: dict[str, ByAttribute] | None = None
    continuous: ContinuousBlock | None = None
    other_series: dict[str, SeriesEntry] | None = None
    interventions: dict[str, SeriesEntry] | None = None
    membership: dict[str, Membership] | None = None
    churn: dict[str, Churn] | None = None
    scoring_rule_warnings: list[StrictStr] | None = None


class OpenEndedSeries(Record):
    """A series of open-ended items only: its continuous block and axis, then the model keys."""

    continuous: ContinuousBlock
    axis: list[StrictStr]
    other_series: dict[str, SeriesEntry] | None = None
    interventions: dict[str, SeriesEntry] | None = None
    membership: dict[str, Membership] | None = None
    churn: dict[str, Churn] | None = None
    scoring_rule_warnings: list[StrictStr] | None = None

    @property
    def kind(self) -> str:
        return "continuous"

    @property
    def series(self) -> str | None:
        return self.continuous.series

    @property
    def curve(self) -> Curve:
        return self.continuous.mean_score


class AlternativesSeries(Record):
    """Configurations that ask one recorded budget: alternatives, not a budget axis
    (`_alternatives`; `pairs` keyed `a|b`, the control's first)."""

    kind: Literal["alternatives"]
    series: StrictStr
    members: Literal["configurations", "series"]
    configs: list[StrictStr]
    #: the one budget they ask, in words, and its recorded frames and pixels per frame
    budget: StrictStr
    frames: StrictInt
    pixels: StrictInt | None
    #: the reference: `--control`, else the one series that is not a frame selector's
    #: (`control_from`: "given" or "series"); None when neither names one
    control: StrictStr | None
    control_from: Literal["given", "series"] | None = None
    n_items: StrictInt
    n_videos: StrictInt
    n_dropped: StrictInt
    drop_reasons: dict[str, StrictInt]
    noanswer_rate: Curve
    accuracy: Curve
    oracle: Estimate
    pairs: dict[str, AlternativePair]
    rerun_floor: RerunFloor | None = None
    scoring_rules: list[StrictStr] | None = None
    small_sample: SmallSample | None = None
    other_series: dict[str, SeriesEntry] | None = None
    interventions: dict[str, SeriesEntry] | None = None
    membership: dict[str, Membership] | None = None
    churn: dict[str, Churn] | None = None
    scoring_rule_warnings: list[StrictStr] | None = None

    @property
    def axis(self) -> list[str]:
        """The configurations, in the table's order (not an order of budgets)."""
        return self.configs

    @property
    def curve(self) -> Curve:
        return self.accuracy


def _series_kind(data: Any) -> str:
    if isinstance(data, dict):
        kind = data.get("kind")
    else:
        kind = getattr(data, "kind", None) if not isinstance(data, OpenEndedSeries) else None
    if kind == "binary":
        return "series[binary]"
    if kind == "continuous":
        return "series[continuous block]"
    if kind == "alternatives":
        return "series[alternatives]"
    return "series[open-ended]"


#: A series' entry: binary, a bare continuous block (a `--by` group of open-ended items), or an
#: open-ended series (no `kind`), told apart by `kind`.
SeriesEntry = Annotated[
    Annotated[BinarySeries, Tag("series[binary]")]
    | Annotated[ContinuousBlock, Tag("series[continuous block]")]
    | Annotated[OpenEndedSeries, Tag("series[open-ended]")]
    | Annotated[AlternativesSeries, Tag("series[alternatives]")],
    Discriminator(_series_kind),
]


class PluginMeasure(Record):
    """A measure that is not itemscale's own, and where it came from (what `verify` needs)."""

    #: its JSON key in the blocks, and the kinds of block it belongs to
    key: StrictStr
    kinds: list[StrictStr]
    #: the installed distribution and its version; None for a `register_measure` call
    distribution: StrictStr | None
    version: StrictStr | None
    #: `name = module:function`, the entry point of `itemscale.measures`; None likewise
    entry_point: StrictStr | None


class AnalysisLayout(Record):
    """The whole `analyze --json` content, typed."""

    schema_version: StrictInt
    bootstrap: BootstrapSettings
    binary_repeat: StrictInt
    metric: StrictStr
    grid: GridSelection | None = None
    models: dict[str, SeriesEntry]
    scoring_rule_warnings: list[StrictStr] | None = None
    #: the measures from other packages (or `register_measure`) whose keys the blocks hold;
    #: absent when every measure is itemscale's own (schema version 2 added it)
    plugin_measures: list[PluginMeasure] | None = None


ByAttribute.model_rebuild()
BinaryBlock.model_rebuild()
ContinuousBlock.model_rebuild()
BinarySeries.model_rebuild()
OpenEndedSeries.model_rebuild()
AlternativesSeries.model_rebuild()
AnalysisLayout.model_rebuild()

"""A measure as one registered unit: its JSON key, its glossary line, the blocks it belongs to,
how it is computed and how the console and the report write it.

Why units: a measure used to be spelled in six places (block, glossary, console, report, paper
comparison, docs); the block builders, the console and the report iterate the registry
(`_registry.MEASURES`) instead. A unit never resamples on its own: it hands the block per-item
columns, resolved for every unit in one bootstrap product (`_stats.Columns`), so point and
interval come from the same columns and one more measure costs one more column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol, get_args

import numpy as np
from pydantic import JsonValue

from ._binary import eps_flips
from ._bootstrap import VideoBootstrap
from ._matrix import ResponseMatrix
from ._order import BudgetOrder
from ._result_models import BestFixed, Estimate, Record
from ._stats import Columns, counted, ratio_stat, scalar_stat, stat

#: The blocks of `analyze --json` a measure can belong to: the visual budgets of a binary
#: (multiple-choice) or continuous (open-ended) series, and the same series with the text-only
#: answer as budget 0 (`grid_with_text`).
MeasureKind = Literal["binary", "continuous", "binary_with_text", "continuous_with_text"]
MEASURE_KINDS: tuple[MeasureKind, ...] = get_args(MeasureKind)

#: Where a unit's entries sit in its block: with the headline numbers after the curve, or in
#: the text-only part after `n_text_only` (measures that need a text-only answer).
Placement = Literal["headline", "text"]


class BlockLike(Protocol):
    """A typed block as a unit reads it (`_result_series.Block`; a protocol, as the blocks
    read the registry that holds the units)."""

    def entry(self, key: str) -> Any:
        """A measure's entry by its JSON key; None where the block has none."""


#: A measure's entry in its block: a record (an `Estimate`, a `BestFixed`, a count record), or
#: the JSON value a registered measure may return instead (docs/extending.md); the block keeps
#: a registered measure's entry as JSON either way.
Entry = Record | JsonValue

#: A statistic as the console and the report receive it: a typed estimate (or a best fixed
#: budget), or the JSON form of a registered measure's entry.
StatLike = Estimate | BestFixed | Mapping[str, Any] | None


def _parts(value: StatLike) -> tuple[Any, Any, Any]:
    """(value, ci, count) of a statistic in either form."""
    if isinstance(value, Estimate | BestFixed):
        count = value.count.model_dump() if value.count is not None else None
        return value.value, value.ci, count
    if isinstance(value, Mapping):
        return value.get("value"), value.get("ci"), value.get("count")
    return None, None, None


def stat_text(value: StatLike, scale: float = 100, *, note: str | None = None) -> str:
    """A statistic as text, e.g. '61.2 [58.0, 64.1]' (points by default); 'n/a' without a value.
    `note` replaces the interval where it cannot be trusted ('61.2 [interval not estimable]').
    The console and the report both write statistics this way."""
    point, ci, _ = _parts(value)
    if point is None:
        return "n/a"
    text = f"{scale * float(point):.1f}"
    if note is not None:
        text += f" [interval {note}]"
    elif isinstance(ci, list | tuple) and len(ci) == 2 and ci[0] is not None:
        text += f" [{scale * float(ci[0]):.1f}, {scale * float(ci[1]):.1f}]"
    elif isinstance(value, Mapping) and value.get("ci_note"):  # too few videos
        text += f" [interval {value['ci_note']}]"
    return text


def signed_text(value: StatLike, note: str | None = None) -> str:
    """A change in points with its interval and its sign ('+2.1 [0.3, 3.9]'): `stat_text`, and
    '+' before a value of 0 or more."""
    text = stat_text(value, note=note)
    point = _parts(value)[0]
    return "+" + text if point is not None and float(point) >= 0 else text


def count_text(value: StatLike) -> str:
    """The count a statistic comes from, as the console and the report print it beside it:
    '34 of 80' for a share of items, '80 items' for a mean score, '' when it has none."""
    _, _, count = _parts(value)
    if not isinstance(count, Mapping) or count.get("n") is None:
        return ""
    if count.get("k") is None:
        return f"{count['n']} items"
    return f"{count['k']} of {count['n']}"


def counted_text(value: StatLike, scale: float = 100, *, note: str | None = None) -> str:
    """`stat_text` with its count: '42.5 [31.2, 53.8]  (34 of 80)'."""
    count = count_text(value)
    text = stat_text(value, scale, note=note)
    return f"{text}  ({count})" if count and text != "n/a" else text


def p_value_text(
    value: float | None, *, draws: int | None = None, sides: int = 1, note: str | None = None
) -> str:
    """A p-value as the console and the report print it: 3 significant digits, 'n/a', `note`
    ('not estimable' on a small sample), or, for a p from `draws` resamples at its floor
    (no resample as extreme: (1 + 0) / (draws + 1), times `sides`), '<' the resolution the draws
    have (`sides / draws`): 200 parametric draws cannot tell a two-sided p below 0.01 (it is
    printed '<0.01', not '0.00995')."""
    if note is not None:
        return note
    if value is None:
        return "n/a"
    if draws and value <= sides / (draws + 1) * (1 + 1e-9):
        return f"<{sides / draws:.3g}"
    return f"{float(value):.3g}"


def entry_of(block: BlockLike | Mapping[str, Any], key: str) -> Any:
    """A measure's entry of a block, typed (`BlockLike.entry`) or as JSON."""
    return block.get(key) if isinstance(block, Mapping) else block.entry(key)


@dataclass(frozen=True)
class BlockData:
    """What every measure of one block reads.

    `y` is the block's [n, K] matrix on its axis (repeat 0: correctness for binary blocks,
    scores in [0, 1] for continuous ones; with the text-only answer as column 0 in the
    `*_with_text` blocks), `labels` its configurations in axis order, `less` the partial order
    of a multi-axis grid (None on one axis, where position is the order) and `order` the
    matrix's own budget order. `matrix` holds the rest (answers, text-only answers,
    attributes) for the items of the block."""

    kind: MeasureKind
    matrix: ResponseMatrix
    y: np.ndarray
    labels: tuple[str, ...]
    less: np.ndarray | None
    order: BudgetOrder
    eps: float
    boot: VideoBootstrap | None

    @property
    def n_items(self) -> int:
        return int(self.y.shape[0])

    @property
    def has_text(self) -> np.ndarray:
        """[n] bool: the item has an answered text-only response."""
        return np.asarray(~np.isnan(self.matrix.text_value))

    @cached_property
    def eps_flips(self) -> tuple[np.ndarray, np.ndarray]:
        """[n] items whose score drops (harmful) and rises (beneficial) by more than `eps`
        between some smaller and some larger budget: computed once for every unit that
        counts either."""
        return eps_flips(self.y, self.less, self.eps)


#: Core columns every block resolves: the per-configuration curve and each item's best value.
CURVE = "curve"
ITEM_MAX = "item_max"


class Resolved:
    """A block's columns after the bootstrap: point means, resampled means [B, m] and
    leave-one-video-out means [V, m] by column name, seen from one unit (its own columns by
    their short names; the core columns `curve` and `item_max` by theirs)."""

    def __init__(
        self,
        data: BlockData,
        points: dict[str, np.ndarray],
        samples: dict[str, np.ndarray],
        jack: dict[str, np.ndarray],
        prefix: str = "",
    ) -> None:
        self.data = data
        self.points = points
        self.samples = samples
        self.jack = jack
        self.prefix = prefix

    def for_unit(self, key: str) -> Resolved:
        return Resolved(self.data, self.points, self.samples, self.jack, f"{key}:")

    def _name(self, name: str) -> str:
        own = self.prefix + name
        return own if own in self.points else name

    def point(self, name: str) -> np.ndarray:
        return self.points[self._name(name)]

    def resampled(self, name: str) -> np.ndarray:
        return self.samples[self._name(name)]

    def left_out(self, name: str) -> np.ndarray:
        return self.jack[self._name(name)]

    def share(self, name: str, *, items: bool = True) -> Estimate:
        """The mean of a one-wide column over the block's items, with its interval and its
        count (`items`: a 0/1 column, counted as k of n items; otherwise a mean over n)."""
        key = self._name(name)
        n = self.data.n_items
        value = float(self.points[key][0]) if n else None
        out = scalar_stat(self.data.boot, value, self.samples[key][:, 0], self.jack[key][:, 0])
        return counted(out, (value or 0.0) * n if items else None, n)

    def ratio(self, numerator: np.ndarray, denominator: np.ndarray) -> Estimate:
        """sum(numerator) / sum(denominator) over the items, with its interval (a ratio of
        sums is resampled as one, not from the two means), counted as sum(numerator) of
        sum(denominator) where the numerator counts whole things (else the denominator alone)."""
        num = np.asarray(numerator, dtype=float)
        whole = bool((num == np.round(num)).all())
        return counted(
            ratio_stat(self.data.boot, numerator, denominator),
            float(num.sum()) if whole else None,
            round(float(np.asarray(denominator, dtype=float).sum())),
        )


Gloss = Callable[[str], str]


@dataclass(frozen=True, kw_only=True)
class Measure:
    """One measure: subclass it (or use `ItemShare`) and list the instance in the registry.

    `key` is its JSON key in the block; `kinds` the blocks it belongs to; `term` the word the
    console prints and the glossary explains with `gloss` (one line, shown beside the term's
    first appearance); `report_label` the report's row header (None: not in the report's
    headline table; `console_label` likewise for the console; `console_note` a fixed remark
    after the value). `placement` says where its entries go in the block; `paper` pairs it
    with the seed paper's published number."""

    key: str
    kinds: tuple[MeasureKind, ...]
    term: str | None = None
    gloss: str | None = None
    console_label: str | None = None
    report_label: str | None = None
    console_note: str | None = None
    placement: Placement = "headline"
    #: The seed paper's name for it and its key in the paper's released per-model JSON, where
    #: the paper publishes it (the paper comparison checks every such measure).
    paper: tuple[str, str] | None = None

    def columns(self, data: BlockData) -> Mapping[str, np.ndarray]:
        """Per-item columns ([n] or [n, m]) to resample with the block's others."""
        return {}

    def compute(self, data: BlockData, res: Resolved) -> Mapping[str, Entry]:
        """The unit's entries of the block by JSON key (usually {key: `Estimate`})."""
        raise NotImplementedError

    # rendering: the console and the report call these with the typed block (`BlockLike.entry`
    # reads an entry by its key); a block's JSON form is accepted too
    def text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        """The value as the console and the report write it, with its count; `note` in place
        of the interval where the block's intervals cannot be trusted (`interval_note`)."""
        return counted_text(entry_of(block, self.key), note=note)

    def report_text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        return self.text(block, note)

    def console_line(
        self,
        block: BlockLike | Mapping[str, Any],
        gloss: Gloss,
        width: int,
        note: str | None = None,
    ) -> str | None:
        """The console's line (without indent), or None when the console leaves it out."""
        if self.console_label is None:
            return None
        remark = f"   ({self.console_note})" if self.console_note else ""
        explained = gloss(self.term) if self.term and self.gloss else ""
        text = self.text(block, note)
        return f"{self.console_label + ':':<{width}}{text}{remark}{explained}"

    def report_row(
        self, block: BlockLike | Mapping[str, Any], note: str | None = None
    ) -> tuple[str, str, str | None] | None:
        """(header, value, glossary term) of the report's headline table, or None."""
        if self.report_label is None:
            return None
        return self.report_label, self.report_text(block, note), self.term if self.gloss else None


@dataclass(frozen=True, kw_only=True)
class ItemShare(Measure):
    """The share of items for which `indicator` is true: the commonest kind of measure
    (harmful rate, terminal regression rate). `indicator(data)` returns an [n] array of 0/1."""

    indicator: Callable[[BlockData], np.ndarray] = field(repr=False)

    def columns(self, data: BlockData) -> Mapping[str, np.ndarray]:
        return {"indicator": self.indicator(data)}

    def compute(self, data: BlockData, res: Resolved) -> dict[str, Estimate]:
        return {self.key: res.share("indicator")}


def resolve_block(
    data: BlockData, units: tuple[Measure, ...], extra: Mapping[str, np.ndarray] | None = None
) -> Resolved:
    """Every column of the block (core, `extra` and each unit's) resampled in one product."""
    y = data.y
    n, k = y.shape
    cols = Columns(data.boot)
    cols.add(CURVE, y)
    cols.add(ITEM_MAX, y.max(axis=1) if k else np.zeros(n))
    for name, column in (extra or {}).items():
        cols.add(name, column)
    for unit in units:
        for name, column in unit.columns(data).items():
            cols.add(f"{unit.key}:{name}", column)
    points, samples, jack = cols.resolve()
    return Resolved(data, points, samples, jack)


def unit_entries(
    data: BlockData, units: tuple[Measure, ...], res: Resolved
) -> dict[Placement, dict[str, Entry]]:
    """Each unit's entries, by where they go in the block, in registry order."""
    out: dict[Placement, dict[str, Entry]] = {"headline": {}, "text": {}}
    for unit in units:
        out[unit.placement].update(unit.compute(data, res.for_unit(unit.key)))
    return out


def no_value() -> Estimate:
    """The entry of a measure that is undefined on this block (e.g. no text-only answers)."""
    return stat(None, None)

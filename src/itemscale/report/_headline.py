"""The sentences a run's results open with, typed records written in the same words wherever
they appear: the report's first line (`Headline.text`) and the paragraph `itemscale analyze`
prints above two or more models (`Headline.models`). A harmful rate or an oracle headroom grows
with the grid, so the models' sentence names each model's grid beside its numbers; with a
text-only answer everywhere it reads the seed paper's definitions first (`grid_with_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..analysis.measures import (
    AlternativesSeries,
    AnalysisResult,
    BinarySeries,
    Estimate,
    additive_sentence,
    alternatives_headline,
)
from ._comparison import PaperComparison

#: How a grid is read: its visual budgets alone (the text-only answer a baseline beside them),
#: or with the text-only answer as budget 0 (the seed paper's definitions).
Definition = Literal["visual budgets", "text-only as budget 0"]
#: A one-axis grid longer than this is written by its ends and its size.
_SPELLED_OUT = 6


def _value(stat: Estimate) -> float | None:
    return None if stat.value is None else float(stat.value)


def _grid_text(labels: list[str], multi_axis: bool, text_first: bool) -> str:
    """Its budgets in order, or (a partial order, a long axis) its ends and its size."""
    text = labels[0] if text_first and labels else None
    budgets = labels[1:] if text is not None else labels
    if multi_axis:
        body = (
            f"{len(budgets)} budgets of frames x pixels from {budgets[0]} to {budgets[-1]} "
            "(a partial order)"
        )
        return f"{text} and {body}" if text else body
    if len(budgets) > _SPELLED_OUT:
        body = f"{budgets[0]} < ... < {budgets[-1]} ({len(budgets)} budgets)"
    else:
        body = " < ".join(budgets)
    return f"{text} < {body}" if text else body


@dataclass(frozen=True)
class GridReading:
    """One model's harmful rate and oracle headroom (fractions) on its grid, read one way."""

    model: str
    #: The grid as the sentence names it.
    grid: str
    definition: Definition
    harmful_rate: float
    oracle_headroom: float

    def figures(self) -> str:
        return f"{self.model} {100 * self.harmful_rate:.1f}% and {100 * self.oracle_headroom:.1f} points"


def _readings(result: AnalysisResult, definition: Definition) -> list[GridReading] | None:
    out = []
    for model, block in result.models.items():
        if not isinstance(block, BinarySeries) or not block.axis:
            continue
        if definition == "text-only as budget 0":
            g = block.grid_with_text
            if g is None:
                return None
            harmful, headroom = _value(g.harmful_rate), _value(g.oracle_headroom)
            grid = _grid_text(list(g.configs), bool(g.multi_axis), text_first=True)
        else:
            multi = bool(block.order is not None and block.order.multi_axis)
            harmful, headroom = _value(block.harmful_rate), _value(block.oracle_headroom)
            grid = _grid_text(list(block.axis), multi, text_first=False)
        if harmful is None or headroom is None:
            return None
        out.append(GridReading(str(model), grid, definition, harmful, headroom))
    return out


def _range(values: list[float], unit: str) -> str:
    low, high = min(values), max(values)
    if f"{100 * low:.1f}" == f"{100 * high:.1f}":
        return f"{100 * low:.1f}{unit}"
    return f"{100 * low:.1f} to {100 * high:.1f}{unit}"


@dataclass(frozen=True)
class ModelsHeadline:
    """Two or more multiple-choice models: the seed paper's reading (`first`, when every model
    has a text-only answer) before the visual budgets alone (`visual`, empty when `first` is)."""

    first: tuple[GridReading, ...]
    visual: tuple[GridReading, ...]

    @classmethod
    def of(cls, result: AnalysisResult) -> ModelsHeadline | None:
        visual = _readings(result, "visual budgets")
        if visual is None or len(visual) < 2:
            return None
        paper = _readings(result, "text-only as budget 0")
        if paper is not None and len(paper) == len(visual):
            return cls(first=tuple(paper), visual=tuple(visual))
        return cls(first=tuple(visual), visual=())

    def text(self) -> str:
        """On one grid all models share: the range of each figure, the grid named. Otherwise
        each model's figures on its grid, models that share a grid together."""
        first, second = self.first, self.visual
        choosing = "choosing the budget per item"
        if first[0].definition == "text-only as budget 0":
            reading = "with the text-only answer as budget 0 (the seed paper's definitions)"
            choosing += " (no frames among them)"
        else:
            reading = "on the visual budgets"
        if len({r.grid for r in first}) == 1:
            text = (
                f"Across {len(first)} models on one grid ({first[0].grid}), {reading}, "
                f"{_range([r.harmful_rate for r in first], '%')} of the items are right at some "
                f"budget and wrong at a larger one, and {choosing} would gain "
                f"{_range([r.oracle_headroom for r in first], ' points')} over the best single "
                "budget"
            )
            if second:
                text += (
                    "; on the visual budgets alone (the text-only answer a baseline beside "
                    f"them), {_range([r.harmful_rate for r in second], '%')} and "
                    f"{_range([r.oracle_headroom for r in second], ' points')}"
                )
            return text + "."
        grids: dict[str, list[GridReading]] = {}
        for r in first:
            grids.setdefault(r.grid, []).append(r)
        clauses = "; ".join(
            f"on {grid}, {', '.join(r.figures() for r in members)}"
            for grid, members in grids.items()
        )
        text = (
            f"Across {len(first)} models, each on its own grid, {reading}, the share of items "
            f"right at some budget and wrong at a larger one, and the points {choosing} would "
            f"gain over the best single budget: {clauses}."
        )
        if second:
            text += (
                " On the visual budgets alone (the same grids without the text-only answer, a "
                f"baseline beside them): {', '.join(r.figures() for r in second)}."
            )
        return text


@dataclass(frozen=True)
class CurveHeadline:
    """One model's curve on its visual budgets beside what it hides (fractions)."""

    model: str
    grid: tuple[str, ...]
    n_items: int
    first_accuracy: float
    last_accuracy: float
    harmful_rate: float
    #: The items behind the harmful rate (k of `n_items`).
    harmful_items: int
    oracle_headroom: float | None
    additive: str | None

    @classmethod
    def of(cls, model: str, block: BinarySeries) -> CurveHeadline | None:
        axis, n = list(block.axis), int(block.n_items or 0)
        first, last = _value(block.accuracy[axis[0]]), _value(block.accuracy[axis[-1]])
        harmful = _value(block.harmful_rate)
        if first is None or last is None or harmful is None:
            return None
        return cls(
            model=model,
            grid=tuple(str(c) for c in axis),
            n_items=n,
            first_accuracy=first,
            last_accuracy=last,
            harmful_rate=harmful,
            harmful_items=round(harmful * n),  # rates are k / n, so this is exact
            oracle_headroom=_value(block.oracle_headroom),
            additive=additive_sentence(block),
        )

    def text(self) -> str:
        gain = (
            f", and choosing the budget per item would gain {100 * self.oracle_headroom:.1f} "
            "points over the best single budget"
            if self.oracle_headroom is not None
            else ""
        )
        but = "yet" if self.harmful_items else "and"  # "yet" only against a flip
        text = (
            f"{self.model}: accuracy goes from {100 * self.first_accuracy:.1f} at {self.grid[0]} "
            f"to {100 * self.last_accuracy:.1f} at {self.grid[-1]}, {but} "
            f"{100 * self.harmful_rate:.1f}% of the {self.n_items} items ({self.harmful_items}) "
            f"are right at some budget and wrong at a larger one{gain}."
        )
        return f"{text} {self.additive}" if self.additive else text


@dataclass(frozen=True)
class PaperCount:
    reproduced: int
    published: int

    def text(self) -> str:
        return (
            f"{self.reproduced} of {self.published} of the seed paper's published numbers are "
            "reproduced to 0.01 points (below)."
        )


@dataclass(frozen=True)
class Headline:
    """Configurations that ask one budget as alternatives (never as budgets), one model's curve
    or several models' readings, and for the seed paper's release the count reproduced."""

    alternatives: tuple[str, ...]
    curve: CurveHeadline | None
    models: ModelsHeadline | None
    paper: PaperCount | None

    @classmethod
    def of(cls, measures: AnalysisResult, comparison: PaperComparison | None = None) -> Headline:
        blocks = [
            (str(model), block)
            for model, block in measures.models.items()
            if isinstance(block, BinarySeries) and block.axis
        ]
        rows = comparison.rows if comparison is not None else ()
        return cls(
            alternatives=tuple(
                alternatives_headline(str(model), block)
                for model, block in measures.models.items()
                if isinstance(block, AlternativesSeries)
            ),
            curve=CurveHeadline.of(*blocks[0]) if len(blocks) == 1 else None,
            models=ModelsHeadline.of(measures) if len(blocks) > 1 else None,
            paper=PaperCount(comparison.reproduced, len(rows)) if comparison and rows else None,
        )

    def text(self) -> str:
        parts = [*self.alternatives]
        parts += [p.text() for p in (self.curve, self.models, self.paper) if p is not None]
        return " ".join(parts)

"""The sentence that opens a run of several models, on the console (`analyze`) and in the
report: one grid per clause, one definition per number.

Models are measured on their own grids, and a harmful rate or an oracle headroom grows with the
grid (ten budgets give more chances to flip than three), so a range across models on different
grids compares unlike things. The sentence names each model's grid, or the one grid all share,
beside its numbers. Where every model has a text-only answer it reads the grid with the
text-only answer as budget 0 first (the seed paper's definitions, `grid_with_text`, the figures
a reader of the paper compares with) and the visual budgets alone beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._result import AnalysisResult
from ._result_models import Estimate
from ._result_series import BinarySeries

#: A one-axis grid longer than this is written by its ends and its size.
_SPELLED_OUT = 6


@dataclass(frozen=True)
class _Reading:
    """One model's two figures on one grid: the harmful rate and the oracle headroom."""

    model: str
    grid: str
    harmful: float
    headroom: float


def _grid_text(labels: list[str], multi_axis: bool, text_first: bool) -> str:
    """A grid as the sentence names it: its budgets in order, or (a partial order, or a long
    axis) its ends and its size."""
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


def _value(stat: Estimate) -> float | None:
    return None if stat.value is None else float(stat.value)


def _readings(result: AnalysisResult, with_text: bool) -> list[_Reading] | None:
    """Each model's reading on its own grid (None when a model has no value)."""
    out = []
    for model, block in result.models.items():
        if not isinstance(block, BinarySeries) or not block.axis:
            continue
        multi = bool(block.order is not None and block.order.multi_axis)
        if with_text:
            g = block.grid_with_text
            if g is None:
                return None
            harmful, headroom = _value(g.harmful_rate), _value(g.oracle_headroom)
            grid = _grid_text(list(g.configs), bool(g.multi_axis), text_first=True)
        else:
            harmful, headroom = _value(block.harmful_rate), _value(block.oracle_headroom)
            grid = _grid_text(list(block.axis), multi, text_first=False)
        if harmful is None or headroom is None:
            return None
        out.append(_Reading(str(model), grid, harmful, headroom))
    return out


def _pairs(readings: list[_Reading]) -> str:
    """'InternVL3-8B 12.5% and 8.8 points, ...' grouped by grid: 'on GRID, A 12.5% and 8.8
    points, B ...; on GRID2, ...'."""
    grids: dict[str, list[_Reading]] = {}
    for r in readings:
        grids.setdefault(r.grid, []).append(r)
    clauses = []
    for grid, members in grids.items():
        figures = ", ".join(
            f"{r.model} {100 * r.harmful:.1f}% and {100 * r.headroom:.1f} points" for r in members
        )
        clauses.append(f"on {grid}, {figures}")
    return "; ".join(clauses)


def _range(values: list[float], unit: str) -> str:
    low, high = min(values), max(values)
    if f"{100 * low:.1f}" == f"{100 * high:.1f}":
        return f"{100 * low:.1f}{unit}"
    return f"{100 * low:.1f} to {100 * high:.1f}{unit}"


def models_sentence(result: AnalysisResult) -> str | None:
    """The opening sentence of a run of two or more multiple-choice models (None for fewer).

    On one grid all models share: the range of each figure, the grid named. Otherwise each
    model's figures on its grid, models that share a grid together. With a text-only answer for
    every model, the seed paper's reading (text-only as budget 0) comes first and the visual
    budgets alone follow."""
    visual = _readings(result, with_text=False)
    if visual is None or len(visual) < 2:
        return None
    paper = _readings(result, with_text=True)
    choosing = "choosing the budget per item"
    if paper is not None and len(paper) == len(visual):
        first, second = paper, visual
        reading = "with the text-only answer as budget 0 (the seed paper's definitions)"
        choosing += " (no frames among them)"
    else:
        first, second, reading = visual, [], "on the visual budgets"
    n = len(first)
    if len({r.grid for r in first}) == 1:
        text = (
            f"Across {n} models on one grid ({first[0].grid}), {reading}, "
            f"{_range([r.harmful for r in first], '%')} of the items are right at some budget "
            f"and wrong at a larger one, and {choosing} would gain "
            f"{_range([r.headroom for r in first], ' points')} over the best single budget"
        )
        if second:
            text += (
                "; on the visual budgets alone (the text-only answer a baseline beside them), "
                f"{_range([r.harmful for r in second], '%')} and "
                f"{_range([r.headroom for r in second], ' points')}"
            )
        return text + "."
    text = (
        f"Across {n} models, each on its own grid, {reading}, the share of items right at some "
        f"budget and wrong at a larger one, and the points {choosing} would gain over the best "
        f"single budget: {_pairs(first)}."
    )
    if second:
        figures = ", ".join(
            f"{r.model} {100 * r.harmful:.1f}% and {100 * r.headroom:.1f} points" for r in second
        )
        text += (
            " On the visual budgets alone (the same grids without the text-only answer, a "
            f"baseline beside them): {figures}."
        )
    return text

"""A toy itemscale measure: the share of items right at the smallest budget of the axis.
Installed, every command that analyses (`analyze`, `report`, `verify`) computes it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from itemscale.analysis.measures import BlockData, ItemShare, Measure


def _right_at_first(data: BlockData) -> np.ndarray:
    return data.y[:, 0]  # [n items, K budgets] in axis order, repeat 0


FIRST_BUDGET_RATE = ItemShare(
    key="first_budget_rate",
    kinds=("binary",),
    term="first-budget rate",
    gloss="items right at the smallest budget of the axis",
    console_label="first-budget rate",
    report_label="first-budget rate",
    indicator=_right_at_first,
)


def register_measures(register: Callable[[str, Measure], None]) -> None:
    register("first_budget_rate", FIRST_BUDGET_RATE)

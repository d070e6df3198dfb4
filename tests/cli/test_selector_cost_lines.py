"""The console's matched-cost line for an adaptive selector names where uniform sampling was
read: between two grid budgets, at one grid budget (the selector's mean is a budget of the
grid), or at the nearest budget (the mean lies outside the grid)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from itemscale.analysis.measures import Estimate
from itemscale.analysis.measures._result_models import MatchedCost
from itemscale.cli._inference_text import _cost_lines


def _selector(frames: float, below: str, above: str, nearest: bool) -> Any:
    matched = MatchedCost(
        frames=frames,
        uniform_below=below,
        uniform_above=above,
        weight_above=0.0,
        nearest=nearest,
        accuracy_uniform=Estimate(0.175, 0.1, 0.275),
        accuracy_difference=Estimate(0.613, 0.512, 0.712),
    )
    return SimpleNamespace(
        frames_used_mean=frames,
        frames_used_min=2,
        frames_used_max=6,
        frames_cap=8,
        uniform_frames_used_mean=8.0,
        matched_cost=matched,
    )


@pytest.mark.parametrize(
    ("frames", "below", "above", "nearest", "where"),
    [
        (3.0, "2f@56", "4f@56", False, "uniform interpolated between 2f@56 and 4f@56"),
        (2.0, "2f@56", "2f@56", False, "uniform at 2f@56, a budget of the grid"),
        (1.5, "2f@56", "2f@56", True, "nearest uniform budget 2f@56"),
    ],
)
def test_the_matched_cost_line_says_where_uniform_was_read(
    frames: float, below: str, above: str, nearest: bool, where: str
) -> None:
    lines = _cost_lines(_selector(frames, below, above, nearest))
    head = f"frames used: mean {frames:.1f} (min 2, max 6) of a cap of 8; uniform used 8.0"
    assert lines[0] == head
    assert f"at matched mean cost ({frames:.1f} frames, {where}): uniform accuracy" in lines[1]

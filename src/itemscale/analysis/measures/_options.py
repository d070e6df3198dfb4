"""`AnalysisOptions`: the keywords `analyze`, `analyze_responses` and `build_artifact` take in
place of an `AnalysisSettings`, typed one by one, so a user's type checker refuses a misspelt
or mistyped one; a test holds the keys equal to the settings' fields. `n_boot` is taken at run
time but not typed, so a checker points its callers to `bootstrap`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from ._settings import IntervalMethod, Metric


class AnalysisOptions(TypedDict, total=False):
    """`AnalysisSettings`' fields as keywords (each optional; the defaults are the settings')."""

    bootstrap: int
    seed: int
    ci: IntervalMethod
    configs: Sequence[str] | None
    control: str | None
    axis: str | None
    by: Sequence[str]
    metric: Metric
    eps: float
    power_target: float
    test_pairs: Sequence[tuple[str, str]]
    heterogeneity_draws: int
    workers: int | None
    rerun_floor: float | None

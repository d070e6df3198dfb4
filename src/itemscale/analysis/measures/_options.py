"""`AnalysisOptions`: the keywords `analyze`, `analyze_responses` and `build_artifact` take in
place of an `AnalysisSettings`, typed one by one.

A call may give the settings whole or as keywords (`itemscale.analyze(run, bootstrap=200)`);
typing the keywords (`**options: Unpack[AnalysisOptions]`) lets a user's type checker refuse a
misspelt or mistyped one before it runs, where `**options: object` let anything through. The
keys are `AnalysisSettings`' fields, a test holds the two equal, and the settings still check
each value at run time; `n_boot`, the old name of `bootstrap`, is taken at run time but not
typed, so a checker points a call that uses it to the one name.
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

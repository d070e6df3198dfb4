"""Measures on the response table (MEASURES.md): matched grid, binary, repeated and continuous
measures, membership across protocols, and the paired video bootstrap.

Analysis works on the table alone: nothing here imports models, decoders or the sweep.
"""

from ._analyze import ANALYSIS_SCHEMA_VERSION, DEFAULT_BOOTSTRAP, analyze_responses, membership
from ._binary import (
    Stat,
    beneficial_indicator,
    binary_block,
    continuous_block,
    disagreement,
    expected_harmful,
    greedy_cover,
    harmful_indicator,
    item_rate_harmful,
    mcnemar_exact_p,
    stat,
    terminal_regression_indicator,
    text_overwrite_counts,
)
from ._bootstrap import (
    CHUNK,
    VideoBootstrap,
    percentile_interval,
    percentile_intervals,
    resample_counts,
)
from ._matrix import CONTINUOUS_METRICS, ResponseMatrix, build_matrices

__all__ = [
    "ANALYSIS_SCHEMA_VERSION",
    "CHUNK",
    "CONTINUOUS_METRICS",
    "DEFAULT_BOOTSTRAP",
    "ResponseMatrix",
    "Stat",
    "VideoBootstrap",
    "analyze_responses",
    "beneficial_indicator",
    "binary_block",
    "build_matrices",
    "continuous_block",
    "disagreement",
    "expected_harmful",
    "greedy_cover",
    "harmful_indicator",
    "item_rate_harmful",
    "mcnemar_exact_p",
    "membership",
    "percentile_interval",
    "percentile_intervals",
    "resample_counts",
    "stat",
    "terminal_regression_indicator",
    "text_overwrite_counts",
]

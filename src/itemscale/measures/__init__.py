"""Measures on the response table (docs/measures.md): matched grid, binary, repeated and continuous
measures, membership across protocols, the tests between budgets, and the paired video bootstrap.

`analyze_responses` computes every measure in the `analyze --json` layout; `AnalysisResult` is
the typed record of it. Each headline measure is a registered unit (`Measure`, `MEASURES`,
`register_measure`; docs/extending.md). Analysis works on the table alone: nothing here imports
models, decoders or the sweep.
"""

from ._analyze import analyze_responses, membership
from ._binary import (
    beneficial_indicator,
    disagreement,
    eps_flips,
    expected_harmful,
    greedy_cover,
    harmful_indicator,
    mcnemar_exact_p,
    terminal_regression_indicator,
    text_overwrite_counts,
)
from ._blocks import GRID_WITH_TEXT_TITLE
from ._bootstrap import (
    CI_METHODS,
    DEFAULT_CI,
    VideoBootstrap,
    bca_intervals,
    intervals,
    percentile_interval,
    percentile_intervals,
    resample_counts,
)
from ._churn import BudgetChurn, SeriesChurn, series_churn
from ._effective import effective_budget, effective_entry, repeated_terminal
from ._glossary import GLOSSARY
from ._heterogeneity import (
    DEFAULT_DRAWS,
    MAX_BUDGETS,
    TRAJECTORIES,
    Comparison,
    HeterogeneityTest,
    NoiseComparison,
    fit_budget_effects,
    heterogeneity_test,
    noise_comparison,
)
from ._inference import DEFAULT_POWER_TARGET, additive_sentence
from ._matrix import (
    CONTINUOUS_METRICS,
    INTERVENTION_SERIES_PREFIX,
    ResponseMatrix,
    build_matrices,
)
from ._measure import (
    MEASURE_KINDS,
    BlockData,
    ItemShare,
    Measure,
    MeasureKind,
    Resolved,
    count_text,
    counted_text,
    stat_text,
)
from ._order import BudgetOrder, budget_order, main_chain, resolution_tag
from ._paired_tests import PairedTest, clustered_mcnemar, holm, paired_tests
from ._per_item import (
    PAPER_COLUMNS,
    PER_ITEM_SCHEMA_VERSION,
    TRAJECTORY_CLASSES,
    paper_labels,
    per_item_labels,
)
from ._power import (
    AxisPower,
    PairPower,
    PowerAnalysis,
    minimum_detectable,
    power_analysis,
    power_at,
    videos_needed,
)
from ._registry import MEASURES, measures_for, register_measure, unregister_measure
from ._result import (
    ANALYSIS_SCHEMA_VERSION,
    FRAME_COLUMNS,
    AnalysisResult,
    SeriesResult,
    as_layout,
    schema_message,
)
from ._result_models import BestFixed, BootstrapSettings, Count, Estimate
from ._result_series import (
    AnalysisLayout,
    BinaryBlock,
    BinarySeries,
    BinaryWithText,
    ContinuousBlock,
    ContinuousWithText,
    OpenEndedSeries,
    SeriesEntry,
)
from ._same_input import SAME_INPUT_MIN_ITEMS, SameInput, SameInputBasis, same_input
from ._select import UnknownConfigError, select_configs
from ._selected import PRACTICAL_TIE, contender_kappa, selected_intervals, selected_max_intervals
from ._settings import DEFAULT_BOOTSTRAP, AnalysisSettings
from ._small import MIN_VIDEOS, NOT_ESTIMABLE, for_display, interval_note, small_sample_text
from ._stats import stat

__all__ = [
    "ANALYSIS_SCHEMA_VERSION",
    "CI_METHODS",
    "CONTINUOUS_METRICS",
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_CI",
    "DEFAULT_DRAWS",
    "DEFAULT_POWER_TARGET",
    "FRAME_COLUMNS",
    "GLOSSARY",
    "GRID_WITH_TEXT_TITLE",
    "INTERVENTION_SERIES_PREFIX",
    "MAX_BUDGETS",
    "MEASURES",
    "MEASURE_KINDS",
    "MIN_VIDEOS",
    "NOT_ESTIMABLE",
    "PAPER_COLUMNS",
    "PER_ITEM_SCHEMA_VERSION",
    "PRACTICAL_TIE",
    "SAME_INPUT_MIN_ITEMS",
    "TRAJECTORIES",
    "TRAJECTORY_CLASSES",
    "AnalysisLayout",
    "AnalysisResult",
    "AnalysisSettings",
    "AxisPower",
    "BestFixed",
    "BinaryBlock",
    "BinarySeries",
    "BinaryWithText",
    "BlockData",
    "BootstrapSettings",
    "BudgetChurn",
    "BudgetOrder",
    "Comparison",
    "ContinuousBlock",
    "ContinuousWithText",
    "Count",
    "Estimate",
    "HeterogeneityTest",
    "ItemShare",
    "Measure",
    "MeasureKind",
    "NoiseComparison",
    "OpenEndedSeries",
    "PairPower",
    "PairedTest",
    "PowerAnalysis",
    "Resolved",
    "ResponseMatrix",
    "SameInput",
    "SameInputBasis",
    "SeriesChurn",
    "SeriesEntry",
    "SeriesResult",
    "UnknownConfigError",
    "VideoBootstrap",
    "additive_sentence",
    "analyze_responses",
    "as_layout",
    "bca_intervals",
    "beneficial_indicator",
    "budget_order",
    "build_matrices",
    "clustered_mcnemar",
    "contender_kappa",
    "count_text",
    "counted_text",
    "disagreement",
    "effective_budget",
    "effective_entry",
    "eps_flips",
    "expected_harmful",
    "fit_budget_effects",
    "for_display",
    "greedy_cover",
    "harmful_indicator",
    "heterogeneity_test",
    "holm",
    "interval_note",
    "intervals",
    "main_chain",
    "mcnemar_exact_p",
    "measures_for",
    "membership",
    "minimum_detectable",
    "noise_comparison",
    "paired_tests",
    "paper_labels",
    "per_item_labels",
    "percentile_interval",
    "percentile_intervals",
    "power_analysis",
    "power_at",
    "register_measure",
    "repeated_terminal",
    "resample_counts",
    "resolution_tag",
    "same_input",
    "schema_message",
    "select_configs",
    "selected_intervals",
    "selected_max_intervals",
    "series_churn",
    "small_sample_text",
    "stat",
    "stat_text",
    "terminal_regression_indicator",
    "text_overwrite_counts",
    "unregister_measure",
    "videos_needed",
]

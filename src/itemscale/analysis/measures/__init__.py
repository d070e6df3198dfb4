"""Measures on the response table (docs/measures.md): matched grid, binary, repeated and continuous
measures, membership across protocols, the tests between budgets, and the paired video bootstrap.

`analyze_responses` computes every measure in the `analyze --json` layout; `AnalysisResult` is
the typed record of it. Each headline measure is a registered unit (`Measure`, `MEASURES`,
`register_measure`; docs/extending.md). Analysis works on the table alone: nothing here imports
models, decoders or the sweep.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ...core.rerun_evidence import answer_keys, measured_floor, measured_floors
from ...core.rerun_floor import (
    FLOOR_MAX_RATE,
    FLOOR_MIN_ANSWERS,
    HOW_TO_MEASURE,
    AnswersGrade,
    RerunFloor,
    grade_answers,
    rerun_bound,
)
from ._alternatives_text import (
    SYMBOLS as ALTERNATIVE_SYMBOLS,
)
from ._alternatives_text import (
    alternatives_headline,
    alternatives_title,
    control_source,
    detected_note,
    pair_grade,
    pair_verdict_text,
)
from ._analyze import analyze_responses, membership
from ._anchor_predict import AnchorPrediction, predict_from_anchors
from ._anchor_validation import SeedOutcome, leave_one_model_out, simulated_coverage, summary_rows
from ._anchors import (
    ANCHOR_SCHEMA_VERSION,
    AnchorSet,
    anchor_text,
    choose_anchors,
    predict_accuracy,
    read_anchors,
)
from ._binary import (
    beneficial_indicator,
    disagreement,
    eps_flips,
    expected_harmful,
    greedy_cover,
    harmful_indicator,
    mcnemar_exact_p,
    text_overwrite_counts,
)
from ._blocks import GRID_WITH_TEXT_TITLE
from ._bootstrap import (
    CI_METHODS,
    DEFAULT_CI,
    VideoBootstrap,
    bca_intervals,
    intervals,
    percentile_intervals,
    resample_counts,
)
from ._churn import BudgetChurn, SeriesChurn, series_churn
from ._effective import effective_budget, repeated_terminal
from ._glossary import GLOSSARY
from ._heterogeneity import (
    DEFAULT_DRAWS,
    MAX_BUDGETS,
    Comparison,
    HeterogeneityTest,
    NoiseComparison,
    fit_budget_effects,
    heterogeneity_test,
    noise_comparison,
)
from ._inference import DEFAULT_POWER_TARGET, additive_sentence
from ._irt import (
    IRT_METHOD,
    IRT_SCHEMA_VERSION,
    THETA_GRID,
    IrtError,
    IrtFit,
    fit_irt,
    fitted_digest,
    information,
    simulate_2pl,
    theta_for,
)
from ._matrix import (
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
    StatLike,
    counted_text,
    p_value_text,
    signed_text,
    stat_text,
)
from ._options import AnalysisOptions
from ._order import BudgetOrder, budget_order, main_chain, resolution_tag
from ._paired_tests import PairedTest, clustered_mcnemar, holm, paired_tests
from ._per_item import (
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
from ._registry import (
    MEASURES,
    measure_name,
    measure_origins,
    measures_for,
    register_measure,
    unregister_measure,
)
from ._result import (
    ANALYSIS_SCHEMA_VERSION,
    FRAME_COLUMNS,
    AnalysisResult,
    SeriesResult,
)
from ._result_models import (
    AlternativePair,
    BestFixed,
    BootstrapRecord,
    BootstrapSettings,
    Churn,
    ComparisonRecord,
    Count,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    Power,
    Record,
    Selector,
    SmallSample,
    WithBootstrapCount,
)
from ._result_series import (
    AlternativesSeries,
    AnalysisLayout,
    BinaryBlock,
    BinarySeries,
    BinaryWithText,
    ContinuousBlock,
    ContinuousWithText,
    OpenEndedSeries,
    SeriesEntry,
)
from ._same_input import (
    SAME_INPUT_MIN_ITEMS,
    AnswerAgreement,
    SameInput,
    answer_agreement,
    recorded_decides,
    same_input,
)
from ._select import UnknownConfigError, select_configs
from ._selected import contender_kappa, selected_intervals, selected_max_intervals
from ._settings import DEFAULT_BOOTSTRAP, AnalysisSettings
from ._small import MIN_VIDEOS, NOT_ESTIMABLE, interval_note, small_sample_text
from ._stats import stat

__all__ = [
    "ALTERNATIVE_SYMBOLS",
    "ANALYSIS_SCHEMA_VERSION",
    "ANCHOR_SCHEMA_VERSION",
    "BUILT_IN_MEASURES",
    "CI_METHODS",
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_CI",
    "DEFAULT_DRAWS",
    "DEFAULT_POWER_TARGET",
    "FLOOR_MAX_RATE",
    "FLOOR_MIN_ANSWERS",
    "FRAME_COLUMNS",
    "GLOSSARY",
    "GRID_WITH_TEXT_TITLE",
    "HOW_TO_MEASURE",
    "INTERVENTION_SERIES_PREFIX",
    "IRT_METHOD",
    "IRT_SCHEMA_VERSION",
    "MAX_BUDGETS",
    "MEASURES",
    "MEASURE_KINDS",
    "MIN_VIDEOS",
    "NOT_ESTIMABLE",
    "PER_ITEM_SCHEMA_VERSION",
    "SAME_INPUT_MIN_ITEMS",
    "THETA_GRID",
    "TRAJECTORY_CLASSES",
    "AlternativePair",
    "AlternativesSeries",
    "AnalysisLayout",
    "AnalysisOptions",
    "AnalysisResult",
    "AnalysisSettings",
    "AnchorPrediction",
    "AnchorSet",
    "AnswerAgreement",
    "AnswersGrade",
    "AxisPower",
    "BestFixed",
    "BinaryBlock",
    "BinarySeries",
    "BinaryWithText",
    "BlockData",
    "BootstrapRecord",
    "BootstrapSettings",
    "BudgetChurn",
    "BudgetOrder",
    "Churn",
    "Comparison",
    "ComparisonRecord",
    "ContinuousBlock",
    "ContinuousWithText",
    "Count",
    "Estimate",
    "Heterogeneity",
    "HeterogeneitySkipped",
    "HeterogeneityTest",
    "IrtError",
    "IrtFit",
    "ItemShare",
    "Measure",
    "MeasureKind",
    "NoiseComparison",
    "OpenEndedSeries",
    "PairPower",
    "PairedTest",
    "Power",
    "PowerAnalysis",
    "Record",
    "RerunFloor",
    "Resolved",
    "ResponseMatrix",
    "SameInput",
    "SeedOutcome",
    "Selector",
    "SeriesChurn",
    "SeriesEntry",
    "SeriesResult",
    "SmallSample",
    "StatLike",
    "UnknownConfigError",
    "VideoBootstrap",
    "WithBootstrapCount",
    "additive_sentence",
    "alternatives_headline",
    "alternatives_title",
    "analyze_responses",
    "anchor_text",
    "answer_agreement",
    "answer_keys",
    "bca_intervals",
    "beneficial_indicator",
    "budget_order",
    "build_matrices",
    "choose_anchors",
    "clustered_mcnemar",
    "contender_kappa",
    "control_source",
    "counted_text",
    "detected_note",
    "disagreement",
    "effective_budget",
    "eps_flips",
    "expected_harmful",
    "fit_budget_effects",
    "fit_irt",
    "fitted_digest",
    "grade_answers",
    "greedy_cover",
    "harmful_indicator",
    "heterogeneity_test",
    "holm",
    "information",
    "interval_note",
    "intervals",
    "leave_one_model_out",
    "main_chain",
    "mcnemar_exact_p",
    "measure_name",
    "measure_origins",
    "measured_floor",
    "measured_floors",
    "measures_for",
    "membership",
    "minimum_detectable",
    "noise_comparison",
    "p_value_text",
    "pair_grade",
    "pair_verdict_text",
    "paired_tests",
    "paper_labels",
    "per_item_labels",
    "percentile_intervals",
    "power_analysis",
    "power_at",
    "predict_accuracy",
    "predict_from_anchors",
    "read_anchors",
    "recorded_decides",
    "register_measure",
    "repeated_terminal",
    "rerun_bound",
    "resample_counts",
    "resolution_tag",
    "same_input",
    "select_configs",
    "selected_intervals",
    "selected_max_intervals",
    "series_churn",
    "signed_text",
    "simulate_2pl",
    "simulated_coverage",
    "small_sample_text",
    "stat",
    "stat_text",
    "summary_rows",
    "text_overwrite_counts",
    "theta_for",
    "unregister_measure",
    "videos_needed",
]


#: The one retired name of this face: the rerun floor every same-input verdict once fell back
#: on, 7 of 2,700 answers (0.26%). It was taken from public lmms-eval runs of frame selectors
#: whose selections never reached the model, not from reruns, and it judged those very runs:
#: a floor is measured (`measured_floors`, `RerunFloor.of_counts`) or stated
#: (`RerunFloor.of_percent`), never assumed (docs/compare.md, "Reruns").
_RETIRED_FLOOR = "DEFAULT_RERUN_FLOOR"


if _TYPE_CHECKING:
    from ._registry import BUILT_IN_MEASURES
else:  # mypy checks every name imported from this face, the retired one refused

    def __getattr__(name: str) -> _Any:
        if name == "BUILT_IN_MEASURES":  # read from the registry, on first use
            from ._registry import BUILT_IN_MEASURES

            return BUILT_IN_MEASURES
        if name != _RETIRED_FLOOR:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from ...core.errors import warn_renamed
        from ...core.rerun_floor import retired_default_floor

        warn_renamed(
            f"{__name__}.{name}",
            "a measured or stated floor (itemscale.analysis.measures.measured_floors, "
            "RerunFloor.of_counts, RerunFloor.of_percent): the default was taken from the "
            "selector runs it judged",
            stacklevel=3,
        )
        return retired_default_floor()


# itemscale's own units declare themselves, and their glossary lines, in their modules
MEASURES.import_package()

"""Policies on the response matrix (docs/policies.md): stopping cascades and the controlled sampling
intervention.

Analysis only: this package reads the response table and never imports models, decoders or the
sweep; `itemscale intervene` wires the sweep in the CLI.
"""

from ._cascade import (
    CASCADE_SCHEMA_VERSION,
    INTERVENTION_SERIES_PREFIX,
    POLICY_DESCRIPTIONS,
    POLICY_NAMES,
    CascadeSettings,
    HeldOut,
    agreeing_run,
    best_match,
    cascade_report,
    cross_fit,
    run_policies,
)
from ._cost import (
    SHARINGS,
    Sharing,
    StageCosts,
    frame_counts_matrix,
    frame_union_costs,
    stage_value_costs,
)
from ._fixed import fixed_rule
from ._folds import video_folds
from ._inputs import (
    CURRENCIES,
    SCORE_NAMES,
    SHARING_CHOICES,
    CascadeInputs,
    CostModelError,
    StageError,
    inputs_from_matrix,
    resolve_sharing,
    resolve_stages,
)
from ._intervention import (
    INTERVENTION_DESCRIPTIONS,
    INTERVENTION_NAMES,
    INTERVENTION_SCHEMA_VERSION,
    InterventionError,
    InterventionItem,
    InterventionName,
    InterventionPlan,
    intervention_configuration,
    intervention_outcomes,
    intervention_series,
    plan_intervention,
)
from ._learned import (
    FEATURE_NAMES,
    StoppingModel,
    agreement_matrix,
    fit_stopping_model,
    stopping_features,
    stopping_targets,
)
from ._search import (
    ThresholdFit,
    fit_threshold_path,
    fit_thresholds,
    outcome_at,
    pareto_front,
    shared_threshold_sweep,
    stopping_stage,
)
from ._summary import skipped_lines

__all__ = [
    "CASCADE_SCHEMA_VERSION",
    "CURRENCIES",
    "FEATURE_NAMES",
    "INTERVENTION_DESCRIPTIONS",
    "INTERVENTION_NAMES",
    "INTERVENTION_SCHEMA_VERSION",
    "INTERVENTION_SERIES_PREFIX",
    "POLICY_DESCRIPTIONS",
    "POLICY_NAMES",
    "SCORE_NAMES",
    "SHARINGS",
    "SHARING_CHOICES",
    "CascadeInputs",
    "CascadeSettings",
    "CostModelError",
    "HeldOut",
    "InterventionError",
    "InterventionItem",
    "InterventionName",
    "InterventionPlan",
    "Sharing",
    "StageCosts",
    "StageError",
    "StoppingModel",
    "ThresholdFit",
    "agreeing_run",
    "agreement_matrix",
    "best_match",
    "cascade_report",
    "cross_fit",
    "fit_stopping_model",
    "fit_threshold_path",
    "fit_thresholds",
    "fixed_rule",
    "frame_counts_matrix",
    "frame_union_costs",
    "inputs_from_matrix",
    "intervention_configuration",
    "intervention_outcomes",
    "intervention_series",
    "outcome_at",
    "pareto_front",
    "plan_intervention",
    "resolve_sharing",
    "resolve_stages",
    "run_policies",
    "shared_threshold_sweep",
    "skipped_lines",
    "stage_value_costs",
    "stopping_features",
    "stopping_stage",
    "stopping_targets",
    "video_folds",
]

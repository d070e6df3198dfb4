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
    CascadeInputs,
    CascadeSettings,
    HeldOut,
    cascade_report,
    cross_fit,
    inputs_from_matrix,
    run_policies,
)
from ._cost import (
    StageCosts,
    shared_frame_costs,
    shared_frame_costs_from_counts,
    shared_frame_costs_from_indices,
    visual_token_costs,
)
from ._folds import video_folds
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

__all__ = [
    "CASCADE_SCHEMA_VERSION",
    "FEATURE_NAMES",
    "INTERVENTION_DESCRIPTIONS",
    "INTERVENTION_NAMES",
    "INTERVENTION_SCHEMA_VERSION",
    "INTERVENTION_SERIES_PREFIX",
    "POLICY_DESCRIPTIONS",
    "POLICY_NAMES",
    "CascadeInputs",
    "CascadeSettings",
    "HeldOut",
    "InterventionError",
    "InterventionItem",
    "InterventionName",
    "InterventionPlan",
    "StageCosts",
    "StoppingModel",
    "ThresholdFit",
    "agreement_matrix",
    "cascade_report",
    "cross_fit",
    "fit_stopping_model",
    "fit_threshold_path",
    "fit_thresholds",
    "inputs_from_matrix",
    "intervention_configuration",
    "intervention_outcomes",
    "intervention_series",
    "outcome_at",
    "pareto_front",
    "plan_intervention",
    "run_policies",
    "shared_frame_costs",
    "shared_frame_costs_from_counts",
    "shared_frame_costs_from_indices",
    "shared_threshold_sweep",
    "stopping_features",
    "stopping_stage",
    "stopping_targets",
    "video_folds",
    "visual_token_costs",
]

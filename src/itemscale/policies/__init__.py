"""Policies on the response matrix (docs/policies.md): stopping cascades and the controlled sampling
intervention.

Analysis only: this package reads the response table and never imports models, decoders or the
sweep; `itemscale intervene` wires the sweep in the CLI.
"""

from ._cascade import (
    CASCADE_FILE,
    INTERVENTION_SERIES_PREFIX,
    CascadeSettings,
    HeldOut,
    best_match,
    cascade_report,
    cross_fit,
    run_policies,
)
from ._cost import StageCosts, frame_union_costs, stage_value_costs
from ._fixed import fixed_rule
from ._folds import video_folds
from ._inputs import CascadeInputs, CostModelError, StageError, inputs_from_matrix, resolve_stages
from ._intervention import (
    INTERVENTION_DIR,
    INTERVENTION_NAMES,
    PLAN_SUFFIX,
    InterventionError,
    InterventionItem,
    InterventionName,
    InterventionPlan,
    intervention_configuration,
    intervention_outcomes,
    plan_intervention,
)
from ._search import ThresholdFit, fit_threshold_path, fit_thresholds, stopping_stage
from ._summary import skipped_lines

__all__ = [
    "CASCADE_FILE",
    "INTERVENTION_DIR",
    "INTERVENTION_NAMES",
    "INTERVENTION_SERIES_PREFIX",
    "PLAN_SUFFIX",
    "CascadeInputs",
    "CascadeSettings",
    "CostModelError",
    "HeldOut",
    "InterventionError",
    "InterventionItem",
    "InterventionName",
    "InterventionPlan",
    "StageCosts",
    "StageError",
    "ThresholdFit",
    "best_match",
    "cascade_report",
    "cross_fit",
    "fit_threshold_path",
    "fit_thresholds",
    "fixed_rule",
    "frame_union_costs",
    "inputs_from_matrix",
    "intervention_configuration",
    "intervention_outcomes",
    "plan_intervention",
    "resolve_stages",
    "run_policies",
    "skipped_lines",
    "stage_value_costs",
    "stopping_stage",
    "video_folds",
]

"""Policies on the response matrix (docs/policies.md): the stopping rules of a cascade and the
controlled sampling intervention. ("Policies" names this box only; docs/glossary.md gives each
concept its one name.)

Analysis only: this package reads the response table and never imports models, decoders or the
sweep; `itemscale intervene` wires the sweep in the CLI.
"""

from typing import Any

from ..errors import renamed_attribute
from ._cascade import (
    CASCADE_SCHEMA_VERSION,
    INTERVENTION_SERIES_PREFIX,
    STOPPING_RULE_DESCRIPTIONS,
    STOPPING_RULE_NAMES,
    CascadeSettings,
    HeldOut,
    StoppingRuleName,
    agreeing_run,
    best_match,
    cascade_report,
    cross_fit,
    run_stopping_rules,
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
    "SCORE_NAMES",
    "SHARINGS",
    "SHARING_CHOICES",
    "STOPPING_RULE_DESCRIPTIONS",
    "STOPPING_RULE_NAMES",
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
    "StoppingRuleName",
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
    "run_stopping_rules",
    "shared_threshold_sweep",
    "skipped_lines",
    "stage_value_costs",
    "stopping_features",
    "stopping_stage",
    "stopping_targets",
    "video_folds",
]

#: Names renamed by issue 27 ("policy" alone named sampling, stopping and intervention), kept
#: for one release with a DeprecationWarning.
_RENAMED = {
    "POLICY_NAMES": "STOPPING_RULE_NAMES",
    "POLICY_DESCRIPTIONS": "STOPPING_RULE_DESCRIPTIONS",
    "run_policies": "run_stopping_rules",
}


def __getattr__(name: str) -> Any:
    return renamed_attribute(__name__, globals(), _RENAMED, name)

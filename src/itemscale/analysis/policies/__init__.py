"""Policies on the response matrix (docs/policies.md): the stopping rules of a cascade and the
controlled sampling intervention, from the response table alone (the workflow
`itemscale.workflows.intervene` runs the sweep). "Policies" names this box only.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ...core.errors import renamed_attribute as _renamed_attribute
from ..measures import Count, Estimate
from ._cascade import (
    CASCADE_FILE,
    INTERVENTION_SERIES_PREFIX,
    STOPPING_RULE_DESCRIPTIONS,
    STOPPING_RULE_NAMES,
    HeldOut,
    StoppingRuleName,
    best_match,
    cascade_report,
    cross_fit,
    run_stopping_rules,
)
from ._cascade_report import (
    CURRENCIES,
    AvailableRule,
    BestMatch,
    CascadeBlock,
    CascadeReport,
    FixedRule,
    FrontierPoint,
    RuleRecord,
    SkippedAxis,
    StopSummary,
    UnavailableRule,
    fixed_budget_note,
    rule_label,
    skipped_lines,
)
from ._cost import StageCosts, frame_union_costs, stage_value_costs
from ._fixed import fixed_rule
from ._folds import video_folds
from ._inputs import CascadeInputs, CostModelError, StageError, inputs_from_matrix, resolve_stages
from ._intervention import (
    INTERVENTION_DIR,
    PLAN_SUFFIX,
    InterventionError,
    InterventionPlan,
    intervention_configuration,
    intervention_outcomes,
    plan_intervention,
)
from ._intervention_report import (
    INTERVENTION_SCHEMA_VERSION,
    GroupCounts,
    InterventionAxis,
    InterventionItem,
    InterventionResult,
    ItemOutcome,
)
from ._records import ReportFileError, ReportRecord, optional_report
from ._search import ThresholdFit, fit_threshold_path, fit_thresholds, stopping_stage
from ._settings import (
    CASCADE_SCHEMA_VERSION,
    INTERVENTION_NAMES,
    CascadeSettings,
    InterventionName,
    InterventionSettings,
)

__all__ = [
    "CASCADE_FILE",
    "CASCADE_SCHEMA_VERSION",
    "CURRENCIES",
    "INTERVENTION_DIR",
    "INTERVENTION_NAMES",
    "INTERVENTION_SCHEMA_VERSION",
    "INTERVENTION_SERIES_PREFIX",
    "PLAN_SUFFIX",
    "STOPPING_RULE_DESCRIPTIONS",
    "STOPPING_RULE_NAMES",
    "AvailableRule",
    "BestMatch",
    "CascadeBlock",
    "CascadeInputs",
    "CascadeReport",
    "CascadeSettings",
    "CostModelError",
    "Count",
    "Estimate",
    "FixedRule",
    "FrontierPoint",
    "GroupCounts",
    "HeldOut",
    "InterventionAxis",
    "InterventionError",
    "InterventionItem",
    "InterventionName",
    "InterventionPlan",
    "InterventionResult",
    "InterventionSettings",
    "ItemOutcome",
    "ReportFileError",
    "ReportRecord",
    "RuleRecord",
    "SkippedAxis",
    "StageCosts",
    "StageError",
    "StopSummary",
    "StoppingRuleName",
    "ThresholdFit",
    "UnavailableRule",
    "best_match",
    "cascade_report",
    "cross_fit",
    "fit_threshold_path",
    "fit_thresholds",
    "fixed_budget_note",
    "fixed_rule",
    "frame_union_costs",
    "inputs_from_matrix",
    "intervention_configuration",
    "intervention_outcomes",
    "optional_report",
    "plan_intervention",
    "resolve_stages",
    "rule_label",
    "run_stopping_rules",
    "skipped_lines",
    "stage_value_costs",
    "stopping_stage",
    "video_folds",
]

#: Names renamed by issue 27 ("policy" alone named sampling, stopping and intervention), kept
#: for one release with a DeprecationWarning.
_RENAMED = {
    "POLICY_NAMES": "STOPPING_RULE_NAMES",
    "POLICY_DESCRIPTIONS": "STOPPING_RULE_DESCRIPTIONS",
    "run_policies": "run_stopping_rules",
    # one vocabulary: one interval record, one record base
    "Statistic": "Estimate",
    "Record": "ReportRecord",
}


if not _TYPE_CHECKING:  # mypy checks every name imported from this face, old ones refused

    def __getattr__(name: str) -> _Any:
        return _renamed_attribute(__name__, globals(), _RENAMED, name)

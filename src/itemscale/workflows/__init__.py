"""Library workflows: several stages run in order on a run folder, as one call.

A workflow is what a command does, minus its arguments and its printing, so a notebook or a
script gets the same result as the command line: `analyze` reads a run folder or a DataFrame
and returns the typed measures; `compare` chooses two sides of one or two run folders and runs
the comparison on them (`itemscale.analysis.comparison`, re-exported here: `CompareResult`); `intervene`
re-runs the model through the sweep and measures the outcome with the policies; `cascade` and
`audit` run those commands' steps on a run folder; `write_audit_sheets` decodes the frames of the
audited transitions and composes their contact sheets; `reproduce_paper` reproduces the seed
paper's published numbers from its released labels (`compare_with_paper`), and
`regression_pathways` and `selector_comparison` are the demo's other steps. They sit above every
stage they wire together and below the CLI; they import the heavy stages (the sweep, the
decoder) only when called, so importing this package costs no torch or PyAV.
"""

from ..analysis.comparison import COMPARE_SCHEMA_VERSION, CompareResult
from ..report import PaperNumber
from ._analyze import (
    PER_ITEM_SUFFIXES,
    analyze,
    check_per_item_path,
    response_table,
    write_per_item,
)
from ._audit_sheets import write_audit_sheets
from ._compare import compare
from ._demo import (
    ADAPTIVE_SELECTOR_FILE,
    DEMO_ADAPTIVE_MIN_FRAMES,
    DEMO_ADAPTIVE_SELECTION,
    DEMO_SELECTION,
    DEMO_SELECTOR_FRAMES,
    DEMO_SELECTOR_SIDE,
    SELECTOR_DIR,
    SELECTOR_FILE,
    RegressionPathway,
    RegressionPathways,
    SelectorComparison,
    regression_pathways,
    selector_comparison,
)
from ._errors import WorkflowError
from ._intervene import InterventionOptions, intervene
from ._paper import (
    PAPER_TOLERANCE_POINTS,
    RELEASE_ANSWER_KEY,
    SAVING_BAR,
    TABLE2_CONFIGS,
    TABLE2_FILE,
    PaperReproduction,
    compare_with_paper,
    import_release,
    paper_measures,
    release_dir,
    release_models,
    reproduce_paper,
)
from ._run_steps import AuditOutcome, audit, audit_sheets, cascade

__all__ = [
    "ADAPTIVE_SELECTOR_FILE",
    "COMPARE_SCHEMA_VERSION",
    "DEMO_ADAPTIVE_MIN_FRAMES",
    "DEMO_ADAPTIVE_SELECTION",
    "DEMO_SELECTION",
    "DEMO_SELECTOR_FRAMES",
    "DEMO_SELECTOR_SIDE",
    "PAPER_TOLERANCE_POINTS",
    "PER_ITEM_SUFFIXES",
    "RELEASE_ANSWER_KEY",
    "SAVING_BAR",
    "SELECTOR_DIR",
    "SELECTOR_FILE",
    "TABLE2_CONFIGS",
    "TABLE2_FILE",
    "AuditOutcome",
    "CompareResult",
    "InterventionOptions",
    "PaperNumber",
    "PaperReproduction",
    "RegressionPathway",
    "RegressionPathways",
    "SelectorComparison",
    "WorkflowError",
    "analyze",
    "audit",
    "audit_sheets",
    "cascade",
    "check_per_item_path",
    "compare",
    "compare_with_paper",
    "import_release",
    "intervene",
    "paper_measures",
    "regression_pathways",
    "release_dir",
    "release_models",
    "reproduce_paper",
    "response_table",
    "selector_comparison",
    "write_audit_sheets",
    "write_per_item",
]

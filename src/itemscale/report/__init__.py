"""The audit artifact: a checkable folder (responses, trajectories, measures, provenance,
annotations, report.html, MANIFEST.json) and its verifier."""

from ._build import (
    ARTIFACT_DIR,
    COMPARISON_FILE,
    MEASURES_FILE,
    PROVENANCE_FILE,
    REPORT_FILE,
    ArtifactError,
    build_artifact,
    find_items_file,
)
from ._compare_page import COMPARE_PAGE_GENERATOR, render_compare_page
from ._comparison import PaperComparison, PaperNumber
from ._crosscheck import parse_digest
from ._derived import DERIVED_KEY
from ._headline import CurveHeadline, Headline
from ._inference_verdicts import AdditiveVerdict, InferenceVerdicts
from ._manifest import manifest_digest
from ._trajectories import trajectory_table
from ._verify import VerifyResult, verify_artifact

__all__ = [
    "ARTIFACT_DIR",
    "COMPARE_PAGE_GENERATOR",
    "COMPARISON_FILE",
    "DERIVED_KEY",
    "MEASURES_FILE",
    "PROVENANCE_FILE",
    "REPORT_FILE",
    "AdditiveVerdict",
    "ArtifactError",
    "CurveHeadline",
    "Headline",
    "InferenceVerdicts",
    "PaperComparison",
    "PaperNumber",
    "VerifyResult",
    "build_artifact",
    "find_items_file",
    "manifest_digest",
    "parse_digest",
    "render_compare_page",
    "trajectory_table",
    "verify_artifact",
]

"""The audit artifact: a checkable folder (responses, trajectories, measures, provenance,
annotations, report.html, MANIFEST.json) and its verifier."""

from ..files import sha256_file
from ..responses import MANIFEST_FILE
from ._build import (
    ARTIFACT_DIR,
    ARTIFACT_SCHEMA_VERSION,
    COMPARISON_FILE,
    MEASURES_FILE,
    OPTIONAL_FILES,
    PROVENANCE_FILE,
    REPORT_FILE,
    TRAJECTORIES_FILE,
    ArtifactError,
    build_artifact,
    find_items_file,
    git_state,
)
from ._crosscheck import parse_digest
from ._derived import DERIVED_KEY
from ._html import ReportInputs, item_table_payload, json_for_script, render_report
from ._manifest import check_manifest, manifest_digest, write_manifest
from ._trajectories import PATTERNS, TRAJECTORY_SCHEMA_VERSION, pattern_of, trajectory_table
from ._verify import VerifyResult, verify_artifact

__all__ = [
    "ARTIFACT_DIR",
    "ARTIFACT_SCHEMA_VERSION",
    "COMPARISON_FILE",
    "DERIVED_KEY",
    "MANIFEST_FILE",
    "MEASURES_FILE",
    "OPTIONAL_FILES",
    "PATTERNS",
    "PROVENANCE_FILE",
    "REPORT_FILE",
    "TRAJECTORIES_FILE",
    "TRAJECTORY_SCHEMA_VERSION",
    "ArtifactError",
    "ReportInputs",
    "VerifyResult",
    "build_artifact",
    "check_manifest",
    "find_items_file",
    "git_state",
    "item_table_payload",
    "json_for_script",
    "manifest_digest",
    "parse_digest",
    "pattern_of",
    "render_report",
    "sha256_file",
    "trajectory_table",
    "verify_artifact",
    "write_manifest",
]

"""The frame audit: why a bigger budget turned a right answer wrong.

Works on the response table alone (no model, no decoder): harmful transitions, the frames kept,
dropped and added between the two budgets, evidence frames present or not, a pathway label by
fixed rules, contact sheets from frames the caller decoded, and human annotations kept beside
the automatic ones.
"""

from ._frames import (
    PATHWAYS,
    RULES_VERSION,
    TRANSITION_COLUMNS,
    AuditError,
    TransitionFacts,
    audit_transitions,
    classify_pathway,
    evidence_frames,
    pathway_counts,
)
from ._sheets import contact_sheet, encode_png
from ._store import (
    ANNOTATION_COLUMNS,
    ANNOTATIONS_FILE,
    ANNOTATIONS_SCHEMA_VERSION,
    AUDIT_FILE,
    AUDIT_SCHEMA_VERSION,
    AUDIT_SUMMARY_FILE,
    CSV_COLUMNS,
    SHEETS_DIR,
    automatic_annotations,
    empty_annotations,
    export_annotations_csv,
    import_annotations_csv,
    merge_annotations,
    read_annotations,
    read_audit,
    write_annotations,
    write_audit,
)

__all__ = [
    "ANNOTATIONS_FILE",
    "ANNOTATIONS_SCHEMA_VERSION",
    "ANNOTATION_COLUMNS",
    "AUDIT_FILE",
    "AUDIT_SCHEMA_VERSION",
    "AUDIT_SUMMARY_FILE",
    "CSV_COLUMNS",
    "PATHWAYS",
    "RULES_VERSION",
    "SHEETS_DIR",
    "TRANSITION_COLUMNS",
    "AuditError",
    "TransitionFacts",
    "audit_transitions",
    "automatic_annotations",
    "classify_pathway",
    "contact_sheet",
    "empty_annotations",
    "encode_png",
    "evidence_frames",
    "export_annotations_csv",
    "import_annotations_csv",
    "merge_annotations",
    "pathway_counts",
    "read_annotations",
    "read_audit",
    "write_annotations",
    "write_audit",
]

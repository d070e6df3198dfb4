"""The frame audit: why a bigger budget turned a right answer wrong, from the response table
alone (harmful transitions, frames kept, dropped and added, evidence, a pathway by fixed rules,
contact sheets, human annotations beside the automatic ones).
"""

from ._frames import (
    PATHWAYS,
    TRANSITION_COLUMNS,
    AuditError,
    audit_transitions,
    evidence_frames,
    pathway_counts,
)
from ._sheets import contact_sheet, encode_png
from ._store import (
    ANNOTATIONS_FILE,
    AUDIT_FILE,
    AUDIT_SUMMARY_FILE,
    SHEETS_DIR,
    automatic_annotations,
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
    "AUDIT_FILE",
    "AUDIT_SUMMARY_FILE",
    "PATHWAYS",
    "SHEETS_DIR",
    "TRANSITION_COLUMNS",
    "AuditError",
    "audit_transitions",
    "automatic_annotations",
    "contact_sheet",
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

"""Library workflows: several stages run in order on a run folder, as one call.

A workflow is what a command does, minus its arguments and its printing, so a notebook or a
script gets the same result as the command line: `analyze` reads a run folder or a DataFrame
and returns the typed measures; `compare` puts two runs side by side, item by item; `intervene` re-runs the model through the
sweep and measures the outcome with the policies; `write_audit_sheets` decodes the frames of the
audited transitions and composes their contact sheets. They sit above every stage they wire
together and below the CLI; they import the heavy stages (the sweep, the decoder) only when
called, so importing this package costs no torch or PyAV.
"""

from ._analyze import (
    PER_ITEM_SUFFIXES,
    analyze,
    check_per_item_path,
    response_table,
    write_per_item,
)
from ._audit_sheets import write_audit_sheets
from ._compare import compare
from ._compare_result import COMPARE_SCHEMA_VERSION, CompareResult
from ._errors import WorkflowError
from ._intervene import intervene

__all__ = [
    "COMPARE_SCHEMA_VERSION",
    "PER_ITEM_SUFFIXES",
    "CompareResult",
    "WorkflowError",
    "analyze",
    "check_per_item_path",
    "compare",
    "intervene",
    "response_table",
    "write_audit_sheets",
    "write_per_item",
]

"""Library workflows: several stages run in order on a run folder, as one call.

A workflow is what a command does, minus its arguments and its printing, so a notebook or a
script gets the same result as the command line: `analyze` reads a run folder or a DataFrame
and returns the typed measures; `intervene` re-runs the model through the
sweep and measures the outcome with the policies; `write_audit_sheets` decodes the frames of the
audited transitions and composes their contact sheets. They sit above every stage they wire
together and below the CLI; they import the heavy stages (the sweep, the decoder) only when
called, so importing this package costs no torch or PyAV.
"""

from ._analyze import analyze, response_table
from ._audit_sheets import write_audit_sheets
from ._errors import WorkflowError
from ._intervene import intervene

__all__ = ["WorkflowError", "analyze", "intervene", "response_table", "write_audit_sheets"]

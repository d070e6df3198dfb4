"""The one error a workflow raises on purpose."""

from __future__ import annotations

from ..core.errors import ItemscaleError


class WorkflowError(ItemscaleError, ValueError):
    """A workflow cannot go on with this run folder (no protocol recorded, no budget axis, an
    interrupted re-run); the message names the folder and says what to do."""

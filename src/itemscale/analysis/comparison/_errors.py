"""The one error a comparison raises on purpose."""

from __future__ import annotations

from ...core.errors import ItemscaleError


class CompareError(ItemscaleError, ValueError):
    """Two sides cannot be compared as asked (an outcome missing on a matched answer, a `by`
    attribute no item records, a task kind a side does not hold); the message says what to
    give instead. `itemscale.workflows.compare` raises it as a `WorkflowError`."""

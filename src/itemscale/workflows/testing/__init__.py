"""Conformance checks a plugin's author runs in their own tests, the way scikit-learn's
`check_estimator` checks an estimator: `check_backend`, `check_importer` and `check_measure`
each take the plugin (an entry, or its registered name), run what itemscale relies on, and
raise one `ConformanceError` (an AssertionError) listing every check that failed, or return.
itemscale's own backends, importers and measures pass them (tests/project/test_conformance.py).

    from itemscale.workflows.testing import check_measure
    from toy_measure import FIRST_BUDGET_RATE

    def test_conformance() -> None:
        check_measure(FIRST_BUDGET_RATE)

See docs/extending.md, "Checking a plugin".
"""

from ._backend import check_backend
from ._importer import check_importer
from ._measure import check_measure
from ._report import ConformanceError

__all__ = ["ConformanceError", "check_backend", "check_importer", "check_measure"]

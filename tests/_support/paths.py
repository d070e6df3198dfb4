"""Repository paths for the tests, so no test works out its own depth below the root."""

from __future__ import annotations

from pathlib import Path

#: tests/
TESTS = Path(__file__).resolve().parent.parent
#: the repository root
REPO = TESTS.parent
SRC = REPO / "src"
DOCS = REPO / "docs"
#: fixtures shared between checkouts, next to the repository
FIXTURES = REPO.parent / "shared" / "fixtures"
#: data shipped with the tests (tests/data)
DATA = TESTS / "data"


#: Set (CI sets it in .ci/run) to make a missing shared fixture fail its test instead of skip.
REQUIRE_FIXTURES = "ITEMSCALE_REQUIRE_FIXTURES"


def shared(relative: str = "") -> Path:
    """A file (or, with no argument, the folder) of the shared fixtures, or a skip saying where
    it was looked for: a clone without `../shared` runs every other test. With
    ITEMSCALE_REQUIRE_FIXTURES=1 (CI) the missing file fails the test instead."""
    import os

    import pytest

    path = FIXTURES / relative if relative else FIXTURES
    if not path.exists():
        why = (
            f"shared fixture {path} not found: these are real files of other tools (lmms-eval "
            "logs, published benchmark question files) kept in ../shared/fixtures beside the "
            "repository, not shipped with it (tests/data/README.md)"
        )
        if os.environ.get(REQUIRE_FIXTURES) == "1":
            pytest.fail(f"{why}; {REQUIRE_FIXTURES}=1 requires it")
        pytest.skip(why)
    return path

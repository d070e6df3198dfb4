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


def shared(relative: str) -> Path:
    """A file of the shared fixtures, or a skip saying where it was looked for (a clone
    without `../shared` runs every other test)."""
    import pytest

    path = FIXTURES / relative
    if not path.exists():
        pytest.skip(f"shared fixture {path} not found (../shared/fixtures beside the repository)")
    return path

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

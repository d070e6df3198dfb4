"""comparison.json: the seed paper's published numbers beside itemscale's, one row type that
the paper comparison writes (`workflows.compare_with_paper`) and the report reads."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

COMPARISON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PaperNumber:
    """One published number beside itemscale's (points), and whether they agree to
    `workflows.PAPER_TOLERANCE_POINTS`; a row of comparison.json."""

    model: str
    #: `accuracy CONFIG`, or the paper's name of a measure (`visual confusion`, ...).
    measure: str
    paper: float
    itemscale: float
    #: itemscale's 95% interval in points (None without a bootstrap).
    ci: list[float] | None
    same: bool
    n_items: int
    n_videos: int
    configs: list[str]


@dataclass(frozen=True)
class PaperComparison:
    """comparison.json: every published number of the release beside itemscale's."""

    rows: tuple[PaperNumber, ...]
    schema_version: int = COMPARISON_SCHEMA_VERSION

    @property
    def reproduced(self) -> int:
        return sum(r.same for r in self.rows)

    def as_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "rows": [dataclasses.asdict(r) for r in self.rows],
        }

    @classmethod
    def from_json(cls, payload: Mapping[str, Any]) -> PaperComparison:
        """The file's content as the record; a ValueError naming the row and key that do not
        fit (the caller names the file)."""
        names = [f.name for f in dataclasses.fields(PaperNumber)]
        rows = []
        for n, row in enumerate(payload.get("rows") or ()):
            if not isinstance(row, Mapping) or sorted(row) != sorted(names):
                keys = sorted(row) if isinstance(row, Mapping) else type(row).__name__
                raise ValueError(f"rows[{n}]: expected the keys {names}, found {keys}")
            rows.append(PaperNumber(**row))
        return cls(rows=tuple(rows), schema_version=int(payload.get("schema_version", 1)))

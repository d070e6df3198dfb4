"""Reading a results table (CSV, TSV, JSONL, Parquet) into located records.

Every record keeps its 1-based line (the CSV header is line 1; Parquet rows count from 1) and,
once renamed or widened (`_table_shape`), the column each value came from, so that an error about
`answer` in a wide table names the column the user sees in the file (`32f_151k`).
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ._common import ImportInputError, jsonl_values

FORMATS: Final[dict[str, str]] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


@dataclass(frozen=True)
class TableRecords:
    """A table's records. `aliases` maps a record's column names back to the file's: one
    mapping for every record, or one per record (a wide table's cells)."""

    path: Path
    fmt: str
    columns: tuple[str, ...]
    records: list[tuple[int, dict[str, Any]]]
    aliases: tuple[Mapping[str, str], ...] = ()

    def aliases_of(self, position: int) -> Mapping[str, str]:
        if not self.aliases:
            return {}
        return self.aliases[position] if len(self.aliases) > 1 else self.aliases[0]

    def at(
        self, line: int, column: str | None = None, aliases: Mapping[str, str] | None = None
    ) -> str:
        unit = "row " if self.fmt == "parquet" else ""
        text = f"{self.path}:{unit}{line}" if unit == "" else f"{self.path}: {unit}{line}"
        if column is None:
            return text
        shown = (aliases or {}).get(column, column)
        return text + f": column '{shown}'"


def table_format(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ImportInputError(
            f"{path}: unknown table format {path.suffix or '(no suffix)'!r}; "
            f"use one of {', '.join(sorted(FORMATS))}"
        )
    return fmt


def read_table_records(path: str | os.PathLike[str]) -> TableRecords:
    """Read a CSV/TSV, JSONL or Parquet file into (line number, raw values) records."""
    p = Path(path)
    if not p.is_file():
        raise ImportInputError(f"{p}: no such file")
    fmt = table_format(p)
    records: list[tuple[int, dict[str, Any]]] = []
    if fmt in ("csv", "tsv"):
        with p.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t" if fmt == "tsv" else ",")
            try:
                header = next(reader)
            except StopIteration:
                raise ImportInputError(f"{p}:1: empty file, expected a header line") from None
            header = [h.strip() for h in header]
            dup = [h for h, n in Counter(header).items() if n > 1]
            if dup:
                raise ImportInputError(f"{p}:1: column '{dup[0]}' appears twice in the header")
            for values in reader:
                line = reader.line_num
                if not values or all(not v.strip() for v in values):
                    continue
                if len(values) != len(header):
                    raise ImportInputError(
                        f"{p}:{line}: {len(values)} fields, the header has {len(header)}"
                    )
                records.append((line, dict(zip(header, values, strict=True))))
        columns = tuple(header)
    elif fmt == "jsonl":
        seen: dict[str, None] = {}
        for line, obj in jsonl_values(p):
            if not isinstance(obj, dict):
                raise ImportInputError(f"{p}:{line}: expected a JSON object per line")
            seen.update(dict.fromkeys(obj))
            records.append((line, obj))
        columns = tuple(seen)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(p)
        except (pa.ArrowInvalid, OSError) as exc:
            raise ImportInputError(f"{p}: not a readable Parquet file ({exc})") from exc
        columns = tuple(table.column_names)
        records = [(i, row) for i, row in enumerate(table.to_pylist(), start=1)]
    return TableRecords(path=p, fmt=fmt, columns=columns, records=records)

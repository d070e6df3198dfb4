"""Reading a results table (CSV, TSV, JSONL, Parquet, an .xlsx workbook's first sheet) into located records, streamed.

Every record keeps its 1-based line (the CSV header is line 1; Parquet rows count from 1) and,
once renamed or widened (`_table_shape`), the column each value came from, so that an error about
`answer` in a wide table names the column the user sees in the file (`32f_151k`).

Records are streamed, never held all at once: a table of 10^6 rows is parsed in chunks into
columns (`_table.import_table`), so memory follows the parsed table, not the Python objects of
every raw line (docs/performance.md).
"""

from __future__ import annotations

import csv
import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

from ...core.files import open_input
from ._common import ImportInputError, jsonl_values, not_utf8_message
from ._inputs import input_file

FORMATS: Final[dict[str, str]] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "xlsx",
}

#: One record: its line, its values by column, and where its columns came from in the file.
Record = tuple[int, Mapping[str, object], Mapping[str, str]]
#: how much of a CSV's end is read to find its last line
_TAIL_BYTES: Final[int] = 1 << 16
_NO_ALIASES: Final[Mapping[str, str]] = {}


@dataclass(frozen=True)
class TableRecords:
    """A table's columns and a way to stream its records (each iteration reads them again).

    `aliases` maps the records' column names back to the file's for the whole table (after a
    rename); a widened table's records carry their own (a cell's column)."""

    path: Path
    fmt: str
    columns: tuple[str, ...]
    stream: Callable[[], Iterator[Record]]
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: reason -> rows the last pass over `stream` left out on purpose (e.g. an empty answer
    #: under `--empty missing`): counted so the summary lists them as not imported
    left_out: Counter[str] = field(default_factory=Counter)

    def __iter__(self) -> Iterator[Record]:
        return self.stream()

    @property
    def records(self) -> list[tuple[int, Mapping[str, object]]]:
        """All (line, values) pairs at once; for small tables (answer keys, tests)."""
        return [(line, values) for line, values, _ in self.stream()]

    def at(
        self, line: int, column: str | None = None, aliases: Mapping[str, str] | None = None
    ) -> str:
        unit = "row " if self.fmt in ("parquet", "xlsx") else ""
        text = f"{self.path}:{unit}{line}" if unit == "" else f"{self.path}: {unit}{line}"
        if column is None:
            return text
        shown = (aliases or self.aliases).get(column, column)
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
    """The columns of a CSV/TSV, JSONL, Parquet or .xlsx file and a stream of its records."""
    p = input_file(Path(path))
    fmt = table_format(p)
    if fmt in ("csv", "tsv"):
        header = _csv_header(p, fmt)
        return TableRecords(p, fmt, header, lambda: _csv_records(p, fmt, header))
    if fmt == "jsonl":
        seen: dict[str, None] = {}
        for line, obj in jsonl_values(p):  # a first pass for the columns (and bad lines)
            if not isinstance(obj, dict):
                raise ImportInputError(f"{p}:{line}: expected a JSON object per line")
            seen.update(dict.fromkeys(obj))
        return TableRecords(p, fmt, tuple(seen), lambda: _jsonl_records(p))
    if fmt == "xlsx":
        header = _xlsx_header(p)
        return TableRecords(p, fmt, header, lambda: _xlsx_records(p, header))
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(p)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ImportInputError(f"{p}: not a readable Parquet file ({exc})") from exc
    columns = tuple(parquet.schema_arrow.names)
    return TableRecords(p, fmt, columns, lambda: _parquet_records(p))


def _decoded_lines(p: Path) -> Iterator[str]:
    """The file's lines as text (a UTF-8 BOM dropped); bytes that are not UTF-8 name their
    line."""
    with open_input(p) as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise ImportInputError(f"{p}:{number}: {not_utf8_message(exc)}") from None


class _TakenLines:
    """The lines a csv reader pulls, kept until the record they make is checked (a reader
    pulls one line at a time, never ahead)."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self.taken: list[str] = []

    def __iter__(self) -> _TakenLines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.taken.append(line)
        return line

    def pop(self) -> list[str]:
        taken, self.taken = self.taken, []
        return taken


def _check_closed(p: Path, fmt: str, values: list[str], raw: list[str], end: int) -> None:
    """Refuse a record that ends inside a quoted field: the lenient csv reader returns such a
    record only at the end of the file, with every line after the opening quote inside one
    value (a file that never closes a quote would otherwise import as a few rows with the
    rest swallowed into one answer). Checked cheaply: only a record whose last line has no
    line end, or whose last value ends with one, is parsed again strictly."""
    if not raw:
        return
    ends_line = raw[-1].endswith(("\n", "\r"))
    if ends_line and not (values and values[-1].endswith(("\n", "\r"))):
        return
    delimiter = "\t" if fmt == "tsv" else ","
    try:
        for _ in csv.reader(raw, delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        if "end of data" not in str(exc):
            return
        crossed = values[-1].count("\n") if values else 0
        opened = end - crossed + (1 if ends_line else 0)
        raise ImportInputError(
            f"{p}:{opened}: a quoted field opens on this line and never closes (the file ends "
            f"inside it, at line {end}): close the quote (a quote inside a quoted field is "
            'written twice, "")'
        ) from None


def _csv_header(p: Path, fmt: str) -> tuple[str, ...]:
    source = _TakenLines(_decoded_lines(p))
    reader = csv.reader(source, delimiter="\t" if fmt == "tsv" else ",")
    try:
        header = next(reader)
    except StopIteration:
        raise ImportInputError(f"{p}:1: empty file, expected a header line") from None
    except csv.Error as exc:
        raise ImportInputError(f"{p}:1: not a readable {fmt.upper()} header ({exc})") from None
    _check_closed(p, fmt, header, source.pop(), reader.line_num)
    header = [h.strip() for h in header]
    dup = [h for h, n in Counter(header).items() if n > 1]
    if dup:
        raise ImportInputError(f"{p}:1: column '{dup[0]}' appears twice in the header")
    return tuple(header)


def _record_lines(p: Path, start: int, end: int) -> list[str]:
    """Lines `start`..`end` (1-based) of the file, as `_decoded_lines` gives them. The last
    line alone is read from the file's tail; a longer span (a record across lines) by reading
    the lines again."""
    if start == end:
        with open_input(p) as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            tail = fh.read()
        body = tail[:-1] if tail.endswith(b"\n") else tail
        if b"\n" in body or size <= _TAIL_BYTES:
            last = tail[len(body.rsplit(b"\n", 1)[0]) + 1 :] if b"\n" in body else tail
            return [last.decode("utf-8-sig" if start == 1 else "utf-8", "replace")]
    return list(itertools.islice(_decoded_lines(p), start - 1, end))


def _check_last_closed(p: Path, fmt: str, values: list[str], start: int, end: int) -> None:
    """`_check_closed` for the last record: free for a file that ends with a line end outside
    any quote, else only the record's own lines are read again."""
    if not (values and values[-1].endswith(("\n", "\r"))):
        with open_input(p) as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) in (b"\n", b"\r"):
                return
    _check_closed(p, fmt, values, _record_lines(p, start, end), end)


def _csv_records(p: Path, fmt: str, header: tuple[str, ...]) -> Iterator[Record]:
    """CSV/TSV records; undecodable bytes, unreadable lines and a quote that never closes
    (only the last record can hold one) name their line. Each record is handed on once the
    next is read, so the last one is checked before it is."""
    reader = csv.reader(_decoded_lines(p), delimiter="\t" if fmt == "tsv" else ",")

    def record(values: list[str], line: int) -> Record | None:
        if not values or all(not v.strip() for v in values):
            return None
        if len(values) != len(header):
            raise ImportInputError(
                f"{p}:{line}: {len(values)} fields, the header has {len(header)}"
            )
        return line, dict(zip(header, values, strict=True)), _NO_ALIASES

    try:
        next(reader, None)
        start = reader.line_num + 1
        last: tuple[list[str], int, int] | None = None
        for values in reader:
            if last is not None and (done := record(last[0], last[2])) is not None:
                yield done
            last = (values, start, reader.line_num)
            start = reader.line_num + 1
        if last is not None:
            _check_last_closed(p, fmt, *last)
            if (done := record(last[0], last[2])) is not None:
                yield done
    except csv.Error as exc:
        raise ImportInputError(
            f"{p}:{reader.line_num}: not a readable {fmt.upper()} line ({exc})"
        ) from None


def _jsonl_records(p: Path) -> Iterator[Record]:
    for line, obj in jsonl_values(p):
        if not isinstance(obj, dict):  # the first pass refused it: the file changed since
            raise ImportInputError(f"{p}:{line}: expected a JSON object per line")
        yield line, obj, _NO_ALIASES


def _parquet_records(p: Path) -> Iterator[Record]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = 0
    try:
        for record in _numbered(pq.ParquetFile(p).iter_batches(batch_size=65536)):
            row = record[0]
            yield record
    except (pa.ArrowInvalid, OSError) as exc:
        raise ImportInputError(f"{p}: row {row + 1}: not a readable Parquet file ({exc})") from exc


def _numbered(batches: Iterable[pa.RecordBatch]) -> Iterator[Record]:
    """Arrow batches' rows as records, numbered from 1 (a Parquet file's `row N`)."""
    for row, values in enumerate((v for batch in batches for v in batch.to_pylist()), start=1):
        yield row, values, _NO_ALIASES


def _xlsx_rows(p: Path) -> Iterator[tuple[Any, ...]]:
    """The first sheet's rows, streamed (openpyxl's read-only mode), after the size checks
    every zip-based input gets (`itemscale.core.files.check_unzipped_size`, and the sheet's declared
    rows and cells, `check_sheet_size`); the rows and cells parsed are counted against the same
    bounds, so a sheet that declares no size, or a false one, stops there too."""
    from ...core import files

    try:
        files.check_unzipped_size(p)
        files.check_sheet_size(p)
    except files.ZipInputError as exc:
        raise ImportInputError(str(exc)) from None
    import openpyxl

    try:
        book = openpyxl.load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged workbook
        raise ImportInputError(f"{p}: not a readable .xlsx workbook ({exc})") from None
    try:
        sheet = book.worksheets[0] if book.worksheets else None
        if sheet is None:
            raise ImportInputError(f"{p}: the workbook has no sheet")
        cells = 0
        for rows, values in enumerate(sheet.iter_rows(values_only=True), start=1):
            cells += len(values)
            if rows > files.MAX_SHEET_ROWS or cells > files.MAX_SHEET_CELLS:
                raise ImportInputError(
                    f"{p}: row {rows}: the first sheet holds more than "
                    f"{files.MAX_SHEET_ROWS:,} rows or {files.MAX_SHEET_CELLS:,} cells, the "
                    "limit for one workbook (it declares no size, or a smaller one); save the "
                    "table as CSV or Parquet, which are read streamed, whatever their size"
                )
            yield values
    finally:
        book.close()


def _xlsx_header(p: Path) -> tuple[str, ...]:
    first = next(_xlsx_rows(p), None)
    if first is None:
        raise ImportInputError(f"{p}: row 1: empty sheet, expected a header row")
    header = [("" if v is None else str(v)).strip() for v in first]
    while header and not header[-1]:
        header.pop()
    dup = [h for h, n in Counter(header).items() if n > 1]
    if dup:
        raise ImportInputError(f"{p}: row 1: column '{dup[0]}' appears twice in the header")
    return tuple(header)


def _xlsx_records(p: Path, header: tuple[str, ...]) -> Iterator[Record]:
    rows = _xlsx_rows(p)
    next(rows, None)
    for row, values in enumerate(rows, start=2):
        cells = list(values[: len(header)]) + [None] * (len(header) - len(values))
        if all(v is None or (isinstance(v, str) and not v.strip()) for v in cells):
            continue
        if any(v is not None for v in values[len(header) :]):
            raise ImportInputError(f"{p}: row {row}: a value right of the header's last column")
        yield row, dict(zip(header, cells, strict=True)), _NO_ALIASES


def frame_records(frame: pd.DataFrame, name: str = "DataFrame") -> TableRecords:
    """A pandas DataFrame as a results table, its rows numbered from 1 as `row N` (how errors
    name them), so a notebook's table gets the checks a file gets. Values go through Arrow,
    as a Parquet file's do: missing values are None, numbers plain Python numbers."""
    import pyarrow as pa

    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ImportInputError(f"{name}: a column Arrow cannot type ({exc})") from exc
    columns = tuple(str(c) for c in table.column_names)
    return TableRecords(
        Path(name), "parquet", columns, lambda: _numbered(table.to_batches(max_chunksize=65536))
    )

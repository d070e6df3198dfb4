"""The row's static shapes (`ResponseRow`, the store's `CellRow`, the sweep's `RowIdentity` and
`FrameFields`), written from its one definition (`RESPONSE_COLUMNS`). mypy --strict checks a row
only against fields written in the source (a `make_dataclass` would leave every producer
unchecked), so the fields stay written out between two markers and are rewritten here, never by
hand:

# <row fields parts=cell sequence=tuple first=cell_id:str,spec_id:str> ... # </row fields>

`parts`: the columns of those `RowPart`s (all when absent); `sequence`: a list column as
`list[int]` or `tuple[int, ...]`; `defaults`: dataclass fields, required first, each nullable `=
None`; `first`: fields before the columns, replacing the column of their name.

Adding a column: its `ResponseColumn`, `python -m itemscale.core.responses._row_fields`, and the
store migration that adds it to `cells`. tests/responses/test_row_fields.py fails while a block
differs from what this writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ._schema import RESPONSE_COLUMNS, ROW_PARTS, ResponseColumn, RowPart

#: The package whose modules hold row blocks.
PACKAGE_DIR: Final[Path] = Path(__file__).resolve().parents[2]

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# <row fields(?P<spec>[^>]*)>[ \t]*$")
_END = re.compile(r"^[ \t]*# </row fields>[ \t]*$")
_SCALAR: Final[dict[str, str]] = {"text": "str", "real": "float", "integer": "int"}


@dataclass(frozen=True, slots=True)
class RowShape:
    """What one block's marker asks for."""

    parts: tuple[RowPart, ...] = ROW_PARTS
    sequence: Literal["list", "tuple"] = "list"
    defaults: bool = False
    first: tuple[tuple[str, str], ...] = ()


class RowBlockError(ValueError):
    """A marker this module cannot read, or a block without its end."""


def parse_shape(spec: str) -> RowShape:
    """The shape a marker's `key=value` words name (see the module docstring)."""
    parts: tuple[RowPart, ...] = ROW_PARTS
    sequence: Literal["list", "tuple"] = "list"
    defaults = False
    first: tuple[tuple[str, str], ...] = ()
    for word in spec.split():
        key, _, value = word.partition("=")
        if key == "parts":
            named = value.split(",")
            parts = tuple(p for p in ROW_PARTS if p in named)
            if len(parts) != len(named):
                raise RowBlockError(f"row block: unknown part in {value!r} (parts: {ROW_PARTS})")
        elif key == "sequence" and value in ("list", "tuple"):
            sequence = "list" if value == "list" else "tuple"
        elif key == "defaults" and not value:
            defaults = True
        elif key == "first":
            pairs = [f.split(":", 1) for f in value.split(",")]
            if any(len(p) != 2 for p in pairs):
                raise RowBlockError(f"row block: `first` wants name:type pairs, got {value!r}")
            first = tuple((name, annotation) for name, annotation in pairs)
        else:
            raise RowBlockError(f"row block: unknown marker word {word!r}")
    return RowShape(parts, sequence, defaults, first)


def annotation(column: ResponseColumn, sequence: Literal["list", "tuple"]) -> str:
    """A column's Python type as written in a shape (`| None` unless the column is required)."""
    if column.kind.endswith("_list"):
        item = _SCALAR[column.kind.removesuffix("_list")]
        written = f"list[{item}]" if sequence == "list" else f"tuple[{item}, ...]"
    else:
        written = _SCALAR[column.kind]
    return written if column.required else f"{written} | None"


def shape_fields(shape: RowShape, columns: Sequence[ResponseColumn]) -> list[str]:
    """The field lines of one shape (unindented), in the order the shape writes them."""
    firsts = {name for name, _ in shape.first}
    chosen = [c for c in columns if c.part in shape.parts and c.name not in firsts]
    lines = [f"{name}: {written}" for name, written in shape.first]
    if not shape.defaults:
        return lines + [f"{c.name}: {annotation(c, shape.sequence)}" for c in chosen]
    lines += [f"{c.name}: {annotation(c, shape.sequence)}" for c in chosen if c.required]
    return lines + [
        f"{c.name}: {annotation(c, shape.sequence)} = None" for c in chosen if not c.required
    ]


def rewrite(text: str, columns: Sequence[ResponseColumn] = RESPONSE_COLUMNS) -> str:
    """`text` with every row block's lines written from `columns` (the rest kept as it is)."""
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    at = 0
    while at < len(lines):
        line = lines[at]
        out.append(line)
        at += 1
        begin = _BEGIN.match(line.rstrip("\n"))
        if begin is None:
            continue
        end = next((k for k in range(at, len(lines)) if _END.match(lines[k].rstrip("\n"))), None)
        if end is None:
            raise RowBlockError(f"row block at line {at}: no `# </row fields>` after it")
        indent = begin["indent"]
        shape = parse_shape(begin["spec"])
        out += [f"{indent}{field}\n" for field in shape_fields(shape, columns)]
        at = end
    return "".join(out)


def block_files(root: Path = PACKAGE_DIR) -> list[Path]:
    """Every module under `root` that holds a row block (this one only shows one)."""
    here = Path(__file__).resolve()
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.resolve() != here and "# <row fields" in p.read_text("utf-8")
    )


def stale_files(root: Path = PACKAGE_DIR) -> list[Path]:
    """The modules whose blocks differ from what `RESPONSE_COLUMNS` writes."""
    return [p for p in block_files(root) if rewrite(p.read_text("utf-8")) != p.read_text("utf-8")]


def main(argv: Sequence[str] | None = None, root: Path = PACKAGE_DIR) -> int:
    """Rewrite every row block under `root` (`--check`: only say which are stale, exit 1)."""
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    stale = stale_files(root)
    for path in stale:
        if not check:
            path.write_text(rewrite(path.read_text("utf-8")), "utf-8")
        print(f"{'stale' if check else 'rewrote'}: {path.relative_to(root.parent)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())

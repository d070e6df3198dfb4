"""The importers' input files: regular files only, in the importers' own words.

Every file an import reads goes through `itemscale.core.files` (`checked_input`, `open_input`,
`read_input_bytes`): a FIFO would block the import forever and a device (`/dev/zero`) be read
until memory ran out (docs/run-folders.md, "Every file a command reads is read by one rule").
"""

from __future__ import annotations

from pathlib import Path

from ...core.files import InputFileError, MissingInputError, checked_input
from ._common import ImportInputError


def input_file(path: Path) -> Path:
    """`path` once it is a regular file (`checked_input`), a missing one named "no such file"
    as the importers always did; anything else an `ImportInputError` naming it."""
    try:
        checked_input(path)
    except MissingInputError:
        raise ImportInputError(f"{path}: no such file") from None
    except InputFileError as exc:
        raise ImportInputError(str(exc)) from None
    return path

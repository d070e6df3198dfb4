"""Writing files so that a reader never sees half of one, and hashing them: each file is written
under a private temporary name beside its target and renamed into place, because other processes
read the same folders (a report over a run a sweep still writes to). Nothing here imports from
itemscale but `errors`, so every layer can use it."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Final, TextIO

from .errors import DiskFullError, ItemscaleError, ReadOnlyFolderError

HASH_BLOCK: Final[int] = 1 << 20

__all__ = [
    "HASH_BLOCK",
    "LOADS_JSON_LIMITS",
    "MAX_INPUT_BYTES",
    "MAX_SHEET_CELLS",
    "MAX_SHEET_ROWS",
    "MAX_UNZIPPED_BYTES",
    "RUN_RECORD_FILES",
    "InputFileError",
    "MissingInputError",
    "OutputPathError",
    "ZipInputError",
    "atomic_path",
    "atomic_text_file",
    "check_output_path",
    "check_sheet_size",
    "check_unzipped_size",
    "checked_input",
    "file_kind",
    "holds_run_records",
    "is_no_space",
    "is_read_only",
    "loads_json",
    "no_space_is_typed",
    "no_space_message",
    "open_input",
    "parse_decimal",
    "read_input_bytes",
    "read_input_text",
    "read_json",
    "replace_dir",
    "sha256_file",
    "shared_mode",
    "sheet_dimension",
    "sheet_too_large",
]


#: What `loads_json` says for the two limits (at position 0: no place in the text to point at).
LOADS_JSON_LIMITS: Final[frozenset[str]] = frozenset(
    {
        "nested too deeply",
        "an integer with more than 4300 digits",
        "a lone UTF-16 surrogate escape (\\udXXX) that no UTF-8 text can hold",
    }
)
#: `\ud800`-`\udfff` escapes: a pair is one character, a lone one is text no file can hold.
_SURROGATE_ESCAPE: Final[re.Pattern[str]] = re.compile(r"\\u[dD][89a-fA-F]")


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, with an integer past Python's 4300-digit limit (a `ValueError`), nesting
    past the stack (a `RecursionError`) and a lone surrogate escape raised as the
    `json.JSONDecodeError` callers already locate."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", _as_text(text), 0) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        message = "an integer with more than 4300 digits" if "digits" in str(exc) else str(exc)
        raise json.JSONDecodeError(message, _as_text(text), 0) from None
    if _SURROGATE_ESCAPE.search(_as_text(text, whole=True)):  # rare: then check every string
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, RecursionError):
            lone = "a lone UTF-16 surrogate escape (\\udXXX) that no UTF-8 text can hold"
            raise json.JSONDecodeError(lone, _as_text(text), 0) from None
    return value


#: A number as a table writes it (Python's `float` and `int` also take `1_6` and any script's
#: digits).
_DECIMAL: Final[re.Pattern[str]] = re.compile(
    r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)",
    re.ASCII | re.IGNORECASE,
)


def parse_decimal(text: str) -> float:
    """`float(text)` for a plainly written number (`nan`/`inf` read, for the caller to refuse by
    name); anything else, `1_6` included, a `ValueError`."""
    stripped = text.strip()
    if _DECIMAL.fullmatch(stripped) is None:
        raise ValueError(f"not a plain decimal number: {text!r}")
    return float(stripped)


def read_json(path: str | os.PathLike[str]) -> Any:
    """A UTF-8 JSON file through `loads_json` (a non-UTF-8 file: `UnicodeDecodeError`)."""
    return loads_json(Path(path).read_text(encoding="utf-8"))


def _as_text(text: str | bytes, *, whole: bool = False) -> str:
    if isinstance(text, str):
        return text
    return (text if whole else text[:200]).decode("utf-8", errors="replace")


# -- files a command reads on the user's say-so -----------------------------------------------

#: The most bytes an input read whole may hold unless its reader sets its own (streamed: none).
MAX_INPUT_BYTES: Final[int] = 256 * 2**20


class InputFileError(ItemscaleError, ValueError):
    """An input that is not a regular file (a FIFO would block forever, `/dev/zero` exhaust
    memory), cannot be opened, or is too large: refused before any of it is read. `reason` is the
    message without the file's name."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class MissingInputError(InputFileError, FileNotFoundError):
    """An input that does not exist (a `FileNotFoundError` too, which callers already catch)."""


def checked_input(path: str | os.PathLike[str], *, folder: bool = False) -> os.stat_result:
    """The `stat` of an input that is a regular file (or, with `folder`, a folder), symlinks
    followed; anything else is an `InputFileError` before the file is opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise MissingInputError(path, "file not found") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from None
    if not (stat.S_ISREG(info.st_mode) or (folder and stat.S_ISDIR(info.st_mode))):
        raise InputFileError(path, f"not a regular file ({file_kind(info.st_mode)})")
    return info


def open_input(path: str | os.PathLike[str]) -> BinaryIO:
    """An input opened in binary for streaming, opened without blocking (a FIFO swapped in after
    the check cannot hang the open) and checked again on the open file."""
    checked_input(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputFileError(path, f"not a regular file ({file_kind(mode)})")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_input_bytes(
    path: str | os.PathLike[str], *, limit: int = MAX_INPUT_BYTES, what: str = "an input file"
) -> bytes:
    """A regular file's bytes, at most `limit` (`what` names the file's kind in the message): the
    one rule for every file a command reads whole."""
    size = checked_input(path).st_size
    if size > limit:
        raise InputFileError(path, f"{size} bytes, more than {what} may hold ({limit} bytes)")
    with open_input(path) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # grew since stat
        raise InputFileError(path, f"more than {what} may hold ({limit} bytes)")
    return data


def read_input_text(
    path: str | os.PathLike[str], *, limit: int = MAX_INPUT_BYTES, what: str = "an input file"
) -> str:
    """`read_input_bytes` as UTF-8 (a BOM dropped); non-UTF-8 bytes are an `InputFileError`
    naming the offset."""
    data = read_input_bytes(path, limit=limit, what=what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            path,
            f"not UTF-8 text (byte {data[exc.start : exc.start + 1]!r} at offset "
            f"{exc.start}); save the file as UTF-8",
        ) from None


# -- paths a command writes on the user's say-so ----------------------------------------------

#: The files that are a run's only copy of its data and records (and an artifact's manifest): no
#: output path may resolve to one (docs/run-folders.md, "Outputs never replace a run's data").
RUN_RECORD_FILES: Final[frozenset[str]] = frozenset(
    {
        "responses.parquet",
        "store.sqlite",
        "store.sqlite-wal",
        "store.sqlite-shm",
        "store.sqlite-journal",
        "run.json",
        "run.lock",
        "annotations.parquet",
        "MANIFEST.json",
    }
)
#: A folder holding one of these is a run folder or an artifact (or an interrupted first import).
_RUN_MARKERS: Final[frozenset[str]] = RUN_RECORD_FILES | {".import-incomplete"}


class OutputPathError(ItemscaleError, ValueError):
    """A path given for output that would replace a run's data or records; nothing is written."""


def holds_run_records(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` is a run folder or an artifact: it holds a file only they hold."""
    base = Path(folder)
    return any(os.path.lexists(base / name) for name in _RUN_MARKERS)


def check_output_path(
    path: str | os.PathLike[str], *, flag: str, replaces_folder: bool = False
) -> Path:
    """`path` as given, once it is known not to resolve (every symlink followed) to a run's
    `RUN_RECORD_FILES`, of any run, nor, with `replaces_folder`, to a run folder or an artifact;
    otherwise an `OutputPathError`, before anything is computed."""
    try:
        target = Path(path).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise OutputPathError(f"{flag} {path}: cannot follow its symlinks ({exc})") from None
    via = "" if target == Path(path).absolute() else f" (it resolves to {target})"
    if replaces_folder and target.is_dir() and holds_run_records(target):
        raise OutputPathError(
            f"{flag} {path}{via}: is a run folder (or an artifact), which this command would "
            "replace; nothing was written: give a folder of its own"
        )
    if target.name in RUN_RECORD_FILES and holds_run_records(target.parent):
        raise OutputPathError(
            f"{flag} {path}{via}: is the run folder {target.parent}'s own {target.name}; no "
            "output replaces a run's data or records (responses.parquet, store.sqlite and its "
            "-wal/-shm, run.json, run.lock, annotations.parquet, an artifact's MANIFEST.json); "
            "nothing was written: give another path"
        )
    return Path(path)


#: errno values that mean "the file system is full" (space, or the user's quota).
_NO_SPACE: Final[frozenset[int]] = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_no_space(exc: BaseException) -> bool:
    """An OSError that says the file system is full (pyarrow's errors carry the errno too)."""
    return isinstance(exc, OSError) and (
        exc.errno in _NO_SPACE or "No space left on device" in str(exc)
    )


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, for the messages that refuse it."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


#: errno values that mean "this place cannot be written" (a read-only mount, no permission).
_READ_ONLY: Final[frozenset[int]] = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def is_read_only(exc: BaseException) -> bool:
    """An OSError that says the place cannot be written (not that it is full or missing)."""
    return isinstance(exc, OSError) and (
        exc.errno in _READ_ONLY or "Read-only file system" in str(exc)
    )


def read_only_message(where: str | os.PathLike[str], what: str = "", errno_: int = 0) -> str:
    why = "a read-only file system" if errno_ in (errno.EROFS, 0) else "permission denied"
    doing = f" (writing {what})" if what else ""
    return (
        f"{where}: cannot write to this folder{doing}: {why}; nothing was changed: copy the run "
        "to a writable folder (or remount it read-write) and run the command there"
    )


def no_space_message(where: str | os.PathLike[str], what: str = "") -> str:
    doing = f" (writing {what})" if what else ""
    return (
        f"no space left on {where}{doing}; nothing was half-written (every file is written "
        "under a temporary name and renamed into place): free space there, or write elsewhere, "
        "and run the command again"
    )


@contextmanager
def no_space_is_typed(where: str | os.PathLike[str], what: str = "") -> Iterator[None]:
    """A full file system inside the block is a `DiskFullError` naming `where`, a read-only one a
    `ReadOnlyFolderError`, not an `OSError` traceback."""
    try:
        yield
    except (DiskFullError, ReadOnlyFolderError):
        raise
    except OSError as exc:
        if is_no_space(exc):
            raise DiskFullError(no_space_message(where, what)) from exc
        if is_read_only(exc):
            msg = read_only_message(where, what, exc.errno or 0)
            raise ReadOnlyFolderError(msg) from exc
        raise


class ZipInputError(ItemscaleError, ValueError):
    """An `.xlsx` workbook that is not a readable zip or would expand past `MAX_UNZIPPED_BYTES`."""


#: The most one `.xlsx` workbook's members may expand to: a 2.8 MB "zip bomb" expanding to 717 MB
#: cost 387 s and 2.3 GB before this check (docs/importers.md).
MAX_UNZIPPED_BYTES: Final[int] = 256 * 2**20


def check_unzipped_size(path: str | os.PathLike[str], limit: int = MAX_UNZIPPED_BYTES) -> int:
    """The bytes the zip at `path` expands to, from its directory; past `limit`, or not a zip, a
    `ZipInputError`. The directory bounds what is read: `zipfile` (openpyxl's) stops a member at
    its recorded size and fails its CRC check."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
        raise ZipInputError(
            f"{path}: not a readable .xlsx workbook (an .xlsx file is a zip archive: {exc})"
        ) from None
    if total > limit:
        raise ZipInputError(
            f"{path}: expands to {total / 2**20:,.0f} MiB uncompressed, past the limit of "
            f"{limit / 2**20:,.0f} MiB for one workbook (a damaged or hostile file?); save the "
            "table as CSV or Parquet, or split it"
        )
    return total


#: The most rows, and cells, one worksheet may have (a 10^6-row workbook had not finished
#: importing after 400 s): a larger table belongs in CSV or Parquet. Read when checked, so a test
#: may lower them.
MAX_SHEET_ROWS: int = 100_000
MAX_SHEET_CELLS: int = 2_000_000

_SHEET_TAG = re.compile(rb"<(?:\w+:)?sheet\b[^>]*>")
_REL_ID = re.compile(rb"\b\w+:id=\"([^\"]+)\"")
_RELATIONSHIP = re.compile(rb"<(?:\w+:)?Relationship\b[^>]*>")
_ATTR = re.compile(rb"\b(Id|Target)=\"([^\"]*)\"")
_DIMENSION = re.compile(
    rb"<(?:\w+:)?dimension\s+ref=\"([A-Za-z]{0,3})(\d*)(?::([A-Za-z]{1,3})(\d+))?\""
)
#: how much of a workbook's index files and of its sheet's start is read to find the dimension
_HEAD_BYTES = 1 << 20


def _column_number(letters: bytes) -> int:
    number = 0
    for c in letters.upper():
        number = number * 26 + (c - ord("A") + 1)
    return number


def _first_sheet_member(archive: Any) -> str | None:
    try:
        with archive.open("xl/workbook.xml") as fh:
            book = fh.read(_HEAD_BYTES)
        with archive.open("xl/_rels/workbook.xml.rels") as fh:
            rels = fh.read(_HEAD_BYTES)
    except KeyError:
        return None
    sheet = _SHEET_TAG.search(book)
    rel_id = _REL_ID.search(sheet.group(0)) if sheet else None
    if rel_id is None:
        return None
    for tag in _RELATIONSHIP.finditer(rels):
        attrs = dict(_ATTR.findall(tag.group(0)))
        if attrs.get(b"Id") == rel_id.group(1) and b"Target" in attrs:
            target = attrs[b"Target"].decode("utf-8", "replace")
            return target.lstrip("/") if target.startswith("/") else f"xl/{target}"
    return None


def sheet_dimension(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(rows, columns) the first sheet declares in its `<dimension>` element, read from the start
    of the sheet's XML without parsing it; None when it declares none."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            member = _first_sheet_member(archive)
            if member is None:
                return None
            with archive.open(member) as fh:
                head = fh.read(_HEAD_BYTES)
    except (KeyError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError):
        return None
    found = _DIMENSION.search(head)
    if found is None:
        return None
    first_col, first_row, last_col, last_row = found.groups()
    col = last_col if last_col is not None else first_col
    row = last_row if last_row is not None else first_row
    if not row or not col:
        return None
    return int(row), _column_number(col)


def sheet_too_large(path: str | os.PathLike[str], rows: int, columns: int) -> str | None:
    """The message refusing a sheet past `MAX_SHEET_ROWS` or `MAX_SHEET_CELLS`, or None."""
    if rows <= MAX_SHEET_ROWS and rows * columns <= MAX_SHEET_CELLS:
        return None
    return (
        f"{path}: the first sheet holds {rows:,} rows x {columns:,} columns "
        f"({rows * columns:,} cells), past the limit of {MAX_SHEET_ROWS:,} rows and "
        f"{MAX_SHEET_CELLS:,} cells for one workbook; save the table as CSV or Parquet, which "
        "are read streamed, whatever their size"
    )


def check_sheet_size(path: str | os.PathLike[str]) -> None:
    """Refuse, before parsing, a workbook whose first sheet declares too many rows or cells (a
    `ZipInputError`); a sheet that declares no size, or a false one, is bounded by its reader's
    count (`sheet_too_large`)."""
    size = sheet_dimension(path)
    if size is not None and (said := sheet_too_large(path, *size)) is not None:
        raise ZipInputError(said)


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def shared_mode(path: str | os.PathLike[str], *, folder: bool = False) -> None:
    """The permissions a plain `open` gives under the user's umask (0644 / 0755 under 022), so
    teammates can read a run; `mkstemp`/`mkdtemp` create them 0600 / 0700."""
    os.chmod(path, (0o777 if folder else 0o666) & ~_current_umask())


@contextmanager
def atomic_path(
    path: str | os.PathLike[str], *, prefix: str | None = None, suffix: str = ""
) -> Iterator[str]:
    """A private temporary name beside `path` (`prefix`, default `.{name}-`, a random part and
    `suffix`) to write; renamed over `path` once the block completes, removed if it raises."""
    path = Path(path)
    with no_space_is_typed(path.parent, path.name):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}-" if prefix is None else prefix, suffix=suffix, dir=path.parent
        )
        os.close(fd)
        try:
            yield tmp
            shared_mode(tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@contextmanager
def atomic_text_file(
    path: str | os.PathLike[str], *, newline: str | None = None
) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only once the block completes (`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline=newline) as fh:
        yield fh


def replace_dir(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the fully written directory `tmp` in the place of `target`: an existing `target` is
    renamed aside (directories cannot be renamed over one another) and removed once the new one
    is in place, so a reader never sees a half-written one."""
    tmp, target = Path(tmp), Path(target)
    if target.exists():
        old = target.with_name(f".{target.name}-old-{os.getpid()}")
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)

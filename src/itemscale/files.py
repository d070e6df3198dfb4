"""Writing files so that a reader never sees half of one, and hashing them.

Every stage writes into folders that other processes read (a report over a run a sweep still
writes to, a teammate opening an artifact), so each file is written under a private temporary
name beside its target and renamed into place. These helpers know nothing of what they write;
the writers that know a schema or must redact secrets (`itemscale.responses.write_json_atomic`,
`write_parquet_atomic`) are built on them. Nothing here imports from itemscale but `errors`, so
every layer can use it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TextIO

from .errors import DiskFullError, ItemscaleError, ReadOnlyFolderError

#: Read size of `sha256_file`: a video or a weight file is hashed without being held in memory.
HASH_BLOCK: Final[int] = 1 << 20

__all__ = [
    "HASH_BLOCK",
    "LOADS_JSON_LIMITS",
    "MAX_UNZIPPED_BYTES",
    "ZipInputError",
    "atomic_text_file",
    "check_unzipped_size",
    "is_no_space",
    "is_read_only",
    "loads_json",
    "no_space_is_typed",
    "no_space_message",
    "read_json",
    "replace_dir",
    "sha256_file",
    "shared_mode",
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
    """`json.loads`, with every way a foreign file can defeat it raised as the
    `json.JSONDecodeError` callers already turn into a located error: an integer past Python's
    4300-digit conversion limit (a `ValueError`) and nesting deeper than the interpreter's stack
    (a `RecursionError`) would otherwise escape as tracebacks."""
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


def read_json(path: str | os.PathLike[str]) -> Any:
    """A UTF-8 JSON file through `loads_json` (a non-UTF-8 file raises `UnicodeDecodeError`,
    a `ValueError` like the JSON errors)."""
    return loads_json(Path(path).read_text(encoding="utf-8"))


def _as_text(text: str | bytes, *, whole: bool = False) -> str:
    if isinstance(text, str):
        return text
    return (text if whole else text[:200]).decode("utf-8", errors="replace")


#: errno values that mean "the file system is full" (space, or the user's quota).
_NO_SPACE: Final[frozenset[int]] = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_no_space(exc: BaseException) -> bool:
    """An OSError that says the file system is full (pyarrow's errors carry the errno too)."""
    return isinstance(exc, OSError) and (
        exc.errno in _NO_SPACE or "No space left on device" in str(exc)
    )


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
    """A full file system inside the block is a `DiskFullError` naming `where`, not an
    `OSError: [Errno 28]` traceback; a read-only one (or no write permission) likewise a
    `ReadOnlyFolderError`."""
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
    """A zip-based input (an `.xlsx` workbook) that is not a readable zip, or that would expand
    past `MAX_UNZIPPED_BYTES`: refused before any of it is parsed. Names the file."""


#: The most the members of one zip-based input (an `.xlsx` workbook) may expand to, together.
#: A results workbook of 10^5 rows is tens of MB of XML; a 2.8 MB "zip bomb" workbook that
#: expands to 717 MB cost 387 s and 2.3 GB before this check (docs/performance.md).
MAX_UNZIPPED_BYTES: Final[int] = 256 * 2**20


def check_unzipped_size(path: str | os.PathLike[str], limit: int = MAX_UNZIPPED_BYTES) -> int:
    """The bytes the zip at `path` expands to, from its directory (no member is read); past
    `limit`, or not a zip, a `ZipInputError`. Every reader of a zip-based input calls it before
    parsing. The directory's sizes bound what is read: Python's `zipfile` (which openpyxl uses)
    stops a member at its recorded size and fails its CRC check, so a member that lies about
    its size cannot expand further."""
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


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of the whole file, read in `HASH_BLOCK` pieces (provenance records and
    manifests name their inputs by it)."""
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
    """Give a file (or folder) written through a private temporary name the permissions a
    plain `open` would have given it under the user's umask (0644 / 0755 under umask 022), so
    teammates can read a run; `mkstemp`/`mkdtemp` create them 0600 / 0700."""
    os.chmod(path, (0o777 if folder else 0o666) & ~_current_umask())


@contextmanager
def atomic_text_file(
    path: str | os.PathLike[str], *, newline: str | None = None
) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only once the block completes.

    It is written as `.{name}-<random>` beside `path` and renamed over it at the end; if the
    block raises, the temporary file is removed and `path` is left as it was.
    """
    path = Path(path)
    with no_space_is_typed(path.parent, path.name):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
                yield fh
            shared_mode(tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def replace_dir(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the fully written directory `tmp` in the place of `target`.

    Directories cannot be renamed over one another, so an existing `target` is first renamed
    aside (`.{name}-old-{pid}`) and removed once the new one is in place: a reader sees the old
    directory or the new one, never a half-written one.
    """
    tmp, target = Path(tmp), Path(target)
    if target.exists():
        old = target.with_name(f".{target.name}-old-{os.getpid()}")
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)

"""Writing files so that a reader never sees half of one, and hashing them.

Every stage writes into folders that other processes read (a report over a run a sweep still
writes to, a teammate opening an artifact), so each file is written under a private temporary
name beside its target and renamed into place. These helpers know nothing of what they write;
the writers that know a schema or must redact secrets (`itemscale.responses.write_json_atomic`,
`write_parquet_atomic`) are built on them. Nothing here imports from itemscale but `errors`, so
every layer can use it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, TextIO

#: Read size of `sha256_file`: a video or a weight file is hashed without being held in memory.
HASH_BLOCK: Final[int] = 1 << 20

__all__ = ["HASH_BLOCK", "atomic_text_file", "replace_dir", "sha256_file", "shared_mode"]


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

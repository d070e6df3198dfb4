"""The on-disk frame cache: decoded, resized frames keyed by what they are, not where they came
from (video content hash + frame index + size), so every model and run reuses them.

Entries are raw RGB bytes behind a small header with a 64-bit checksum: lossless, fast to read,
and a damaged entry is detected and re-decoded rather than served. Writers write a temp file and
rename it, so two processes filling the cache at once never expose half a frame.
"""

from __future__ import annotations

import contextlib
import functools
import os
import struct
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from ..files import is_no_space

#: Magic + format version at the start of every entry; bump the digit to change the format.
ENTRY_MAGIC: Final[bytes] = b"ISFRAME3"
_HEADER: Final[struct.Struct] = struct.Struct("<8sIIIQ")  # magic, height, width, channels, sum
#: Part of every key: the resize method (changing it must not serve old pixels).
RESIZE_VERSION: Final[str] = "yuvbicubic1"
_SUFFIX: Final[str] = ".frame"
_STALE_TEMP_S: Final[float] = 3600.0
#: Recency is refreshed on a hit only when older than this: eviction needs no finer clock, and
#: writing the time on every hit measured more than reading the frame.
_TOUCH_AFTER_S: Final[float] = 600.0


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    corrupted: int = 0
    writes: int = 0
    evicted: int = 0
    #: frames not stored because the cache's disk was full (the sweep goes on without them)
    not_written: int = 0


class FrameCache:
    """Bounded, content-addressed frame store under `root` (`max_bytes` in total, least recently
    used entries evicted first). Safe to share between processes and runs."""

    def __init__(self, root: str | os.PathLike[str], max_bytes: int = 8 << 30) -> None:
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be > 0 (got {max_bytes})")
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._root_str = str(self.root)
        self.max_bytes = int(max_bytes)
        self.stats = CacheStats()
        # Bytes on disk as last scanned plus what this process wrote since: a scan (the only
        # exact figure when several processes share the cache) runs only when this passes the cap.
        self._estimated_bytes = self.size_bytes()

    def path_for(self, video_hash: str, index: int, height: int, width: int) -> Path:
        return Path(self._path_str(video_hash, index, height, width))

    def _path_str(self, video_hash: str, index: int, height: int, width: int) -> str:
        # plain strings: a hit on a grid touches thousands of entries, pathlib is measurable
        name = f"{int(index):08d}_{int(height)}x{int(width)}_{RESIZE_VERSION}{_SUFFIX}"
        return os.path.join(self._root_str, video_hash[:2], video_hash, name)

    def get(self, video_hash: str, index: int, height: int, width: int) -> np.ndarray | None:
        """The cached frame, or None when absent or damaged (a damaged entry is deleted)."""
        frame = np.empty((height, width, 3), dtype=np.uint8)
        return frame if self.read_into(video_hash, index, frame) else None

    def read_into(self, video_hash: str, index: int, out: np.ndarray) -> bool:
        """Read a cached frame straight into `out` (a C-contiguous uint8 [H, W, 3] array, e.g.
        one slot of a frame stack, which saves a copy per frame). False when absent or damaged;
        `out` then holds garbage and a damaged entry is deleted."""
        return self.read_many(video_hash, [(index, out)])[0]

    def read_many(
        self,
        video_hash: str,
        requests: Sequence[tuple[int, np.ndarray]],
        *,
        threads: int | None = None,
    ) -> list[bool]:
        """`read_into` for many frames. One result per request, in order. With more than two
        cores, a few threads read at once (reading and checking release the GIL); on two
        shared cores threads measured slower, so the default there is one."""
        if threads is None:
            threads = max(1, min(4, (os.cpu_count() or 1) // 2))
        for _index, out in requests:
            if out.dtype != np.uint8 or out.ndim != 3 or out.shape[2] != 3:
                raise ValueError(f"a cached frame is uint8 [H, W, 3] (got {out.dtype} {out.shape})")
            if not out.flags.c_contiguous:
                raise ValueError("read_into needs a C-contiguous destination")

        def one(request: tuple[int, np.ndarray]) -> str:
            index, out = request
            return self._read_entry(video_hash, index, out)

        if threads > 1 and len(requests) >= 4 * threads:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                outcomes = list(pool.map(one, requests, chunksize=16))
        else:
            outcomes = [one(r) for r in requests]
        for outcome in outcomes:
            if outcome == "hit":
                self.stats.hits += 1
            else:
                self.stats.misses += 1
                self.stats.corrupted += outcome == "corrupted"
        return [outcome == "hit" for outcome in outcomes]

    def _read_entry(self, video_hash: str, index: int, out: np.ndarray) -> str:
        height, width = int(out.shape[0]), int(out.shape[1])
        path = self._path_str(video_hash, index, height, width)
        target = out.data.cast("B")
        try:
            with open(path, "rb", buffering=0) as handle:
                header = handle.read(_HEADER.size)
                got = handle.readinto(target)
                trailing = handle.read(1)
                valid = _valid(header, got, trailing, target, height, width)
                if valid:
                    _touch(handle.fileno())
        except FileNotFoundError:
            return "missing"
        if not valid:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return "corrupted"
        return "hit"

    def put(self, video_hash: str, index: int, frame: np.ndarray) -> None:
        """Store a frame (uint8 [H, W, 3]) atomically: temp file in the same folder, then rename."""
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"a cached frame is uint8 [H, W, 3] (got {frame.dtype} {frame.shape})")
        height, width = int(frame.shape[0]), int(frame.shape[1])
        path = self.path_for(video_hash, index, height, width)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = np.ascontiguousarray(frame).data.cast("B")
        header = _HEADER.pack(ENTRY_MAGIC, height, width, 3, frame_checksum(payload))
        temp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        try:
            with temp.open("wb") as handle:
                handle.write(header)
                handle.write(payload)
            os.replace(temp, path)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
            if is_no_space(exc):  # a cache is an aid: a full disk costs decodes, not cells
                self.stats.not_written += 1
                return
            raise
        self.stats.writes += 1
        self._estimated_bytes += len(header) + len(payload)
        if self._estimated_bytes > self.max_bytes:
            self.evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        out: list[tuple[float, int, Path]] = []
        now = time.time()
        for dirpath, _dirnames, filenames in os.walk(self.root):
            for name in filenames:
                path = Path(dirpath) / name
                try:
                    stat = path.stat()
                except FileNotFoundError:
                    continue
                if name.endswith(".tmp"):
                    # A writer that died mid-write leaves its temp file; nobody will rename it.
                    if now - stat.st_mtime > _STALE_TEMP_S:
                        with contextlib.suppress(FileNotFoundError):
                            path.unlink()
                    continue
                if name.endswith(_SUFFIX):
                    out.append((stat.st_mtime, stat.st_size, path))
        return out

    def size_bytes(self) -> int:
        return sum(size for _mtime, size, _path in self._entries())

    def evict(self, target_bytes: int | None = None) -> int:
        """Delete least recently used entries until the cache holds at most `target_bytes`
        (default: 90% of `max_bytes`, so eviction does not run on every write). Returns the
        number of bytes freed."""
        target = int(self.max_bytes * 0.9) if target_bytes is None else int(target_bytes)
        entries = sorted(self._entries())
        total = sum(size for _mtime, size, _path in entries)
        freed = 0
        for _mtime, size, path in entries:
            if total - freed <= target:
                break
            try:
                path.unlink()
            except FileNotFoundError:
                continue  # another process evicted it first
            freed += size
            self.stats.evicted += 1
        self._estimated_bytes = total - freed
        return freed


_MASK64: Final[int] = (1 << 64) - 1
_BLOCK_WORDS: Final[int] = 512  # 4 KiB blocks


def frame_checksum(payload: memoryview | bytes) -> int:
    """A 64-bit Fletcher-style checksum in one vectorised pass: the wrapping sum of each 4 KiB
    block's 8-byte words, weighted by an odd number per block position, plus the length and
    the tail bytes. Any change confined to one block (a flipped bit, a damaged word) changes
    that block's sum, and an odd weight keeps the change nonzero modulo 2^64; moved blocks
    change the weights; other damage goes unnoticed with probability about 2^-64. It runs
    several times faster than zlib's CRC-32, which was half the cost of a cache hit."""
    data = np.frombuffer(payload, dtype=np.uint8)
    n_words = data.size // 8
    words = data[: n_words * 8].view(np.uint64)
    full = n_words // _BLOCK_WORDS
    block_sums = np.empty(-(-n_words // _BLOCK_WORDS), dtype=np.uint64)
    block_sums[:full] = (
        words[: full * _BLOCK_WORDS].reshape(full, _BLOCK_WORDS).sum(axis=1, dtype=np.uint64)
    )
    if full < block_sums.size:
        block_sums[full] = words[full * _BLOCK_WORDS :].sum(dtype=np.uint64)
    total = int(np.dot(block_sums, _odd_weights(block_sums.size)))
    tail = int.from_bytes(data[n_words * 8 :].tobytes(), "little")
    return (total + (tail + 1) * 0x9E3779B97F4A7C15 + data.size) & _MASK64


@functools.lru_cache(maxsize=64)
def _odd_weights(count: int) -> np.ndarray:
    return np.arange(1, 2 * count, 2, dtype=np.uint64)


def _touch(fd: int) -> None:
    """Mark an entry recently used (its mtime), at most once per `_TOUCH_AFTER_S`."""
    with contextlib.suppress(OSError):
        if time.time() - os.fstat(fd).st_mtime > _TOUCH_AFTER_S:
            os.utime(fd)


def _valid(
    header: bytes, got: int | None, trailing: bytes, payload: memoryview, height: int, width: int
) -> bool:
    if len(header) < _HEADER.size or trailing or got != len(payload):
        return False
    magic, h, w, c, crc = _HEADER.unpack(header)
    if magic != ENTRY_MAGIC or (h, w, c) != (height, width, 3):
        return False
    return bool(frame_checksum(payload) == crc)

"""The on-disk frame cache: decoded, resized frames keyed by what they are, not where they came
from (video content hash + frame index + size), so every model and run reuses them.

Entries are raw RGB bytes behind a small header with a 64-bit checksum: lossless, fast to read,
and a damaged entry is detected and re-decoded rather than served. Beside a video's frames lies
its stream index (the timestamps of every frame, which otherwise take a demux of the whole
container to rebuild), checked the same way. Writers write a temp file and rename it, so two
processes filling the cache at once never expose half a frame.
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
from fractions import Fraction
from pathlib import Path
from typing import Final

import numpy as np

from ..files import is_no_space
from ._media import INDEX_VERSION, StreamIndex, VideoInfo

#: Magic + format version at the start of every entry; bump the digit to change the format.
ENTRY_MAGIC: Final[bytes] = b"ISFRAME3"
_HEADER: Final[struct.Struct] = struct.Struct("<8sIIIQ")  # magic, height, width, channels, sum
#: Part of every key: the resize method (changing it must not serve old pixels).
RESIZE_VERSION: Final[str] = "yuvbicubic1"
_SUFFIX: Final[str] = ".frame"
#: Magic + format version of a stored stream index; bump the digit to change the format (what
#: `_build_index` computes is versioned apart, by `INDEX_VERSION` in the file's name).
INDEX_MAGIC: Final[bytes] = b"ISINDEX1"
_INDEX_HEAD: Final[struct.Struct] = struct.Struct("<8sQ")  # magic, checksum of the rest
# video_frames, fps, duration_s, width, height, time base numerator and denominator, number of
# frame and keyframe timestamps, length of the codec name (UTF-8)
_INDEX_BODY: Final[struct.Struct] = struct.Struct("<QddIIqqQQH")
_INDEX_SUFFIX: Final[str] = ".idx"
_INDEXED_MEMO_SIZE: Final[int] = 1 << 16
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
    #: frames (and indexes) not stored because the cache's disk was full (the sweep goes on)
    not_written: int = 0
    #: stream indexes read back (a demux saved), not found or damaged, stored; a damaged one is
    #: deleted, rebuilt and counted in `corrupted` too
    index_hits: int = 0
    index_misses: int = 0
    index_writes: int = 0


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
        # content hashes whose index this instance read or wrote: `keep_index` skips their stat
        self._indexed: set[str] = set()

    def path_for(self, video_hash: str, index: int, height: int, width: int) -> Path:
        return Path(self._path_str(video_hash, index, height, width))

    def _path_str(self, video_hash: str, index: int, height: int, width: int) -> str:
        # plain strings: a hit on a grid touches thousands of entries, pathlib is measurable
        return f"{self._folder(video_hash)}{_entry_name(index, height, width)}"

    def _folder(self, video_hash: str) -> str:
        """The video's folder with a trailing separator: joined once per call, not per frame."""
        return os.path.join(self._root_str, video_hash[:2], video_hash, "")

    def index_path(self, video_hash: str) -> Path:
        """Where the stream index of this content lies, beside its frames."""
        return Path(f"{self._folder(video_hash)}index_{INDEX_VERSION}{_INDEX_SUFFIX}")

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

        folder = self._folder(video_hash)

        def one(request: tuple[int, np.ndarray]) -> str:
            index, out = request
            return _read_entry(f"{folder}{_entry_name(index, out.shape[0], out.shape[1])}", out)

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

    def put(self, video_hash: str, index: int, frame: np.ndarray) -> None:
        """Store a frame (uint8 [H, W, 3]) atomically: temp file in the same folder, then rename."""
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"a cached frame is uint8 [H, W, 3] (got {frame.dtype} {frame.shape})")
        height, width = int(frame.shape[0]), int(frame.shape[1])
        payload = np.ascontiguousarray(frame).data.cast("B")
        header = _HEADER.pack(ENTRY_MAGIC, height, width, 3, frame_checksum(payload))
        if self._write(self.path_for(video_hash, index, height, width), [header, payload]):
            self.stats.writes += 1

    def get_index(self, video_hash: str, path: str | os.PathLike[str]) -> StreamIndex | None:
        """The stored stream index of this content, its `info.path` set to `path` (the caller's
        name for the file), or None when absent or damaged (a damaged index is deleted)."""
        file = self.index_path(video_hash)
        try:
            with open(file, "rb", buffering=0) as handle:
                data = handle.readall()
                index = _unpack_index(data, str(Path(path)))
                if index is not None:
                    _touch(handle.fileno())
        except FileNotFoundError:
            self.stats.index_misses += 1
            return None
        if index is None:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
            self.stats.index_misses += 1
            self.stats.corrupted += 1
            return None
        self.stats.index_hits += 1
        self._remember_indexed(video_hash)
        return index

    def put_index(self, video_hash: str, index: StreamIndex) -> None:
        """Store a video's stream index beside its frames (atomically, like `put`)."""
        if self._write(self.index_path(video_hash), [_pack_index(index)]):
            self.stats.index_writes += 1
            self._remember_indexed(video_hash)

    def keep_index(self, video_hash: str, index: StreamIndex) -> None:
        """Store an index obtained elsewhere (memoised in this process) unless the cache already
        holds one for this content; checked on disk once per content and instance."""
        if video_hash in self._indexed:
            return
        if self.index_path(video_hash).exists():
            self._remember_indexed(video_hash)
        else:
            self.put_index(video_hash, index)

    def _remember_indexed(self, video_hash: str) -> None:
        if len(self._indexed) >= _INDEXED_MEMO_SIZE:
            self._indexed.clear()  # a long-lived process: re-checking costs one stat per video
        self._indexed.add(video_hash)

    def _write(self, path: Path, chunks: Sequence[bytes | memoryview]) -> bool:
        """Write `chunks` to a temp file in `path`'s folder, then rename it to `path`. False when
        the disk is full: a cache is an aid, and a full disk costs decodes, not cells."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        try:
            with temp.open("wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            os.replace(temp, path)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
            if is_no_space(exc):
                self.stats.not_written += 1
                return False
            raise
        self._estimated_bytes += sum(len(chunk) for chunk in chunks)
        if self._estimated_bytes > self.max_bytes:
            self.evict()
        return True

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
                # Indexes count and are evicted like frames (a long video's is ~1 MB); frames
                # whose index went are served all the same, the index is then built again.
                if name.endswith((_SUFFIX, _INDEX_SUFFIX)):
                    out.append((stat.st_mtime, stat.st_size, path))
        return out

    def size_bytes(self) -> int:
        return sum(size for _mtime, size, _path in self._entries())

    def evict(self, target_bytes: int | None = None) -> int:
        """Delete least recently used entries (frames and indexes) until the cache holds at most
        `target_bytes` (default: 90% of `max_bytes`, so eviction does not run on every write).
        Returns the number of bytes freed."""
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


def _entry_name(index: int, height: int, width: int) -> str:
    return f"{int(index):08d}_{int(height)}x{int(width)}_{RESIZE_VERSION}{_SUFFIX}"


def _read_entry(path: str, out: np.ndarray) -> str:
    """Read one entry into `out`: "hit", "missing" or "corrupted" (then deleted). The file's
    size (one `fstat`, which also gives the time for the LRU touch) stands in for reading past
    the end, and one `readv` fills the header and the frame; no file object is built."""
    height, width = int(out.shape[0]), int(out.shape[1])
    header = bytearray(_HEADER.size)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return "missing"
    try:
        stat = os.fstat(fd)
        size = _HEADER.size + out.nbytes
        target = out.data.cast("B")
        valid = (
            stat.st_size == size
            and os.readv(fd, [header, target]) == size
            and _valid(header, target, height, width)
        )
        if valid:
            _touch(fd, stat.st_mtime)
    finally:
        os.close(fd)
    if not valid:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return "corrupted"
    return "hit"


def _pack_index(index: StreamIndex) -> bytes:
    info = index.info
    codec = info.codec.encode()
    pts = np.ascontiguousarray(index.pts, dtype="<i8")
    keys = np.ascontiguousarray(index.keyframe_pts, dtype="<i8")
    body = b"".join(
        [
            _INDEX_BODY.pack(
                info.video_frames,
                info.fps,
                info.duration_s,
                info.width,
                info.height,
                info.time_base.numerator,
                info.time_base.denominator,
                pts.size,
                keys.size,
                len(codec),
            ),
            codec,
            pts.tobytes(),
            keys.tobytes(),
        ]
    )
    return _INDEX_HEAD.pack(INDEX_MAGIC, frame_checksum(body)) + body


def _unpack_index(data: bytes, path: str) -> StreamIndex | None:
    """The index stored in `data`, or None when anything is off (magic, checksum, lengths)."""
    if len(data) < _INDEX_HEAD.size + _INDEX_BODY.size:
        return None
    magic, checksum = _INDEX_HEAD.unpack_from(data)
    body = memoryview(data)[_INDEX_HEAD.size :]
    if magic != INDEX_MAGIC or frame_checksum(body) != checksum:
        return None
    frames, fps, duration, width, height, num, den, n_pts, n_keys, n_codec = (
        _INDEX_BODY.unpack_from(body)
    )
    start = _INDEX_BODY.size + n_codec
    if den <= 0 or len(body) != start + 8 * (n_pts + n_keys):
        return None
    try:
        codec = bytes(body[_INDEX_BODY.size : start]).decode()
    except UnicodeDecodeError:
        return None
    pts = np.frombuffer(body, dtype="<i8", count=n_pts, offset=start).astype(np.int64)
    keys = np.frombuffer(body, dtype="<i8", count=n_keys, offset=start + 8 * n_pts)
    info = VideoInfo(
        path=path,
        video_frames=frames,
        fps=fps,
        duration_s=duration,
        width=width,
        height=height,
        codec=codec,
        time_base=Fraction(num, den),
    )
    return StreamIndex(info=info, pts=pts, keyframe_pts=keys.astype(np.int64))


def _touch(fd: int, mtime: float | None = None) -> None:
    """Mark an entry recently used (its mtime), at most once per `_TOUCH_AFTER_S`; `mtime` is
    the entry's, when the caller has already read it (else one `fstat` reads it)."""
    with contextlib.suppress(OSError):
        if time.time() - (os.fstat(fd).st_mtime if mtime is None else mtime) > _TOUCH_AFTER_S:
            os.utime(fd)


def _valid(header: bytearray, payload: memoryview, height: int, width: int) -> bool:
    magic, h, w, c, crc = _HEADER.unpack(header)
    if magic != ENTRY_MAGIC or (h, w, c) != (height, width, 3):
        return False
    return bool(frame_checksum(payload) == crc)

"""One frame-cache entry on disk: its bytes, its checks, and how it is opened.

A cache lives in a folder anyone can write to, so an entry is trusted only after it proves
itself: a regular file (a FIFO would block `open` for ever, a symlink to `/dev/zero` would be
read without end), no larger than it should be, readable, and its checksum, shape and (for a
stream index) bound video all match. One that fails is bypassed and rebuilt from the video
(`FrameCache`), so a fault of the cache never becomes the video's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import struct
import time
from fractions import Fraction
from typing import Final

import numpy as np

from ...core.files import file_kind
from ._media import StreamIndex, VideoInfo

#: Magic + format version at the start of every frame entry (bump the digit to change it).
ENTRY_MAGIC: Final[bytes] = b"ISFRAME3"
HEADER: Final[struct.Struct] = struct.Struct("<8sIIIQ")  # magic, height, width, channels, sum
#: Magic + format version of a stored stream index; bump the digit to change the format (what
#: `_build_index` computes is versioned apart, by `INDEX_VERSION` in the file's name). Format 2
#: binds the index to the video it describes (its content hash and size).
INDEX_MAGIC: Final[bytes] = b"ISINDEX2"
#: Earlier index formats: read as absent (rebuilt and stored over), not as damage.
OLD_INDEX_MAGICS: Final[frozenset[bytes]] = frozenset({b"ISINDEX1"})
INDEX_HEAD: Final[struct.Struct] = struct.Struct("<8sQ")  # magic, checksum of the rest
# video_frames, fps, duration_s, width, height, time base numerator and denominator, number of
# frame and keyframe timestamps, lengths of the codec name and of the content hash (UTF-8), and
# the size in bytes of the video the index describes
INDEX_BODY: Final[struct.Struct] = struct.Struct("<QddIIqqQQHHQ")
#: Recency is refreshed on a hit only when older than this: eviction needs no finer clock, and
#: writing the time on every hit measured more than reading the frame.
TOUCH_AFTER_S: Final[float] = 600.0
#: How an entry is opened: never blocking (a FIFO opens at once, and is then refused by its
#: type) and never handed to a child process.
_OPEN_FLAGS: Final[int] = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class EntryFault(Exception):
    """An entry the cache cannot use as a file; the message names the entry and why."""


def index_size_cap(video_bytes: int) -> int:
    """The most bytes a stream index of a video of `video_bytes` can take: the header, the
    fixed fields, the two strings at their longest, and two int64 timestamps per frame, with
    at most one frame per byte of the video (every frame is at least one byte of it)."""
    return INDEX_HEAD.size + INDEX_BODY.size + 2 * 0xFFFF + 16 * max(int(video_bytes), 0)


def open_entry(path: str) -> tuple[int, os.stat_result]:
    """An open descriptor and its `fstat` for an entry that is a regular file.
    `FileNotFoundError` when there is none; `EntryFault` for anything else in its place."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise EntryFault(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise EntryFault(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise EntryFault(f"{path}: is not a regular file ({file_kind(info.st_mode)})")
    return fd, info


def read_frame_entry(path: str, out: np.ndarray) -> str:
    """Read one frame entry into `out`: "hit", "missing" or "corrupted" (then deleted); an
    `EntryFault` when it is no regular file or cannot be read. One `fstat` (size and LRU time)
    and one `readv` (header and frame); no file object is built."""
    height, width = int(out.shape[0]), int(out.shape[1])
    header = bytearray(HEADER.size)
    try:
        fd, info = open_entry(path)
    except FileNotFoundError:
        return "missing"
    try:
        size = HEADER.size + out.nbytes
        target = out.data.cast("B")
        try:
            valid = (
                info.st_size == size
                and os.readv(fd, [header, target]) == size
                and _valid(header, target, height, width)
            )
        except OSError as exc:
            raise EntryFault(f"{path}: cannot be read ({exc.strerror or exc})") from None
        if valid:
            touch(fd, info.st_mtime)
    finally:
        os.close(fd)
    if not valid:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return "corrupted"
    return "hit"


def read_index_entry(
    path: str, video_path: str, video_hash: str, video_bytes: int
) -> StreamIndex | str | None:
    """The index entry at `path` for the video, touched on a hit; None when there is none,
    else why it is not served (`unpack_index`). `EntryFault` when it is no regular file,
    larger than an index of this video can be, or cannot be read."""
    try:
        fd, info = open_entry(path)
    except FileNotFoundError:
        return None
    try:
        cap = index_size_cap(video_bytes)
        if info.st_size > cap:
            raise EntryFault(
                f"{path}: holds {info.st_size} bytes, more than an index of this video can ({cap})"
            )
        data = bytearray(info.st_size)
        try:
            got = os.readv(fd, [data]) if data else 0
        except OSError as exc:
            raise EntryFault(f"{path}: cannot be read ({exc.strerror or exc})") from None
        whole = data if got == len(data) else data[:got]
        index = unpack_index(whole, video_path, video_hash, video_bytes)
        if isinstance(index, StreamIndex):
            touch(fd, info.st_mtime)
        return index
    finally:
        os.close(fd)


def pack_index(index: StreamIndex, video_hash: str, video_bytes: int) -> bytes:

    info = index.info
    codec = info.codec.encode()
    digest = video_hash.encode()
    pts = np.ascontiguousarray(index.pts, dtype="<i8")
    keys = np.ascontiguousarray(index.keyframe_pts, dtype="<i8")
    body = b"".join(
        [
            INDEX_BODY.pack(
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
                len(digest),
                int(video_bytes),
            ),
            codec,
            digest,
            pts.tobytes(),
            keys.tobytes(),
        ]
    )
    return INDEX_HEAD.pack(INDEX_MAGIC, frame_checksum(body)) + body


def unpack_index(
    data: bytes | bytearray, path: str, video_hash: str, video_bytes: int
) -> StreamIndex | str:
    """The index stored in `data` for the video at `path`, or why not: "old format" (absent,
    not damaged), "failed its check" or "describes another video"."""
    if len(data) < INDEX_HEAD.size + INDEX_BODY.size:
        return "failed its check"
    magic, checksum = INDEX_HEAD.unpack_from(data)
    if magic in OLD_INDEX_MAGICS:
        return "old format"
    body = memoryview(data)[INDEX_HEAD.size :]
    if magic != INDEX_MAGIC or frame_checksum(body) != checksum:
        return "failed its check"
    frames, fps, duration, width, height, num, den, n_pts, n_keys, n_codec, n_hash, size = (
        INDEX_BODY.unpack_from(body)
    )
    start = INDEX_BODY.size + n_codec + n_hash
    if den <= 0 or len(body) != start + 8 * (n_pts + n_keys):
        return "failed its check"
    try:
        codec = bytes(body[INDEX_BODY.size : INDEX_BODY.size + n_codec]).decode()
        bound = bytes(body[INDEX_BODY.size + n_codec : start]).decode()
    except UnicodeDecodeError:
        return "failed its check"
    if bound != video_hash or size != video_bytes:
        return "describes another video"
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


def touch(fd: int, mtime: float | None = None) -> None:
    """Mark an entry recently used (its mtime), at most once per `TOUCH_AFTER_S`."""
    with contextlib.suppress(OSError):
        if time.time() - (os.fstat(fd).st_mtime if mtime is None else mtime) > TOUCH_AFTER_S:
            os.utime(fd)


def _valid(header: bytearray, payload: memoryview, height: int, width: int) -> bool:
    magic, h, w, c, crc = HEADER.unpack(header)
    if magic != ENTRY_MAGIC or (h, w, c) != (height, width, 3):
        return False
    return bool(frame_checksum(payload) == crc)


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

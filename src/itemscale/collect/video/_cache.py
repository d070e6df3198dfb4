"""The on-disk frame cache: decoded, resized frames keyed by what they are, not where they came
from (video content hash + frame index + size), so every model and run reuses them.

Entries are raw RGB bytes behind a small header with a 64-bit checksum; beside a video's frames
lies its stream index (which otherwise takes a demux of the whole container), checked the same
way. Writers write a temp file and rename it, so concurrent processes never expose half a frame;
a bad entry is bypassed, rebuilt from the video and said once (`fault_notice`).
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from ...core.files import is_no_space
from ._cache_entries import (
    ENTRY_MAGIC,
    HEADER,
    EntryFault,
    frame_checksum,
    pack_index,
    read_frame_entry,
    read_index_entry,
)
from ._media import INDEX_VERSION, StreamIndex, video_content_hash

#: Part of every key: the resize method (changing it must not serve old pixels).
RESIZE_VERSION: Final[str] = "yuvbicubic1"
_SUFFIX: Final[str] = ".frame"
_INDEX_SUFFIX: Final[str] = ".idx"
_INDEXED_MEMO_SIZE: Final[int] = 1 << 16
_STALE_TEMP_S: Final[float] = 3600.0


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
    #: entries bypassed because they were no regular file, larger than they can be, or could
    #: not be read or written (the frame or index came from the video; counted in `misses` or
    #: `index_misses` too)
    bypassed: int = 0


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
        # the first entry this instance bypassed or found damaged, and whether it was said
        self._first_fault: str | None = None
        self._fault_said = False

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
        """Read a cached frame straight into `out` (e.g. one slot of a frame stack, saving a
        copy per frame); False when absent or damaged (`out` then holds garbage)."""
        return self.read_many(video_hash, [(index, out)])[0]

    def read_many(
        self,
        video_hash: str,
        requests: Sequence[tuple[int, np.ndarray]],
        *,
        threads: int | None = None,
    ) -> list[bool]:
        """`read_into` for many frames, in order; threads only with more than two cores (on
        two shared cores they measured slower)."""
        if threads is None:
            threads = max(1, min(4, (os.cpu_count() or 1) // 2))
        for _index, out in requests:
            if out.dtype != np.uint8 or out.ndim != 3 or out.shape[2] != 3:
                raise ValueError(f"a cached frame is uint8 [H, W, 3] (got {out.dtype} {out.shape})")
            if not out.flags.c_contiguous:
                raise ValueError("read_into needs a C-contiguous destination")

        folder = self._folder(video_hash)
        faults: list[str] = []  # appended from the reading threads too (list.append is atomic)

        def one(request: tuple[int, np.ndarray]) -> str:
            index, out = request
            path = f"{folder}{_entry_name(index, out.shape[0], out.shape[1])}"
            try:
                outcome = read_frame_entry(path, out)
            except EntryFault as fault:
                faults.append(str(fault))
                return "bypassed"
            if outcome == "corrupted":
                faults.append(f"{path}: failed its check (deleted)")
            return outcome

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
                self.stats.bypassed += outcome == "bypassed"
        for fault in faults:
            self._fault(fault)
        return [outcome == "hit" for outcome in outcomes]

    def _fault(self, what: str) -> None:
        """Keep the first entry found unusable, for `fault_notice`."""
        if self._first_fault is None:
            self._first_fault = what

    def fault_notice(self) -> str | None:
        """Once per cache instance, the sentence a sweep says when an entry was bypassed or
        found damaged (rebuilt from the video: never a cell's `media_error`); else None."""
        if self._first_fault is None or self._fault_said:
            return None
        self._fault_said = True
        return (
            f"frame cache {self.root}: {self._first_fault}; the entry was bypassed and the "
            "frame or index rebuilt from the video (said once; later faults are counted in "
            "the cache's statistics, and answers are as without a cache)"
        )

    def put(self, video_hash: str, index: int, frame: np.ndarray) -> None:
        """Store a frame (uint8 [H, W, 3]) atomically: temp file in the same folder, then rename."""
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"a cached frame is uint8 [H, W, 3] (got {frame.dtype} {frame.shape})")
        height, width = int(frame.shape[0]), int(frame.shape[1])
        payload = np.ascontiguousarray(frame).data.cast("B")
        header = HEADER.pack(ENTRY_MAGIC, height, width, 3, frame_checksum(payload))
        if self._write(self.path_for(video_hash, index, height, width), [header, payload]):
            self.stats.writes += 1

    def get_index(self, video_hash: str, path: str | os.PathLike[str]) -> StreamIndex | None:
        """The stored stream index of this content, its `info.path` set to `path`, or None when
        absent, older, bound to another video, damaged (then deleted) or bypassed."""
        file = str(self.index_path(video_hash))
        try:
            video_bytes = os.stat(path).st_size
        except OSError:
            video_bytes = -1  # the video's own error is raised by whoever builds its index
        try:
            index = (
                None
                if video_bytes < 0
                else read_index_entry(file, str(path), video_hash, video_bytes)
            )
        except EntryFault as fault:
            self._fault(str(fault))
            self.stats.index_misses += 1
            self.stats.bypassed += 1
            return None
        if not isinstance(index, StreamIndex):
            self.stats.index_misses += 1
            if index is not None and index != "old format":
                with contextlib.suppress(OSError):
                    os.unlink(file)
                self.stats.corrupted += 1
                self._fault(f"{file}: {index} (deleted)")
            return None
        self.stats.index_hits += 1
        self._remember_indexed(video_hash)
        return index

    def put_index(self, video_hash: str, index: StreamIndex) -> None:
        """Store a video's stream index beside its frames, atomically, bound to the content hash
        and size of `index.info.path` (`ValueError` unless that is `video_hash`)."""
        described = video_content_hash(index.info.path)
        if described != video_hash:
            raise ValueError(
                f"the stream index of {index.info.path} (content {described[:12]}) is not an "
                f"index of content {video_hash[:12]}"
            )
        video_bytes = os.stat(index.info.path).st_size
        entry = pack_index(index, video_hash, video_bytes)
        if self._write(self.index_path(video_hash), [entry]):
            self.stats.index_writes += 1
            self._remember_indexed(video_hash)

    def keep_index(self, video_hash: str, index: StreamIndex) -> None:
        """Store an index obtained elsewhere unless the cache holds one for this content
        (checked on disk once per content and instance)."""
        if video_hash in self._indexed:
            return
        if self.index_path(video_hash).is_file():
            self._remember_indexed(video_hash)
        else:
            self.put_index(video_hash, index)

    def _remember_indexed(self, video_hash: str) -> None:
        if len(self._indexed) >= _INDEXED_MEMO_SIZE:
            self._indexed.clear()  # a long-lived process: re-checking costs one stat per video
        self._indexed.add(video_hash)

    def _write(self, path: Path, chunks: Sequence[bytes | memoryview]) -> bool:
        """Write `chunks` to a temp file beside `path`, then rename it; False when it cannot be
        written (a cache is an aid: a failed write costs decodes, not cells)."""
        temp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with temp.open("wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            os.replace(temp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            self.stats.not_written += 1
            if not is_no_space(exc):
                self.stats.bypassed += 1
                self._fault(f"{path}: cannot be written ({exc.strerror or exc})")
            return False
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
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
                except OSError:  # gone, or a link that leads nowhere: not an entry
                    continue
                if name.endswith(".tmp"):
                    # A writer that died mid-write leaves its temp file; nobody will rename it.
                    if now - stat.st_mtime > _STALE_TEMP_S:
                        with contextlib.suppress(OSError):
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
        """Delete least recently used entries until the cache holds at most `target_bytes`
        (default 90% of `max_bytes`, so eviction does not run on every write); bytes freed."""
        target = int(self.max_bytes * 0.9) if target_bytes is None else int(target_bytes)
        entries = sorted(self._entries())
        total = sum(size for _mtime, size, _path in entries)
        freed = 0
        for _mtime, size, path in entries:
            if total - freed <= target:
                break
            try:
                path.unlink()
            except OSError:
                continue  # another process evicted it first, or it cannot be deleted
            freed += size
            self.stats.evicted += 1
        self._estimated_bytes = total - freed
        return freed


def _entry_name(index: int, height: int, width: int) -> str:
    return f"{int(index):08d}_{int(height)}x{int(width)}_{RESIZE_VERSION}{_SUFFIX}"

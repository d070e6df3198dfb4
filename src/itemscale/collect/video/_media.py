"""Probing and decoding with PyAV: the frame index of a video, and frames by index.

A frame's index is its position in presentation order among the stream's frames, taken from the
packets' timestamps (not from a nominal frame rate), so variable frame rate videos get the right
count, the right timestamps and the right frames.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final, cast

import numpy as np

from ...core.errors import warn_renamed
from ._errors import MediaError

_SIGNATURES: Final[tuple[tuple[int, bytes], ...]] = (
    (4, b"ftyp"),  # MP4 / MOV
    (0, b"\x1a\x45\xdf\xa3"),  # Matroska / WebM (EBML)
    (0, b"RIFF"),  # AVI
)


@dataclass(frozen=True)
class VideoInfo:
    """What the stream says about a video: `video_frames` counts the stream's frames, and `fps`
    is video_frames / duration_s (the container's nominal rate when the two agree within 0.5%),
    so all three stay right for variable frame rates."""

    path: str
    video_frames: int
    fps: float
    duration_s: float
    width: int
    height: int
    codec: str
    time_base: Fraction

    @property
    def n_frames(self) -> int:
        """Deprecated: the video's length is `video_frames` (`frames` is a budget's count)."""
        warn_renamed("VideoInfo.n_frames", "VideoInfo.video_frames")
        return self.video_frames


@dataclass(frozen=True)
class StreamIndex:
    """Presentation timestamps of every frame (sorted: position = frame index) and of keyframes."""

    info: VideoInfo
    pts: np.ndarray
    keyframe_pts: np.ndarray

    def timestamps(self, indices: np.ndarray) -> np.ndarray:
        """Seconds since the first frame, from the stream's timestamps."""
        tb = self.info.time_base
        offsets = (self.pts[indices] - self.pts[0]).astype(np.float64)
        seconds: np.ndarray = offsets * tb.numerator / tb.denominator
        return seconds


def _has_container_signature(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return any(head[offset : offset + len(sig)] == sig for offset, sig in _SIGNATURES)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise MediaError("missing_file", str(path), "no such file")
    if not path.is_file():
        raise MediaError("missing_file", str(path), "not a regular file")
    if path.stat().st_size == 0:
        raise MediaError("empty_file", str(path), "zero bytes")


def _open(path: Path) -> Any:
    """Open with PyAV, turning its exceptions into typed media errors."""
    import av

    _check_file(path)
    try:
        return av.open(str(path), metadata_errors="ignore")
    except av.error.FFmpegError as exc:
        # A file that starts like a known container but cannot be opened was cut short (an MP4
        # whose index was never written); anything else is not a video we can read.
        if _has_container_signature(path):
            raise MediaError("truncated", str(path), str(exc)) from None
        raise MediaError("decode_error", str(path), str(exc)) from None
    except OSError as exc:
        raise MediaError("decode_error", str(path), str(exc)) from None


def _video_stream(container: Any, path: Path) -> Any:
    if not container.streams.video:
        raise MediaError("unsupported_codec", str(path), "no video stream")
    stream = container.streams.video[0]
    if stream.codec_context is None:
        raise MediaError("unsupported_codec", str(path), "no decoder for this stream's codec")
    return stream


#: The version of `_build_index`'s logic, part of the name of every stream index stored in the
#: frame cache. Bump it whenever `_build_index` changes what it returns for some file (a field
#: derived differently, packets kept or dropped differently): caches would otherwise keep serving
#: indexes built the old way, since the content hash of the video does not change.
INDEX_VERSION: Final[int] = 1


def _build_index(path: Path) -> StreamIndex:
    import av

    container = _open(path)
    try:
        stream = _video_stream(container, path)
        pts_list: list[int] = []
        key_list: list[int] = []
        durations: dict[int, int] = {}
        try:
            for packet in container.demux(stream):
                if packet.size == 0:
                    continue  # the demuxer's end-of-stream marker
                if packet.pts is None:
                    raise MediaError(
                        "unseekable", str(path), "the stream carries no timestamps (raw bitstream)"
                    )
                pts_list.append(int(packet.pts))
                durations[int(packet.pts)] = int(packet.duration or 0)
                if packet.is_keyframe:
                    key_list.append(int(packet.pts))
        except av.error.FFmpegError as exc:
            raise MediaError("truncated", str(path), f"demuxing stopped: {exc}") from None
        if not pts_list:
            raise MediaError("decode_error", str(path), "the video stream has no frames")
        declared = int(stream.frames or 0)
        if declared and len(pts_list) < declared:
            raise MediaError(
                "truncated",
                str(path),
                f"the container lists {declared} frames but only {len(pts_list)} are present",
            )
        pts = np.unique(np.asarray(pts_list, dtype=np.int64))
        keyframes = np.unique(np.asarray(key_list, dtype=np.int64))
        if keyframes.size == 0 or keyframes[0] > pts[0]:
            keyframes = np.unique(np.concatenate([[pts[0]], keyframes]))
        time_base = stream.time_base or Fraction(1, 1)
        last = int(pts[-1])
        # The last frame lasts the typical frame interval. Packet durations are not used: MP4
        # assigns them in decode order, which with B-frames says little about the last frame.
        one_frame = durations.get(last, 0)
        last_duration = int(np.median(np.diff(pts))) if pts.size > 1 else one_frame
        span = (last - int(pts[0]) + last_duration) * time_base
        duration_s = float(span)
        if duration_s <= 0:
            rate = stream.average_rate or stream.guessed_rate or 1
            duration_s = pts.size / float(rate)
        codec = stream.codec_context.name
        fps = pts.size / duration_s
        nominal = float(stream.average_rate or 0)
        if nominal > 0 and abs(nominal - fps) <= 0.005 * fps:
            # A constant rate stored in a coarse time base (Matroska's milliseconds) measures
            # as 24.005 fps; the container's rate is the exact one then.
            fps = nominal
        info = VideoInfo(
            path=str(path),
            video_frames=int(pts.size),
            fps=fps,
            duration_s=duration_s,
            width=int(stream.codec_context.width),
            height=int(stream.codec_context.height),
            codec=str(codec),
            time_base=Fraction(time_base),
        )
        return StreamIndex(info=info, pts=pts, keyframe_pts=keyframes)
    finally:
        container.close()


_INDEX_MEMO: OrderedDict[tuple[str, int, int, int], StreamIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()
_INDEX_MEMO_SIZE: Final[int] = 256


def _file_key(path: Path) -> tuple[str, int, int, int]:
    stat = path.stat()
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)


def stream_index(path: str | os.PathLike[str]) -> StreamIndex:
    """The frame index of a video (memoised per file version within the process)."""
    path = Path(path)
    _check_file(path)
    key = _file_key(path)
    hit = _memo_get(key)
    if hit is not None:
        return hit
    index = _build_index(path)
    _memo_put(key, index)
    return index


def remembered_index(path: str | os.PathLike[str]) -> StreamIndex | None:
    """The index `stream_index` memoised for this version of the file, or None (nothing is
    built): the frame cache's caller looks here before reading a stored index."""
    path = Path(path)
    _check_file(path)
    return _memo_get(_file_key(path))


def remember_index(path: str | os.PathLike[str], index: StreamIndex) -> None:
    """Memoise an index obtained elsewhere (read back from the frame cache) for this version of
    the file, so `stream_index` and the `raw` pipeline reuse it instead of demuxing again."""
    _memo_put(_file_key(Path(path)), index)


def _memo_get(key: tuple[str, int, int, int]) -> StreamIndex | None:
    with _INDEX_LOCK:
        hit = _INDEX_MEMO.get(key)
        if hit is not None:
            _INDEX_MEMO.move_to_end(key)
        return hit


def _memo_put(key: tuple[str, int, int, int], index: StreamIndex) -> None:
    with _INDEX_LOCK:
        _INDEX_MEMO[key] = index
        while len(_INDEX_MEMO) > _INDEX_MEMO_SIZE:
            _INDEX_MEMO.popitem(last=False)


def probe_video(path: str | os.PathLike[str]) -> VideoInfo:
    """Frame count, rate, duration, size and codec, read from the stream; raises `MediaError`."""
    return stream_index(path).info


def video_content_hash(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the file's bytes: the cache key part that survives renames and copies."""
    path = Path(path)
    _check_file(path)
    return _content_hash(_file_key(path))


@functools.lru_cache(maxsize=4096)
def _content_hash(key: tuple[str, int, int, int]) -> str:
    """Memoised on (resolved path, size, mtime, inode), so an edited file is hashed again;
    bounded, since a long-lived process may hash many thousands of videos."""
    digest = hashlib.sha256()
    with Path(key[0]).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _frames_from(container: Any, stream: Any, seek_pts: int | None) -> Iterator[Any]:
    if seek_pts is not None:
        container.seek(int(seek_pts), stream=stream, backward=True, any_frame=False)
    yield from container.decode(stream)


class FrameConverter:
    """Decoded frames to RGB at a given size: scaled (bicubic) in the decoder's own pixel
    format, where chroma is a quarter of the pixels, then converted by swscale's fast unscaled
    path. One scaler is kept per output size (building one costs more than using it). Both
    pipelines convert through this, so they agree bit for bit."""

    def __init__(self) -> None:
        # keyed by output size: a scaler and an RGB converter whose input size never changes
        self._scalers: dict[tuple[int, int], tuple[Any, Any]] = {}

    def __call__(self, frame: Any, height: int, width: int) -> np.ndarray:
        from av.video.reformatter import VideoReformatter

        pair = self._scalers.get((height, width))
        if pair is None:
            pair = self._scalers[(height, width)] = (VideoReformatter(), VideoReformatter())
        scaler, to_rgb = pair
        if (frame.height, frame.width) != (height, width):
            frame = scaler.reformat(frame, width=width, height=height, interpolation="BICUBIC")
        rgb = to_rgb.reformat(frame, format="rgb24")
        # A view of the converted frame's own buffer (rows may be padded): the caller copies it
        # once, to where it is needed, instead of through two intermediate arrays.
        plane = rgb.planes[0]
        rows = np.frombuffer(cast(Any, plane), dtype=np.uint8)[: plane.line_size * height]
        return rows.reshape(height, plane.line_size)[:, : width * 3].reshape(height, width, 3)


def convert_frame(frame: Any, height: int, width: int) -> np.ndarray:
    """One decoded frame as a C-contiguous RGB uint8 [height, width, 3] array (see
    `FrameConverter`)."""
    return np.ascontiguousarray(FrameConverter()(frame, height, width))


def decode_frames(index: StreamIndex, indices: Sequence[int] | np.ndarray) -> dict[int, np.ndarray]:
    """The given frames at native size (RGB uint8 [H, W, 3]), from one forward pass."""
    size = (index.info.height, index.info.width)
    got = decode_resized(index, {int(i): [size] for i in np.asarray(indices).tolist()})
    return {i: frame for (i, _h, _w), frame in got.items()}


def decode_resized(
    index: StreamIndex,
    requests: Mapping[int, Collection[tuple[int, int]]],
    *,
    sink: Callable[[int, int, int, np.ndarray], None] | None = None,
) -> dict[tuple[int, int, int], np.ndarray]:
    """Frames by index, each at every (height, width) asked for it, from one forward pass:
    seek only to a wanted frame's keyframe beyond what was decoded; frames in between are
    decoded but never converted. With a `sink`, each frame goes to `sink(index, height, width,
    frame)` instead of the returned (then empty) dict, so a long grid is never held twice; it
    is a view of the decoder's buffer (rows may be padded), to be copied by the sink."""
    import av

    wanted = np.unique(np.asarray(list(requests), dtype=np.int64))
    if wanted.size == 0:
        return {}
    info = index.info
    path = Path(info.path)
    if wanted[0] < 0 or wanted[-1] >= info.video_frames:
        raise ValueError(f"frame indices must lie in [0, {info.video_frames}) for {path}")
    target_pts = index.pts[wanted]
    pts_to_index = {int(p): int(i) for p, i in zip(target_pts, wanted, strict=True)}
    key_pos = np.searchsorted(index.keyframe_pts, target_pts, side="right") - 1
    seek_to = index.keyframe_pts[np.maximum(key_pos, 0)]
    out: dict[tuple[int, int, int], np.ndarray] = {}
    done: set[int] = set()
    convert = FrameConverter()
    container = _open(path)
    try:
        stream = _video_stream(container, path)
        stream.thread_type = "AUTO"
        frames: Iterator[Any] | None = None
        position: int | None = None  # pts of the last frame decoded
        fresh = False  # the next frame is the first after a seek
        linear = False  # a seek landed past its frame: decode forward from the start instead
        first_pts = int(index.pts[0])
        try:
            for target, keyframe in zip(target_pts.tolist(), seek_to.tolist(), strict=True):
                if pts_to_index[target] in done:
                    continue
                if frames is None or position is None or (not linear and keyframe > position):
                    seek = None if frames is None and keyframe == first_pts else keyframe
                    frames = _frames_from(container, stream, seek)
                    fresh = seek is not None
                while True:
                    overshot = False
                    for frame in frames:
                        if frame.pts is None:
                            raise MediaError(
                                "unseekable", str(path), "decoded frame has no timestamp"
                            )
                        position = int(frame.pts)
                        if fresh:
                            fresh = False
                            if position > target:
                                overshot = True
                                break
                        hit = pts_to_index.get(position)
                        if hit is not None and hit not in done:
                            for height, width in set(requests[hit]):
                                converted = convert(frame, height, width)
                                if sink is None:
                                    out[(hit, height, width)] = np.ascontiguousarray(converted)
                                else:
                                    sink(hit, height, width, converted)
                            done.add(hit)
                        if position >= target:
                            break
                    if overshot and not linear:
                        # Some containers seek imprecisely; never guess a frame, decode through.
                        linear = True
                        frames = _frames_from(container, stream, first_pts)
                        position = None
                        continue
                    break
                if pts_to_index[target] not in done:
                    if position is None or position < target:
                        raise MediaError(
                            "truncated",
                            str(path),
                            f"the stream ended before frame {pts_to_index[target]}",
                        )
                    raise MediaError(
                        "decode_error", str(path), f"frame {pts_to_index[target]} did not decode"
                    )
        except av.error.PermissionError as exc:
            raise MediaError("unseekable", str(path), str(exc)) from None
        except av.error.FFmpegError as exc:
            raise MediaError("decode_error", str(path), str(exc)) from None
    finally:
        container.close()
    return out

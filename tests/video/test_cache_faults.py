"""A frame cache that lies or blocks: another video's stream index, an index of an older
format, and entries that are no regular file (a FIFO, a directory, a file larger than the entry
can be). Each is bypassed and rebuilt from the video, said once, never served, never a hang and
never the video's error: the frames equal an uncached decode's.

Every decode that could block on a FIFO runs in a thread joined with a timeout, so a hang fails
the test instead of stopping the suite. (`/dev/zero` in place of an index is tried by the sweep
test, tests/sweep/test_cache_faults_sweep.py, in a child process with a memory limit.)
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import (
    FrameCache,
    _cache_entries,
    _media,
    decode_for_configs,
    encode_video,
    stream_index,
    video_content_hash,
)

CONFIGS = [
    Configuration(frames=6),
    Configuration(frames=4, short_side=24),
    Configuration(frames=5, sampling=SamplingPolicy(name="interior")),
]
#: a decode that takes longer than this is a hang (a warm decode of these videos takes ~0.1 s)
HANG_S = 30.0


def pictures(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    return [np.roll(base, 4 * i, axis=1) for i in range(n)]


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 12 s and a 6 s video (2 fps): an index swapped between them samples the wrong span."""
    root = tmp_path_factory.mktemp("faults")
    return {
        "long": encode_video(root / "long.mp4", pictures(24, 1), fps=2, gop=4),
        "short": encode_video(root / "short.mp4", pictures(12, 2), fps=2, gop=4),
    }


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test starts as a new process would: no index memoised."""
    _media._INDEX_MEMO.clear()


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s result, or a failed test when it has not returned in `seconds` (the thread
    is left behind, blocked; it holds nothing the next test needs)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"still blocked after {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def assert_same_frames(got: dict[str, Any], path: Path) -> None:
    _media._INDEX_MEMO.clear()
    want = decode_for_configs(path, CONFIGS)
    for config in CONFIGS:
        mine, theirs = got[config.config_id], want[config.config_id]
        assert np.array_equal(mine.indices, theirs.indices)
        assert np.array_equal(mine.timestamps, theirs.timestamps)
        assert np.array_equal(mine.array, theirs.array)


def filled(root: Path, path: Path) -> FrameCache:
    """A cache holding `path`'s index and frames, as a fresh process opens it."""
    decode_for_configs(path, CONFIGS, cache=FrameCache(root))
    _media._INDEX_MEMO.clear()
    return FrameCache(root)


def test_another_videos_index_is_refused_on_write_and_not_served_on_read(
    videos: dict[str, Path], tmp_path: Path
) -> None:
    long, short = videos["long"], videos["short"]
    digest = video_content_hash(long)
    cache = FrameCache(tmp_path / "c")
    with pytest.raises(ValueError, match="is not an index of content"):
        cache.put_index(digest, stream_index(short))
    assert not cache.index_path(digest).exists()
    # a swapped file (a cache copied together by hand, a bad sync): the short video's entry
    # in the long video's place has a valid checksum, but it is bound to the short video
    filled(tmp_path / "c", short)
    cache = filled(tmp_path / "c", long)
    shutil.copy(cache.index_path(video_content_hash(short)), cache.index_path(digest))
    assert cache.get_index(digest, long) is None
    assert cache.stats.corrupted == 1 and not cache.index_path(digest).exists()
    notice = cache.fault_notice()
    assert notice is not None and "describes another video (deleted)" in notice
    assert str(cache.index_path(digest)) in notice
    assert cache.fault_notice() is None  # said once
    served = decode_for_configs(long, CONFIGS, cache=cache)
    assert served[CONFIGS[0].config_id].timestamps[-1] > 6.0  # the whole 12 s, not 0-6 s
    assert_same_frames(served, long)
    rebuilt = FrameCache(tmp_path / "c").get_index(digest, long)
    assert rebuilt is not None and rebuilt.info.video_frames == 24


def test_an_index_bound_to_another_size_is_not_served(
    videos: dict[str, Path], tmp_path: Path
) -> None:
    """The size of the video is bound beside its hash: the same content hash with another
    size (a file truncated since, a hash made some other way) is a miss."""
    long = videos["long"]
    cache = filled(tmp_path / "c", long)
    digest = video_content_hash(long)
    entry = cache.index_path(digest)
    index = stream_index(long)
    entry.write_bytes(_cache_entries.pack_index(index, digest, long.stat().st_size + 1))
    assert cache.get_index(digest, long) is None and cache.stats.corrupted == 1


def test_an_index_of_the_older_format_is_rebuilt_without_a_fault(
    videos: dict[str, Path], tmp_path: Path
) -> None:
    long = videos["long"]
    cache = filled(tmp_path / "c", long)
    entry = cache.index_path(video_content_hash(long))
    data = bytearray(entry.read_bytes())
    assert data[:8] == b"ISINDEX2"
    data[:8] = b"ISINDEX1"
    entry.write_bytes(bytes(data))
    served = decode_for_configs(long, CONFIGS, cache=cache)
    # read as absent: no damage counted, nothing said, the new format stored over it
    assert (cache.stats.index_misses, cache.stats.corrupted, cache.stats.bypassed) == (1, 0, 0)
    assert cache.fault_notice() is None
    assert entry.read_bytes()[:8] == b"ISINDEX2"
    assert_same_frames(served, long)


def plant(entry: Path, kind: str, video: Path) -> None:
    """Put something that is no usable entry at `entry`."""
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "directory":
        entry.mkdir()
        (entry / "inside").write_text("not an entry")
    elif kind == "oversized":  # larger than any index of this video can be (regular file)
        entry.write_bytes(b"\0" * (_cache_entries.index_size_cap(video.stat().st_size) + 1))
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["fifo", "directory", "oversized"])
def test_an_index_that_is_no_usable_file_is_bypassed(
    videos: dict[str, Path], tmp_path: Path, kind: str
) -> None:
    long = videos["long"]
    cache = filled(tmp_path / "c", long)
    entry = cache.index_path(video_content_hash(long))
    plant(entry, kind, long)
    served = within(HANG_S, lambda: decode_for_configs(long, CONFIGS, cache=cache))
    assert_same_frames(served, long)
    assert cache.stats.bypassed >= 1 and cache.stats.index_hits == 0
    notice = cache.fault_notice()
    assert notice is not None and str(entry) in notice
    assert "rebuilt from the video" in notice
    if kind == "directory":  # left alone (nothing of the cache's), the write skipped
        assert entry.is_dir() and (entry / "inside").exists()
        assert "cannot be written" not in notice  # the first fault is the one said
    else:  # the rebuilt index is stored over it, and read back by the next process
        _media._INDEX_MEMO.clear()
        again = FrameCache(tmp_path / "c")
        assert within(HANG_S, lambda: again.get_index(video_content_hash(long), long))
        assert again.stats.index_hits == 1


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_frame_entry_that_is_no_regular_file_is_bypassed(
    videos: dict[str, Path], tmp_path: Path, kind: str
) -> None:
    long = videos["long"]
    cache = filled(tmp_path / "c", long)
    frames = sorted(Path(cache.index_path(video_content_hash(long)).parent).glob("*.frame"))
    assert frames
    plant(frames[0], kind, long)
    served = within(HANG_S, lambda: decode_for_configs(long, CONFIGS, cache=cache))
    assert_same_frames(served, long)
    assert cache.stats.bypassed >= 1 and cache.stats.hits > 0
    notice = cache.fault_notice()
    assert notice is not None and f"{frames[0]}: is not a regular file" in notice
    # the frame is written over a FIFO; a directory stays, and the next read bypasses it again
    assert frames[0].is_dir() == (kind == "directory")

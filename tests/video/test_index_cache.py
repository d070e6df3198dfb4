"""The stream index stored in the frame cache: read back equal to a fresh build (constant and
variable frame rate, MP4 and Matroska), a damaged or outdated one rebuilt and never served, a hit
that demuxes nothing, eviction beside frames, and broken videos that leave nothing behind."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import (
    FrameCache,
    MediaError,
    StreamIndex,
    _cache,
    _cache_entries,
    _media,
    decode_for_configs,
    encode_video,
    video_content_hash,
)

#: presentation times of the variable frame rate videos (seconds)
VFR_TIMES = [0.0, 0.04, 0.08, 0.5, 0.54, 1.5, 1.52, 1.54, 2.0, 3.0, 3.5, 5.0]


def pictures(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    base = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    return [np.roll(base, 5 * i, axis=1) for i in range(n)]


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("indexed")
    return {
        "mp4": encode_video(root / "cfr.mp4", pictures(50), fps=24, gop=8),
        "mkv": encode_video(root / "cfr.mkv", pictures(50), fps=24, gop=8),
        "vfr.mp4": encode_video(root / "vfr.mp4", pictures(12), pts_s=VFR_TIMES, gop=4),
        "vfr.mkv": encode_video(root / "vfr.mkv", pictures(12), pts_s=VFR_TIMES, gop=4),
    }


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test starts as a new process would: nothing memoised."""
    _media._INDEX_MEMO.clear()


def assert_same_index(got: StreamIndex, built: StreamIndex) -> None:
    assert got.info == built.info  # every field, the time base as an exact fraction
    for name in ("pts", "keyframe_pts"):
        mine, theirs = getattr(got, name), getattr(built, name)
        assert mine.dtype == theirs.dtype == np.int64
        assert np.array_equal(mine, theirs)


CONFIGS = [
    Configuration(frames=6),
    Configuration(frames=4, short_side=24),
    Configuration(frames=5, sampling=SamplingPolicy(name="interior")),
    Configuration(frames=3, pipeline="raw"),
]


@pytest.mark.parametrize("kind", ["mp4", "mkv", "vfr.mp4", "vfr.mkv"])
def test_round_trip_equals_the_built_index(
    videos: dict[str, Path], tmp_path: Path, kind: str
) -> None:
    path = videos[kind]
    built = _media._build_index(path)
    if kind.startswith("vfr"):  # the generator really made a variable frame rate
        assert np.unique(np.diff(built.pts)).size > 1
    digest = video_content_hash(path)
    cache = FrameCache(tmp_path / "c")
    assert cache.get_index(digest, path) is None
    cache.put_index(digest, built)
    assert_same_index(cache.get_index(digest, path), built)  # type: ignore[arg-type]
    # a second cache on the same folder (another process, a later run) reads it too
    again = FrameCache(tmp_path / "c")
    assert_same_index(again.get_index(digest, path), built)  # type: ignore[arg-type]
    # the path is the caller's, not the one it was stored under
    copy = tmp_path / f"renamed.{kind}"
    shutil.copy(path, copy)
    got = again.get_index(video_content_hash(copy), copy)
    assert got is not None and got.info.path == str(copy)
    assert (cache.stats.index_writes, again.stats.index_hits) == (1, 2)


def test_a_warm_cache_serves_a_new_process_without_demuxing(
    videos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = videos["vfr.mp4"]
    uncached = decode_for_configs(path, CONFIGS)
    # fills it; the index was memoised by the uncached call and is stored all the same
    decode_for_configs(path, CONFIGS, cache=FrameCache(tmp_path / "c"))
    _media._INDEX_MEMO.clear()

    def no_demux(path: Path) -> StreamIndex:
        raise AssertionError(f"{path} was demuxed although its index is in the cache")

    monkeypatch.setattr(_media, "_build_index", no_demux)
    fresh = FrameCache(tmp_path / "c")
    served = decode_for_configs(path, CONFIGS, cache=fresh)
    assert fresh.stats.index_hits == 1 and fresh.stats.misses == 0
    for config in CONFIGS:  # the raw configuration too: it reuses the index read back
        got, want = served[config.config_id], uncached[config.config_id]
        assert np.array_equal(got.array, want.array)
        assert np.array_equal(got.indices, want.indices)
        assert np.array_equal(got.timestamps, want.timestamps)
    # memoised once read: the next call reads neither the index file nor builds it
    decode_for_configs(path, CONFIGS, cache=fresh)
    assert fresh.stats.index_hits == 1


def damage(data: bytes, how: str) -> bytes:
    out = bytearray(data)
    if how == "flip-header":
        out[10] ^= 0x01  # in the checksum
    elif how == "flip-fields":
        out[_cache_entries.INDEX_HEAD.size + 9] ^= 0x20  # in fps
    elif how == "flip-pts":
        out[-3] ^= 0x80
    elif how == "truncate":
        del out[-5:]
    elif how == "extend":
        out += b"\x00"
    elif how == "magic":
        out[:8] = b"XXXXXXXX"
    elif how == "format-version":
        out[:8] = b"ISINDEX9"
    else:
        out = bytearray()
    return bytes(out)


@pytest.mark.parametrize(
    "how",
    [
        "flip-header",
        "flip-fields",
        "flip-pts",
        "truncate",
        "extend",
        "magic",
        "format-version",
        "empty",
    ],
)
def test_a_damaged_index_is_rebuilt_not_served(
    videos: dict[str, Path], tmp_path: Path, how: str
) -> None:
    path = videos["mkv"]
    built = _media._build_index(path)
    decode_for_configs(path, CONFIGS, cache=FrameCache(tmp_path / "c"))
    _media._INDEX_MEMO.clear()
    digest = video_content_hash(path)
    cache = FrameCache(tmp_path / "c")
    stored = cache.index_path(digest)
    stored.write_bytes(damage(stored.read_bytes(), how))
    assert cache.get_index(digest, path) is None
    assert not stored.exists() and cache.stats.corrupted == 1  # deleted, not served again
    served = decode_for_configs(path, CONFIGS, cache=cache)
    assert cache.stats.index_writes == 1  # rebuilt and stored whole
    assert_same_index(cache.get_index(digest, path), built)  # type: ignore[arg-type]
    uncached = decode_for_configs(path, CONFIGS)
    for config in CONFIGS:
        assert np.array_equal(served[config.config_id].array, uncached[config.config_id].array)


def test_an_index_from_an_older_builder_is_not_read(
    videos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`INDEX_VERSION` names the file: after a bump the old index is ignored (and evicted in
    time like any unused entry), and the new builder's is stored beside it."""
    path = videos["mp4"]
    cache = FrameCache(tmp_path / "c")
    decode_for_configs(path, CONFIGS, cache=cache)
    old = cache.index_path(video_content_hash(path))
    monkeypatch.setattr(_cache, "INDEX_VERSION", _media.INDEX_VERSION + 1)
    _media._INDEX_MEMO.clear()
    decode_for_configs(path, CONFIGS, cache=cache)
    new = cache.index_path(video_content_hash(path))
    assert new != old and old.exists() and new.exists()
    assert (cache.stats.index_hits, cache.stats.index_writes) == (0, 2)


def test_eviction_counts_and_removes_indexes(videos: dict[str, Path], tmp_path: Path) -> None:
    path = videos["mp4"]
    digest = video_content_hash(path)
    frame = np.zeros((10, 10, 3), dtype=np.uint8)
    entry_bytes = 300 + 28
    cache = FrameCache(tmp_path / "c", max_bytes=1 << 20)
    cache.put_index(digest, _media._build_index(path))
    index_bytes = cache.index_path(digest).stat().st_size
    for i in range(4):
        cache.put(digest, i, frame + i)
        os.utime(cache.path_for(digest, i, 10, 10), (2000 + i, 2000 + i))
    assert cache.size_bytes() == 4 * entry_bytes + index_bytes
    # the index is the least recently used entry: it goes first, and frames are still served
    os.utime(cache.index_path(digest), (1000, 1000))
    assert cache.evict(target_bytes=4 * entry_bytes) == index_bytes
    assert not cache.index_path(digest).exists()
    assert cache.get(digest, 0, 10, 10) is not None
    # an index outliving its frames is harmless, and evicting around it works
    cache.put_index(digest, _media._build_index(path))
    cache.evict(target_bytes=index_bytes)
    assert cache.size_bytes() == index_bytes
    assert not any(cache.path_for(digest, i, 10, 10).exists() for i in range(4))
    assert cache.get_index(digest, path) is not None
    cache.evict(target_bytes=0)
    assert cache.size_bytes() == 0 and cache.get_index(digest, path) is None


def test_a_broken_video_raises_as_before_and_leaves_nothing(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(np.random.default_rng(1).integers(0, 256, 40_000, dtype=np.uint8).tobytes())
    cache = FrameCache(tmp_path / "c")
    with pytest.raises(MediaError) as uncached:
        decode_for_configs(garbage, CONFIGS)
    with pytest.raises(MediaError) as cached:
        decode_for_configs(garbage, CONFIGS, cache=cache)
    assert cached.value.reason == uncached.value.reason == "decode_error"
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    with pytest.raises(MediaError) as missing:
        decode_for_configs(tmp_path / "absent.mp4", CONFIGS, cache=cache)
    assert missing.value.reason == "missing_file"


def test_a_full_disk_skips_the_index_and_keeps_going(
    videos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = videos["mp4"]

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    cache = FrameCache(tmp_path / "c")
    served = decode_for_configs(path, CONFIGS, cache=cache)
    assert cache.stats.index_writes == 0 and cache.stats.not_written > 0
    assert not list((tmp_path / "c").rglob("*.tmp"))
    uncached = decode_for_configs(path, CONFIGS)
    for config in CONFIGS:
        assert np.array_equal(served[config.config_id].array, uncached[config.config_id].array)

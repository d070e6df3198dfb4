"""The frame cache on real files: content addressing, corruption, eviction, and two processes
filling it at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import (
    FrameCache,
    _pipeline,
    decode_for_configs,
    encode_video,
    video_content_hash,
)
from itemscale.collect.video._cache_entries import ENTRY_MAGIC, frame_checksum


def frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    return [np.roll(base, 3 * i, axis=1) for i in range(n)]


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return encode_video(tmp_path_factory.mktemp("cache") / "clip.mp4", frames(60), gop=10)


CONFIGS = [
    Configuration(frames=8),
    Configuration(frames=8, short_side=56),
    Configuration(frames=16, sampling=SamplingPolicy(name="interior")),
]


@pytest.fixture
def decode_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    calls: list[list[int]] = []
    real = _pipeline.decode_resized

    def counting(index, requests, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(sorted(int(i) for i in requests))
        return real(index, requests, **kwargs)

    monkeypatch.setattr(_pipeline, "decode_resized", counting)
    return calls


def test_roundtrip_and_key(tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / "c", max_bytes=1 << 20)
    frame = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert cache.get("ab" * 32, 5, 2, 3) is None
    cache.put("ab" * 32, 5, frame)
    got = cache.get("ab" * 32, 5, 2, 3)
    assert got is not None and np.array_equal(got, frame)
    assert cache.get("ab" * 32, 5, 3, 2) is None  # the size is part of the key
    assert cache.get("ab" * 32, 6, 2, 3) is None
    path = cache.path_for("ab" * 32, 5, 2, 3)
    assert path.read_bytes().startswith(ENTRY_MAGIC)
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (1, 3, 1)
    with pytest.raises(ValueError, match="uint8"):
        cache.put("ab" * 32, 1, frame.astype(np.float32))


def test_served_from_cache_across_copies_of_the_video(
    video: Path, tmp_path: Path, decode_calls: list[list[int]]
) -> None:
    cache = FrameCache(tmp_path / "c")
    uncached = decode_for_configs(video, CONFIGS)
    first = decode_for_configs(video, CONFIGS, cache=cache)
    union = decode_calls[1]
    assert union == sorted({int(i) for c in CONFIGS for i in uncached[c.config_id].indices})
    # content-addressed: a copy under another name hits every entry and decodes nothing
    copy = tmp_path / "renamed.mp4"
    shutil.copy(video, copy)
    assert video_content_hash(copy) == video_content_hash(video)
    second = decode_for_configs(copy, CONFIGS, cache=cache)
    assert decode_calls[2] == []
    for config in CONFIGS:
        for result in (first, second):
            got = result[config.config_id]
            assert np.array_equal(got.array, uncached[config.config_id].array)
            assert np.array_equal(got.indices, uncached[config.config_id].indices)


@pytest.mark.parametrize("damage", ["flip", "truncate", "extend", "magic", "empty"])
def test_corrupted_entry_is_redecoded_not_served(
    video: Path, tmp_path: Path, damage: str, decode_calls: list[list[int]]
) -> None:
    cache = FrameCache(tmp_path / "c")
    config = Configuration(frames=4)
    good = decode_for_configs(video, [config], cache=cache)[config.config_id]
    victim = int(good.indices[2])
    entry = cache.path_for(video_content_hash(video), victim, 48, 64)
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        data = data[: len(data) - 100]
    elif damage == "extend":  # a frame's whole bytes, then more: not this entry
        data += b"\x00"
    elif damage == "magic":
        data[:8] = b"XXXXXXXX"
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    fresh = FrameCache(tmp_path / "c")
    again = decode_for_configs(video, [config], cache=fresh)[config.config_id]
    assert fresh.stats.corrupted == 1
    assert decode_calls[-1] == [victim]  # only the damaged frame is decoded again
    assert np.array_equal(again.array, good.array)
    # the entry was rewritten whole
    assert fresh.get(video_content_hash(video), victim, 48, 64) is not None


def test_eviction_keeps_recently_used(tmp_path: Path) -> None:
    frame = np.zeros((10, 10, 3), dtype=np.uint8)
    entry_bytes = 300 + 28  # pixels + header (magic, shape, checksum)
    cache = FrameCache(tmp_path / "c", max_bytes=10 * entry_bytes)
    key = "cd" * 32
    for i in range(8):
        cache.put(key, i, frame + i)
        os.utime(cache.path_for(key, i, 10, 10), (1000 + i, 1000 + i))
    assert cache.size_bytes() == 8 * entry_bytes
    assert cache.get(key, 0, 10, 10) is not None  # 0 becomes the most recently used
    for i in range(8, 12):
        cache.put(key, i, frame + i)
    size = cache.size_bytes()
    assert size <= cache.max_bytes
    assert cache.stats.evicted >= 2
    kept = {i for i in range(12) if cache.path_for(key, i, 10, 10).exists()}
    assert 0 in kept and 11 in kept
    assert 1 not in kept and 2 not in kept  # the oldest untouched entries went first
    # a temp file a dead writer left behind long ago is swept; a fresh one is left alone
    stale = cache.path_for(key, 0, 10, 10).parent / ".x.frame.1.dead.tmp"
    stale.write_bytes(b"partial")
    os.utime(stale, (1000, 1000))
    live = stale.with_name(".y.frame.2.live.tmp")
    live.write_bytes(b"partial")
    cache.evict()
    assert not stale.exists() and live.exists()


FILL = textwrap.dedent(
    """
    import os, sys, time
    from itemscale.collect.protocol import Configuration, SamplingPolicy
    from itemscale.collect.video import FrameCache, decode_for_configs
    configs = [Configuration(frames=k, sampling=SamplingPolicy(name=p), short_side=s)
               for k in (8, 16, 32) for p in ("linspace", "centre") for s in (None, 56)]
    cache = FrameCache(sys.argv[2])
    while not os.path.exists(sys.argv[3]):  # both writers start together
        time.sleep(0.005)
    for _ in range(3):
        decode_for_configs(sys.argv[1], configs, cache=cache)
    print(cache.stats.writes, cache.stats.hits, cache.stats.corrupted)
    """
)


@pytest.mark.slow
def test_two_processes_fill_at_once(video: Path, tmp_path: Path) -> None:
    root = tmp_path / "shared-cache"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FILL, str(video), str(root), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)  # let both import and open the cache
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    total_writes = 0
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        writes, hits, corrupted = map(int, out.split())
        assert corrupted == 0 and hits > 0  # rounds 2 and 3 are served from the cache
        total_writes += writes
    assert not list(root.rglob("*.tmp"))
    cache = FrameCache(root)
    entries = list(root.rglob("*.frame"))
    configs = [
        Configuration(frames=k, sampling=SamplingPolicy(name=p), short_side=s)
        for k in (8, 16, 32)
        for p in ("linspace", "centre")
        for s in (None, 56)
    ]
    expected = decode_for_configs(video, configs)
    digest = video_content_hash(video)
    keys = {(i, fs.height, fs.width) for fs in expected.values() for i in fs.indices.tolist()}
    assert len(entries) == len(keys)  # one whole entry per (frame, size), none half-written
    assert total_writes >= len(keys)
    for config in configs:
        got = expected[config.config_id]
        for i, frame in zip(got.indices.tolist(), got.array, strict=True):
            cached = cache.get(digest, i, got.height, got.width)
            assert cached is not None and np.array_equal(cached, frame)
    assert cache.stats.corrupted == 0


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 40_000),
    position=st.integers(0, 10**9),
    bit=st.integers(0, 7),
    seed=st.integers(0, 2**32 - 1),
)
def test_checksum_sees_every_single_bit_flip(size: int, position: int, bit: int, seed: int) -> None:
    data = bytearray(np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes())
    before = frame_checksum(bytes(data))
    data[position % size] ^= 1 << bit
    assert frame_checksum(bytes(data)) != before


def test_checksum_sees_moved_zeroed_and_shortened_blocks() -> None:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, 64 * 4096 + 13, dtype=np.uint8).tobytes()
    reference = frame_checksum(data)
    block = 4096
    swapped = data[block : 2 * block] + data[:block] + data[2 * block :]
    zeroed = data[: 5 * block] + bytes(block) + data[6 * block :]
    assert len({reference, frame_checksum(swapped), frame_checksum(zeroed)}) == 3
    assert frame_checksum(data[:-1]) != reference
    assert frame_checksum(b"") == frame_checksum(bytearray()) != frame_checksum(b"\x00")


def test_read_many_threads_agree(video: Path, tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / "c")
    config = Configuration(frames=40, short_side=56)
    good = decode_for_configs(video, [config], cache=cache)[config.config_id]
    digest = video_content_hash(video)
    wanted = [*good.indices.tolist(), 999]  # the last one is not cached
    for threads in (1, 3):
        outs = [np.empty((good.height, good.width, 3), dtype=np.uint8) for _ in wanted]
        hits = cache.read_many(digest, list(zip(wanted, outs, strict=True)), threads=threads)
        assert hits == [True] * len(good.indices) + [False]
        assert np.array_equal(np.stack(outs[:-1]), good.array)
    with pytest.raises(ValueError, match="C-contiguous"):
        cache.read_many(digest, [(0, np.empty((84, 56, 3), dtype=np.uint8)[:, ::2])])


def test_a_full_cache_disk_skips_the_write_and_keeps_going(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame cache is an aid: ENOSPC while storing a frame costs a decode later, never a
    cell (it escaped as an OSError from the sweep's decode)."""
    import errno

    cache = FrameCache(tmp_path / "cache")
    frame = np.full((8, 8, 3), 7, dtype=np.uint8)
    real = os.replace

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    cache.put("h" * 64, 3, frame)
    assert cache.stats.not_written == 1 and cache.stats.writes == 0
    assert not list((tmp_path / "cache").rglob("*.tmp"))  # the temporary file is gone
    monkeypatch.setattr(os, "replace", real)
    cache.put("h" * 64, 3, frame)
    got = cache.get("h" * 64, 3, 8, 8)
    assert got is not None and np.array_equal(got, frame)

"""A sweep through a frame cache whose entries lie or block finishes with the answers of a sweep
without a cache: a FIFO, a link to `/dev/zero`, a directory and another video's index in place
of four videos' stream indexes, and a FIFO in place of a frame. Each is bypassed and rebuilt
from the video, said once; no cell is stored as the video's `media_error`.

The faulty sweep runs in a child process with a time limit (a FIFO would block it for ever)
and a memory limit (`/dev/zero` would be read until memory runs out), so a regression fails
this test instead of hanging the suite or the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.collect.video import FrameCache, video_content_hash
from itemscale.core.responses import read_run

TESTS = Path(__file__).resolve().parents[1]
#: the issue's bound: the sweep of 4 short videos takes a few seconds, most of it imports
FINISH_S = 60
#: heap of the child process: enough for torch and the sweep, far short of `/dev/zero`
MEMORY_LIMIT = 3 << 30
SCRIPT = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_DATA, ({limit}, {limit}))
sys.path.insert(0, {tests!r})
from _support.sweep import pixel_factory
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.collect.video import FrameCache

cache = FrameCache({cache!r})
result = run_sweep(
    load_protocol({protocol!r}), run_dir={run!r}, backend_factory=pixel_factory,
    progress=False, frame_cache=cache,
)
print(json.dumps({{"warnings": result.warnings, "bypassed": cache.stats.bypassed,
                   "corrupted": cache.stats.corrupted}}))
"""
ANSWER = ["model", "item_id", "config_id", "repeat", "status", "raw_text", "answer"]


def answers(run: Path) -> pd.DataFrame:
    df, _ = read_run(run)
    out = df[[*ANSWER, "frame_indices"]].copy()
    out["frame_indices"] = out["frame_indices"].map(lambda v: tuple(int(i) for i in v))
    return out.sort_values(ANSWER[:4]).reset_index(drop=True)


def test_a_sweep_through_lying_and_blocking_cache_entries_answers_as_without_a_cache(
    tmp_path: Path,
) -> None:
    suite = write_benchmark(tmp_path / "suite", 4)
    proto = write_protocol(tmp_path / "p.toml", suite)
    protocol = load_protocol(proto)
    run_sweep(protocol, run_dir=tmp_path / "plain", backend_factory=pixel_factory, progress=False)
    cache_root = tmp_path / "cache"
    filling = FrameCache(cache_root)
    run_sweep(
        protocol,
        run_dir=tmp_path / "fill",
        backend_factory=pixel_factory,
        progress=False,
        frame_cache=filling,
    )
    index = {
        v: filling.index_path(video_content_hash(suite / "videos" / f"v{v}.mp4")) for v in range(4)
    }
    assert all(p.is_file() for p in index.values())
    shutil.copy(index[0], tmp_path / "v0.idx")
    for path in index.values():
        path.unlink()
    os.mkfifo(index[0])
    index[1].symlink_to("/dev/zero")
    index[2].mkdir()
    shutil.copy(tmp_path / "v0.idx", index[3])  # valid, but another video's
    frame = sorted(index[1].parent.glob("*.frame"))[0]
    frame.unlink()
    os.mkfifo(frame)

    code = SCRIPT.format(
        limit=MEMORY_LIMIT,
        tests=str(TESTS),
        cache=str(cache_root),
        protocol=str(proto),
        run=str(tmp_path / "cached"),
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=FINISH_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    got, want = answers(tmp_path / "cached"), answers(tmp_path / "plain")
    assert set(got["status"]) == {"ok"}
    pd.testing.assert_frame_equal(got, want)
    # four indexes and a frame bypassed (or found bound to another video), said in one line
    assert said["bypassed"] + said["corrupted"] >= 5
    lines = [w for w in said["warnings"] if w.startswith(f"frame cache {cache_root}")]
    assert len(lines) == 1 and "rebuilt from the video" in lines[0]
    # the rebuilt indexes replaced the FIFO, the link and the swapped file; the directory stays
    assert all(index[v].is_file() and not index[v].is_symlink() for v in (0, 1, 3))
    assert index[2].is_dir()

"""A benchmark format from another installed package: an entry point of the group
`itemscale.benchmarks` (a module and its `*.dist-info` on a fresh process's path, as
importlib.metadata sees an installed package) adds a loader that `detect_benchmark` recognises
after itemscale's own formats and `load_benchmark` reads, with its origin named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from _support.paths import SRC

PLUGIN = """\
from pathlib import Path

import pyarrow.parquet as pq

from itemscale.collect.items import BenchmarkLoader, Item


def load_tinybench(path, *, video_dir=None):
    rows = pq.read_table(path).to_pylist()
    return [
        Item(item_id=r["qid"], video_id=r["clip"], question=r["query"],
             options=tuple(r["choices"]), answer=r["key"])
        for r in rows
    ]


def register(register):
    register("tinybench", BenchmarkLoader(
        load=load_tinybench, title="TinyBench", columns=frozenset({"qid", "clip", "choices"})))
"""

PROBE = """\
from itemscale.collect.items import BENCHMARK_LOADERS, load_benchmark
from itemscale.collect.items._benchmarks import detect_benchmark
import sys
path = sys.argv[1]
print(list(BENCHMARK_LOADERS)[-1], detect_benchmark(path))
print([item.answer for item in load_benchmark(path)])
print(BENCHMARK_LOADERS.origin("tinybench"))
"""


def test_an_installed_benchmark_format_is_detected_and_loaded(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "tinybench_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "tinybench_plugin-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tinybench-plugin\nVersion: 0.3.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[itemscale.benchmarks]\ntiny = tinybench_plugin:register\n", encoding="utf-8"
    )
    table = {
        "qid": ["q1", "q2"],
        "clip": ["v1", "v2"],
        "query": ["What colour?", "How many?"],
        "choices": [["red", "blue"], ["one", "two", "three"]],
        "key": ["B", "C"],
    }
    path = tmp_path / "tiny.parquet"
    pq.write_table(pa.table(table), path)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{SRC}", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tinybench tinybench",
        "['B', 'C']",
        "entry point 'tiny = tinybench_plugin:register' of package tinybench-plugin 0.3.0",
    ]

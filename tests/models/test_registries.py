"""The extension points are registries: a backend in `models.BACKENDS` and a benchmark format in
`items.BENCHMARK_LOADERS` are all the protocol, the sweep and the loaders consult, so one added
at test time is accepted everywhere and one removed is refused everywhere, with the same
messages the fixed lists gave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel, ConfigDict

import itemscale.collect.sweep
from _support.paths import SRC
from _support.sweep import PixelBackend, make_video
from itemscale.collect.items import (
    BENCHMARK_LOADERS,
    BenchmarkFileError,
    BenchmarkLoader,
    Item,
    load_benchmark,
)
from itemscale.collect.items._benchmarks import detect_benchmark
from itemscale.collect.models import (
    BACKENDS,
    Backend,
    BackendError,
    BackendSpec,
    LoadSettings,
    VideoLM,
    check_backend_options,
    lazy,
    load_backend,
    load_fingerprint,
)
from itemscale.collect.models._types import parse_backend_options
from itemscale.collect.protocol import ModelEntry, ProtocolError, load_protocol, parse_protocol
from itemscale.collect.sweep import BenchmarkLoadError, load_benchmark_items, run_sweep


def protocol_data(backend: str = "hf", kind: str = "synthetic") -> dict[str, Any]:
    return {
        "models": [{"name": "m", "backend": backend, "model": "x"}],
        "benchmark": {"kind": kind, "path": "suite"},
        "grid": {"frames": [4]},
    }


def protocol_error(data: dict[str, Any]) -> str:
    with pytest.raises(ProtocolError) as info:
        parse_protocol(data, source="p.toml", backends=BACKENDS)
    return str(info.value)


# -- backends ------------------------------------------------------------------------------


class FakeOptions(BaseModel):
    """A backend's typed options, as every backend declares them: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: str = "A"


def parse_fake(options: dict[str, Any], model_name: str) -> FakeOptions:
    return parse_backend_options(FakeOptions, options, model_name)


class FakeLoader:
    """A `BackendLoader` that records what it was asked and serves the pixel stand-in model."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, entry: Any, settings: LoadSettings, /) -> VideoLM:
        options = parse_fake(dict(entry.options), entry.name)
        self.calls.append({"name": entry.name, "answer": options.answer, **vars(settings)})
        backend = PixelBackend(name=entry.name)
        backend._spec = BackendSpec(backend="fake", name=entry.name, model=entry.model)
        return backend


@pytest.fixture
def fake_backend() -> Iterator[FakeLoader]:
    loader = FakeLoader()
    with BACKENDS.registered("fake", Backend(parse_options=parse_fake, load=loader)):
        yield loader


def test_an_unknown_backend_is_refused_naming_the_file_key_and_known_backends() -> None:
    message = protocol_error(protocol_data(backend="nope"))
    assert message == (
        "p.toml: invalid protocol:\n"
        "  models[0].backend: Input should be 'hf', 'openai' or 'builtin' (got 'nope')"
    )
    assert "models[0].backend" in protocol_error(protocol_data(backend=3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Input should be 'hf', 'openai' or 'builtin'"):
        BackendSpec(backend="nope", name="m", model="x")


def test_a_registered_backend_is_accepted_checked_and_loaded(fake_backend: FakeLoader) -> None:
    protocol = parse_protocol(protocol_data(backend="fake"))
    entry = protocol.models[0]
    assert entry.backend == "fake"
    check_backend_options(entry)
    with pytest.raises(BackendError, match=r"model 'm': option 'colour': Extra inputs"):
        check_backend_options(entry.model_copy(update={"options": {"colour": "red"}}))

    rng = np.random.default_rng(5)
    model = load_backend(entry, device="cuda:1", batch_size=3, concurrency=2, rng=rng)
    assert model.spec.backend == "fake" and model.spec.name == "m"
    assert fake_backend.calls == [
        {
            "name": "m",
            "answer": "A",
            "device": "cuda:1",
            "batch_size": 3,
            "concurrency": 2,
            "timeout_s": 120.0,
            "max_retries": 4,
            "rng": rng,
        }
    ]
    # no fingerprint registered: its spec cannot be known without loading it
    assert load_fingerprint(entry, device="cpu") is None
    # the message lists the registry as it is now
    assert "'builtin' or 'fake' (got 'nope')" in protocol_error(protocol_data(backend="nope"))


def test_a_removed_backend_is_refused_again() -> None:
    with BACKENDS.registered("fake", Backend(parse_options=parse_fake, load=FakeLoader())):
        entry = parse_protocol(protocol_data(backend="fake")).models[0]
        assert str(BACKENDS.origin("fake")) == "a test"
    assert "fake" not in BACKENDS
    assert "(got 'fake')" in protocol_error(protocol_data(backend="fake"))
    with pytest.raises(BackendError, match=r"unknown backend 'fake' \(expected hf, openai or"):
        load_backend(entry)
    with pytest.raises(BackendError, match="unknown backend 'fake'"):
        check_backend_options(entry)
    assert load_fingerprint(entry, device="cpu") is None


def test_the_shipped_backends_dispatch_through_the_registry(tmp_path: Path) -> None:
    assert list(BACKENDS) == ["hf", "openai", "builtin"]
    with pytest.raises(BackendError, match=r"model 'm': option 'nope'"):
        check_backend_options(
            ModelEntry(name="m", backend="openai", model="x", options={"nope": 1})
        )
    with pytest.raises(BackendError, match=r"model 'm': option 'nope'"):
        check_backend_options(ModelEntry(name="m", backend="hf", model="x", options={"nope": 1}))
    (tmp_path / "config.json").write_text("{}")
    local = ModelEntry(name="m", backend="hf", model=str(tmp_path))
    assert load_fingerprint(local, device="cpu") is not None
    assert load_fingerprint(local.model_copy(update={"backend": "openai"}), device="cpu") is None


def test_lazy_targets_import_on_first_call_and_are_checked() -> None:
    dumps = lazy("json:dumps")
    assert dumps({"a": 1}) == '{"a": 1}'
    for bad in ("json.dumps", "json:", ":dumps", "a:b:c"):
        with pytest.raises(ValueError, match=r"package\.module:function"):
            lazy(bad)


def test_importing_models_and_protocol_imports_no_backend_dependency() -> None:
    code = (
        "import sys, itemscale.collect.models, itemscale.collect.protocol\n"
        "itemscale.collect.protocol.parse_protocol({'models': [{'name': 'm', 'backend': 'openai', "
        "'model': 'x'}], 'benchmark': {'kind': 'synthetic', 'path': 's'}, "
        "'grid': {'frames': [4]}}, backends=itemscale.collect.models.BACKENDS)\n"
        "print([m for m in ('torch', 'transformers', 'httpx') if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- benchmarks ----------------------------------------------------------------------------


def load_tiny(path: str | os.PathLike[str], *, video_dir: Any = None) -> list[Item]:
    """A made-up benchmark file: Parquet rows of clip, query, choices, key."""
    rows = pq.read_table(path).to_pylist()
    return [
        Item(
            item_id=f"t{n}",
            video_id=row["clip"],
            question=row["query"],
            options=tuple(row["choices"]),
            answer=row["key"],
            video_path=str(Path(video_dir) / f"{row['clip']}.mp4") if video_dir else None,
        )
        for n, row in enumerate(rows)
    ]


@pytest.fixture
def tiny_benchmark(tmp_path: Path) -> Iterator[Path]:
    loader = BenchmarkLoader(
        load=load_tiny, title="TinyBench", columns=frozenset({"clip", "choices"})
    )
    path = tmp_path / "tiny.parquet"
    table = {
        "clip": ["v0", "v1", "v1"],
        "query": ["What colour?", "How many?", "Which first?"],
        "choices": [["red", "blue"], ["one", "two", "three"], ["cat", "dog"]],
        "key": ["A", "C", "B"],
    }
    pq.write_table(pa.table(table), path)
    with BENCHMARK_LOADERS.registered("tinybench", loader):
        yield path


def test_benchmark_load_error_is_benchmark_file_error() -> None:
    assert BenchmarkLoadError is BenchmarkFileError
    assert itemscale.collect.sweep.BenchmarkLoadError is BenchmarkFileError
    assert issubclass(BenchmarkLoadError, ValueError)


def test_an_unknown_benchmark_kind_keeps_its_message() -> None:
    message = protocol_error(protocol_data(kind="videomm"))
    assert message.endswith(
        "  benchmark.kind: Input should be 'videomme', 'mlvu', 'longvideobench', "
        "'mlvu_generation', 'avsd', 'jsonl' or 'synthetic' (got 'videomm')"
    )


def test_a_registered_benchmark_is_detected_loaded_and_accepted(
    tiny_benchmark: Path, tmp_path: Path
) -> None:
    assert detect_benchmark(tiny_benchmark) == "tinybench"
    assert [i.item_id for i in load_benchmark(tiny_benchmark)] == ["t0", "t1", "t2"]
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(BenchmarkFileError, match=r"\(Video-MME, MLVU, LongVideoBench or TinyBench"):
        detect_benchmark(other)
    data = protocol_data(kind="tinybench")
    data["benchmark"] = {"kind": "tinybench", "path": str(tiny_benchmark), "videos": "v"}
    assert parse_protocol(data).benchmark.kind == "tinybench"


def test_the_sweep_runs_a_registered_backend_on_a_registered_benchmark(
    fake_backend: FakeLoader, tiny_benchmark: Path, tmp_path: Path
) -> None:
    videos = tmp_path / "videos"
    videos.mkdir()
    make_video(videos / "v0.mp4", seed=1)
    make_video(videos / "v1.mp4", seed=2)
    text = f"""
output = {json.dumps(str(tmp_path / "run"))}
[[models]]
name = "fake-model"
backend = "fake"
model = "anything"
options = {{ answer = "B" }}
[benchmark]
kind = "tinybench"
path = {json.dumps(str(tiny_benchmark))}
videos = {json.dumps(str(videos))}
[grid]
frames = [2, 4]
"""
    (tmp_path / "protocol.toml").write_text(text)
    protocol = load_protocol(tmp_path / "protocol.toml")
    items = load_benchmark_items(protocol.benchmark)
    assert [Path(str(i.video_path)).name for i in items] == ["v0.mp4", "v1.mp4", "v1.mp4"]

    result = run_sweep(protocol, progress=False, batch_size=2)
    assert [(c["name"], c["answer"], c["batch_size"]) for c in fake_backend.calls] == [
        ("fake-model", "B", 2)
    ]
    table = result.table
    assert len(table) == 3 * 3  # text-only, 2 and 4 frames
    assert set(table["model"]) == {"fake-model"} and set(table["status"]) == {"ok"}


def test_a_removed_benchmark_is_refused_by_the_protocol_and_the_sweep(tmp_path: Path) -> None:
    path = tmp_path / "q.parquet"
    pq.write_table(pa.table({"clip": ["v"]}), path)
    with BENCHMARK_LOADERS.registered("tinybench", BenchmarkLoader(load_tiny, "T", frozenset())):
        entry = parse_protocol(
            {
                **protocol_data(),
                "benchmark": {"kind": "tinybench", "path": str(path), "videos": "."},
            }
        ).benchmark
    assert "(got 'tinybench')" in protocol_error(protocol_data(kind="tinybench"))
    with pytest.raises(BenchmarkLoadError, match="no loader for it"):
        load_benchmark_items(entry)

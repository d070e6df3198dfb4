"""Batches across videos: a benchmark whose videos hold one question each still fills every
model call at `--batch-size N`, the answers are the batch-size-1 answers, an interrupted sweep
resumes with every cell run once, and `auto` and out-of-memory halving size the batches.

The real model is the built-in checkpoint through the `hf` backend (greedy; multiple choice by
option likelihood, as its folder asks); its network is metered where transformers is called,
so "rows per call" is what the model received, not what the sweep meant to send."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.sweep import PixelBackend, read_log, write_benchmark, write_protocol
from itemscale.collect.items import Item
from itemscale.collect.models import (
    VideoLM,
    VideoRequest,
    VideoResponse,
    builtin_model_dir,
    load_backend,
)
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.sweep import SweepStop, load_benchmark_items, run_sweep
from itemscale.collect.sweep import _runner as runner_module
from itemscale.collect.sweep._memory import AUTO_MAX_BATCH, DEFAULT_BYTES_PER_VISUAL_TOKEN


def _one_question_per_video(root: Path, videos: int = 8) -> tuple[Any, list[Item]]:
    """`videos` videos, each with one question: the first half multiple choice (the suite's own
    items), the second half open-ended (a reference answer, no options)."""
    suite = write_benchmark(root / "suite", videos, per_video=1)
    entry = {"name": "hf", "backend": "hf", "model": str(builtin_model_dir()), "dtype": "float32"}
    protocol = load_protocol(write_protocol(root / "p.toml", suite, frames=(2,), models=[entry]))
    mcqa = load_benchmark_items(protocol.benchmark)
    half = videos // 2
    items = [
        *mcqa[:half],
        *(
            Item(
                item_id=f"{item.video_id}-open",
                video_id=item.video_id,
                video_path=item.video_path,
                question="What colour fills the clip?",
                task_kind="open_qa",
                references=("red",),
            )
            for item in mcqa[half:]
        ),
    ]
    return protocol, items


def _metered_factory(calls: list[tuple[str, int]]) -> Any:
    """Loads the backend as the sweep does, then records the rows of every `generate` and of
    every forward pass outside `generate` (option likelihood) the network receives."""

    def factory(entry: ModelEntry, device: str, batch_size: int) -> VideoLM:
        backend = load_backend(entry, device=device, batch_size=batch_size)
        network = backend._model  # type: ignore[attr-defined]
        generate = network.generate
        inside = [False]

        def metered_generate(**kwargs: Any) -> Any:
            calls.append(("generate", int(kwargs["input_ids"].shape[0])))
            inside[0] = True
            try:
                return generate(**kwargs)
            finally:
                inside[0] = False

        def before_forward(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
            if not inside[0]:
                calls.append(("forward", int(kwargs["input_ids"].shape[0])))

        network.generate = metered_generate
        network.register_forward_pre_hook(before_forward, with_kwargs=True)
        return backend

    return factory


def _answers(table: pd.DataFrame) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {
        (str(r.item_id), str(r.config_label)): (str(r.status), str(r.answer), str(r.raw_text))
        for r in table.itertuples()
    }


@pytest.mark.slow
def test_one_question_per_video_fills_every_call_and_answers_as_batch_size_one(
    tmp_path: Path,
) -> None:
    protocol, items = _one_question_per_video(tmp_path)
    calls: list[tuple[str, int]] = []
    wide = run_sweep(
        protocol,
        items=items,
        run_dir=tmp_path / "b4",
        batch_size=4,
        backend_factory=_metered_factory(calls),
        progress=False,
    )
    # 8 videos x (2 frames + text-only): per configuration, 4 multiple-choice cells in one
    # likelihood pass (4 options each: 16 rows) and 4 open-ended cells in one generate call
    assert wide.ran == 16 and set(wide.by_status) <= {"ok", "noanswer"}
    assert sorted(calls) == [("forward", 16)] * 2 + [("generate", 4)] * 2
    single_calls: list[tuple[str, int]] = []
    single = run_sweep(
        protocol,
        items=items,
        run_dir=tmp_path / "b1",
        batch_size=1,
        backend_factory=_metered_factory(single_calls),
        progress=False,
    )
    assert sorted(single_calls) == [("forward", 4)] * 8 + [("generate", 1)] * 8
    assert _answers(wide.table) == _answers(single.table)
    assert set(wide.table["scoring_rule"].dropna()) == {"likelihood"}
    run = json.loads((tmp_path / "b4" / "run.json").read_text())
    (session,) = run["sessions"]
    assert session["batch_size"] == 4 and session["out_of_memory"] == 0
    assert set(session["batch_sizes"]["hf"].values()) == {4}


class CountingBackend(PixelBackend):
    """The pixel model, recording how many requests each call carried; `fail_above`: a call
    with more requests raises torch's out-of-memory error, as a full device does."""

    def __init__(self, log: str | None, fail_above: int | None = None, stop: Any = None) -> None:
        super().__init__(log)
        self.sizes: list[int] = []
        self.fail_above = fail_above
        self.stop = stop

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        import torch

        if self.fail_above is not None and len(requests) > self.fail_above:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.sizes.append(len(requests))
        if self.stop is not None and len(self.sizes) == 2:
            self.stop.set()
        return super().generate(requests)


def _pixel_sweep(tmp_path: Path, videos: int = 6, **kwargs: Any) -> tuple[Any, Path]:
    suite = write_benchmark(tmp_path / "suite", videos, per_video=1)
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", suite, frames=(2, 4, 8)))
    return protocol, tmp_path / "calls.jsonl"


@pytest.mark.parametrize("decoding_at_once", [1, 3])
def test_pixel_batches_cross_videos_and_an_interrupted_sweep_resumes_once_per_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoding_at_once: int
) -> None:
    from itemscale.collect.sweep import _batching

    monkeypatch.setattr(_batching, "decode_threads", lambda: decoding_at_once)
    protocol, log = _pixel_sweep(tmp_path)
    stop = SweepStop()
    first = CountingBackend(str(log), stop=stop)
    result = run_sweep(
        protocol, backend_factory=lambda e, d, b: first, batch_size=3, stop=stop, progress=False
    )
    # two calls of 3 cells (three videos each) were committed before the stop was seen
    assert result.interrupted and first.sizes == [3, 3] and result.ran == 6
    second = CountingBackend(str(log))
    again = run_sweep(
        protocol, backend_factory=lambda e, d, b: second, batch_size=3, progress=False
    )
    # 6 videos x 4 configurations = 24 cells: the 18 left, in calls of 3 from 3 videos each
    assert again.skipped == 6 and again.ran == 18 and second.sizes == [3] * 6
    ran = [entry["item"] + f"@{entry['frames']}" for entry in read_log(log)]
    assert len(ran) == len(set(ran)) == 24
    # the answers are the pixel model's on each cell's own frames, whoever decoded them
    whole = run_sweep(
        protocol,
        backend_factory=lambda e, d, b: PixelBackend(None),
        run_dir=tmp_path / "whole",
        batch_size=1,
        progress=False,
    )
    assert _answers(again.table) == _answers(whole.table)


def test_out_of_memory_halves_the_batch_and_is_counted(tmp_path: Path) -> None:
    protocol, log = _pixel_sweep(tmp_path, videos=8)
    backend = CountingBackend(str(log), fail_above=2)
    result = run_sweep(
        protocol, backend_factory=lambda e, d, b: backend, batch_size=8, progress=False
    )
    assert result.ran == 32 and set(result.by_status) == {"ok"}
    # per configuration: 8 fails, 4 fails (first half), then 2s; the bound stays at 2
    assert result.out_of_memory == 4 * 2 and set(backend.sizes) == {2}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    (session,) = run["sessions"]
    assert session["out_of_memory"] == 8 and set(session["batch_sizes"]["pixel"].values()) == {2}


def test_out_of_memory_at_batch_size_one_is_a_model_error_naming_memory(tmp_path: Path) -> None:
    protocol, log = _pixel_sweep(tmp_path, videos=2)
    backend = CountingBackend(str(log), fail_above=0)
    result = run_sweep(
        protocol, backend_factory=lambda e, d, b: backend, batch_size=2, progress=False
    )
    assert result.by_status == {"model_error": 8}
    assert all("out of memory at batch size 1" in e for e in result.table["error"])
    assert all("OutOfMemoryError" in e for e in result.table["error"])


def test_auto_sizes_each_configuration_from_its_visual_tokens_and_the_free_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol, log = _pixel_sweep(tmp_path, videos=8)
    # 64x48 frames: 2, 4, 8 frames estimate 2*3072//1568 = 3, 7 and 15 visual tokens; half
    # of this free memory holds 24 tokens at the default cost per token
    free = 2 * 24 * DEFAULT_BYTES_PER_VISUAL_TOKEN
    monkeypatch.setattr(runner_module, "free_memory_bytes", lambda device: free)
    backend = CountingBackend(str(log))
    result = run_sweep(
        protocol, backend_factory=lambda e, d, b: backend, batch_size="auto", progress=False
    )
    assert set(result.table["pixels"].dropna()) == {64 * 48}
    labels = dict(zip(result.table["frames"], result.table["config_label"], strict=True))
    # 24 // 3 = 8, 24 // 7 = 3 -> 2, 24 // 15 = 1; text-only: the most auto picks
    expected = {labels[0]: AUTO_MAX_BATCH, labels[2]: 8, labels[4]: 2, labels[8]: 1}
    assert result.batch_sizes == {"pixel": expected}
    assert sorted(backend.sizes) == sorted([8] + [8] + [2] * 4 + [1] * 8)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["sessions"][0]["batch_size"] == "auto"
    assert run["sessions"][0]["batch_sizes"] == {"pixel": expected}


def test_auto_is_refused_by_the_ray_executor(tmp_path: Path) -> None:
    protocol, _ = _pixel_sweep(tmp_path, videos=1)
    with pytest.raises(ValueError, match="'auto' is for the local executor"):
        run_sweep(protocol, executor="ray", batch_size="auto", progress=False)


@pytest.mark.slow
def test_the_cli_takes_auto_and_prints_the_throughput(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli import main

    suite = write_benchmark(tmp_path / "suite", 2, per_video=1)
    entry = {"name": "builtin", "backend": "builtin", "model": "builtin"}
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=[entry])
    assert main(["sweep", str(proto), "--batch-size", "auto", "--no-progress"]) == 0
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("throughput: ")]
    assert "cells/s" in line and "visual tokens/s" in line and "the store" in line
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    (session,) = run["sessions"]
    assert session["batch_size"] == "auto" and session["out_of_memory"] == 0
    # the host's free memory holds two tiny cells of either configuration
    assert set(session["batch_sizes"]["builtin"].values()) == {AUTO_MAX_BATCH}
    (spec,) = [m["spec"] for m in run["model_specs"].values()]
    assert spec["dtype"] == "float32"  # the built-in model: float32 whatever `auto` says
    # a finished run again, as JSON: nothing ran, the figures are there and are JSON numbers
    assert main(["sweep", str(proto), "--batch-size", "2", "--no-progress", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["ran"] == 0 and summary["out_of_memory"] == 0
    assert set(summary["throughput"]) == {
        "cells_per_s",
        "visual_tokens_per_s",
        "wall_s",
        "model_s",
        "decode_s",
        "store_s",
    }
    assert summary["throughput"]["cells_per_s"] == 0.0
    with pytest.raises(SystemExit) as refused:
        main(["sweep", str(proto), "--batch-size", "many"])
    assert refused.value.code == 2
    assert "expected a whole number or 'auto', got 'many'" in capsys.readouterr().err


def test_auto_dtype_is_bfloat16_on_cuda_and_float32_elsewhere() -> None:
    from itemscale.collect.models._hf import resolve_dtype

    assert resolve_dtype("auto", "cuda") == resolve_dtype("auto", "cuda:1") == "bfloat16"
    assert resolve_dtype("auto", "cpu") == resolve_dtype("auto", "mps") == "float32"
    assert resolve_dtype("auto", "cuda", builtin=True) == "float32"
    assert resolve_dtype("float16", "cpu") == "float16"

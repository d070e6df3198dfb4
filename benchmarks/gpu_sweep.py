"""The GPU path: a random-weight model with Qwen2.5-VL-7B-Instruct's architecture, in bf16 on
CUDA, swept through itemscale's `hf` backend and timed against a plain transformers loop.

    .venv/bin/python benchmarks/gpu_sweep.py --json $OUT/gpu_sweep.json    # CUDA: 7B, bf16
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/gpu_sweep.py --smoke     # CPU, scaled down

Phases, each timed: `suite` (a synthetic focus suite, 16 s at 10 fps, enough for 128 frames);
`build` (random seeded weights allocated on the device, with the built-in model's tokenizer and
processor: nothing is downloaded); `save` (safetensors); `loop` (the model just built, in a plain
loop: frames decoded by itemscale.collect.video, the processor's chat template and `processor(...)`,
`model.generate` with the sweep's decoding settings, B consecutive cells per call); `load` (the
saved folder through `load_backend`, a protocol entry with `backend = "hf"`); `sweep`
(`run_sweep` per frame count F and batch size B). One model is on the device at a time, so each
setting's peak memory (reset before it) is one run's. Per (F, B): per-cell latency, visual
tokens/s, peak memory, rows per `generate` call (the sweep's must equal the loop's at every
batch size above 1: it batches across videos), and loop time / sweep time (target >= 0.95). The
last line is one JSON object with every figure (`--json` writes it to a file as well).

Why the numbers are comparable: the vocabulary is the built-in tokenizer's 406 tokens (the rest
is the published 7B config, so this is the 7B compute less the 152k-row embedding and head); the
random model has no end-of-sequence token, so every cell decodes exactly `--max-new-tokens`
tokens whatever shares its batch; both sides decode their own frames (the loop inline, the sweep
in its background thread) after every video's stream index was read once, untimed. Without CUDA
(or with --smoke) the same phases run on CPU with a few-layer config in float32, frames 2 and 4,
batch sizes 1, 2 and 4, four videos: tests/models/test_gpu_sweep_script.py runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import gc
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Qwen2.5-VL-7B-Instruct's published config.json, in transformers 5's field names
#: (`rope_scaling = {"type": "mrope", ...}` became `rope_parameters`, `in_chans` `in_channels`);
#: the vocabulary, token ids and dtype come from the tokenizer and the run.
QWEN25_VL_7B: dict[str, Any] = json.loads("""{
  "text": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
           "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_act": "silu",
           "max_position_embeddings": 128000, "rms_norm_eps": 1e-06, "use_sliding_window": false,
           "sliding_window": 32768, "max_window_layers": 28,
           "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                               "mrope_section": [16, 24, 24]}},
  "vision": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
             "in_channels": 3, "out_hidden_size": 3584, "patch_size": 14,
             "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 112,
             "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2,
             "hidden_act": "silu"},
  "tie_word_embeddings": false
}""")

#: The smoke configuration: the same architecture, a few layers of small width (head dim 16, so
#: the M-RoPE sections sum to 8), so the CPU run exercises every phase in seconds.
SMOKE_ARCH: dict[str, Any] = {
    "text": QWEN25_VL_7B["text"]
    | json.loads("""{"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                            "mrope_section": [2, 3, 3]}}"""),
    "vision": QWEN25_VL_7B["vision"]
    | json.loads("""{"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
        "out_hidden_size": 64, "fullatt_block_indexes": [1]}"""),
    "tie_word_embeddings": False,
}


Setting = tuple[int, int]  # (frames, batch size)
#: loop time / sweep time the sweep must reach at every setting on a CUDA device
TARGET_RATIO = 0.95
FPS = 10


@dataclass(frozen=True)
class Plan:
    """What a run does: a mode's defaults (the 7B on CUDA, or the smoke config on CPU) with the
    command line's overrides (`dataclasses.replace`)."""

    name: str
    arch: dict[str, Any]
    device: str
    dtype: str
    frames: tuple[int, ...]
    batch_sizes: tuple[int, ...]
    videos: int
    width: int
    height: int
    max_new_tokens: int
    duration_s: float = 16.0
    seed: int = 0
    executor: str = "local"

    @property
    def settings(self) -> list[Setting]:
        return [(f, b) for f in self.frames for b in self.batch_sizes]


GPU = Plan(
    "gpu", QWEN25_VL_7B, "cuda", "bfloat16", (8, 16, 32, 64, 128), (1, 2, 4, 8), 8, 448, 336, 8
)
SMOKE = Plan("smoke", SMOKE_ARCH, "cpu", "float32", (2, 4), (1, 2, 4), 4, 112, 84, 4)


# -- the model ------------------------------------------------------------------------------


def model_config(arch: dict[str, Any], processor: Any) -> Any:
    """A Qwen2.5-VL config from the architecture's numbers and the tokenizer's own ids."""
    from transformers import Qwen2_5_VLConfig

    arch = copy.deepcopy(arch)  # the config standardises its rope dict in place
    tokenizer = processor.tokenizer

    def token_id(token: str) -> int:
        return int(tokenizer.convert_tokens_to_ids(token))

    text = dict(
        arch["text"],
        vocab_size=len(tokenizer),
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return Qwen2_5_VLConfig(
        text_config=text,
        vision_config=arch["vision"],
        image_token_id=token_id(processor.image_token),
        video_token_id=token_id(processor.video_token),
        vision_start_token_id=token_id("<|vision_start|>"),
        vision_end_token_id=token_id("<|vision_end|>"),
        tie_word_embeddings=arch["tie_word_embeddings"],
    )


def build_model(config: Any, *, device: str, dtype: Any, seed: int) -> Any:
    """Random weights allocated where they will run (a 7B model is never staged in host
    memory), seeded; sdpa attention, named so the loaded model is asked for the same."""
    import torch
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(
            config, dtype=dtype, attn_implementation="sdpa"
        )
    model.generation_config.eos_token_id = None  # every cell decodes max_new_tokens (see top)
    return model.eval()


def parameter_count(config: Any) -> int:
    """Parameters of a config, counted on the meta device (no memory, no init)."""
    import torch
    from transformers import AutoModelForImageTextToText

    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(config)
    return sum(p.numel() for p in model.parameters())


# -- measuring ------------------------------------------------------------------------------


@dataclass
class GenerateMeter:
    """Calls, rows and seconds inside the model class's `generate`, whoever calls it: the same
    wrapper times the loop and the backend, so their model time is measured alike."""

    calls: int = 0
    rows: int = 0
    seconds: float = 0.0

    def reset(self) -> None:
        self.calls, self.rows, self.seconds = 0, 0, 0.0


@contextlib.contextmanager
def metered_generate(cls: type, meter: GenerateMeter, sync: Callable[[], None]) -> Iterator[None]:
    had_own = "generate" in cls.__dict__
    original = cls.generate  # type: ignore[attr-defined]

    def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = original(self, *args, **kwargs)
        sync()
        meter.seconds += time.perf_counter() - start
        meter.calls += 1
        meter.rows += int(kwargs["input_ids"].shape[0])
        return out

    cls.generate = generate  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if had_own:
            cls.generate = original  # type: ignore[attr-defined]
        else:
            del cls.generate  # type: ignore[attr-defined]


@dataclass
class Device:
    name: str

    @property
    def cuda(self) -> bool:
        return self.name.startswith("cuda")

    def sync(self) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    @contextlib.contextmanager
    def measured(self, figures: dict[str, Any]) -> Iterator[None]:
        """Wall time and peak allocated memory of one setting (peak reset before it)."""
        import torch

        self.sync()
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        yield
        self.sync()
        figures["wall_s"] = time.perf_counter() - start
        figures["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30 if self.cuda else None

    def release(self) -> None:
        gc.collect()
        if self.cuda:
            import torch

            torch.cuda.empty_cache()


@contextlib.contextmanager
def phase(name: str, phases: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    phases[name] = round(time.perf_counter() - start, 3)
    print(f"[phase] {name}: {phases[name]:.1f} s", flush=True)


def rates(figures: dict[str, Any], cells: int, meter: GenerateMeter) -> dict[str, Any]:
    """The per-setting figures both sides report, rounded for printing."""
    wall = figures["wall_s"]
    peak = figures["peak_gib"]
    return {
        **{k: v for k, v in figures.items() if k not in ("wall_s", "peak_gib")},
        "wall_s": round(wall, 4),
        "per_cell_ms": round(1000 * wall / max(cells, 1), 2),
        "visual_tokens_per_s": round(figures["visual_tokens"] / wall, 1) if wall > 0 else None,
        "peak_gib": None if peak is None else round(peak, 3),
        "generate_s": round(meter.seconds, 4),
        # everything but the model's `generate`: decode, template, processor, store, export
        "outside_generate_s": round(wall - meter.seconds, 4),
        "generate_calls": meter.calls,
        "generate_rows": meter.rows,
        "rows_per_generate": round(meter.rows / meter.calls, 3) if meter.calls else None,
    }


# -- the plain transformers loop ------------------------------------------------------------


@dataclass
class LoopCell:
    visual_tokens: int | None = None
    new_tokens: int | None = None
    text: str | None = None
    error: str | None = None


@dataclass
class PlainLoop:
    """What a researcher writes around transformers: decode, template, process, generate.

    The frames come from itemscale.collect.video (the same configuration the sweep plans), the prompt
    text from itemscale's prompt builder, the rest is transformers' own API; the video metadata
    is what a plain loop knows: the stream's rate and frame count, and the chosen indices.
    """

    model: Any
    processor: Any
    device: Device
    max_new_tokens: int
    decode_s: float = 0.0
    cells: dict[str, LoopCell] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"  # batched generation continues from the right
        self.video_token = int(self.tokenizer.convert_tokens_to_ids(self.processor.video_token))

    def run(self, items: Sequence[Any], config: Any, batch_size: int) -> None:
        from itemscale.collect.video import MediaError, decode_for_configs, probe_video

        self.decode_s, self.cells = 0.0, {}
        pending: list[tuple[Any, Any, dict[str, Any]]] = []
        current: tuple[str, Any, dict[str, Any]] | None = None
        for item in items:
            if current is None or current[0] != item.video_path:
                start = time.perf_counter()
                try:
                    frames = decode_for_configs(item.video_path, [config])[config.config_id]
                    info = probe_video(item.video_path)
                except MediaError as exc:
                    self.decode_s += time.perf_counter() - start
                    self.cells[item.item_id] = LoopCell(error=f"media_error: {exc}")
                    current = None
                    continue
                self.decode_s += time.perf_counter() - start
                metadata = {
                    "fps": info.fps,
                    "total_num_frames": info.video_frames,
                    "frames_indices": [int(i) for i in frames.indices],
                }
                current = (item.video_path, frames, metadata)
            pending.append((item, current[1], current[2]))
            if len(pending) == batch_size:
                self._batch(pending)
                pending = []
        if pending:
            self._batch(pending)

    def figures(self) -> dict[str, Any]:
        cells = self.cells.values()
        return {
            "visual_tokens": sum(c.visual_tokens or 0 for c in cells),
            "decode_s": round(self.decode_s, 4),
            "answered": sum(c.error is None for c in cells),
            "failed": sorted({c.error for c in cells if c.error}),
            "new_tokens": sorted({c.new_tokens for c in cells if c.new_tokens is not None}),
        }

    def _conversation(self, item: Any) -> list[dict[str, Any]]:
        from itemscale.collect.models import build_messages

        conversation = []
        for position, message in enumerate(build_messages(item)):
            parts: list[dict[str, Any]] = [{"type": "video"}] if position == 0 else []
            parts.append({"type": "text", "text": message["text"]})
            conversation.append({"role": message["role"], "content": parts})
        return conversation

    def _batch(self, batch: list[tuple[Any, Any, dict[str, Any]]]) -> None:
        import torch

        try:
            texts = [
                self.processor.apply_chat_template(
                    self._conversation(item), add_generation_prompt=True, tokenize=False
                )
                for item, _, _ in batch
            ]
            inputs = self.processor(
                text=texts,
                videos=[frames.array for _, frames, _ in batch],
                video_metadata=[metadata for _, _, metadata in batch],
                do_sample_frames=False,
                padding=True,
                return_tensors="pt",
            ).to(self.device.name)
            inputs["pixel_values_videos"] = inputs["pixel_values_videos"].to(self.model.dtype)
            with torch.inference_mode():
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    return_dict_in_generate=True,
                    output_logits=True,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
        except Exception as exc:  # an OOM at one setting must not end the others
            for item, _, _ in batch:
                self.cells[item.item_id] = LoopCell(error=f"{type(exc).__name__}: {exc}")
            self.device.release()
            return
        prompt = inputs["input_ids"].shape[1]
        visual = ((inputs["input_ids"] == self.video_token) & inputs["attention_mask"].bool()).sum(
            1
        )
        for row, (item, _, _) in enumerate(batch):
            self.cells[item.item_id] = LoopCell(
                visual_tokens=int(visual[row]),
                new_tokens=int(output.sequences.shape[1] - prompt),
                text=self.tokenizer.decode(
                    output.sequences[row, prompt:], skip_special_tokens=True
                ),
            )


# -- the sweep ------------------------------------------------------------------------------


class KeptLoaded:
    """The backend `load_backend` returned, handed to every `run_sweep` of the grid: loading a
    7B checkpoint per setting would cost more than the settings. `run_sweep` closes its
    backend when done; the real close comes after the last setting. Its batch size is the
    largest of the grid; each run's `batch_size` bounds the batches it is given."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    @property
    def spec(self) -> Any:
        return self.backend.spec

    @property
    def serving(self) -> Any:
        return self.backend.serving

    def generate(self, requests: Sequence[Any]) -> list[Any]:
        return list(self.backend.generate(requests))

    def usage(self) -> Any:
        return self.backend.usage()

    def close(self) -> None:
        pass


def write_protocol(
    path: Path,
    *,
    suite: Path,
    model: Path,
    frames: int | Sequence[int],
    dtype: str,
    max_new_tokens: int,
) -> Path:
    q = json.dumps  # TOML basic strings are JSON strings
    path.write_text(
        f"""version = 1
output = {q(str(path.parent / "run"))}
text_only = false
[[models]]
name = "qwen2.5-vl-7b-arch-random"
backend = "hf"
model = {q(str(model))}
dtype = {q(dtype)}
options = {{ attn_implementation = "sdpa" }}
[benchmark]
kind = "synthetic"
path = {q(str(suite))}
[grid]
frames = {json.dumps([frames] if isinstance(frames, int) else list(frames))}
[decoding]
max_new_tokens = {max_new_tokens}
temperature = 0.0
"""
    )
    return path


# -- the run --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="scaled-down config on CPU")
    parser.add_argument("--frames", type=int, nargs="+", help="frame counts (gpu: 8..128)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", help="batch sizes (gpu: 1 2 4 8)")
    parser.add_argument("--videos", type=int, help="suite videos, 2 cells each (gpu: 8, smoke: 4)")
    parser.add_argument("--width", type=int, help="suite frame width (gpu: 448)")
    parser.add_argument("--height", type=int, help="suite frame height (gpu: 336)")
    parser.add_argument("--duration", type=float, default=16.0, help="seconds per video (10 fps)")
    parser.add_argument("--max-new-tokens", type=int, help="tokens decoded per cell (gpu: 8)")
    parser.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), help="gpu: bf16")
    parser.add_argument("--seed", type=int, default=0, help="weights and suite seed")
    parser.add_argument("--threads", type=int, help="torch threads (smoke: 1)")
    parser.add_argument("--workdir", type=Path, help="keep model, suite and runs here")
    parser.add_argument("--json", type=Path, help="also write the last line's JSON to this file")
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="ray: also sweep the grid through the Ray executor (one actor holding the model "
        "on the device, one load per batch size) and compare its answers with the local sweep",
    )
    args = parser.parse_args(argv)
    for name in ("frames", "batch_sizes", "videos"):
        value = getattr(args, name)
        values = value if isinstance(value, list) else [] if value is None else [value]
        if any(v < 1 for v in values):
            parser.error(f"--{name.replace('_', '-')} must be positive, got {value}")
    if args.frames and max(args.frames) > args.duration * FPS:
        parser.error(f"{max(args.frames)} frames need a video longer than {args.duration} s")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    import torch

    mode = SMOKE if args.smoke else GPU
    if not args.smoke and not torch.cuda.is_available():
        print("no CUDA device: running the CPU smoke configuration (--smoke)", flush=True)
        mode = SMOKE
    threads = args.threads or (1 if mode is SMOKE else None)
    if threads:
        torch.set_num_threads(threads)
    given = {k: getattr(args, k) for k in ("videos", "width", "height", "max_new_tokens", "seed")}
    given["dtype"] = args.dtype
    given |= {"frames": args.frames, "batch_sizes": args.batch_sizes, "duration_s": args.duration}
    given["executor"] = args.executor
    plan = dataclasses.replace(
        mode, **{k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if v}
    )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="itemscale-gpu-sweep-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        report = run(plan, workdir)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print_table(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report), flush=True)
    return report


def timed_grid(
    side: str,
    settings: Sequence[Setting],
    run_one: Callable[[int, int], Callable[[], dict[str, Any]]],
    *,
    cells: int,
    meter: GenerateMeter,
    device: Device,
) -> dict[Setting, dict[str, Any]]:
    """Each setting timed alone (peak memory reset, `generate` meter zeroed). `run_one` does
    the work and returns how to read its figures, which is called after the clock stops."""
    out: dict[Setting, dict[str, Any]] = {}
    for f, b in settings:
        meter.reset()
        timing: dict[str, Any] = {}
        with device.measured(timing):
            figures = run_one(f, b)
        out[(f, b)] = rates({**figures(), **timing}, cells, meter)
        progress(side, f, b, out[(f, b)])
    return out


def run(plan: Plan, workdir: Path) -> dict[str, Any]:
    import torch
    import transformers
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    from itemscale.collect.models import builtin_model_dir, load_backend
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import load_benchmark_items, run_sweep
    from itemscale.collect.synth import generate_suite
    from itemscale.collect.video import stream_index

    device, dtype = Device(plan.device), getattr(torch, plan.dtype)
    phases: dict[str, float] = {}
    started = time.perf_counter()
    suite, folder = workdir / "suite", workdir / "model"
    with phase("suite", phases):
        generate_suite(
            suite,
            n_videos=plan.videos,
            seed=plan.seed,
            width=plan.width,
            height=plan.height,
            fps=FPS,
            duration_s=plan.duration_s,
            layout="focus",
            overwrite=True,
            workers=min(plan.videos, os.cpu_count() or 1) if plan.name == "gpu" else 1,
        )
    processor = AutoProcessor.from_pretrained(builtin_model_dir())
    with phase("build", phases):
        model = build_model(
            model_config(plan.arch, processor), device=device.name, dtype=dtype, seed=plan.seed
        )
        device.sync()
    params = sum(p.numel() for p in model.parameters())
    weights_gib = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**30
    with phase("save", phases):
        shutil.rmtree(folder, ignore_errors=True)
        processor.save_pretrained(folder)
        model.save_pretrained(folder)
    protocols = {
        f: load_protocol(
            write_protocol(
                workdir / f"protocol-{f}f.toml",
                suite=suite,
                model=folder,
                frames=f,
                dtype=plan.dtype,
                max_new_tokens=plan.max_new_tokens,
            )
        )
        for f in plan.frames
    }
    configs = {f: protocol.configurations()[0] for f, protocol in protocols.items()}
    first = protocols[plan.frames[0]]
    items = load_benchmark_items(first.benchmark)
    for path in {str(item.video_path) for item in items}:
        stream_index(path)  # read once, outside every timed setting
    meter = GenerateMeter()
    grid = {"cells": len(items), "meter": meter, "device": device}
    model_class = Qwen2_5_VLForConditionalGeneration
    visual: dict[str, dict[Setting, dict[str, int | None]]] = {"loop": {}, "sweep": {}}
    answers: dict[Setting, dict[str, str | None]] = {}

    with phase("loop", phases), metered_generate(model_class, meter, device.sync):
        loop = PlainLoop(model, AutoProcessor.from_pretrained(folder), device, plan.max_new_tokens)
        loop.run(items[:2], configs[plan.frames[0]], 1)  # warm-up: kernels, allocator

        def loop_one(f: int, b: int) -> Callable[[], dict[str, Any]]:
            loop.run(items, configs[f], b)
            visual["loop"][(f, b)] = {i: c.visual_tokens for i, c in loop.cells.items()}
            return loop.figures

        loop_figures = timed_grid("loop", plan.settings, loop_one, **grid)
    loop.model = model = None  # one model on the device at a time
    device.release()

    with phase("load", phases):
        loaded = load_backend(first.models[0], device=device.name, batch_size=max(plan.batch_sizes))
        backend = KeptLoaded(loaded)
        device.sync()

    def sweep(f: int, b: int, run_dir: str, limit: int | None = None) -> Any:
        return run_sweep(
            protocols[f],
            run_dir=workdir / "runs" / run_dir,
            backend_factory=lambda entry, device_name, batch_size: backend,
            device=device.name,
            batch_size=b,
            progress=False,
            limit=limit,
        )

    def sweep_one(f: int, b: int) -> Callable[[], dict[str, Any]]:
        result = sweep(f, b, f"{f}f-b{b}")

        def figures() -> dict[str, Any]:
            table = result.table
            visual["sweep"][(f, b)] = dict(
                zip(table["item_id"], table["visual_tokens"], strict=True)
            )
            answers[(f, b)] = dict(zip(table["item_id"], table["raw_text"], strict=True))
            return {
                "visual_tokens": int(table["visual_tokens"].fillna(0).sum()),
                "decode_s": round(result.decode_s, 4),
                "model_s": round(result.model_s, 4),
                "statuses": dict(sorted(result.by_status.items())),
                "cells": len(table),
            }

        return figures

    with phase("sweep", phases), metered_generate(model_class, meter, device.sync):
        sweep(plan.frames[0], 1, "warmup", limit=2)  # one video's items: both task kinds
        sweep_figures = timed_grid("sweep", plan.settings, sweep_one, **grid)
        # A finished setting run again: no cell runs, so this is the sweep's fixed cost per run
        # (store, plan, export, provenance): once per setting here, once per grid in a real run.
        f, b = plan.settings[-1]
        rerun: dict[str, Any] = {}
        with device.measured(rerun):
            again = sweep(f, b, f"{f}f-b{b}")
    loaded.close()
    device.release()
    ray_figures = None
    if plan.executor == "ray":
        with phase("ray_sweep", phases):
            ray_figures = ray_grid(plan, workdir, suite, folder, answers)
    phases["total"] = round(time.perf_counter() - started, 3)
    rows = [
        setting_row(f, b, loop_figures[(f, b)], sweep_figures[(f, b)], visual, len(items))
        for f, b in plan.settings
    ]
    return {
        "benchmark": "gpu_sweep",
        "mode": plan.name,
        "device": torch.cuda.get_device_name() if device.cuda else "cpu",
        "dtype": plan.dtype,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "torch_threads": torch.get_num_threads(),
        "architecture": {"text": plan.arch["text"], "vision": plan.arch["vision"]},
        "vocab_size": len(processor.tokenizer),
        "params": params,
        "weights_gib": round(weights_gib, 3),
        "qwen25_vl_7b_params": parameter_count(model_config(QWEN25_VL_7B, processor)),
        "suite": {"layout": "focus", "items": len(items), "fps": FPS}
        | {k: getattr(plan, k) for k in ("videos", "width", "height", "duration_s", "seed")},
        "max_new_tokens": plan.max_new_tokens,
        "phases_s": phases,
        "sweep_rerun": {"wall_s": round(rerun["wall_s"], 4), "cells_ran": again.ran},
        "settings": rows,
        "min_ratio": round(min(r["ratio"] for r in rows), 4),
        "target_ratio": TARGET_RATIO,
        # the sweep batches across videos: as many rows per call as the loop, batch size > 1
        "rows_per_generate_match": all(
            r["rows_per_generate_match"] for r in rows if r["batch_size"] > 1
        ),
        "all_cells_answered_or_typed": all(r["all_answered_or_typed"] for r in rows),
        **({"ray": ray_figures} if ray_figures is not None else {}),
    }


def ray_grid(
    plan: Plan,
    workdir: Path,
    suite: Path,
    folder: Path,
    answers: dict[Setting, dict[str, str | None]],
) -> list[dict[str, Any]]:
    """The grid again through `--executor ray` on a local Ray instance: one actor loads the
    saved model from its folder on the device (one load per batch size, every frame count in
    one protocol), the driver stores the rows. Per batch size: wall time (the actor's start and
    model load included), time in the model and in decoding as the actor measured them, the
    statuses, the Ray figures (actors started and lost), and whether every answer equals the
    local sweep's for the same (frames, batch size, item)."""
    import ray

    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep

    protocol = load_protocol(
        write_protocol(
            workdir / "protocol-ray.toml",
            suite=suite,
            model=folder,
            frames=plan.frames,
            dtype=plan.dtype,
            max_new_tokens=plan.max_new_tokens,
        )
    )
    cuda = plan.device.startswith("cuda")
    ray.init(
        num_cpus=2,
        num_gpus=1 if cuda else 0,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=200 * 2**20,
    )
    out = []
    try:
        for b in plan.batch_sizes:
            start = time.perf_counter()
            result = run_sweep(
                protocol,
                executor="ray",
                run_dir=workdir / "runs" / f"ray-b{b}",
                device=plan.device,
                batch_size=b,
                workers=1,
                progress=False,
            )
            wall = time.perf_counter() - start
            table = result.table
            got = {
                (int(f), str(i)): t
                for f, i, t in zip(
                    table["frames"], table["item_id"], table["raw_text"], strict=True
                )
            }
            expected = {
                (f, i): t for (f, bb), cells in answers.items() if bb == b for i, t in cells.items()
            }
            figures = {
                "batch_size": b,
                "cells": len(table),
                "wall_s": round(wall, 3),
                "model_s": round(result.model_s, 3),
                "decode_s": round(result.decode_s, 3),
                "statuses": dict(sorted(result.by_status.items())),
                "ray": dict(result.ray),
                "answers_match_local": got == expected,
            }
            print(f"[ray] b{b}: {figures}", flush=True)
            out.append(figures)
    finally:
        ray.shutdown()
    return out


def setting_row(
    f: int,
    b: int,
    loop: dict[str, Any],
    sweep: dict[str, Any],
    visual: dict[str, dict[Setting, dict[str, int | None]]],
    cells: int,
) -> dict[str, Any]:
    """One setting's figures side by side. A sweep cell is answered or typed when its status
    is one of `Status`; a loop cell when it holds an answer or the error that stopped it."""
    from itemscale.core.responses import Status

    statuses = {s.value for s in Status}
    sweep_typed = set(sweep["statuses"]) <= statuses
    sweep_typed &= sum(sweep["statuses"].values()) == sweep["cells"] == cells
    loop_typed = len(visual["loop"][(f, b)]) == cells
    return {
        "frames": f,
        "batch_size": b,
        "cells": cells,
        "ratio": round(loop["wall_s"] / sweep["wall_s"], 4) if sweep["wall_s"] > 0 else math.nan,
        "visual_tokens_match": visual["loop"][(f, b)] == visual["sweep"][(f, b)],
        "rows_per_generate_match": loop["rows_per_generate"] == sweep["rows_per_generate"],
        "all_answered_or_typed": sweep_typed and loop_typed,
        "loop": loop,
        "sweep": sweep,
    }


def shown(value: Any, spec: str) -> str:
    """A figure in a column; `-` where there is none (no CUDA, no generate call)."""
    if value is not None:
        return format(value, spec)
    return format("-", spec[0] + str(len(format(0.0, spec)))) if spec[0] in "<>" else "-"


def progress(side: str, frames: int, batch: int, figures: dict[str, Any]) -> None:
    """One line per setting as it ends, so a run stopped by a time limit keeps what it had."""
    print(
        f"[{side}] {frames}f b{batch}: {figures['per_cell_ms']:.1f} ms/cell, "
        f"{shown(figures['visual_tokens_per_s'], '.0f')} visual tok/s, peak "
        f"{shown(figures['peak_gib'], '.2f')} GiB, {figures['generate_rows']} rows in "
        f"{figures['generate_calls']} generate calls",
        flush=True,
    )


def print_table(report: dict[str, Any]) -> None:
    print(
        f"\n{report['mode']} on {report['device']}, {report['dtype']}, {report['params']:,} "
        f"parameters ({report['weights_gib']:.2f} GiB), {report['suite']['items']} cells per "
        f"setting, {report['max_new_tokens']} new tokens per cell"
    )
    print(
        "frames batch | per cell ms loop / sweep | visual tok/s loop / sweep | peak GiB loop / "
        "sweep | rows per generate loop / sweep | loop/sweep"
    )
    for row in report["settings"]:
        loop, sweep = row["loop"], row["sweep"]
        print(
            f"{row['frames']:>6} {row['batch_size']:>5} | {loop['per_cell_ms']:>9.1f} / "
            f"{sweep['per_cell_ms']:<9.1f} | {shown(loop['visual_tokens_per_s'], '>10.0f')} / "
            f"{shown(sweep['visual_tokens_per_s'], '<10.0f')} | "
            f"{shown(loop['peak_gib'], '>6.2f')} / {shown(sweep['peak_gib'], '<6.2f')} | "
            f"{shown(loop['rows_per_generate'], '>5.2f')} / "
            f"{shown(sweep['rows_per_generate'], '<5.2f')} | {row['ratio']:.3f}"
        )
    for ray_row in report.get("ray", []):
        print(
            f"ray b{ray_row['batch_size']}: {ray_row['cells']} cells in {ray_row['wall_s']:.1f} s "
            f"(model {ray_row['model_s']:.1f} s, decode {ray_row['decode_s']:.1f} s, the rest "
            f"mostly the actor's start and model load); answers equal the local sweep's: "
            f"{ray_row['answers_match_local']}; {ray_row['statuses']}"
        )
    print(
        f"loop/sweep target >= {report['target_ratio']}; rows per generate equal the loop's at "
        f"every batch size above 1: {report['rows_per_generate_match']}; the sweep's fixed cost "
        f"per run (a finished setting run again): {report['sweep_rerun']['wall_s']:.3f} s\n"
        f"phases (s): {report['phases_s']}",
        flush=True,
    )


if __name__ == "__main__":
    main()

"""benchmarks/gpu_sweep.py in its CPU smoke mode, run as a user runs it: the printed JSON must
hold every figure, and the figures must be the ones hand-computed from the suite's geometry and
the published Qwen2.5-VL-7B numbers. The GPU mode shares every code path but the config, the
device and the dtype."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _support.paths import REPO
from itemscale.core.responses import Status

SCRIPT = REPO / "benchmarks" / "gpu_sweep.py"

pytestmark = pytest.mark.slow  # a subprocess that imports torch and runs 8 small settings


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    workdir = tmp_path_factory.mktemp("gpu-sweep")
    done = _run("--smoke", "--workdir", str(workdir))
    return json.loads(done.stdout.strip().splitlines()[-1]), workdir


def qwen25_vl_7b_parameters(vocab: int) -> int:
    """Qwen2.5-VL-7B's parameters from its published config, by hand: q/k/v carry biases, the
    LM head is untied, the vision MLP and projections carry biases, the merger maps 2x2 merged
    patches (4 x 1280) through a 5120-wide layer to the text width."""
    hidden, inter, layers, kv = 3584, 18944, 28, 4 * 128
    layer = (hidden * hidden + hidden) + 2 * (hidden * kv + kv) + hidden * hidden
    layer += 3 * hidden * inter + 2 * hidden
    text = vocab * hidden + layers * layer + hidden + vocab * hidden
    h, i, depth = 1280, 3420, 32
    block = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * (h * i + i) + (i * h + h)
    merger = h + (4 * h * 4 * h + 4 * h) + (4 * h * hidden + hidden)
    vision = 3 * 2 * 14 * 14 * h + depth * block + merger
    return text + vision


def test_smoke_prints_every_figure(smoke: tuple[dict[str, Any], Path]) -> None:
    report, _ = smoke
    assert report["mode"] == "smoke" and report["device"] == "cpu"
    assert set(report["phases_s"]) == {"suite", "build", "save", "loop", "load", "sweep", "total"}
    assert all(v >= 0 for v in report["phases_s"].values())
    settings = {(r["frames"], r["batch_size"]): r for r in report["settings"]}
    assert set(settings) == {(f, b) for f in (2, 4) for b in (1, 2, 4)}
    for row in settings.values():
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0
        for side in ("loop", "sweep"):
            figures = row[side]
            for key in ("per_cell_ms", "visual_tokens_per_s", "wall_s", "generate_s"):
                assert math.isfinite(figures[key]) and figures[key] > 0, (side, key)
            assert figures["peak_gib"] is None  # no CUDA: no allocator to read
    assert report["min_ratio"] == min(r["ratio"] for r in report["settings"])


def test_every_cell_is_answered_or_typed_and_runs_through_generate_once(
    smoke: tuple[dict[str, Any], Path],
) -> None:
    report, _ = smoke
    cells = 2 * report["suite"]["videos"]  # the focus layout: one MCQA and one open item
    assert report["suite"]["items"] == cells == 8
    statuses = {s.value for s in Status}
    for row in report["settings"]:
        sweep, loop = row["sweep"], row["loop"]
        assert set(sweep["statuses"]) <= statuses
        assert sum(sweep["statuses"].values()) == sweep["cells"] == cells
        assert loop["answered"] == cells and loop["failed"] == []
        assert sweep["generate_rows"] == loop["generate_rows"] == cells
        assert loop["generate_calls"] == math.ceil(cells / row["batch_size"])
        # batches across videos: 4 multiple-choice and 4 open cells fill calls of b alike
        assert sweep["generate_calls"] == loop["generate_calls"]
        assert sweep["rows_per_generate"] == loop["rows_per_generate"] == row["batch_size"]
        assert row["rows_per_generate_match"] is True
        assert loop["new_tokens"] == [report["max_new_tokens"]]  # no EOS: a fixed length
    assert report["all_cells_answered_or_typed"] is True
    assert report["rows_per_generate_match"] is True and report["target_ratio"] == 0.95


def test_both_sides_see_the_visual_tokens_the_geometry_gives(
    smoke: tuple[dict[str, Any], Path],
) -> None:
    report, _ = smoke
    # 112x84 frames: 8x6 patches of 14 px, 2x2 merged -> 4x3 = 12 tokens per 2 frames
    assert (report["suite"]["width"], report["suite"]["height"]) == (112, 84)
    for row in report["settings"]:
        expected = report["suite"]["items"] * 12 * row["frames"] // 2
        assert row["sweep"]["visual_tokens"] == row["loop"]["visual_tokens"] == expected
        assert row["visual_tokens_match"] is True


def test_the_model_is_saved_and_swept_through_the_hf_backend(
    smoke: tuple[dict[str, Any], Path],
) -> None:
    report, workdir = smoke
    folder = workdir / "model"
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "qwen2_5_vl"
    assert config["text_config"]["vocab_size"] == report["vocab_size"] == 406
    assert config["vision_config"]["patch_size"] == 14
    assert "eos_token_id" not in json.loads((folder / "generation_config.json").read_text())
    assert (folder / "model.safetensors").is_file()
    run = json.loads((workdir / "runs" / "4f-b4" / "run.json").read_text())
    (spec,) = [m["spec"] for m in run["model_specs"].values()]
    assert spec["backend"] == "hf" and spec["model"] == str(folder)
    assert spec["processor"]["family"] == "qwen2.5-vl"
    # the last setting's run, then its rerun (the fixed cost per run: no cell runs again)
    assert [(s["batch_size"], s["outcome"]) for s in run["sessions"]] == [(4, "completed")] * 2
    assert report["sweep_rerun"]["cells_ran"] == 0 and report["sweep_rerun"]["wall_s"] > 0


def test_the_gpu_architecture_is_qwen25_vl_7b(smoke: tuple[dict[str, Any], Path]) -> None:
    report, _ = smoke
    # 8.29 B published, less the 152,064-row embedding and head: 406 tokens here
    assert report["qwen25_vl_7b_params"] == qwen25_vl_7b_parameters(report["vocab_size"])
    assert report["qwen25_vl_7b_params"] + 2 * (152064 - 406) * 3584 == 8_292_166_656


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frames", "0"], "--frames must be positive"),
        (["--batch-sizes", "2", "-1"], "--batch-sizes must be positive"),
        (["--frames", "256"], "256 frames need a video longer than 16.0 s"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(args: list[str], message: str) -> None:
    done = _run("--smoke", *args, check=False)
    assert done.returncode == 2
    assert message in done.stderr


@pytest.mark.ray
@pytest.mark.extended  # 20-35 s; .ci/run runs it
def test_the_ray_executor_sweeps_the_same_answers(tmp_path: Path) -> None:
    """`--executor ray`: the grid again through a Ray actor that loads the saved model from its
    folder; every cell stored, no actor lost, and every answer the local sweep's."""
    pytest.importorskip("ray")
    done = _run("--smoke", "--executor", "ray", "--frames", "2", "--batch-sizes", "1")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    (row,) = report["ray"]
    assert row["batch_size"] == 1 and row["cells"] == report["suite"]["items"] == 8
    assert sum(row["statuses"].values()) == 8 and set(row["statuses"]) <= {"ok", "noanswer"}
    assert row["ray"]["actors"] == 1 and row["ray"]["actors_lost"] == 0
    assert row["answers_match_local"] is True
    assert "ray_sweep" in report["phases_s"]
    assert "ray b1: 8 cells" in done.stdout

"""Benchmark: the stopping policies judged at a scale where they can be judged.

The demo's 80 items leave each cross-fitting fold 40 items, too few to fit a threshold on one
half and report it on the other. This script generates a synthetic suite of many videos (the
demo's focus layout and kinds, its multiple-choice question of each video), sweeps the built-in model over a few
frame budgets at one resolution, then runs `itemscale cascade` on the result and prints, held
out by video, each stopping policy's accuracy change and frames saved (recorded frame union, so
effective frames) with 95% video-bootstrap intervals, beside the in-sample threshold sweep.

    nice -n 15 .venv/bin/python benchmarks/cascade_scale.py --out runs/cascade_scale \
        [--videos 800] [--frames 2,4,8,16,32] [--short-side 56] [--boot 1000] [--seed 7]

The suite and the sweep are resumable (rerun the same command to continue); the last line is
one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from itemscale.analysis.policies import CascadeSettings, cascade_report
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.collect.synth import FocusKind, ensure_suite
from itemscale.core.responses import TaskKind, read_run

#: The demo's focus kinds (flash and longest the built-in model trained on, blink shorter than
#: the sampling gap at 32 frames).
FOCUS_KINDS: tuple[FocusKind, ...] = ("flash", "longest", "blink")


def protocol_text(out: Path, suite: Path, frames: list[int], short_side: int) -> str:
    return f"""version = 1
output = "{out.resolve()}"
text_only = false

[[models]]
name = "builtin"
backend = "builtin"
model = "builtin"

[benchmark]
kind = "synthetic"
path = "{suite.resolve()}"
split = "test"

[grid]
frames = [{", ".join(str(f) for f in frames)}]
short_side = [{short_side}]
sampling = ["linspace"]

[decoding]
max_new_tokens = 24
"""


def _stat(stat: dict[str, Any] | None, scale: float = 100.0) -> dict[str, Any] | None:
    if not stat or stat.get("value") is None:
        return None
    ci = stat.get("ci") or [None, None]
    return {
        "value": round(scale * stat["value"], 2),
        "ci": [None if c is None else round(scale * c, 2) for c in ci],
    }


def _point(p: dict[str, Any] | None) -> dict[str, Any] | None:
    """One in-sample threshold-sweep point in points and frames."""
    if p is None:
        return None
    saved = p["cost_reduction"]
    return {
        "accuracy": round(100 * p["accuracy"], 2),
        "mean_effective_frames": round(p["mean_cost"], 2),
        "frames_saved_percent": None if saved is None else round(100 * saved, 2),
    }


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    block = report["results"][0]
    policies: dict[str, Any] = {}
    for name, rule in block["policies"].items():
        if not rule.get("available", True) or "accuracy" not in rule:
            policies[name] = {"available": False, "reason": rule.get("reason")}
            continue
        policies[name] = {
            "accuracy": _stat(rule["accuracy"]),
            "accuracy_change_points": _stat(rule["accuracy_change"]),
            "frames_saved_percent": _stat(rule["cost_reduction"]),
            "mean_effective_frames": _stat(rule["mean_cost"], scale=1.0),
            "matches_terminal": rule.get("matches_terminal"),
        }
    terminal = block["terminal"]
    sweep = block["threshold_sweep"]
    terminal_acc = terminal["accuracy"]["value"]
    best = max(sweep, key=lambda p: (p["accuracy"], -p["mean_cost"])) if sweep else None
    matching = [p for p in sweep if p["accuracy"] >= terminal_acc]
    cheapest = min(matching, key=lambda p: p["mean_cost"]) if matching else None
    return {
        "n_items": block["n_items"],
        "n_videos": block["n_videos"],
        "labels": block["labels"],
        "cost": block["cost"].get("sharing"),
        "terminal_accuracy": _stat(terminal.get("accuracy")),
        "policies": policies,
        "best_match": (block.get("best_match") or {}).get("policy"),
        "in_sample_best": _point(best),
        "in_sample_cheapest_at_terminal_accuracy": _point(cheapest),
        "in_sample_threshold_sweep": [_point(p) for p in sweep],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("runs/cascade_scale"))
    parser.add_argument("--videos", type=int, default=800)
    parser.add_argument("--frames", default="2,4,8,16,32")
    parser.add_argument("--short-side", type=int, default=56)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7, help="suite seed (the model trained on 0)")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    frames = [int(f) for f in args.frames.split(",")]

    import torch

    torch.set_num_threads(1)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    manifest = ensure_suite(
        out / "suite",
        n_videos=args.videos,
        seed=args.seed,
        test_fraction=1.0,
        layout="focus",
        focus_kinds=FOCUS_KINDS,
    )
    suite_s = time.perf_counter() - t0
    print(f"suite: {manifest.n_videos} videos, {manifest.n_items} items ({suite_s:.0f} s)")
    protocol_file = out / "protocol.toml"
    protocol_file.write_text(
        protocol_text(out, out / "suite", frames, args.short_side), encoding="utf-8"
    )
    t0 = time.perf_counter()
    # The stopping policies need 0/1 correctness: only the multiple-choice question of each
    # video is run (the suite's open question would double the sweep and be skipped).
    result = run_sweep(
        load_protocol(protocol_file),
        run_dir=out,
        progress=False,
        batch_size=args.batch_size,
        item_filter=lambda item: item.task_kind == TaskKind.MCQA,
    )
    sweep_s = time.perf_counter() - t0
    if result.interrupted:
        raise SystemExit("sweep interrupted; rerun to resume")
    print(f"sweep: {sweep_s:.0f} s")
    df, _ = read_run(out)
    t0 = time.perf_counter()
    report = cascade_report(df, CascadeSettings(bootstrap=args.boot, seed=0)).as_json()
    (out / "cascade.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    figures = {
        "videos": args.videos,
        "frames": frames,
        "short_side": args.short_side,
        "suite_seed": args.seed,
        "bootstrap": args.boot,
        "suite_s": round(suite_s, 1),
        "sweep_s": round(sweep_s, 1),
        "cascade_s": round(time.perf_counter() - t0, 1),
        **summarise(report),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""`itemscale synth`: generate the synthetic video suite."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "synth",
        help="generate the synthetic video suite (H.264 videos, items.jsonl, suite.json)",
        description=(
            "Generate procedurally drawn H.264 videos with questions whose evidence time spans "
            "are known: brief flashes (need frame rate), a small sign (needs resolution), "
            "counting and turn order (need coverage), and look-alike distractors. "
            "Deterministic from --seed."
        ),
    )
    parser.add_argument("--out", required=True, type=Path, help="suite directory to write")
    parser.add_argument("--n", required=True, type=int, help="number of videos in the suite")
    parser.add_argument("--seed", required=True, type=int, help="seed (same seed, same suite)")
    parser.add_argument("--width", type=int, default=160, help="frame width in pixels (160)")
    parser.add_argument("--height", type=int, default=120, help="frame height in pixels (120)")
    parser.add_argument("--fps", type=int, default=10, help="frames per second (10)")
    parser.add_argument("--duration", type=float, default=12.0, help="seconds per video (12)")
    parser.add_argument(
        "--test-fraction", type=float, default=0.2, help="share of videos in the test split (0.2)"
    )
    parser.add_argument(
        "--only-split",
        choices=("train", "test"),
        default=None,
        help="write only this split's videos and items (same videos as in the full suite)",
    )
    parser.add_argument("--crf", type=int, default=18, help="x264 constant rate factor (18)")
    parser.add_argument(
        "--layout",
        choices=("grid", "focus"),
        default="grid",
        help="grid: five small storylines per video (default); focus: one large storyline per "
        "video, the built-in model's suite",
    )
    parser.add_argument(
        "--focus-kinds",
        default="flash,longest",
        metavar="KIND,...",
        help="storylines of a focus suite, dealt to its videos in turn: flash, longest, blink "
        "(a flash shorter than the sampling gap of large budgets; default flash,longest)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="encode videos in this many processes (output does not depend on it; 1)",
    )
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument(
        "--overwrite", action="store_true", help="replace a suite already in --out"
    )
    existing.add_argument(
        "--reuse",
        action="store_true",
        help="keep the suite in --out if it is intact and made from these same arguments, "
        "else replace it",
    )
    parser.set_defaults(func=run_synth)


def run_synth(args: argparse.Namespace) -> int:
    from ..collect.synth import generate_suite, reusable_suite

    params = {
        "n_videos": args.n,
        "seed": args.seed,
        "width": args.width,
        "height": args.height,
        "fps": args.fps,
        "duration_s": args.duration,
        "test_fraction": args.test_fraction,
        "only_split": args.only_split,
        "crf": args.crf,
        "layout": args.layout,
        "focus_kinds": tuple(k.strip() for k in args.focus_kinds.split(",") if k.strip()),
    }
    if args.reuse:
        existing = reusable_suite(args.out, **params)
        if existing is not None:
            print(f"reused the intact suite in {args.out} ({existing.n_items} items)")
            return 0
    manifest = generate_suite(
        args.out, overwrite=args.overwrite or args.reuse, workers=args.workers, **params
    )
    sizes = ", ".join(f"{split} {n}" for split, n in manifest.split_sizes.items())
    print(
        f"wrote {len(manifest.videos)} videos ({sizes}) and {manifest.n_items} items to "
        f"{args.out} (seed {manifest.seed}, {manifest.width}x{manifest.height}, "
        f"{manifest.fps} fps, {manifest.duration_s:g} s)"
    )
    return 0

"""`python -m recipes.builtin_model`: train the built-in tiny Video LLM on a synthetic suite.

The package ships the result (src/itemscale/data/builtin); this command, run from the root of a
checkout, is how it was made and how anyone can remake it (same seed, same steps, same thread
count: same weights). Its flags, checks and exit statuses are those of the retired
`itemscale train-builtin`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemscale.cli import CommandError
from itemscale.core.errors import ItemscaleError, location_text
from itemscale.core.files import (
    InputFileError,
    MissingInputError,
    check_output_path,
    checked_input,
    loads_json,
    read_input_text,
)

if TYPE_CHECKING:
    from pydantic import ValidationError


PROG = "python -m recipes.builtin_model"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Train the built-in tiny Qwen2.5-VL-class model on the training split of a suite "
            "written by `itemscale synth`, across a mix of frame counts and resolutions, and "
            "save it (weights, tokenizer, processor) to --out. Deterministic for a given seed, "
            "step count and thread count."
        ),
    )
    parser.add_argument("--suite", required=True, type=Path, help="suite folder (items.jsonl)")
    parser.add_argument("--out", required=True, type=Path, help="folder to save the model in")
    parser.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    parser.add_argument(
        "--steps", type=int, default=None, help="training steps (default: the shipped recipe's)"
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop (with a checkpoint) after this many minutes even if steps remain (default: "
        "the recipe's, else 30)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads for training (default: the recipe's, else 2; use 1 on a busy "
        "shared machine; the same recipe on another thread count gives other weights)",
    )
    parser.add_argument(
        "--recipe",
        type=Path,
        default=None,
        help=(
            'JSON file {"train": {...}, "architecture": {...}} of TrainSettings and '
            "BuiltinArchitecture fields that differ from the shipped recipe (the flags above "
            "still apply on top)"
        ),
    )
    parser.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="continue a run from its checkpoint folder (OUT/checkpoint), bit for bit, with the "
        "same recipe and thread count",
    )
    parser.add_argument(
        "--stop-at",
        type=int,
        default=None,
        metavar="STEP",
        help="stop after this step with a checkpoint (split a long recipe into sessions)",
    )
    return parser


def read_recipe(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(train settings, architecture) overrides from a recipe file; errors name the file."""
    try:
        payload = loads_json(read_input_text(path, what="a recipe file"))
    except InputFileError as exc:
        raise CommandError(f"--recipe {exc}") from None
    except json.JSONDecodeError as exc:
        raise CommandError(f"--recipe {path}: cannot read it as JSON: {exc}") from exc
    if not isinstance(payload, dict) or set(payload) - {"train", "architecture"}:
        raise CommandError(f'--recipe {path}: expected an object with "train" and "architecture"')
    train, architecture = payload.get("train", {}), payload.get("architecture", {})
    if not isinstance(train, dict) or not isinstance(architecture, dict):
        raise CommandError(f'--recipe {path}: "train" and "architecture" must be objects')
    return train, architecture


def first_error(exc: ValidationError) -> tuple[str, str]:
    """(key of the first error, "" for a whole-model check; its message)."""
    err = exc.errors()[0]
    return location_text(err["loc"], empty=""), err["msg"]


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from itemscale.collect.video import MediaError

    from ._config import BuiltinArchitecture, TrainSettings
    from ._train import train_builtin

    if not args.suite.is_dir():
        raise CommandError(f"--suite {args.suite}: not a folder")
    recipe, architecture = read_recipe(args.recipe) if args.recipe else ({}, {})
    overrides: dict[str, object] = {**recipe, "seed": args.seed}
    if args.minutes is not None:
        overrides["minutes"] = args.minutes
    if args.threads is not None:
        overrides["threads"] = args.threads
    if args.steps is not None:
        overrides["steps"] = args.steps
    try:
        settings = TrainSettings.model_validate(overrides)
    except ValidationError as exc:
        key, message = first_error(exc)
        if key in recipe or (not key and args.recipe):
            where = f"--recipe {args.recipe}: train" + (f".{key}" if key else "")
        else:
            where = f"--{key}"
        raise CommandError(f"{where}: {message}") from exc
    try:
        arch = BuiltinArchitecture.model_validate(architecture)
    except ValidationError as exc:
        key, message = first_error(exc)
        where = f"--recipe {args.recipe}: architecture" + (f".{key}" if key else "")
        raise CommandError(f"{where}: {message}") from exc
    try:
        result = train_builtin(
            args.suite,
            args.out,
            settings,
            arch,
            progress=lambda msg: print(msg, file=sys.stderr, flush=True),
            resume=args.resume,
            stop_at=args.stop_at,
        )
    except MediaError as exc:  # its own str() adds the reason; training never printed one
        raise CommandError(f"{exc.path}: {exc.detail}") from exc
    note = " (stopped by --minutes)" if result.stopped_by_time else ""
    print(f"trained {result.steps_done} steps in {result.seconds:.0f}s{note}; saved {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse, refuse an --out that would replace a run's data or records and a --recipe that is
    a FIFO or a device (the rules every itemscale command follows, docs/run-folders.md), train;
    exit 2 with one line naming the file, key or flag, as `itemscale` does."""
    args = build_parser().parse_args(argv)
    try:
        check_output_path(args.out, flag="--out", replaces_folder=True)
        if args.recipe is not None:
            try:
                checked_input(args.recipe, folder=True)
            except MissingInputError:
                pass  # read_recipe names it
            except InputFileError as exc:
                raise InputFileError(f"--recipe {exc.path}", exc.reason) from None
        return run(args)
    except ItemscaleError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130

"""`itemscale select PROTOCOL`: run the built-in frame selector over a protocol's items and write
selection files the `selection` sampling policy replays (docs/selectors.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from . import CommandError

if TYPE_CHECKING:
    from ..collect.video import Adaptive


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "select",
        help="write selection files with the built-in content-aware frame selector",
        description="Run the built-in, question-agnostic frame selector `change` (one frame per "
        "equal segment of the video: the one that differs most from the rest of its segment) "
        "over the items of a protocol's benchmark, and write one selection file per frame "
        "budget (OUT/NAME_K.jsonl, lines of item_id and indices). Add the printed "
        "[selections.NAME] table and a `selection` sampling policy to the protocol to run it.",
    )
    p.add_argument("protocol", type=Path, help="protocol file whose benchmark items to select for")
    p.add_argument("--frames", required=True, metavar="K[,K...]", help="frame budgets, e.g. 8,16")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the files")
    p.add_argument("--method", default="change", choices=["change"], help="the selector")
    p.add_argument("--name", default=None, help="selection name (default: the method)")
    p.add_argument(
        "--adaptive",
        action="store_true",
        help="adaptive: each budget K is a cap; keep the segments whose best frame changes by "
        "at least --threshold, at least --min-frames of them",
    )
    p.add_argument(
        "--min-frames",
        type=int,
        default=None,
        metavar="M",
        help="with --adaptive: the fewest frames a video gets (default 1)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="T",
        help="with --adaptive: the change score a segment's best frame must reach (mean "
        "absolute grey difference from its segment's median frame, 0-255; default 8)",
    )
    p.add_argument("--json", action="store_true", help="print the files as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..collect.models import BACKENDS
    from ..collect.protocol import load_protocol
    from ..collect.sweep import load_benchmark_items
    from ..collect.video import MediaError, write_selection_files

    try:
        budgets = [int(part) for part in args.frames.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--frames must be integers, e.g. 8,16 (got {args.frames!r})") from None
    if not budgets or min(budgets) < 1:
        raise CommandError(f"--frames needs budgets >= 1 (got {args.frames!r})")
    name = args.name or args.method
    adaptive = _adaptive(args)
    protocol = load_protocol(args.protocol, backends=BACKENDS)
    items = load_benchmark_items(protocol.benchmark)
    try:
        files = write_selection_files(items, budgets, args.out, name=name, adaptive=adaptive)
    except (MediaError, ValueError) as exc:
        raise CommandError(f"itemscale select: {exc}") from None
    if args.json:
        written = {k: str(p) for k, p in files.items()}
        print(json.dumps({"name": name, "items": len(items), "files": written}))
        return 0
    print(f"{args.method}: frames for {len(items)} items, {len(budgets)} budget(s)")
    for k, path in files.items():
        print(f"  {k} frames: {path}")
    base = args.protocol.resolve().parent
    shown = {k: _relative(p.resolve(), base) for k, p in files.items()}
    paths = ", ".join(f'{k} = "{p}"' for k, p in shown.items())
    print(
        "add to the protocol (paths are relative to it):\n"
        f'  sampling = ["linspace", {{ name = "selection", selection = "{name}" }}]\n'
        f"  [selections.{name}]\n  paths = {{ {paths} }}"
    )
    return 0


def _adaptive(args: argparse.Namespace) -> Adaptive | None:
    from ..collect.video import DEFAULT_CHANGE_THRESHOLD, Adaptive

    if not args.adaptive:
        if args.min_frames is not None or args.threshold is not None:
            raise CommandError("--min-frames and --threshold go with --adaptive")
        return None
    try:
        return Adaptive(
            min_frames=1 if args.min_frames is None else args.min_frames,
            threshold=DEFAULT_CHANGE_THRESHOLD if args.threshold is None else args.threshold,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)

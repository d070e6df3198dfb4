"""`itemscale select PROTOCOL`: run the built-in frame selector over a protocol's items and write
selection files the `selection` sampling policy replays (docs/selectors.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import CommandError


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
    p.add_argument("--json", action="store_true", help="print the files as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..protocol import load_protocol
    from ..sweep import load_benchmark_items
    from ..video import MediaError, write_selection_files

    try:
        budgets = [int(part) for part in args.frames.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--frames must be integers, e.g. 8,16 (got {args.frames!r})") from None
    if not budgets or min(budgets) < 1:
        raise CommandError(f"--frames needs budgets >= 1 (got {args.frames!r})")
    name = args.name or args.method
    protocol = load_protocol(args.protocol)
    items = load_benchmark_items(protocol.benchmark)
    try:
        files = write_selection_files(items, budgets, args.out, name=name)
    except (MediaError, ValueError) as exc:
        raise CommandError(f"itemscale select: {exc}") from None
    if args.json:
        print(
            json.dumps(
                {"name": name, "items": len(items), "files": {k: str(p) for k, p in files.items()}}
            )
        )
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
        f"  [selections.{name}]\n  paths = {{ {paths} }}",
        file=sys.stdout,
    )
    return 0


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)

"""`itemscale frames VIDEO`: what each budget saw, as contact sheets and (optionally) JSON."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from . import CommandError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "frames",
        help="show the frames each configuration sees (contact sheets, indices, timestamps)",
        description="Decode a video once for a grid of budgets and write one contact sheet per "
        "configuration, each frame captioned with its index and stream timestamp. The grid "
        "comes from a protocol file, or from --frames with a sampling --policy.",
    )
    p.add_argument("video", help="the video file")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--protocol", metavar="TOML", help="take the grid from a protocol file")
    source.add_argument(
        "--frames", metavar="K[,K...]", help="frame budgets, comma separated, e.g. 8,16,32"
    )
    p.add_argument(
        "--policy",
        default=None,
        help="sampling policy with --frames: linspace (default), interior, centre, left, fps, "
        "nested, random",
    )
    p.add_argument("--fps", type=float, default=None, help="rate for --policy fps (default 2)")
    p.add_argument("--seed", type=int, default=None, help="seed for --policy random")
    p.add_argument(
        "--pixels", type=int, default=None, metavar="N", help="max pixels per frame (with --frames)"
    )
    p.add_argument("--item-key", default="", help="item key that seeds the random policy")
    p.add_argument("--repeat", type=int, default=0, help="repeat number for the random policy")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the contact sheets")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="also write indices as JSON")
    p.add_argument("--columns", type=int, default=8, help="frames per contact-sheet row")
    p.set_defaults(func=run)


def _grid(args: argparse.Namespace) -> list[Any]:
    from pydantic import ValidationError

    from ..collect.models import BACKENDS
    from ..collect.protocol import Configuration, SamplingPolicy, load_protocol
    from ..core.errors import validation_message

    if args.protocol:
        for flag in ("policy", "fps", "seed", "pixels"):
            if getattr(args, flag) is not None:
                raise CommandError(f"--{flag} is only used with --frames, not with --protocol")
        protocol = load_protocol(args.protocol, backends=BACKENDS)
        return [c for c in protocol.configurations() if not c.is_text_only]
    try:
        budgets = [int(part) for part in args.frames.split(",") if part.strip()]
    except ValueError:
        raise CommandError(
            f"--frames must be comma-separated integers, e.g. 8,16,32 (got {args.frames!r})"
        ) from None
    if not budgets or any(frames <= 0 for frames in budgets):
        raise CommandError(f"--frames needs budgets > 0 (got {args.frames!r})")
    try:
        sampling = SamplingPolicy(name=args.policy or "linspace", fps=args.fps, seed=args.seed)
        return [
            Configuration(frames=frames, sampling=sampling, max_pixels=args.pixels)
            for frames in dict.fromkeys(budgets)
        ]
    except ValidationError as exc:
        problems = validation_message(exc.errors(), empty="policy")
        raise CommandError(f"invalid --policy/--fps/--seed/--pixels: {problems}") from None


def _file_name(label: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "config"
    name, n = f"{base}.png", 2
    while name in taken:
        name, n = f"{base}-{n}.png", n + 1
    taken.add(name)
    return name


def run(args: argparse.Namespace) -> int:
    from ..collect.video import MediaError, decode_for_configs, probe_video, write_contact_sheet
    from ..core.responses import write_json_atomic

    configs = _grid(args)
    if not configs:
        raise CommandError("the grid has no configuration with frames")
    try:
        info = probe_video(args.video)
        served = decode_for_configs(args.video, configs, item_key=args.item_key, repeat=args.repeat)
    except MediaError as exc:
        raise CommandError(f"cannot read the video ({exc.reason}): {exc}") from None
    out = Path(args.out)
    taken: set[str] = set()
    records = []
    for config in configs:
        frame_set = served[config.config_id]
        title = (
            f"{Path(args.video).name}  {config.label}  policy {config.sampling.tag}  "
            f"{frame_set.effective_frames}/{config.frames} frames"
        )
        sheet = write_contact_sheet(
            out / _file_name(config.label, taken), frame_set, title=title, columns=args.columns
        )
        print(f"{config.label}: {frame_set.effective_frames} frames -> {sheet}")
        records.append(
            {
                "label": config.label,
                "frames": config.frames,
                "policy": config.sampling.tag,
                "effective_frames": frame_set.effective_frames,
                "indices": [int(i) for i in frame_set.indices],
                "timestamps": [float(t) for t in frame_set.timestamps],
                "width": frame_set.width,
                "height": frame_set.height,
            }
        )
    if args.json_out:
        write_json_atomic(
            args.json_out,
            {
                "video": str(args.video),
                "n_frames": info.video_frames,
                "fps": info.fps,
                "configurations": records,
            },
        )
    return 0

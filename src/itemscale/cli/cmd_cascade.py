"""`itemscale cascade RUN_DIR`: stopping policies on the response matrix, held-out, with intervals.

Answers "how much compute can I save at the terminal budget's accuracy": the confidence cascade of
docs/policies.md, the agreement and learned stopping policies, and the cost-accuracy frontier, all
cross-fitted by video so every reported number comes from thresholds that never saw the item.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, TextIO

from . import CommandError
from ._format import Glosses, number_text, points_text


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "cascade",
        help="how much compute a stopping policy saves at the terminal budget's accuracy",
        description="Fit the confidence cascade (and the agreement and learned stopping "
        "policies) on one half of the videos, report them on the other half, swap, and report "
        "accuracy, mean shared cost and cost reduction with 95% video-bootstrap intervals.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        default=None,
        help="where to write the report as JSON (default: RUN_DIR/cascade.json, which the "
        "report picks up)",
    )
    p.add_argument(
        "--bootstrap", type=int, default=1000, metavar="B", help="resamples (0: none; default 1000)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the folds and the bootstrap (default 0)"
    )
    p.add_argument(
        "--cost",
        choices=["frames", "tokens"],
        default="frames",
        help="currency the thresholds minimise: shared frames (default) or visual tokens",
    )
    p.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    p.set_defaults(func=run)


def print_summary(report: dict[str, Any], out: TextIO | None = None) -> None:
    out = out if out is not None else sys.stdout
    gloss = Glosses()
    settings = report["settings"]
    print(
        f"itemscale cascade: {len(report['results'])} budget axis(es); cost in "
        f"{settings['cost']}; held-out folds by video (seed {settings['seed']}); intervals: "
        f"{settings['n_boot']} video-bootstrap resamples",
        file=out,
    )
    unit = "frames" if settings["cost"] == "frames" else "tokens"
    for block in report["results"]:
        terminal = block["terminal"]
        print(
            f"\n== {block['model']} (series {block['series']}): {block['n_items']} items, "
            f"{block['n_videos']} videos; stages {' < '.join(block['labels'])}" + gloss("series"),
            file=out,
        )
        if block.get("chain"):
            print(
                f"  a grid of frames x resolutions: the stages climb its {block['chain']} chain "
                "(the frame counts at the largest budget's resolution)",
                file=out,
            )
        print(
            f"  cost: {block['cost'][f'{unit}_note']}"
            + (gloss("shared frame cost") if unit == "frames" else ""),
            file=out,
        )
        print(
            f"  terminal {terminal['label']}: accuracy {points_text(terminal['accuracy'])}, "
            f"{number_text(terminal['mean_cost'])} {unit} per item",
            file=out,
        )
        for name, policy in block["policies"].items():
            if not policy.get("available"):
                print(f"  {name:<10} not available: {policy['reason']}", file=out)
                continue
            match = "matches" if policy["matches_terminal"] else "below"
            print(
                f"  {name:<10} accuracy {points_text(policy['accuracy'])} ({match} terminal; change "
                f"{points_text(policy['accuracy_change'])}), {number_text(policy['mean_cost'])} {unit}/item, "
                f"cost reduction {points_text(policy['cost_reduction'])}",
                file=out,
            )
        pareto = [p for p in block["frontier"] if p["pareto"]]
        if pareto:
            points = ", ".join(
                f"{100 * p['accuracy']:.1f}@{100 * (p['cost_reduction'] or 0):.0f}%" for p in pareto
            )
            print(
                f"  frontier (held-out accuracy @ cost reduction): {points}{gloss('frontier')}",
                file=out,
            )
    for skipped in report["skipped"]:
        print(
            f"\n-- skipped {skipped['model']} / {skipped['series']}: {skipped['reason']}", file=out
        )


def run(args: argparse.Namespace) -> int:
    from ..policies import CascadeSettings, cascade_report
    from ..responses import read_run, run_lock, write_json_atomic

    if args.bootstrap < 0:
        raise CommandError("--bootstrap must be >= 0")
    try:
        df, _ = read_run(args.run_dir)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    if args.model:
        unknown = sorted(set(args.model) - set(df["model"].unique()))
        if unknown:
            raise CommandError(f"{args.run_dir}: no responses for model(s) {', '.join(unknown)}")
        df = df[df["model"].isin(args.model)]
    settings = CascadeSettings(n_boot=args.bootstrap, seed=args.seed, cost=args.cost)
    try:
        report = cascade_report(df, settings)
    except ValueError as exc:
        raise CommandError(f"{args.run_dir}: {exc}") from exc
    if not report["results"]:
        reasons = "; ".join(f"{s['model']}/{s['series']}: {s['reason']}" for s in report["skipped"])
        raise CommandError(
            f"{args.run_dir}: no budget axis a cascade can run on"
            + (f" ({reasons})" if reasons else "")
        )
    report["run_dir"] = str(args.run_dir)
    if args.model:
        report["models"] = sorted(args.model)
    if args.json_out is None:
        args.json_out = str(Path(args.run_dir) / "cascade.json")
    if args.json_out:  # written before printing, so a closed pipe (`| head`) cannot lose it
        out = Path(args.json_out)
        inside = Path(args.run_dir).resolve() in out.resolve().parents
        with run_lock(args.run_dir, what="cascade") if inside else contextlib.nullcontext():
            write_json_atomic(out, report)
    print_summary(report)
    if args.json_out:
        print(f"\ncascade report written to {args.json_out}")
    return 0

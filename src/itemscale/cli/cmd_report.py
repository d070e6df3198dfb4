"""`itemscale report RUN_DIR`: write the audit artifact (RUN_DIR/artifact) and its report.html."""

from __future__ import annotations

import argparse
from typing import Any

from . import CommandError
from ._alternatives_text import add_control_argument
from ._analyze_options import add_ci_argument, parse_config_list
from ._settings import add_bootstrap_arguments, settings_from_flags


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "report",
        help="write the audit artifact (responses, trajectories, measures, provenance, "
        "report.html, MANIFEST.json)",
        description="Write RUN_DIR/artifact: everything needed to check and reproduce the run's "
        "numbers, with a self-contained report.html. Includes audit.parquet, annotations, "
        "cascade.json and intervention.json when the run directory has them. Check it later "
        "with `itemscale verify`.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument("--out", default=None, help="artifact folder (default RUN_DIR/artifact)")
    add_bootstrap_arguments(p)
    p.add_argument(
        "--items",
        default=None,
        help="benchmark item file (default: RUN_DIR/items.jsonl or the file run.json names)",
    )
    p.add_argument("--title", default=None, help="report title")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out even if it is a folder itemscale did not write (never the run "
        "folder or a folder that holds it)",
    )
    add_ci_argument(p)
    add_control_argument(p)
    p.add_argument(
        "--configs",
        type=parse_config_list,
        metavar="LABEL,LABEL,...",
        help="restrict the measures and trajectories to these configurations (as analyze "
        "--configs); responses.parquet stays whole",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.measures import AnalysisSettings, UnknownConfigError
    from ..report import build_artifact

    # the analysis settings' own checks, as `analyze` applies them (errors name the flag)
    settings = settings_from_flags(
        AnalysisSettings,
        bootstrap=args.bootstrap,
        seed=args.seed,
        ci=args.ci,
        configs=args.configs,
        control=args.control,
    )
    try:
        out = build_artifact(
            args.run_dir,
            settings,
            out=args.out,
            items=args.items,
            title=args.title,
            force=args.force,
        )
    except UnknownConfigError as exc:
        raise CommandError(f"{args.run_dir}: {exc}") from exc
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    print_artifact(out)
    return 0


def print_artifact(out: Any) -> None:
    from ..report import REPORT_FILE, manifest_digest

    digest = manifest_digest(out)
    print(f"artifact written to {out}")
    print_derived(out)
    print(f"report: {out / REPORT_FILE}")
    print(f"digest: {digest}   (sha256 of MANIFEST.json: publish it beside the results)")
    print(f"check it with: itemscale verify {out} --digest {digest}")


def print_derived(artifact: Any) -> None:
    """Which derived files the report recomputed or flagged as stale (provenance.json)."""
    import json
    from pathlib import Path

    from ..report import DERIVED_KEY, PROVENANCE_FILE

    prov = json.loads((Path(artifact) / PROVENANCE_FILE).read_text(encoding="utf-8"))
    for name, entry in sorted((prov.get(DERIVED_KEY) or {}).items()):
        print(f"  {name}: {entry['status']}: {entry['reason']}")

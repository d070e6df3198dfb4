"""`itemscale import KIND PATH... -o RUN_DIR`: other tools' results into a run, one subcommand
per entry of `itemscale.collect.importers.IMPORTERS`, built from the arguments it declares."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..collect.importers import ImportOption


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o",
        "--out",
        dest="run_dir",
        required=True,
        metavar="RUN_DIR",
        help="run directory to create or add to",
    )
    p.add_argument("--summary-json", metavar="FILE", help="also write the summary as JSON")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="parse, validate and summarise without writing the run",
    )


def _add_option(p: argparse.ArgumentParser, option: ImportOption) -> str:
    """`option` as an argument of `p`; returns its dest."""
    settings: dict[str, Any] = {}
    if option.switch:
        settings["action"] = "store_true"
    elif option.repeatable:
        settings.update(action="append", default=[])
    for name in ("nargs", "choices", "default", "metavar", "help"):
        value = getattr(option, name)
        if value is not None:
            settings[name] = value
    return p.add_argument(*option.names, **settings).dest


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..collect.importers import IMPORTERS

    p = sub.add_parser(
        "import",
        help="import results of lmms-eval, VLMEvalKit or any table into a run directory",
        description="Import per-item results into the response table of a run directory.",
    )
    kinds = p.add_subparsers(dest="import_kind", metavar="KIND", required=True)
    for kind, importer in IMPORTERS.items():
        k = kinds.add_parser(kind, help=importer.help, description=importer.description)
        keywords = {_add_option(k, option): option.keyword for option in importer.options}
        _common_args(k)
        k.set_defaults(func=partial(run_importer, kind=kind, keywords=keywords))


def run_importer(args: argparse.Namespace, *, kind: str, keywords: Mapping[str, str]) -> int:
    from ..collect.importers import run_import

    options = {keyword: getattr(args, dest) for dest, keyword in keywords.items()}
    summary = run_import(kind, run_dir=args.run_dir, dry_run=args.dry_run, **options)
    print(summary.format())
    if args.summary_json:
        Path(args.summary_json).write_text(
            json.dumps(summary.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    return 0

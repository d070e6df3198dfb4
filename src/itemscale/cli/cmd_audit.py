"""`itemscale audit RUN_DIR`: the frame audit of every harmful transition, contact sheets, and
the human-annotation round trip (export a CSV for coders, import it back)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import CommandError

if TYPE_CHECKING:
    from ..workflows import AuditOutcome


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "audit",
        help="frame audit of harmful transitions: frames kept/dropped/added, evidence, pathway",
        description="For every harmful transition (right at budget j, wrong at a larger budget "
        "k) compare the frames the model was shown, the pixels per frame and the evidence "
        "frames, and label the pathway (evidence_dropped, text_prior, evidence_diluted, "
        "distractor_added, unexplained; rules in docs/report.md). Writes RUN_DIR/audit.parquet, "
        "RUN_DIR/audit.json and the automatic labels in RUN_DIR/annotations.parquet.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument(
        "--items",
        default=None,
        help="item file with evidence spans and video paths (default: RUN_DIR/items.jsonl "
        "or the file run.json names)",
    )
    p.add_argument(
        "--pairs",
        choices=("adjacent", "all"),
        default="adjacent",
        help="audit adjacent budgets only (default; every harmful item has one) or every j<k",
    )
    p.add_argument("--export", metavar="CSV", help="write a CSV for human coders")
    p.add_argument(
        "--import",
        dest="import_csv",
        metavar="CSV",
        help="read a coded CSV back into RUN_DIR/annotations.parquet (kept beside the "
        "automatic labels, with the coder's name and the time)",
    )
    p.add_argument("--coder", default=None, help="coder name for rows whose 'coder' is empty")
    p.add_argument(
        "--sheets",
        action="store_true",
        help="decode the frames and write contact sheets to RUN_DIR/audit_sheets/",
    )
    p.add_argument("--max-sheets", type=int, default=60, help="contact sheets at most (default 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..workflows import audit, audit_sheets

    run_dir = Path(args.run_dir)
    try:
        outcome = audit(
            run_dir,
            items=args.items,
            pairs=args.pairs,
            import_csv=args.import_csv,
            coder=args.coder,
            export=args.export,
        )
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    print_audit(outcome, import_csv=args.import_csv, export=args.export)
    if args.sheets:
        written, failures = audit_sheets(run_dir, outcome, args.max_sheets)
        print_sheets(run_dir, written, failures)
    return 0


def print_audit(outcome: AuditOutcome, *, import_csv: str | None, export: str | None) -> None:
    from ..analysis.audit import PATHWAYS, pathway_counts

    if import_csv:
        print(f"imported {outcome.human_labels} human label(s) from {import_csv}")
    transitions = outcome.transitions
    print(
        f"audited {len(transitions)} harmful transition(s) ({outcome.pairs} pairs) on "
        f"{outcome.n_items} item(s); evidence spans from "
        f"{outcome.items_path or 'nowhere (no item file)'}"
    )
    for model, per_series in pathway_counts(transitions).items():
        for series, counts in per_series.items():
            text = ", ".join(f"{p} {counts[p]}" for p in PATHWAYS)
            print(f"  {model} / {series}: {text}")
    if export:
        print(f"wrote {outcome.exported} row(s) for coders to {export}")


def print_sheets(run_dir: Path, written: int, failures: list[str]) -> None:
    print(f"wrote {written} contact sheet(s) to {run_dir / 'audit_sheets'}")
    for failure in failures:
        print(f"  no sheet: {failure}")

"""`itemscale audit RUN_DIR`: the frame audit of every harmful transition, contact sheets, and
the human-annotation round trip (export a CSV for coders, import it back)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import CommandError


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
    from ..artifact import find_items_file
    from ..audit import (
        audit_transitions,
    )
    from ..items import read_items_jsonl
    from ..responses import read_run, run_lock

    run_dir = Path(args.run_dir)
    try:
        df, meta = read_run(run_dir)
        items_path = find_items_file(run_dir, meta, args.items)
        items = read_items_jsonl(items_path) if items_path else []
        transitions = audit_transitions(df, items, pairs=args.pairs)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    with run_lock(run_dir, what="audit"):
        return _write_audit_files(args, run_dir, transitions, items, items_path)


def _write_audit_files(
    args: argparse.Namespace, run_dir: Path, transitions: Any, items: Any, items_path: Any
) -> int:
    """Everything `audit` writes into the run folder, under its lock."""
    from ..audit import (
        ANNOTATIONS_FILE,
        PATHWAYS,
        automatic_annotations,
        export_annotations_csv,
        import_annotations_csv,
        merge_annotations,
        pathway_counts,
        read_annotations,
        write_annotations,
        write_audit,
    )

    write_audit(run_dir, transitions, args.pairs, items_path=items_path)
    ann_path = run_dir / ANNOTATIONS_FILE
    annotations = merge_annotations(read_annotations(ann_path), automatic_annotations(transitions))
    if args.import_csv:
        human = import_annotations_csv(args.import_csv, transitions, coder=args.coder)
        annotations = merge_annotations(annotations, human)
        print(f"imported {len(human)} human label(s) from {args.import_csv}")
    write_annotations(ann_path, annotations)

    n_items = transitions[["model", "series", "item_id"]].drop_duplicates().shape[0]
    print(
        f"audited {len(transitions)} harmful transition(s) ({args.pairs} pairs) on {n_items} "
        f"item(s); evidence spans from {items_path or 'nowhere (no item file)'}"
    )
    for model, per_series in pathway_counts(transitions).items():
        for series, counts in per_series.items():
            text = ", ".join(f"{p} {counts[p]}" for p in PATHWAYS)
            print(f"  {model} / {series}: {text}")
    if args.export:
        n = export_annotations_csv(transitions, args.export)
        print(f"wrote {n} row(s) for coders to {args.export}")
    if args.sheets:
        if items_path is None:
            raise CommandError("--sheets needs an item file with video paths (--items)")
        from ..workflows import write_audit_sheets

        written, failures = write_audit_sheets(
            run_dir,
            transitions,
            {it.item_id: it for it in items},
            items_path.parent,
            args.max_sheets,
        )
        print(f"wrote {written} contact sheet(s) to {run_dir / 'audit_sheets'}")
        for failure in failures:
            print(f"  no sheet: {failure}")
    return 0

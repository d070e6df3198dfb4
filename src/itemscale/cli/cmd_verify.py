"""`itemscale verify ARTIFACT`: check every hash and recompute every measure of an artifact."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "verify",
        help="check an audit artifact: every file's sha256, and every measure recomputed",
        description="Check every file of an artifact against MANIFEST.json, then recompute the "
        "measures (same bootstrap size and seed), the trajectories and the audit from "
        "responses.parquet and compare them exactly. Exit status 1 names every file that "
        "was edited, added or removed, and tells a derived file (cascade, intervention, "
        "audit) the responses changed after (stale) from one changed by hand (edited).",
    )
    p.add_argument("artifact", help="artifact folder (e.g. RUN_DIR/artifact)")
    p.add_argument(
        "--hashes-only", action="store_true", help="check the manifest only, do not recompute"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..artifact import verify_artifact

    result = verify_artifact(args.artifact, recompute=not args.hashes_only)
    if result.ok:
        print(f"{args.artifact}: OK ({', '.join(result.checks)})")
        for note in result.notes:
            print(f"  note: {note}")
        return 0
    print(
        f"{args.artifact}: FAILED ({len(result.bad_files)} file(s); checked: "
        f"{', '.join(result.checks) or 'nothing past the manifest'})",
        file=sys.stderr,
    )
    for name, reason in sorted(result.bad_files.items()):
        print(f"  {name}: {reason}", file=sys.stderr)
    extra = [
        p for p in result.problems if not any(p == f"{n}: {r}" for n, r in result.bad_files.items())
    ]
    for problem in extra:
        print(f"  {problem}", file=sys.stderr)
    for note in result.notes:
        print(f"  note: {note}", file=sys.stderr)
    return 1

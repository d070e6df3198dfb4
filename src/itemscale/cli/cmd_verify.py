"""`itemscale verify ARTIFACT`: check every hash and recompute every measure of an artifact."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import CommandError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "verify",
        help="check an audit artifact: every file's sha256, and every measure recomputed",
        description="Check every file of an artifact against MANIFEST.json (and, with "
        "--digest, MANIFEST.json against its published sha256), then recompute the measures "
        "(same bootstrap size and seed), the trajectories, the audit, the cascade and the "
        "intervention results from responses.parquet and compare them exactly, and compare "
        "the files with each other (gold answers with the responses' references, provenance "
        "with run.json and the copied files). Exit status 1 names every file that was edited, "
        "added or removed, and tells a derived file the responses changed after (stale) from "
        "one changed by hand (edited).",
    )
    p.add_argument("artifact", help="artifact folder (e.g. RUN_DIR/artifact)")
    p.add_argument(
        "--hashes-only", action="store_true", help="check the manifest only, do not recompute"
    )
    p.add_argument(
        "--digest",
        metavar="SHA256",
        default=None,
        help="the artifact's published digest (sha256 of MANIFEST.json, as `itemscale report` "
        "printed it): catches an edit even when the manifest was written again after it",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import parse_digest, verify_artifact

    digest = None
    if args.digest is not None:
        try:
            digest = parse_digest(args.digest)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    result = verify_artifact(args.artifact, recompute=not args.hashes_only, digest=digest)
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

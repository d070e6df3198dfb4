"""`redact` on hostile 10^6-character texts: linear time, against the quadratic pattern it replaced.

    .venv/bin/python benchmarks/redact.py --chars 1000000

A model's reply and a server's error body are foreign text, and every one goes through `redact`
before it is stored. The URL-credential pattern before issue 23 (`[a-z][a-z0-9+.-]*://` as the
match's start) rescanned a long run of letters from every one of its letters: quadratic, 32 s
for 10^5 letters. Each input below is timed (best of 3) at `--chars` and at ten times it (a
linear function takes about 10x longer, a quadratic one 100x); the old pattern is timed on the
letters input at `--old-chars` sizes only (it would take hours at 10^6). Fails (exit 1) if any
input at `--chars` takes longer than `--bound` seconds. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable

from itemscale.core.responses import redact, register_secret

KEY = "sk-bench-0123456789abcdefABCDEF"
#: The pattern redact used before issue 23 (scheme part of the match).
OLD_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<cred>[^/@\s:]+(?::[^/@\s]*)?)@", re.I
)


def inputs(n: int) -> dict[str, str]:
    """Texts of `n` characters that stress each pattern's worst case."""
    return {
        "letters": "A" * n,
        "letters and digits": "a9" * (n // 2),
        "scheme-like runs": ("a.b+c-d" * (n // 7 + 1))[:n],
        "credential without @": "x://" + "u:" * ((n - 4) // 2),
        "bearer and spaces": "Bearer " + " " * (n - 7),
        "many schemes": "://" * (n // 3),
        "urls with credentials": ("http://user:pw@host/p " * (n // 22 + 1))[:n],
        "key params": ("?key=abc&token=def&" * (n // 19 + 1))[:n],
        "known key repeated": ((KEY + " ") * (n // (len(KEY) + 1) + 1))[:n],
        "random bytes as text": os.urandom(n // 2).hex(),
        # issue 33: the spellings of a known key (each start tries the case-blind, escaped,
        # split and partial forms): near misses of each, and runs of what they may contain
        "near-miss split key": ((" \n ".join(KEY[:-1]) + " ") * (n // (4 * len(KEY)) + 1))[:n],
        "near-miss escaped key": (
            ("".join(f"\\u{ord(c):04x}" for c in KEY[:-1]) + " ") * (n // 150 + 1)
        )[:n],
        "backslashes and percents": ("\\%" * (n // 2 + 1))[:n],
        "partial-echo masks": ((KEY[:6] + "*" * 120 + "q") * (n // 127 + 1))[:n],
    }


def seconds(fn: Callable[[str], object], text: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=1_000_000)
    parser.add_argument("--bound", type=float, default=1.0, help="seconds per input at --chars")
    parser.add_argument("--old-chars", type=int, nargs="*", default=[10_000, 20_000, 40_000])
    args = parser.parse_args()
    register_secret(KEY)
    results: dict[str, dict[str, float]] = {}
    print(f"redact, {args.chars:,} and {10 * args.chars:,} characters (seconds, ratio):")
    large = inputs(10 * args.chars)
    for name, text in inputs(args.chars).items():
        at_n, at_10n = seconds(redact, text), seconds(redact, large[name], repeats=1)
        ratio = at_10n / at_n if at_n > 0 else float("nan")
        results[name] = {"seconds": round(at_n, 4), "ten_times_seconds": round(at_10n, 4)}
        print(f"  {name:<24} {at_n:8.4f}   {at_10n:8.4f}   x{ratio:5.1f}")
    old: dict[str, float] = {}
    print("the pattern before issue 23, letters only:")
    for n in args.old_chars:
        took = seconds(lambda t: OLD_URL_CREDENTIALS.sub("", t), "A" * n, repeats=1)
        old[str(n)] = round(took, 3)
        print(f"  {n:>9,} letters {took:8.3f} s")
    slowest = max(r["seconds"] for r in results.values())
    verdict = "within" if slowest <= args.bound else "OVER"
    print(f"slowest at {args.chars:,}: {slowest:.4f} s ({verdict} the bound of {args.bound:g} s)")
    print(
        json.dumps(
            {
                "benchmark": "redact",
                "chars": args.chars,
                "slowest_s": slowest,
                "bound_s": args.bound,
                "inputs": results,
                "old_pattern_s": old,
            }
        )
    )
    if slowest > args.bound:
        sys.exit(1)


if __name__ == "__main__":
    main()

"""How long `itemscale --help`, `itemscale --version` and `import itemscale.cli` take, each in a
fresh interpreter (the time a user waits), median of N runs; and, for comparison, one command's
own `--help`, which imports that command's module.

    python benchmarks/cli_startup.py [--runs 15]

Prints one line per figure and a last JSON line. The target (docs/performance.md): `--help` and
`--version` under 0.5 s on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CASES = {
    "python -c pass (the interpreter alone)": ["-c", "pass"],
    "import itemscale.cli": ["-c", "import itemscale.cli"],
    "itemscale --version": ["-m", "itemscale", "--version"],
    "itemscale --help": ["-m", "itemscale", "--help"],
    "itemscale analyze --help": ["-m", "itemscale", "analyze", "--help"],
}


def _once(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per case (median reported)")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    for name, argv in CASES.items():
        _once(argv)  # warm the file cache
        times = [_once(argv) for _ in range(args.runs)]
        figures[name] = round(statistics.median(times), 3)
        print(f"{name:<40} median {figures[name]:.3f} s (min {min(times):.3f}, n={args.runs})")
    print(json.dumps({"benchmark": "cli_startup", "load_1min": os.getloadavg()[0], **figures}))


if __name__ == "__main__":
    main()

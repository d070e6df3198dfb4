"""Peak memory and time of `itemscale import table` on a large CSV, in a fresh process.

    .venv/bin/python benchmarks/import_memory.py --items 200000 --configs 5   # 10^6 rows

The import runs as `python -m itemscale import table FILE -o RUN` in a child process, so its
peak resident memory (`ru_maxrss` of the child) is the command's own. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from importers import write_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--configs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "big.csv"
        rows = write_table(table, args.items, args.configs, np.random.default_rng(0))
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "itemscale", "import", "table", str(table), "-o", f"{tmp}/run"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"import table: {rows:,} rows in {seconds:.1f} s, peak {peak_mb:.0f} MB")
    print(json.dumps({"rows": rows, "seconds": round(seconds, 1), "peak_mb": round(peak_mb)}))


if __name__ == "__main__":
    main()

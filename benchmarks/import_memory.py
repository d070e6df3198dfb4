"""Peak memory and time of `itemscale import table` on a large CSV, and of the commands that
read the run it makes (`analyze`, `report`, `verify`), each in a fresh process.

    .venv/bin/python benchmarks/import_memory.py --items 200000 --configs 5   # 10^6 rows
    .venv/bin/python benchmarks/import_memory.py --items 400000 --configs 5 \\
        --then analyze report verify                                          # 2 x 10^6 rows

Each command runs as `python -m itemscale ...` in a child process that reports its own peak
resident memory (`ru_maxrss`) when it ends, so every figure is that command's alone. `analyze`
runs with its defaults (1000 bootstrap resamples) unless `--bootstrap` is given; `report` makes
the artifact `verify` then checks (recomputing every measure). Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from importers import write_table

#: Runs `itemscale` with the child's argv and reports its own peak RSS (kB) on stderr.
_MEASURED = (
    "import resource, runpy, sys\n"
    "sys.argv = ['itemscale', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('itemscale', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    print(f'PEAK_KB {peak}', file=sys.stderr)\n"
)


def measured(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak MB) of one itemscale command in its own process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    peaks = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_KB ")]
    if done.returncode != 0 or not peaks:
        raise SystemExit(f"itemscale {' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return seconds, int(peaks[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--configs", type=int, default=5)
    parser.add_argument(
        "--then", nargs="*", default=[], choices=["analyze", "report", "verify"], metavar="CMD"
    )
    parser.add_argument("--bootstrap", type=int, default=None, help="for analyze and report")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="build the table and run here and keep them; an existing run is not imported "
        "again (to compare two versions of itemscale on one run)",
    )
    args = parser.parse_args()
    boot = [] if args.bootstrap is None else ["--bootstrap", str(args.bootstrap)]
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = str(args.workdir or scratch)
        Path(tmp).mkdir(parents=True, exist_ok=True)
        table = Path(tmp) / "big.csv"
        rows = write_table(table, args.items, args.configs, np.random.default_rng(0))
        run = f"{tmp}/run"
        again = args.workdir is not None and Path(run, "responses.parquet").is_file()
        commands = {
            "import": ["import", "table", str(table), "-o", run],
            "analyze": ["analyze", run, "--json", f"{tmp}/m.json", *boot],
            "report": ["report", run, "--force", *boot],
            "verify": ["verify", f"{run}/artifact"],
        }
        for name in [*([] if again else ["import"]), *args.then]:
            seconds, peak_mb = measured(commands[name])
            figures[name] = {"seconds": round(seconds, 1), "peak_mb": round(peak_mb)}
            print(f"{name}: {rows:,} rows in {seconds:.1f} s, peak {peak_mb:.0f} MB", flush=True)
    print(json.dumps({"rows": rows, **figures}))


if __name__ == "__main__":
    main()

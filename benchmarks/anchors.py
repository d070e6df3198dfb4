"""Anchor subsets validated on the shipped release, leaving one model out.

    .venv/bin/python benchmarks/anchors.py --k 50,100,200 --seeds 20

Imports the seed paper's Video-MME V1-short release (five models, 29 (model, configuration)
respondents, 786 items) as `itemscale demo` does, then for each model: fits the 2PL to the other
four models' respondents, draws K anchors from that fit (seeded), predicts the held-out model's
accuracy at each of its configurations from its anchor answers alone, and compares with its
accuracy on all 786 items. Random K items (their plain mean, a simple-random-sample interval)
over the same seeds are the baseline. Per (method, K): the mean absolute error over a model's
configurations, the median over the five models, averaged over seeds (and its median over
seeds); how many of the 29 intervals covered the full-item accuracy (mean and worst seed); then
the coverage on respondents simulated from the 2PL fitted to all five models (every five
predicted together as one model's configurations, as the prediction pools them). Ends with one
JSON line. docs/anchors.md shows the figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", default="50,100,200", help="anchor counts (comma separated)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 (default 20)")
    parser.add_argument("--strata", type=int, default=10, help="difficulty groups (default 10)")
    parser.add_argument(
        "--simulated", type=int, default=500, help="simulated respondents per seed (default 500)"
    )
    args = parser.parse_args()
    from itemscale.analysis.measures import (
        fit_irt,
        leave_one_model_out,
        simulated_coverage,
        summary_rows,
    )
    from itemscale.core.responses import read_run
    from itemscale.workflows._paper import import_release

    ks = [int(k) for k in args.k.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        import_release(Path(tmp) / "release")
        df, _ = read_run(Path(tmp) / "release", slim=True)
    start = time.perf_counter()
    fit = fit_irt(df)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    outcomes = leave_one_model_out(df, ks, range(args.seeds), strata=args.strata)
    lomo_s = time.perf_counter() - start
    rows = summary_rows(outcomes)
    print(
        f"2PL on the release: {len(fit.respondents)} respondents x {len(fit.items)} items in "
        f"{fit_s:.1f} s; leave-one-model-out ({args.seeds} seeds, {args.strata} groups) in "
        f"{lomo_s:.1f} s"
    )
    print("method    K   MAE points (mean over seeds, median)   covered of 29 (mean, worst)")
    for r in rows:
        print(
            f"{r['method']:<8} {r['k']:>4}   {r['mae_points_mean']:5.2f}  {r['mae_points_median']:5.2f}"
            f"                          {r['covered_mean']:5.1f}  {r['covered_min']:3d}"
        )
    simulated = {
        k: round(
            simulated_coverage(
                fit, k, range(args.seeds), respondents=args.simulated, strata=args.strata
            ),
            3,
        )
        for k in ks
    }
    print(
        "simulated held-out respondents covered: "
        + ", ".join(f"K={k}: {100 * v:.1f}%" for k, v in simulated.items())
    )
    print(
        json.dumps(
            {
                "benchmark": "anchors",
                "seeds": args.seeds,
                "strata": args.strata,
                "fit_s": round(fit_s, 2),
                "lomo_s": round(lomo_s, 1),
                "rows": rows,
                "simulated_coverage": simulated,
            }
        )
    )


if __name__ == "__main__":
    main()

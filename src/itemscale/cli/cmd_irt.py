"""`itemscale irt RUN`: a 2PL item response model over the run's (model, configuration) pairs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HELP = "fit a 2PL item response model: an ability per (model, configuration), items' difficulty"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "irt",
        help=HELP,
        description="Fit a two-parameter logistic item response model to the run's "
        "multiple-choice outcomes: every (model, series, configuration) is a respondent with an "
        "ability, every item has a difficulty and a discrimination, with standard errors "
        "(docs/anchors.md). Prints the abilities along each model's budgets, where the test "
        "information sits, and the items whose outcome falls as ability rises.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="write the fit as JSON")
    p.set_defaults(func=run)


#: Falling items listed by id; the rest are counted ("and N more").
LISTED = 20


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..analysis.measures import THETA_GRID, fit_irt, information
    from ..core.responses import read_run, write_json_atomic
    from .cmd_anchors import print_caveats

    df, _ = read_run(args.run_dir, slim=True)
    fit = fit_irt(df)
    print(
        f"{args.run_dir}: 2PL on {len(fit.respondents)} respondents x {len(fit.items)} items "
        f"({fit.method}; {'converged' if fit.converged else 'NOT converged'} in "
        f"{fit.iterations} iterations, {fit.seconds:.1f} s)"
    )
    a, b = fit.arrays()
    grid = np.array(THETA_GRID)
    total = information(grid, a, b).sum(axis=1)
    print("respondent                                  theta (se)     accuracy  information")
    for r in sorted(fit.respondents, key=lambda r: (r.model, r.series, r.frames, r.config_label)):
        at = float(information(np.array([r.theta]), a, b).sum())
        print(
            f"  {r.model + ' ' + r.config_label:<40} {r.theta:6.2f} ({r.theta_se:.2f})"
            f"   {100 * r.accuracy:5.1f}%   {at:8.1f}"
        )
    peak = float(grid[int(np.argmax(total))])
    print(f"test information peaks at theta {peak:.1f} ({total.max():.1f}); by theta:")
    print("  " + "  ".join(f"{t:+.1f}:{v:.0f}" for t, v in zip(grid, total, strict=True)))
    negative = [it for it in fit.items if it.discrimination + 1.96 * it.discrimination_se < 0]
    shown = ", ".join(it.item_id for it in negative[:LISTED])
    if len(negative) > LISTED:
        shown += f" and {len(negative) - LISTED} more" + (
            " (--json writes every item)"
            if not args.json_out
            else f" (every one in {args.json_out})"
        )
    print(
        f"items whose outcome falls as ability rises (discrimination < 0 beyond its 95% "
        f"interval): {len(negative)}" + (f": {shown}" if negative else "")
    )
    print_caveats(fit.caveats())
    if args.json_out:
        write_json_atomic(Path(args.json_out), fit.model_dump(mode="json"))
        print(f"fit written to {args.json_out}")
    return 0

"""`itemscale anchors RUN --k K --out FILE`: K items that predict the run's whole item set, and
the `analyze --anchors FILE --irt FIT` half that reads them back."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import CommandError

if TYPE_CHECKING:
    from ..analysis.measures import AnchorPrediction, Estimate, IrtFit

HELP = "pick K anchor items from a run's 2PL fit: a sweep of only those predicts the full set"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "anchors",
        help=HELP,
        description="Fit the 2PL to the run (or read --irt FIT.json, what `itemscale irt "
        "--json` wrote) and draw K anchor items, stratified by difficulty (docs/anchors.md). "
        "The file is one item id a line, with '#' lines recording the design; a protocol's "
        '`[benchmark] items = "FILE"` sweeps only those items, and `itemscale analyze RUN2 '
        "--anchors FILE --irt FIT.json` predicts the full set from them.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument("--k", type=int, required=True, help="number of anchor items")
    p.add_argument("--out", required=True, metavar="FILE", help="anchor file to write")
    p.add_argument(
        "--irt",
        metavar="FIT",
        help="the fit `itemscale irt RUN --json FIT` wrote (default: fit RUN)",
    )
    p.add_argument("--strata", type=int, default=10, help="difficulty groups (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    p.set_defaults(func=run)


def read_fit(path: str) -> IrtFit:
    from ..analysis.measures import IrtFit
    from ..core.files import InputFileError, read_input_text

    try:
        return IrtFit.from_json(read_input_text(path, what="a fit file"), where=path)
    except (InputFileError, ValueError) as exc:
        raise CommandError(f"--irt {exc}") from None


def run(args: argparse.Namespace) -> int:
    from ..analysis.measures import anchor_text, choose_anchors, fit_irt
    from ..core.files import atomic_text_file
    from ..core.responses import read_run

    if args.irt:
        fit = read_fit(args.irt)
    else:
        df, _ = read_run(args.run_dir, slim=True)
        fit = fit_irt(df)
    anchors = choose_anchors(fit, args.k, strata=args.strata, seed=args.seed)
    with atomic_text_file(Path(args.out)) as fh:
        fh.write(anchor_text(anchors))
    groups = len(anchors.strata)
    lowered = (
        ""
        if groups == args.strata
        else f" (--strata {args.strata} lowered to {groups}: each group needs two anchors and "
        "two items)"
    )
    print(
        f"{args.out}: {anchors.k} anchors of {len(fit.items)} items, "
        f"{groups} difficulty groups{lowered}, seed {args.seed} (fit {fit.data_digest[:12]})"
    )
    print_caveats(fit.caveats())
    return 0


def print_caveats(lines: list[str] | tuple[str, ...]) -> None:
    for line in lines:
        print(f"warning: {line}")


def analyze_with_anchors(args: argparse.Namespace) -> int:
    """`analyze RUN --anchors FILE --irt FIT`: predicted accuracy and estimated rates."""
    from ..analysis.measures import predict_from_anchors, read_anchors
    from ..core.files import InputFileError
    from ..core.responses import read_run, write_json_atomic

    if not args.irt:
        raise CommandError("--anchors needs --irt FIT.json (the fit the anchors were drawn from)")
    fit = read_fit(args.irt)
    try:
        anchors = read_anchors(Path(args.anchors))
    except InputFileError as exc:
        raise CommandError(f"--anchors {exc}") from None
    df, _ = read_run(args.run_dir, slim=True)
    result = predict_from_anchors(df, fit, anchors, bootstrap=args.bootstrap, seed=args.seed)
    print_prediction(result)
    if args.json_out:
        write_json_atomic(Path(args.json_out), result.model_dump(mode="json"))
    return 0


def _points(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}"


def _interval(estimate: Estimate) -> str:
    if estimate.ci_low is None or estimate.ci_high is None:
        return "[cannot tell]"
    return f"[{_points(estimate.ci_low)}, {_points(estimate.ci_high)}]"


def print_prediction(result: AnchorPrediction) -> None:
    print(
        f"predicted from {result.anchors} anchors of {result.items} items "
        "(2PL + stratified anchor residuals, pooled over a model's configurations; 95% intervals):"
    )
    for c in result.configurations:
        acc = c.predicted_accuracy
        print(
            f"  {c.model} {c.config_label:<14} accuracy {_points(acc.value):>5}% "
            f"{_interval(acc)}   (on anchors {100 * c.anchor_accuracy:.1f}% of "
            f"{c.anchors_answered})"
        )
    print("item-level rates, ESTIMATED from the anchors (wider intervals than a full sweep):")
    for r in result.rates:
        print(f"  {r.model} {r.series} ({', '.join(r.configurations)}):")
        for name in ("harmful_rate", "oracle", "best_fixed", "oracle_headroom"):
            v = getattr(r, name)
            print(f"    {name:<16} {_points(v.value):>5}% {_interval(v)}")
    print_caveats(result.warnings)

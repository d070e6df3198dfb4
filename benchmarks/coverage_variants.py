"""Why the selected-maximum interval is built the way it is: coverage of its variants, fast.

`benchmarks/coverage.py` runs the whole analysis on every sample; this script replays only the
part that matters for best fixed and the oracle gaps (per-video sums, the same resample counts,
the same population) so that several interval constructions can be compared on many populations
in minutes. Each row is a measure (binary or Token-F1; grid, or grid plus text-only), each column
a construction; a cell is the coverage with (% missed below / % missed above).

    .venv/bin/python benchmarks/coverage_variants.py --samples 500 --videos 80 --seed 3 --shifts -0.5 0.0 0.2 0.6

Constructions (docs/measures.md, "Interval method"):
- `shipped`: `itemscale.analysis.measures.selected_max_intervals`, the default;
- `percentile`: the percentile interval of the resampled best (or gap), `--ci percentile`;
- `winner_only`: contenders for the optimistic end, the winner alone for the other end;
- `contenders_both`: contenders for both ends;
- `plug_in_gap`: the plug-in law for the other end of gaps too.

It also prints, per measure, the actual bias of the estimate over the samples against the mean
bootstrap estimate of that bias. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from coverage import BUDGETS, MCQA_ITEMS, OPEN_ITEMS, SHIFTS, population

from itemscale.analysis.measures import (
    contender_kappa,
    percentile_intervals,
    resample_counts,
    selected_max_intervals,
)


def per_video_columns(values: np.ndarray) -> np.ndarray:
    """[configs, videos, items] (config 0 text-only) -> per-video sums: each budget, the grid's
    oracle, the text-only answer, the oracle with text."""
    grid = values[1:]
    cols = [grid[k].sum(axis=1) for k in range(grid.shape[0])]
    cols += [grid.max(axis=0).sum(axis=1), values[0].sum(axis=1), values.max(axis=0).sum(axis=1)]
    return np.stack(cols, axis=1)


def _variants(x: np.ndarray, xs: np.ndarray, o: float, os_: np.ndarray, n_videos: int) -> dict:
    """(best interval, gap interval) per construction, for one sample."""
    m = float(x.max())
    j = int(np.argmax(x))
    g = o - m
    oracle_err = os_ - o
    errors = xs - x[None, :]
    spread = np.std(xs[:, [j]] - xs, axis=0)
    contenders = (m - x) <= contender_kappa(n_videos) * spread + 1e-12
    optimistic = errors[:, contenders].max(axis=1)
    plug_in = xs.max(axis=1) - m
    winner = errors[:, j]

    def q(a: np.ndarray, p: float) -> float:
        return float(np.quantile(a, p))

    shipped_best = selected_max_intervals(x[None], xs[:, None, :], n_videos)[0]
    shipped_gap = selected_max_intervals(
        x[None], xs[:, None, :], n_videos, oracle=np.array([o]), oracle_resampled=os_[:, None]
    )[0]
    upper_gap = g - q(oracle_err - optimistic, 0.025)
    return {
        "shipped": (tuple(shipped_best), tuple(shipped_gap)),
        "percentile": (
            tuple(percentile_intervals(xs.max(axis=1)[:, None])[0]),
            tuple(percentile_intervals((os_ - xs.max(axis=1))[:, None])[0]),
        ),
        "winner_only": (
            (m - q(optimistic, 0.975), m - q(winner, 0.025)),
            (g - q(oracle_err - winner, 0.975), upper_gap),
        ),
        "contenders_both": (
            (m - q(optimistic, 0.975), m - q(optimistic, 0.025)),
            (g - q(oracle_err - optimistic, 0.975), upper_gap),
        ),
        "plug_in_gap": (
            (m - q(optimistic, 0.975), m - q(plug_in, 0.025)),
            (g - q(oracle_err - plug_in, 0.975), upper_gap),
        ),
    }


def run(args: argparse.Namespace) -> dict:
    table = population(args.population, args.seed, tuple(args.shifts))
    k = len(BUDGETS) + 1
    n_items = MCQA_ITEMS + OPEN_ITEMS
    shape = (k, args.population, n_items)
    kinds = {
        "binary": table["correct"].to_numpy().reshape(shape)[:, :, :MCQA_ITEMS],
        "token_f1": table["score"].to_numpy().reshape(shape)[:, :, MCQA_ITEMS:],
    }
    sums = {kind: per_video_columns(v) for kind, v in kinds.items()}
    #: the population's own means of every column: the truth each interval is checked against
    truths = {
        kind: per_video.sum(axis=0) / (args.population * kinds[kind].shape[2])
        for kind, per_video in sums.items()
    }
    budgets = len(BUDGETS)
    rng = np.random.default_rng(args.seed + args.videos)
    tally: dict[str, list[int]] = {}
    bias: dict[str, list[float]] = {}
    for s in range(args.samples):
        chosen = np.sort(rng.choice(args.population, args.videos, replace=False))
        counts = resample_counts(args.videos, args.bootstrap, s)
        for kind, per_video in sums.items():
            per_item = kinds[kind].shape[2]
            truth_all = truths[kind]
            sample = per_video[chosen]
            point = sample.sum(axis=0) / (args.videos * per_item)
            resampled = (counts @ sample) / (counts.sum(axis=1) * per_item)[:, None]
            for grid in ("grid", "grid+text"):
                cols = list(range(budgets)) + ([budgets + 1] if grid == "grid+text" else [])
                oracle_col = budgets if grid == "grid" else budgets + 2
                x, xs = point[cols], resampled[:, cols]
                o, os_ = float(point[oracle_col]), resampled[:, oracle_col]
                true_best = float(truth_all[cols].max())
                true_gap = float(truth_all[oracle_col]) - true_best
                for name, (best_ci, gap_ci) in _variants(x, xs, o, os_, args.videos).items():
                    for measure, (low, high), target in (
                        ("best", best_ci, true_best),
                        ("gap", gap_ci, true_gap),
                    ):
                        row = tally.setdefault(f"{kind} {grid} {measure}|{name}", [0, 0, 0])
                        row[0 if target < low - 1e-12 else 2 if target > high + 1e-12 else 1] += 1
                gap_est = o - float(x.max())
                gap_boot = float(np.mean(os_ - xs.max(axis=1)))
                b = bias.setdefault(f"{kind} {grid} gap", [0.0, 0.0])
                b[0] += (gap_est - true_gap) / args.samples
                b[1] += (gap_boot - gap_est) / args.samples
    return {"tally": tally, "bias": bias}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--videos", type=int, default=80)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--population", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--shifts", type=float, nargs=len(BUDGETS), default=list(SHIFTS), metavar="SHIFT"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    result = run(args)
    names = sorted({key.split("|")[1] for key in result["tally"]})
    measures = sorted({key.split("|")[0] for key in result["tally"]})
    print(
        f"\n{args.videos} videos, {args.samples} samples, B = {args.bootstrap}, seed {args.seed}, "
        f"shifts {' '.join(map(str, args.shifts))}\n"
    )
    print("| measure | " + " | ".join(names) + " |")
    print("| --- " * (len(names) + 1) + "|")
    figures: dict[str, dict[str, float]] = {}
    for measure in measures:
        cells = []
        for name in names:
            below, hit, above = result["tally"][f"{measure}|{name}"]
            n = below + hit + above
            cells.append(f"{hit / n:.3f} ({100 * below / n:.0f}/{100 * above / n:.0f})")
            figures.setdefault(name, {})[measure] = round(hit / n, 4)
        print(f"| {measure} | " + " | ".join(cells) + " |")
    print("\n| gap | actual bias | bootstrap's bias estimate |\n| --- | --- | --- |")
    for measure, (actual, boot) in result["bias"].items():
        print(f"| {measure} | {100 * actual:+.2f} | {100 * boot:+.2f} |")
    figures["seconds"] = {"total": round(time.perf_counter() - started, 1)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

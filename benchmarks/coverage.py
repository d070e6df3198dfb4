"""Do itemscale's 95% intervals cover 95% of the time? A simulation with a known population.

A population of 40,000 videos, each with 3 multiple-choice items and 2 open-ended items, answered
at 4 frame budgets and with the text-only answer. Correctness and scores come from a latent
ability per video and per item plus independent noise per budget, so items flip between budgets
the way real runs do; the two top budgets are close (a plateau, as 64 and 128 frames often are),
which is where the best budget of a sample is most optimistic. The population's own measures are
the truth. Many samples of N videos are drawn without replacement; each is analysed exactly as a
user's run is (`analyze_responses`, video bootstrap), and the share of samples whose interval
contains the truth is the coverage, reported with its binomial standard error.

    .venv/bin/python benchmarks/coverage.py --samples 500 --videos 80 250 --bootstrap 1000
    .venv/bin/python benchmarks/coverage.py --ci percentile      # the plain percentile intervals
    .venv/bin/python benchmarks/coverage.py --shifts -0.5 0.2 0.4 0.4   # another curve: a tie

Prints a Markdown table per sample size and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from itemscale.analysis.measures import analyze_responses
from itemscale.core.responses import normalise_responses

BUDGETS = (8, 16, 32, 64)
#: Shifts of the latent ability per budget: a rising curve whose top two budgets nearly tie.
SHIFTS = (-0.5, 0.2, 0.4, 0.42)
MCQA_ITEMS, OPEN_ITEMS = 3, 2


def population(
    n_videos: int = 40_000, seed: int = 0, shifts: tuple[float, ...] = SHIFTS
) -> pd.DataFrame:
    """The population's response table (text-only at 0 frames, then the 4 budgets, whose
    latent abilities are shifted by `shifts`)."""
    rng = np.random.default_rng(seed)
    video = rng.normal(0.0, 1.0, n_videos)
    rows: list[pd.DataFrame] = []
    n_items = MCQA_ITEMS + OPEN_ITEMS
    item = rng.normal(0.0, 1.0, (n_videos, n_items))
    vid = np.repeat(np.arange(n_videos), n_items)
    itm = np.tile(np.arange(n_items), n_videos)
    mcqa = itm < MCQA_ITEMS
    base = (video[:, None] + item).ravel()
    text_latent = 0.6 * base + rng.normal(0.0, 1.0, base.size) - 0.7
    configs = [("text-only", 0, -1.0, text_latent)]
    for k, (frames, shift) in enumerate(zip(BUDGETS, shifts, strict=True)):
        configs.append(
            (f"{frames}f", frames, float(k), base + shift + rng.normal(0, 1.2, base.size))
        )
    for label, frames, order, latent in configs:
        score = (
            np.round(
                np.clip(1 / (1 + np.exp(-latent)) + rng.normal(0, 0.15, latent.size), 0, 1) * 4
            )
            / 4
        )
        rows.append(
            pd.DataFrame(
                {
                    "model": "population",
                    "item_id": [f"v{v}-i{i}" for v, i in zip(vid, itm, strict=True)],
                    "video_id": [f"v{v}" for v in vid],
                    "task_kind": np.where(mcqa, "mcqa", "open_qa"),
                    "series": "default",
                    "config_id": label,
                    "config_label": label,
                    "axis_order": order,
                    "frames": frames,
                    "repeat": 0,
                    "status": "ok",
                    "answer": np.where(latent > 0, "A", "B"),
                    "correct": np.where(mcqa, (latent > 0).astype(float), np.nan),
                    "score": np.where(mcqa, np.nan, score),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def headline(result: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, {"value", "ci"}) of every headline measure of one model's analysis."""
    (block,) = result["models"].values()
    for label, value in block["accuracy"].items():
        yield f"accuracy {label}", value
    for key in ("best_fixed", "oracle", "oracle_headroom", "harmful_rate", "beneficial_rate"):
        yield key, block[key]
    yield "text_answerable_rate", block["text_answerable_rate"]
    g = block["grid_with_text"]
    for key in ("best_fixed", "oracle", "oracle_headroom", "harmful_rate", "overwrite_rate"):
        yield f"grid_with_text.{key}", g[key]
    c = block["continuous"]
    for label, value in c["mean_score"].items():
        yield f"token_f1 {label}", value
    for key in ("best_fixed", "oracle_score", "oracle_gap", "harmful_rate_eps"):
        yield f"continuous.{key}", c[key]
    gc = c["grid_with_text"]
    for key in ("best_fixed", "oracle_gap", "harmful_rate_eps"):
        yield f"continuous.grid_with_text.{key}", gc[key]


def coverage(
    table: pd.DataFrame,
    *,
    n_samples: int,
    n_videos: int,
    bootstrap: int,
    seed: int,
    ci: str = "bca",
) -> dict[str, dict[str, float]]:
    """Share of samples whose interval covers the population value, per headline measure."""
    truth = dict(headline(analyze_responses(table, bootstrap=0).to_json()))
    videos = table["video_id"].unique()
    by_video = table.groupby("video_id", sort=False).indices
    rng = np.random.default_rng(seed)
    hits: dict[str, int] = dict.fromkeys(truth, 0)
    for s in range(n_samples):
        chosen = rng.choice(len(videos), n_videos, replace=False)
        rows = np.concatenate([by_video[videos[i]] for i in chosen])
        sample = table.iloc[rows].reset_index(drop=True)
        result = analyze_responses(sample, bootstrap=bootstrap, seed=s, ci=ci).to_json()
        for name, value in headline(result):
            low, high = value["ci"] if value["ci"] else (np.nan, np.nan)
            target = truth[name]["value"]
            hits[name] += bool(low - 1e-12 <= target <= high + 1e-12)
    out = {}
    for name, hit in hits.items():
        share = hit / n_samples
        out[name] = {
            "coverage": share,
            "se": float(np.sqrt(share * (1 - share) / n_samples)),
            "truth": truth[name]["value"],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--videos", type=int, nargs="+", default=[80, 250])
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--population", type=int, default=40_000)
    parser.add_argument("--ci", choices=["bca", "percentile"], default="bca")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--shifts",
        type=float,
        nargs=len(BUDGETS),
        default=list(SHIFTS),
        metavar="SHIFT",
        help=f"latent ability shift per budget {BUDGETS} (default {' '.join(map(str, SHIFTS))})",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    table = normalise_responses(population(args.population, args.seed, tuple(args.shifts)))
    figures: dict[str, Any] = {
        "ci": args.ci,
        "samples": args.samples,
        "bootstrap": args.bootstrap,
        "shifts": args.shifts,
    }
    for n in args.videos:
        result = coverage(
            table,
            n_samples=args.samples,
            n_videos=n,
            bootstrap=args.bootstrap,
            seed=args.seed + n,
            ci=args.ci,
        )
        print(
            f"\n{n} videos, {args.samples} samples, B = {args.bootstrap}, --ci {args.ci}, "
            f"shifts {' '.join(map(str, args.shifts))}\n"
        )
        print("| measure | population | coverage | binomial SE |")
        print("| --- | --- | --- | --- |")
        for name, row in result.items():
            print(
                f"| {name} | {100 * row['truth']:.2f} | {row['coverage']:.3f} | {row['se']:.3f} |"
            )
        figures[str(n)] = {k: round(v["coverage"], 4) for k, v in result.items()}
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

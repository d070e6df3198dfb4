"""Benchmark: `itemscale cascade` (all three policies, cross-fitted, frontier, bootstrap) on a
synthetic matrix, and the vectorised per-stage threshold sweep against the straightforward loop
over candidate thresholds (evaluate the whole cascade once per candidate).

    .venv/bin/python benchmarks/cascade.py [--items 20000] [--budgets 5] [--boot 1000]

The synthetic model is right more often at larger budgets, its confidence is informative but
noisy, and budgets use linspace frame indices on a 3,000-frame video (shared frames partly
overlap). The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from itemscale.analysis.policies import CascadeSettings, cascade_report, frame_union_costs
from itemscale.analysis.policies._search import _Problem, outcome_at, stopping_stage
from itemscale.core.responses import normalise_responses


def make_table(n_items: int, n_budgets: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = [8 * 2**k for k in range(n_budgets)]
    ability = rng.normal(0, 1, n_items)
    parts = []
    for k, f in enumerate(frames):
        logit = ability + 0.15 * k + rng.normal(0, 0.8, n_items)
        correct = (logit > 0).astype(float)
        confidence = 1 / (1 + np.exp(-(logit + rng.normal(0, 0.7, n_items))))
        idx = np.linspace(0, 2999, f).astype(np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "model": "m",
                    "item_id": [f"q{i:06d}" for i in range(n_items)],
                    "video_id": [f"v{i // 3:06d}" for i in range(n_items)],
                    "task_kind": "mcqa",
                    "series": "default",
                    "config_id": f"c{f}",
                    "config_label": f"{f}f",
                    "axis_order": float(f),
                    "frames": f,
                    "repeat": 0,
                    "status": "ok",
                    "answer": np.where(correct > 0, "A", "B"),
                    "correct": correct,
                    "confidence": confidence,
                    "visual_tokens": f * 196,
                    "frame_indices": [idx] * n_items,
                }
            )
        )
    return normalise_responses(pd.concat(parts, ignore_index=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--budgets", type=int, default=5)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    df = make_table(args.items, args.budgets, args.seed)
    t0 = time.perf_counter()
    report = cascade_report(df, CascadeSettings(bootstrap=args.boot, seed=args.seed)).as_json()
    full_s = time.perf_counter() - t0
    block = report["results"][0]

    # One stage sweep, vectorised vs loop, on the same problem.
    correct = np.stack(
        [df[df["config_label"] == lab]["correct"].to_numpy() for lab in block["labels"]], 1
    )
    conf = np.stack(
        [df[df["config_label"] == lab]["confidence"].to_numpy() for lab in block["labels"]], 1
    )
    cells = np.empty(correct.shape, dtype=object)
    for k, lab in enumerate(block["labels"]):
        cells[:, k] = list(df[df["config_label"] == lab]["frame_indices"])
    costs = frame_union_costs(cells)
    problem = _Problem(np.ones((len(correct), correct.shape[1] - 1), bool), conf[:, :-1], correct,
                       costs.cumulative, True)  # fmt: skip
    thresholds = np.full(correct.shape[1] - 1, np.inf)
    problem.stage_sweep(thresholds, 0)  # warm the cost cache both ways are timed with
    t0 = time.perf_counter()
    problem.stage_sweep(thresholds, 0)
    vector_s = time.perf_counter() - t0
    # The loop baseline evaluates the whole cascade once per candidate threshold; it is timed
    # on `subset` evenly spread candidates and scaled linearly to all of them.
    uniq = np.unique(problem.score[:, 0])
    subset = min(2000, uniq.size)
    t0 = time.perf_counter()
    pick = uniq[np.linspace(0, uniq.size - 1, subset).astype(int)]
    for t in pick:
        trial = thresholds.copy()
        trial[0] = t
        stop = stopping_stage(problem.gate, problem.score, trial)
        outcome_at(stop, problem.correct).sum()
        outcome_at(stop, problem.cost_matrix(trial)).sum()
    loop_s = (time.perf_counter() - t0) * uniq.size / subset

    cascade = block["cascade"]
    figures = {
        "items": args.items,
        "budgets": args.budgets,
        "bootstrap": args.boot,
        "cascade_report_s": round(full_s, 2),
        "stage_sweep_vectorised_s": round(vector_s, 4),
        "stage_sweep_loop_s_scaled": round(loop_s, 2),
        "candidates": int(uniq.size),
        "speedup": round(loop_s / max(vector_s, 1e-9), 1),
        "cascade_accuracy": cascade["accuracy"]["value"],
        "terminal_accuracy": cascade["terminal_accuracy"]["value"],
        "cascade_cost_reduction": cascade["cost_reduction"]["value"],
        "agreement_cost_reduction": block["policies"]["agreement"]["cost_reduction"]["value"],
        "learned_cost_reduction": block["policies"]["learned"]["cost_reduction"]["value"],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

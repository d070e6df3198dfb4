"""Benchmark: the full analysis suite against a straightforward pandas implementation.

5 models x 100,000 items (3 items per video) x 10 configurations + a text-only baseline,
B = 1,000 video-bootstrap resamples. itemscale runs the whole suite (`analyze_responses`). The
pandas baseline computes the same measures the way one would write them with group-by and a
loop over resamples (merge resampled videos, recompute per configuration); it is timed on
`--pandas-resamples` resamples in the same run and scaled linearly to B (its cost per resample is
constant), which the output states. The per-item labels of `analyze --per-item` are timed on the
same table (their mean `harmful` is checked against the suite's harmful rate). The tests between
budgets (paired tests and power; the additive-model test on both grids), which the suite
includes, are timed again on their own in the same run, so their share of it is measured side
by side.

    .venv/bin/python benchmarks/analysis.py [--items 100000] [--models 5] [--configs 10]

`--itemscale-only` times `analyze_responses` alone (no pandas baseline, per-item labels or
tests timed apart); it imports nothing newer than `analyze_responses` and
`normalise_responses`, so `PYTHONPATH=OTHER_TREE/src` times an older commit's suite on the same
table. `itemscale_cpu_s` is the process's CPU time over the same call (with
`OMP_NUM_THREADS=1`, what the suite costs whatever else the machine runs).

The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

import itemscale.analysis.measures as measures_box
from itemscale.analysis.measures import analyze_responses
from itemscale.core.responses import normalise_responses


def make_table(n_models: int, n_items: int, n_configs: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = [8 * 2 ** (k // 2) * (1 + k % 2) for k in range(n_configs)]
    item_ids = np.array([f"q{i:06d}" for i in range(n_items)], dtype=object)
    video_ids = np.array([f"v{i // 3:06d}" for i in range(n_items)], dtype=object)
    parts = []
    for m in range(n_models):
        ability = rng.normal(0, 1, n_items)
        for k in range(n_configs + 1):
            text_only = k == n_configs
            logit = ability + (-1.0 if text_only else 0.08 * k) + rng.normal(0, 0.8, n_items)
            correct = (logit > 0).astype(float)
            answers = np.where(correct > 0, "A", rng.choice(["B", "C", "D"], n_items))
            parts.append(
                pd.DataFrame(
                    {
                        "model": f"model{m}",
                        "item_id": item_ids,
                        "video_id": video_ids,
                        "task_kind": "mcqa",
                        "series": "default",
                        "config_id": "text" if text_only else f"c{k}",
                        "config_label": "text-only" if text_only else f"{frames[k]}f-{k}",
                        "axis_order": -1.0 if text_only else float(k),
                        "frames": 0 if text_only else frames[k],
                        "repeat": 0,
                        "status": "ok",
                        "correct": correct,
                        "answer": answers,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def pandas_suite(df: pd.DataFrame, n_resamples: int, seed: int) -> dict[str, float]:
    """The straightforward implementation: pivot per model, then for each resample rebuild the
    resampled item set by merging drawn videos and recompute each measure with group-bys."""
    rng = np.random.default_rng(seed)
    out: dict[str, float] = {}
    for model, rows in df.groupby("model"):
        grid = rows[rows["frames"] > 0]
        wide = grid.pivot_table(
            index=["video_id", "item_id"], columns="axis_order", values="correct"
        )
        wide.columns = [f"c{int(c)}" for c in wide.columns]
        text = rows[rows["frames"] == 0].set_index("item_id")["answer"]
        answers = grid.pivot_table(
            index="item_id", columns="axis_order", values="answer", aggfunc="first"
        )
        configs = list(wide.columns)
        videos = wide.index.get_level_values("video_id").unique().to_numpy()

        def measures(
            frame: pd.DataFrame,
            configs: list[str] = configs,
            answers: pd.DataFrame = answers,
            text: pd.Series = text,
        ) -> dict[str, float]:
            res: dict[str, float] = {}
            for c in configs:
                res[f"acc_{c}"] = frame[c].mean()
            res["oracle"] = frame[configs].max(axis=1).mean()
            harmful = pd.Series(False, index=frame.index)
            overwrite = 0
            transitions = 0
            for j, cj in enumerate(configs):
                for ck in configs[j + 1 :]:
                    down = (frame[cj] == 1) & (frame[ck] == 0)
                    up = (frame[cj] == 0) & (frame[ck] == 1)
                    res[f"down_{cj}_{ck}"] = down.mean()
                    res[f"up_{cj}_{ck}"] = up.mean()
                    res[f"comp_{cj}_{ck}"] = frame[[cj, ck]].max(axis=1).mean() - max(
                        frame[cj].mean(), frame[ck].mean()
                    )
                    harmful |= down
                    items = frame.index.get_level_values("item_id")[down.to_numpy()]
                    transitions += len(items)
                    same = (
                        answers.loc[items, float(configs.index(ck))].to_numpy()
                        == text.loc[items].to_numpy()
                    )
                    overwrite += int(same.sum())
            res["harmful"] = harmful.mean()
            res["terminal"] = (
                (frame[configs[-1]] == 0) & (frame[configs[:-1]].max(axis=1) == 1)
            ).mean()
            res["overwrite"] = overwrite / transitions if transitions else float("nan")
            return res

        point = measures(wide)
        samples = []
        for _ in range(n_resamples):
            drawn = pd.DataFrame({"video_id": rng.choice(videos, size=len(videos))})
            resampled = drawn.merge(wide.reset_index(), on="video_id").set_index(
                ["video_id", "item_id"]
            )
            samples.append(measures(resampled))
        out[str(model)] = float(point["oracle"])
        if samples:
            pd.DataFrame(samples).quantile([0.025, 0.975])
    return out


def inference_seconds(df: pd.DataFrame, bootstrap: int, seed: int) -> tuple[float, float]:
    """The tests between budgets of every model, on matrices and bootstraps built and warmed
    beforehand (as `analyze_responses` has them), timed alone: (paired tests and power, the
    additive-model test on both grids)."""
    from itemscale.analysis.measures import build_matrices
    from itemscale.analysis.measures._analyze import _BootstrapCache
    from itemscale.analysis.measures._inference import (
        DEFAULT_POWER_TARGET,
        heterogeneity_record,
        heterogeneity_with_text,
        paired_tests_record,
        power_record,
    )

    boots = _BootstrapCache(bootstrap, seed)
    ready = [(m, boots.boot_for(m.video_ids)) for m in build_matrices(df) if m.kind == "binary"]
    for m, boot in ready:
        if boot is not None:
            boot.sums(m.y[:, :1])  # the float32 count matrix, which the suite converts first
    start = time.perf_counter()
    for m, boot in ready:
        paired_tests_record(m, boot)
        power_record(m, boot, DEFAULT_POWER_TARGET)
    paired = time.perf_counter() - start
    start = time.perf_counter()
    for m, boot in ready:
        heterogeneity_record(m, boot)
        heterogeneity_with_text(m, boot, boots.boot_for)
    return paired, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--configs", type=int, default=10)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--pandas-resamples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--itemscale-only",
        action="store_true",
        help="time analyze_responses alone (runs against an older tree's src too)",
    )
    args = parser.parse_args()

    df = normalise_responses(make_table(args.models, args.items, args.configs, args.seed))
    print(
        f"table: {len(df):,} rows ({args.models} models x {args.items:,} items x "
        f"{args.configs} configurations + text-only), B = {args.bootstrap}"
    )

    # a tree from before the bootstrap count's rename (83f5cc4, the reference) takes `n_boot`
    count = "bootstrap" if hasattr(measures_box, "AnalysisOptions") else "n_boot"
    start, cpu = time.perf_counter(), time.process_time()
    typed = analyze_responses(df, seed=args.seed, **{count: args.bootstrap})
    itemscale_s = time.perf_counter() - start
    itemscale_cpu_s = time.process_time() - cpu
    # the typed result (an older tree's src returns the JSON layout itself)
    result = typed.to_json() if hasattr(typed, "to_json") else typed
    print(f"itemscale analyze_responses (all measures, B={args.bootstrap}): {itemscale_s:.2f} s")
    if args.itemscale_only:
        figures = {
            "itemscale_s": round(itemscale_s, 3),
            "itemscale_cpu_s": round(itemscale_cpu_s, 3),
        }
        print(json.dumps({"benchmark": "analysis", **figures}))
        return
    paired_s, heterogeneity_s = inference_seconds(df, args.bootstrap, args.seed)
    print(
        f"  of which, timed alone: paired tests and power {paired_s:.2f} s, the additive-model "
        f"test on both grids {heterogeneity_s:.2f} s"
    )

    start = time.perf_counter()
    baseline = pandas_suite(df, args.pandas_resamples, args.seed)
    pandas_measured = time.perf_counter() - start
    start = time.perf_counter()
    pandas_suite(df, 0, args.seed)
    pandas_point = time.perf_counter() - start
    per_resample = max(pandas_measured - pandas_point, 0.0) / max(args.pandas_resamples, 1)
    pandas_s = pandas_point + per_resample * args.bootstrap
    print(
        f"pandas baseline: point estimates {pandas_point:.2f} s, {per_resample:.2f} s per "
        f"resample (timed on {args.pandas_resamples}); scaled to B={args.bootstrap}: "
        f"{pandas_s:.0f} s"
    )
    for model, oracle in baseline.items():
        ours = result["models"][model]["oracle"]["value"]
        assert abs(ours - oracle) < 1e-9, (model, ours, oracle)
    ratio = pandas_s / itemscale_s
    print(f"ratio: {ratio:.0f}x (point estimates agree with the baseline)")
    start = time.perf_counter()
    from itemscale.analysis.measures import per_item_labels

    labels = per_item_labels(df)
    per_item_s = time.perf_counter() - start
    harmful = labels.groupby("model")["harmful"].mean()
    for model, rate in harmful.items():
        assert abs(rate - result["models"][model]["harmful_rate"]["value"]) < 1e-12, model
    print(
        f"itemscale per_item_labels (analyze --per-item), {len(labels):,} rows: {per_item_s:.2f} s"
    )
    print(
        json.dumps(
            {
                "benchmark": "analysis",
                "itemscale_s": round(itemscale_s, 3),
                "itemscale_cpu_s": round(itemscale_cpu_s, 3),
                "pandas_s": round(pandas_s, 1),
                "pandas_measured_resamples": args.pandas_resamples,
                "ratio": round(ratio, 1),
                "per_item_s": round(per_item_s, 3),
                "paired_power_s": round(paired_s, 3),
                "heterogeneity_s": round(heterogeneity_s, 3),
            }
        )
    )


if __name__ == "__main__":
    main()

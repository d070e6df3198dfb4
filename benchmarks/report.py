"""Benchmark: the frame audit, the artifact (`itemscale report`) and `itemscale verify` on a
synthetic run of many items.

    .venv/bin/python benchmarks/report.py [--items 5000] [--models 2] [--budgets 5] [--boot 200]

Each model answers every item at `--budgets` frame counts (8, 16, 32, ...) plus a text-only
baseline, with linspace frame indices on a 256-frame video and evidence spans on every item.
The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from itemscale.analysis.audit import audit_transitions
from itemscale.collect.items import EvidenceSpan, Item, write_items_jsonl
from itemscale.core.responses import normalise_responses, write_run
from itemscale.report import build_artifact, trajectory_table, verify_artifact


def make_run(
    n_items: int, n_models: int, n_budgets: int, seed: int
) -> tuple[pd.DataFrame, list[Item]]:
    rng = np.random.default_rng(seed)
    frames = [0] + [8 * 2**k for k in range(n_budgets)]
    item_ids = np.array([f"q{i:06d}" for i in range(n_items)], dtype=object)
    video_ids = np.array([f"v{i // 3:06d}" for i in range(n_items)], dtype=object)
    starts = rng.uniform(0, 30, n_items)
    items = [
        Item(
            item_id=str(item_ids[i]),
            video_id=str(video_ids[i]),
            question="q?",
            options=("a", "b", "c", "d"),
            answer="A",
            evidence=(EvidenceSpan(start=float(starts[i]), end=float(starts[i]) + 0.5),),
        )
        for i in range(n_items)
    ]
    parts = []
    for m in range(n_models):
        ability = rng.normal(0, 1, n_items)
        for k, f in enumerate(frames):
            correct = (ability + 0.1 * k + rng.normal(0, 0.8, n_items) > 0).astype(float)
            idx = np.linspace(0, 255, f).round().astype(np.int64).tolist() if f else None
            answers = np.where(correct > 0, "A", rng.choice(["B", "C", "D"], n_items))
            parts.append(
                pd.DataFrame(
                    {
                        "model": f"model{m}",
                        "item_id": item_ids,
                        "video_id": video_ids,
                        "task_kind": "mcqa",
                        "series": "default",
                        "config_id": f"c{f}",
                        "config_label": "text-only" if f == 0 else f"{f}f",
                        "axis_order": float(f),
                        "frames": f,
                        "pixels": 200_000 // f if f else None,
                        "repeat": 0,
                        "status": "ok",
                        "answer": answers,
                        "raw_text": [f"The answer is {a}" for a in answers],
                        "correct": correct,
                        "frame_indices": [idx] * n_items,
                        "frame_timestamps": [[i / 8 for i in idx] if idx else None] * n_items,
                    }
                )
            )
    return normalise_responses(pd.concat(parts, ignore_index=True)), items


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--budgets", type=int, default=5)
    parser.add_argument("--boot", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    df, items = make_run(args.items, args.models, args.budgets, args.seed)
    figures: dict[str, float | int] = {"rows": len(df), "items": args.items}
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        write_run(run, df, {"protocol": "benchmark"})
        write_items_jsonl(run / "items.jsonl", items)

        t = time.perf_counter()
        audit = audit_transitions(df, items)
        figures["audit_s"] = round(time.perf_counter() - t, 3)
        figures["transitions"] = len(audit)

        t = time.perf_counter()
        trajectory_table(df)
        figures["trajectories_s"] = round(time.perf_counter() - t, 3)

        t = time.perf_counter()
        artifact = build_artifact(run, bootstrap=args.boot, seed=0)
        figures["report_s"] = round(time.perf_counter() - t, 3)
        figures["report_html_mb"] = round((artifact / "report.html").stat().st_size / 1e6, 2)

        t = time.perf_counter()
        result = verify_artifact(artifact)
        figures["verify_s"] = round(time.perf_counter() - t, 3)
        assert result.ok, result.problems

        t = time.perf_counter()
        verify_artifact(artifact, recompute=False)
        figures["verify_hashes_only_s"] = round(time.perf_counter() - t, 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

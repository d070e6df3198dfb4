"""How long importing takes: a generic table and lmms-eval sample logs, first import and the
idempotent re-import (which compares every stored row).

    .venv/bin/python benchmarks/importers.py --items 20000 --configs 5

Ends with one JSON line of figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from itemscale.collect.importers import finish_import, import_table
from itemscale.collect.importers._common import import_record
from itemscale.collect.importers._lmms_eval import run_lmms_eval_import


def write_table(path: Path, items: int, configs: int, rng: np.random.Generator) -> int:
    lines = ["model,item_id,video_id,config,order,frames,correct,answer,attr_duration"]
    correct = rng.integers(0, 2, size=(items, configs))
    for k in range(configs):
        frames = 8 * 2**k
        for i in range(items):
            c = int(correct[i, k])
            lines.append(
                f"m,q{i},v{i // 3},{frames}f,{k + 1},{frames},{c},{'AB'[c]},"
                f"{('short', 'medium', 'long')[i % 3]}"
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


def write_lmms(folder: Path, items: int, frames: int, rng: np.random.Generator) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = f"20260101_{frames:06d}"
    with (folder / f"{stamp}_samples_videomme.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(items):
            target = "ABCD"[int(rng.integers(4))]
            resp = "ABCD"[int(rng.integers(4))] + "."
            fh.write(
                json.dumps(
                    {
                        "doc_id": i,
                        "target": target,
                        "filtered_resps": resp,
                        "videomme_perception_score": {
                            "question_id": f"{i // 3:03d}-{i % 3 + 1}",
                            "duration": "short",
                            "category": "Knowledge",
                            "task_category": "Counting Problem",
                            "pred_answer": resp[0],
                            "answer": target,
                            "videoID": f"vid{i // 3}",
                        },
                        "input": "Q?\nA. a\nB. b\nC. c\nD. d\nAnswer:",
                    }
                )
                + "\n"
            )
    results = {"config": {"model_args": f"pretrained=org/model,max_frames_num={frames}"}}
    (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
    return folder / f"{stamp}_samples_videomme.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20000)
    ap.add_argument("--configs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = write_table(root / "t.csv", args.items, args.configs, rng)
        t0 = time.perf_counter()
        table, _ = import_table(root / "t.csv")
        finish_import(
            importer="table",
            run_dir=root / "run",
            files=["t.csv"],
            rows=table,
            record=import_record("table", []),
        )
        table_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        table, _ = import_table(root / "t.csv")
        again = finish_import(
            importer="table",
            run_dir=root / "run",
            files=["t.csv"],
            rows=table,
            record=import_record("table", []),
        )
        table_again_s = time.perf_counter() - t0
        assert again.rows_added == 0

        files = [
            str(write_lmms(root / f"k{k}", args.items, 8 * 2**k, rng)) for k in range(args.configs)
        ]
        t0 = time.perf_counter()
        run_lmms_eval_import(
            files=files, configs=[], model=None, benchmark=None, run_dir=root / "le"
        )
        lmms_s = time.perf_counter() - t0
    print(
        f"table: {rows} rows in {table_s:.2f} s, re-import {table_again_s:.2f} s; "
        f"lmms-eval: {args.items * args.configs} samples in {lmms_s:.2f} s"
    )
    print(
        json.dumps(
            {
                "benchmark": "importers",
                "rows": rows,
                "table_s": round(table_s, 3),
                "table_reimport_s": round(table_again_s, 3),
                "lmms_eval_samples": args.items * args.configs,
                "lmms_eval_s": round(lmms_s, 3),
            }
        )
    )


if __name__ == "__main__":
    main()

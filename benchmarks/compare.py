"""`itemscale compare` on two large runs: seconds per stage, and the whole call.

    .venv/bin/python benchmarks/compare.py --items 200000

Two run folders of one configuration each, `--items` items on items/3 videos (three questions
per video, as Video-MME), a duration attribute with three values, seeded answers (A right on
60%, B on 62%). Times `itemscale.compare` twice (the first call includes imports), with
`--bootstrap` resamples (default 1000). Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import itemscale
from itemscale.core.responses import normalise_responses, write_run


def side(n: int, label: str, p: float, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": "m",
            "item_id": [f"q{i}" for i in range(n)],
            "video_id": [f"v{i // 3}" for i in range(n)],
            "task_kind": "mcqa",
            "series": "default",
            "config_id": label,
            "config_label": label,
            "axis_order": 1.0,
            "frames": 16,
            "repeat": 0,
            "status": "ok",
            "correct": (rng.random(n) < p).astype(float),
            "answer": rng.choice(list("ABCD"), n),
            "attributes": [
                json.dumps({"duration": ("short", "medium", "long")[i % 3]}) for i in range(n)
            ],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        write_run(a, normalise_responses(side(args.items, "a", 0.60, rng)), {})
        write_run(b, normalise_responses(side(args.items, "b", 0.62, rng)), {})
        times = []
        for _ in range(2):
            start = time.perf_counter()
            result = itemscale.compare(a, b, bootstrap=args.bootstrap)
            times.append(round(time.perf_counter() - start, 2))
    print(
        f"{args.items} matched pairs on {result.counts.matched_videos} videos, B = {args.bootstrap}"
    )
    print(f"  first call (imports included): {times[0]} s; second call: {times[1]} s")
    print(
        json.dumps(
            {
                "benchmark": "compare",
                "items": args.items,
                "videos": result.counts.matched_videos,
                "bootstrap": args.bootstrap,
                "first_s": times[0],
                "second_s": times[1],
            }
        )
    )


if __name__ == "__main__":
    main()

"""The rerun floor: how many answers of the built-in model move when nothing but the batch size,
the torch thread count or the seed changes (docs/compare.md, "Reruns").

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/rerun_floor.py --videos 40 --json $OUT/floor.json

It makes the demo's synthetic suite (focus layout, seed 2026, every video a test video) with
`--videos` videos, writes the demo's protocol on a subset of its grid (`--frames`, short side
56, plus text-only) and sweeps the built-in model into one run folder per setting: batch size
1 and 16 at one thread, batch size 1 at two threads, and batch size 1 with another global
torch seed. Each setting's answers are compared with the first's, cell by cell (model, item,
configuration): the count that differ, of how many, with the exact one-sided 95% binomial
upper bound on the per-answer rate (Clopper-Pearson). The last line is one JSON object with
every figure (`--json` writes it to a file as well).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

DEMO_SEED = 2026


def _sweep(suite: Path, out: Path, frames: list[int], batch_size: int) -> Any:
    from itemscale.cli.cmd_demo import demo_protocol
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep
    from itemscale.core.responses import read_run

    out.mkdir(parents=True, exist_ok=True)
    protocol_file = out / "protocol.toml"
    protocol_file.write_text(demo_protocol(out, suite, frames, [56]), encoding="utf-8")
    run_sweep(load_protocol(protocol_file), run_dir=out, progress=False, batch_size=batch_size)
    df, _ = read_run(out)
    return df


def _key(df: Any) -> dict[tuple[str, str, str], tuple[str | None, str | None]]:
    return {
        (str(r.item_id), str(r.config_id), str(r.task_kind)): (
            None if r.answer is None else str(r.answer),
            None if r.raw_text is None else str(r.raw_text),
        )
        for r in df.itertuples()
        if str(r.status) in ("ok", "noanswer")
    }


def _upper(k: int, n: int) -> float | None:
    from scipy.stats import beta

    if n == 0:
        return None
    return 1.0 if k == n else float(beta.ppf(0.95, k + 1, n - k))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=40)
    parser.add_argument("--frames", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--work", type=Path, default=Path("/tmp/itemscale-rerun-floor"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch

    from itemscale.cli.cmd_demo import DEMO_FOCUS_KINDS
    from itemscale.collect.synth import ensure_suite

    suite = args.work / "suite"
    ensure_suite(
        suite,
        n_videos=args.videos,
        seed=DEMO_SEED,
        test_fraction=1.0,
        layout="focus",
        focus_kinds=DEMO_FOCUS_KINDS,
    )
    settings = [
        ("batch 1, 1 thread", 1, 1, 0),
        ("batch 16, 1 thread", 16, 1, 0),
        ("batch 1, 2 threads", 1, 2, 0),
        ("batch 1, 1 thread, torch seed 7", 1, 1, 7),
    ]
    answers: dict[str, dict[tuple[str, str, str], tuple[str | None, str | None]]] = {}
    seconds: dict[str, float] = {}
    for n, (label, batch, threads, seed) in enumerate(settings):
        torch.set_num_threads(threads)
        torch.manual_seed(seed)
        t = time.perf_counter()
        answers[label] = _key(_sweep(suite, args.work / f"run{n}", args.frames, batch))
        seconds[label] = round(time.perf_counter() - t, 1)
    base_label = settings[0][0]
    base = answers[base_label]
    figures: dict[str, Any] = {"videos": args.videos, "frames": args.frames, "pairs": {}}
    for label, got in answers.items():
        if label == base_label:
            continue
        cells = sorted(set(base) & set(got))
        for kind in ("mcqa", "open"):
            chosen = [c for c in cells if (c[2] == "mcqa") == (kind == "mcqa")]
            k_answer = sum(base[c][0] != got[c][0] for c in chosen)
            k_raw = sum(base[c][1] != got[c][1] for c in chosen)
            figures["pairs"][f"{base_label} vs {label} ({kind})"] = {
                "cells": len(chosen),
                "answers_differ": k_answer,
                "raw_text_differs": k_raw,
                "rate_upper_95": _upper(k_answer, len(chosen)),
            }
    figures["seconds"] = seconds
    for name, row in figures["pairs"].items():
        print(
            f"{name}: {row['answers_differ']} of {row['cells']} answers differ "
            f"({row['raw_text_differs']} raw texts); one-sided 95% upper bound on the rate "
            f"{row['rate_upper_95']}"
        )
    text = json.dumps(figures, sort_keys=True)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

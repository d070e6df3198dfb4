"""Benchmark: the report's item explorer.

1. How long a filter or a search takes in headless Chromium on the shipped release (the seed
   paper's labels, 3,930 item trajectories), as the page itself measures it
   (`document.body.dataset.filterMs`: filtering, sorting and drawing the first page).
2. How big the explorer's data is at 2 million response rows (a synthetic table: 5 models x
   36,364 items x 10 budgets + text-only), where at most EMBED_LIMIT rows are embedded.

    .venv/bin/python benchmarks/explorer.py [--runs 5] [--skip-size]

Needs `chromium` on PATH. The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

ACTIONS = {
    "pattern = harmful": "var p = document.getElementById('pattern-filter'); p.value = "
    "'harmful'; p.dispatchEvent(new Event('change'));",
    "pattern = all": "var p = document.getElementById('pattern-filter'); p.value = ''; "
    "p.dispatchEvent(new Event('change'));",
    "model = first": "var m = document.getElementById('model-filter'); m.value = "
    "m.options[1].value; m.dispatchEvent(new Event('change'));",
    "search '1'": "var b = document.getElementById('item-filter'); b.value = '1'; "
    "b.dispatchEvent(new Event('input'));",
    "search cleared, model = all": "var b = document.getElementById('item-filter'); "
    "b.value = ''; b.dispatchEvent(new Event('input')); var m = "
    "document.getElementById('model-filter'); m.value = ''; "
    "m.dispatchEvent(new Event('change'));",
}


def release_report(folder: Path) -> Path:
    from itemscale.cli.cmd_demo import run_paper_step

    with contextlib.redirect_stdout(io.StringIO()):
        out = run_paper_step(folder / "paper", bootstrap=50, report=True)
    return Path(out["report"])


def filter_times(report: Path, runs: int) -> dict[str, float]:
    from artifact.test_report_html import DevTools, Page, chromium_binary

    with tempfile.TemporaryDirectory() as profile:
        tools = DevTools(chromium_binary(), Path(profile))
        try:
            page = Page(tools, report.as_uri())
            n_rows = page.eval(
                "JSON.parse(document.getElementById('itemscale-data').textContent).rows.length"
            )
            print(f"explorer rows: {n_rows}")
            out: dict[str, float] = {"rows": float(n_rows)}
            for name, script in ACTIONS.items():
                times = []
                for _ in range(runs):
                    page.eval(script)
                    times.append(float(page.eval("document.body.dataset.filterMs")))
                out[name] = round(statistics.median(times), 1)
                print(f"{name:<32} median {out[name]:.1f} ms, max {max(times):.1f} ms")
        finally:
            tools.close()
    return out


def size_at(n_rows: int) -> dict[str, float]:
    """The explorer's JSON block for a synthetic table of about `n_rows` responses."""
    from itemscale.core.responses import normalise_responses
    from itemscale.report import trajectory_table
    from itemscale.report._explorer import explorer_payload
    from itemscale.report._html import json_for_script

    models, budgets = 5, 10
    n_items = n_rows // (models * (budgets + 1))
    rng = np.random.default_rng(0)
    frames = [0, *(2 * (k + 1) for k in range(budgets))]
    items = np.array([f"q{i:06d}" for i in range(n_items)], dtype=object)
    parts = []
    for m in range(models):
        for k, f in enumerate(frames):
            correct = (rng.random(n_items) < 0.4 + 0.04 * k).astype(float)
            parts.append(
                pd.DataFrame(
                    {
                        "model": f"model{m}",
                        "item_id": items,
                        "video_id": items,
                        "task_kind": "mcqa",
                        "series": "default",
                        "config_id": "text-only" if f == 0 else f"{f}f",
                        "config_label": "text-only" if f == 0 else f"{f}f",
                        "axis_order": k,
                        "frames": f,
                        "repeat": 0,
                        "status": "ok",
                        "answer": np.where(correct > 0, "A", "B"),
                        "correct": correct,
                        "raw_text": "The answer is A.",
                    }
                )
            )
    df = normalise_responses(pd.concat(parts, ignore_index=True))
    start = time.perf_counter()
    traj = trajectory_table(df)
    payload = explorer_payload(traj, df)
    block = json_for_script(payload).encode("utf-8")
    seconds = time.perf_counter() - start
    print(
        f"{len(df):,} responses, {len(traj):,} trajectories: {len(payload['rows']):,} rows "
        f"embedded, data block {len(block) / 1e6:.2f} MB ({seconds:.1f} s)"
    )
    return {
        "responses": float(len(df)),
        "trajectories": float(len(traj)),
        "embedded": float(len(payload["rows"])),
        "data_mb": round(len(block) / 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repeats per action (median)")
    parser.add_argument("--skip-size", action="store_true", help="skip the 2M-row size figure")
    args = parser.parse_args()
    figures: dict[str, object] = {"benchmark": "explorer"}
    with tempfile.TemporaryDirectory() as tmp:
        report = release_report(Path(tmp))
        figures["release_report_mb"] = round(report.stat().st_size / 1e6, 2)
        figures["filter_ms"] = filter_times(report, args.runs)
    if not args.skip_size:
        figures["two_million"] = size_at(2_000_000)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""The demo's frame-selector step: the built-in `change` selector written as a selection file
(`itemscale select`), replayed as one more series beside uniform sampling, and compared with it
item by item (the `churn` block's selector record). Called from one line of `cmd_demo`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

#: The budget the selector runs at: a frame count whose uniform gap (about 1.5 s on the demo's
#: 12 s videos) is wider than a blink, at the demo's smaller resolution.
DEMO_SELECTOR_FRAMES = 8
DEMO_SELECTOR_SIDE = 56
DEMO_SELECTION = "change"
#: Where the demo writes its selection file and the comparison, inside the run folder.
SELECTOR_DIR = "selections"
SELECTOR_FILE = "selector.json"


def selector_step(out: Path, *, n_boot: int, batch_size: int) -> dict[str, Any]:
    """Write the selection, sweep its series, print what it fixes and breaks against uniform
    sampling at the same budget; returns (and writes to RUN/selector.json) the comparison."""
    from ..measures import VideoBootstrap, build_matrices, series_churn
    from ..protocol import Configuration, SamplingPolicy, load_protocol, selection_file_digest
    from ..responses import read_run, write_json_atomic
    from ..sweep import load_benchmark_items, run_sweep
    from ..video import write_selection_files
    from ._inference_text import selector_lines

    t = time.perf_counter()
    k, side = DEMO_SELECTOR_FRAMES, DEMO_SELECTOR_SIDE
    print(
        f"\n### frame selector: `{DEMO_SELECTION}` at {k} frames against uniform sampling "
        f"(itemscale select {out}/protocol.toml --frames {k} --out {out / SELECTOR_DIR})",
        flush=True,
    )
    protocol = load_protocol(out / "protocol.toml")
    items = load_benchmark_items(protocol.benchmark)
    (path,) = write_selection_files(items, [k], out / SELECTOR_DIR, name=DEMO_SELECTION).values()
    sampling = SamplingPolicy(
        name="selection",
        selection=DEMO_SELECTION,
        selection_format="auto",
        selection_digest=selection_file_digest(path),
        selection_path=str(path),
    )
    config = Configuration(frames=k, short_side=side, sampling=sampling)
    result = run_sweep(
        protocol, run_dir=out, extra_configs=[config], progress=False, batch_size=batch_size
    )
    print(f"  {result.ran} cells run for series {config.series} ({path})")
    df, _ = read_run(out)
    mcqa = [m for m in build_matrices(df) if m.kind == "binary"]
    uniform = next(m for m in mcqa if m.series == "linspace/cached")
    chosen = next(m for m in mcqa if m.series == config.series)
    churn = series_churn(
        uniform, chosen, lambda videos: VideoBootstrap(videos, n_boot, 0) if n_boot else None
    )
    record: dict[str, Any] = {"selection_file": str(path), "config": config.label}
    budget = next((b for b in churn.budgets if b.selector is not None), None) if churn else None
    if budget is None or budget.selector is None:
        print("  no budget shared with uniform sampling")
    else:
        from dataclasses import asdict

        record["budget"] = budget.budget
        record["selector"] = asdict(budget.selector)
        for line in selector_lines(record["selector"]):
            print(f"  {budget.budget}: {line}")
    write_json_atomic(out / SELECTOR_FILE, record)
    print(f"  (the whole comparison: itemscale analyze {out}, churn block) ")
    print(f"({time.perf_counter() - t:.1f} s)")
    return record


#: `benchmarks/cascade_scale.py` on 800 generated videos (docs/policies.md, "At a scale where a
#: held-out fold can be judged"): what the demo's 80-video cascade cannot show.
CASCADE_AT_SCALE = (
    "the same cascade at 800 videos (400 per fold; benchmarks/cascade_scale.py, table in "
    "docs/policies.md): held out, confidence lands -1.6 [-4.6, 1.4] points from the terminal's "
    "71.0 at 43.0 [39.4, 46.4]% fewer decoded frames, learned -2.0 [-5.0, 1.0] at 43.8%; the "
    "in-sample sweep promised +3.5 points at 29% saved. 40 videos per fold are too few to fit "
    "a stopping rule."
)


def print_cascade_at_scale() -> None:
    """The benchmark's figures beside the demo's own cascade, which 80 items cannot judge."""
    import textwrap

    print(textwrap.fill(CASCADE_AT_SCALE, width=100, initial_indent="  ", subsequent_indent="  "))

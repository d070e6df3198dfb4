"""The demo's frame-selector steps, printed (`itemscale.workflows.selector_comparison`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..workflows import SelectorComparison


@contextmanager
def step(name: str) -> Iterator[None]:
    """A demo step: its `### name` heading, then the seconds it took."""
    print(f"\n### {name}", flush=True)
    started = time.perf_counter()
    yield
    print(f"({time.perf_counter() - started:.1f} s)")


def _compared(out: Path, bootstrap: int, batch_size: int, adaptive: bool) -> SelectorComparison:
    from ..workflows import selector_comparison

    found = selector_comparison(out, bootstrap=bootstrap, batch_size=batch_size, adaptive=adaptive)
    print(f"  {found.cells_run} cells run for series {found.series} ({found.selection_file})")
    return found


def selector_step(out: Path, *, bootstrap: int, batch_size: int) -> SelectorComparison:
    from ..workflows import DEMO_SELECTION, DEMO_SELECTOR_FRAMES, SELECTOR_DIR
    from ._inference_text import selector_lines

    k = DEMO_SELECTOR_FRAMES
    with step(
        f"frame selector: `{DEMO_SELECTION}` at {k} frames against uniform sampling "
        f"(itemscale select {out}/protocol.toml --frames {k} --out {out / SELECTOR_DIR})"
    ):
        found = _compared(out, bootstrap, batch_size, adaptive=False)
        if found.selector is None:
            print("  no budget shared with uniform sampling")
        else:
            for line in selector_lines(found.selector):
                print(f"  {found.budget}: {line}")
        print(f"  (the whole comparison: itemscale analyze {out}, churn block) ")
    return found


def adaptive_selector_step(out: Path, *, bootstrap: int, batch_size: int) -> SelectorComparison:
    from ..workflows import (
        DEMO_ADAPTIVE_MIN_FRAMES,
        DEMO_ADAPTIVE_SELECTION,
        DEMO_SELECTOR_FRAMES,
        SELECTOR_DIR,
    )
    from ._format import points_text
    from ._inference_text import selector_lines

    k, m = DEMO_SELECTOR_FRAMES, DEMO_ADAPTIVE_MIN_FRAMES
    with step(
        f"adaptive frame selector: `{DEMO_ADAPTIVE_SELECTION}`, up to {k} frames, charged "
        f"what it uses (itemscale select {out}/protocol.toml --frames {k} --adaptive "
        f"--min-frames {m} --name {DEMO_ADAPTIVE_SELECTION} --out {out / SELECTOR_DIR})"
    ):
        found = _compared(out, bootstrap, batch_size, adaptive=True)
        v = found.selector
        if v is None or v.frames_used_mean is None:
            print("  no budget shared with uniform sampling")
            return found
        line = (
            f"  mean frames used {v.frames_used_mean:.1f} of a cap of {v.frames_cap}: accuracy "
            f"{points_text(v.accuracy_selector)}"
        )
        if v.matched_cost is not None:
            line += (
                f" vs uniform at matched mean cost {points_text(v.matched_cost.accuracy_uniform)}"
                f" (difference {points_text(v.matched_cost.accuracy_difference)}) and uniform "
                f"at {v.frames_cap} frames {points_text(v.accuracy_uniform)}"
            )
        print(line)
        for text in selector_lines(v):
            print(f"  {found.budget}: {text}")
    return found


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
    import textwrap

    print(textwrap.fill(CASCADE_AT_SCALE, width=100, initial_indent="  ", subsequent_indent="  "))

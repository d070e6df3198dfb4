"""With fewer than ten videos the console prints "not estimable" for every interval, p-value,
power figure and additive-model test of the series, its `--by` groups and its text-only grid:
the whole text is pinned here, as `analyze` printed it before the console read the typed
result (issue 31), so moving where "not estimable" is decided cannot change a byte of it.
Every number left on these pages is a point estimate, so the text does not depend on the
bootstrap's draws."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from _support.analyses import N_BOOT, repeats_and_groups
from _support.runs import make_run
from itemscale.analysis.measures import analyze_responses
from itemscale.cli.cmd_analyze import print_summary
from itemscale.core.responses import normalise_responses

EXPECTED = Path(__file__).parent / "data" / "small_sample_console.txt"


def _pages(tmp_path: Path) -> str:
    """Four videos with a requested pair; three videos of two repeats with a text-only answer
    and `--by duration` groups of two and three videos; each printed in full and brief."""
    df, _ = make_run(tmp_path / "run", n_items=8, models=("m",), with_audit=False)
    groups, kwargs = repeats_and_groups()
    groups = normalise_responses(groups)
    few: pd.DataFrame = groups[groups["video_id"].isin(["v0", "v1", "v2"])]
    pages = []
    for table, options in ((df, {"test_pairs": [("f8", "f32")]}), (few, kwargs)):
        result = analyze_responses(table, bootstrap=N_BOOT, **options)
        for brief in (False, True):
            out = io.StringIO()
            print_summary(result, out, brief=brief)
            pages.append(out.getvalue())
    return "\n=====\n".join(pages)


def test_the_small_sample_console_text_is_unchanged(tmp_path: Path) -> None:
    text = _pages(tmp_path)
    assert "not estimable" in text and "-- duration = long" in text
    assert text == EXPECTED.read_text(encoding="utf-8")

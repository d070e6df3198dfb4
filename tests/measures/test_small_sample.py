"""Small samples say so: below MIN_VIDEOS videos analyze records which numbers cannot be
trusted, and the console prints "not estimable" instead of a zero-width interval, a p-value or
a minimum detectable effect of hundreds of points."""

from __future__ import annotations

import io
import re
from pathlib import Path

from _support.runs import make_run
from itemscale.analysis.measures import MIN_VIDEOS, NOT_ESTIMABLE, analyze_responses, interval_note
from itemscale.cli.cmd_analyze import print_summary


def _console(result: dict[str, object]) -> str:
    out = io.StringIO()
    print_summary(result, out)
    return out.getvalue()


def test_one_video_is_not_estimable(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", n_items=2, models=("m",), with_audit=False)
    result = analyze_responses(df, bootstrap=50, seed=0).to_json()
    block = result["models"]["m"]
    assert block["n_videos"] == 1
    record = block["small_sample"]
    assert record["n_videos"] == 1 and record["min_videos"] == MIN_VIDEOS
    assert set(record["not_estimable"]) == {"intervals", "paired_tests", "power", "heterogeneity"}
    # the JSON keeps what was computed (a zero-width interval); the console does not print it
    text = _console(result)
    assert "small sample: 1 video(s), fewer than 10" in text
    assert "[interval not estimable]" in text
    assert not re.search(r"\[(-?\d+\.\d), \1\]", text), text  # no [25.0, 25.0]
    # decided at display time, from the typed block or its JSON form alike
    assert interval_note(block) == NOT_ESTIMABLE
    typed = analyze_responses(df, bootstrap=50, seed=0).models["m"]
    assert interval_note(typed) == NOT_ESTIMABLE


def test_four_videos_print_no_minimum_detectable_effect(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", n_items=8, models=("m",), with_audit=False)
    result = analyze_responses(df, bootstrap=50, seed=0).to_json()
    block = result["models"]["m"]
    assert block["n_videos"] == 4 and "small_sample" in block
    text = _console(result)
    mde = next(line for line in text.splitlines() if "minimum detectable effect" in line)
    assert "not estimable" in mde and "points" not in mde.split(":", 1)[1]
    tests = [line for line in text.splitlines() if "clustered p=" in line]
    assert tests and all("clustered p=not estimable" in line for line in tests)


def test_enough_videos_change_nothing(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", n_items=2 * MIN_VIDEOS, models=("m",), with_audit=False)
    result = analyze_responses(df, bootstrap=50, seed=0).to_json()
    block = result["models"]["m"]
    assert "small_sample" not in block
    assert interval_note(block) is None
    assert interval_note(analyze_responses(df, bootstrap=0).models["m"]) is None
    assert "not estimable" not in _console(result)


def test_an_open_ended_series_says_its_sample_is_small() -> None:
    """A model with open-ended items only keeps its `small_sample` record on its continuous
    block; the console still says so and writes no interval for it (it used to print them)."""
    from _support.analyses import same_input_and_open_ended

    df, _ = same_input_and_open_ended()  # 12 items on 6 videos
    result = analyze_responses(df, bootstrap=20, seed=0)
    entry = result.models["open"]
    assert entry.continuous.small_sample is not None
    assert interval_note(entry) == NOT_ESTIMABLE
    text = _console(result)
    section = text.split("== open ", 1)[1].split("\n== ", 1)[0]
    assert "small sample: 6 video(s), fewer than 10" in section
    assert "[interval not estimable]" in section
    assert not re.search(r"\d \[-?\d+\.\d, -?\d+\.\d\]", section), section

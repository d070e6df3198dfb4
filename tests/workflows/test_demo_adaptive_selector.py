"""The demo's adaptive selector step: the built-in `change --adaptive` selection at a cap of 8
frames, swept beside uniform sampling on a small synthetic suite with the built-in model, and
its record: the frames it used and uniform sampling at that matched mean cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemscale.cli import main


def test_the_adaptive_selector_is_charged_what_it_used_beside_uniform(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli._demo_selector import adaptive_selector_step
    from itemscale.core.responses import read_run

    suite = tmp_path / "suite"
    assert main(["synth", "--out", str(suite), "--n", "6", "--seed", "5", "--layout", "focus"]) == 0
    run = tmp_path / "run"
    run.mkdir()
    (run / "protocol.toml").write_text(
        f"""output = "{run}"
text_only = false
[[models]]
name = "builtin"
backend = "builtin"
model = "builtin"
[benchmark]
kind = "synthetic"
path = "{suite}"
[grid]
frames = [4, 8]
short_side = [56]
sampling = ["linspace"]
"""
    )
    capsys.readouterr()
    found = adaptive_selector_step(run, bootstrap=0, batch_size=8)
    printed = capsys.readouterr().out
    v = found.selector
    assert v is not None and found.config == "<=8f@56/selection:change-adaptive"
    df, _ = read_run(run)
    mine = df[df["series"] == found.series]
    used = mine["effective_frames"].astype(float)
    assert v.frames_cap == 8 and v.frames_used_mean == pytest.approx(used.mean())
    assert 2 <= v.frames_used_min <= v.frames_used_max <= 8  # type: ignore[operator]
    assert v.matched_cost is not None
    assert f"mean frames used {v.frames_used_mean:.1f} of a cap of 8: accuracy" in printed
    assert "vs uniform at matched mean cost" in printed
    written = json.loads((run / "selector_adaptive.json").read_text())
    assert written["selector"]["frames_used_mean"] == pytest.approx(v.frames_used_mean)

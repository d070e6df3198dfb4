"""A user's own CSV through `itemscale import table` and `itemscale analyze --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemscale.cli import main

CSV = """model,item_id,video_id,config,order,frames,correct,answer
m,q1,v1,8f,1,8,1,A
m,q1,v1,16f,2,16,0,C
m,q1,v1,blind,0,0,0,C
m,q2,v1,8f,1,8,0,B
m,q2,v1,16f,2,16,1,A
m,q2,v1,blind,0,0,1,A
m,q3,v2,8f,1,8,1,D
m,q3,v2,16f,2,16,1,D
m,q3,v2,blind,0,0,0,B
m,q4,v3,8f,0,8,0,B
m,q4,v3,16f,0,16,0,B
"""


def test_import_then_analyze_matches_hand_computation(tmp_path: Path) -> None:
    src = tmp_path / "results.csv"
    # q4's rows give order 0 for both configs: fix them to agree with the others.
    src.write_text(
        CSV.replace("m,q4,v3,8f,0,8", "m,q4,v3,8f,1,8").replace(
            "m,q4,v3,16f,0,16", "m,q4,v3,16f,2,16"
        )
    )
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    out = tmp_path / "measures.json"
    assert main(["analyze", str(run), "--json", str(out), "--bootstrap", "200", "--seed", "3"]) == 0
    res = json.loads(out.read_text())["models"]["m"]
    assert res["axis"] == ["8f", "16f"]
    assert res["n_items"] == 4 and res["n_videos"] == 3
    assert res["accuracy"]["8f"]["value"] == 0.5  # q1, q3
    assert res["accuracy"]["16f"]["value"] == 0.5  # q2, q3
    assert res["oracle"]["value"] == 0.75
    assert res["harmful_rate"]["value"] == 0.25  # q1
    assert res["flip_down"]["8f->16f"]["value"] == 0.25
    assert res["flip_up"]["8f->16f"]["value"] == 0.25
    # text-only: answered for q1..q3, right for q2
    assert res["n_text_only"] == 3
    assert res["text_answerable_rate"]["value"] == pytest.approx(1 / 3)
    # the one harmful transition (q1: 8f -> 16f) answers C, the text-only answer
    assert res["text_overwrite_rate"]["value"] == 1.0
    lo, hi = res["oracle"]["ci"]
    assert 0.0 <= lo <= 0.75 <= hi <= 1.0
    again = tmp_path / "again.json"
    main(["analyze", str(run), "--json", str(again), "--bootstrap", "200", "--seed", "3"])
    assert json.loads(again.read_text()) == json.loads(out.read_text())


def test_analyze_missing_run_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(tmp_path / "nope")]) == 2
    assert "not a run directory" in capsys.readouterr().err

"""`analyze` and the report show a selector's series against uniform sampling, and flag a
selection that answers exactly as uniform does ("was the selection applied?"), on an imported
table as on a sweep."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from itemscale.cli import main


def _run(tmp_path: Path, *, applied: bool) -> Path:
    """60 items on 20 videos at 8 and 16 frames under uniform sampling, and a selector's series
    at 16 frames that answers every item as uniform does (or differs on a third of them)."""
    rows = ["model,item_id,video_id,series,config,order,frames,correct,answer"]
    for i in range(60):
        for order, frames in enumerate((8, 16), start=1):
            right = (i * 7 + order) % 5 < 2 + order
            rows.append(
                f"m,q{i},v{i // 3},linspace,{frames}f,{order},{frames},{int(right)},"
                f"{'A' if right else 'B'}"
            )
        right = (i * 7 + 2) % 5 < 4
        if applied and i % 3 == 0:
            right = not right
        rows.append(
            f"m,q{i},v{i // 3},selection:aks,16f/selection:aks,2,16,{int(right)},"
            f"{'A' if right else 'B'}"
        )
    src = tmp_path / "results.csv"
    src.write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    return run


def test_a_selection_that_changed_nothing_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, applied=False)
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", "50", "--json", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert "selector selection:aks vs linspace: accuracy" in out
    assert "fixes 0, breaks 0" in out
    assert "identical answers on 60 of 60 items: was the selection applied?" in out
    res = json.loads((tmp_path / "m.json").read_text())["models"]["m"]
    (churn,) = res["churn"].values()
    selector = churn["budgets"]["16f"]["selector"]
    assert selector["same_input"]["basis"] == "identical_answers"
    assert selector["n_frames_recorded"] == 0  # an import records no frames


def test_an_applied_selection_shows_what_it_fixes_and_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, applied=True)
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "was the selection applied?" not in out
    # every third item flipped: 20 changes; right 48 -> wrong (broken), wrong -> right (fixed)
    line = next(x for x in out.splitlines() if "selector selection:aks" in x)
    fixed = int(line.split("fixes ")[1].split(",")[0])
    broken = int(line.split("breaks ")[1])
    assert fixed + broken == 20
    assert "of the " in out and "items uniform gets wrong at every budget it ran" in out
    assert main(["report", str(run), "--bootstrap", "50"]) == 0
    page = html.unescape((run / "artifact" / "report.html").read_text(encoding="utf-8"))
    assert "The frame selector against uniform sampling" in page
    assert "uniform's always-wrong items it gets right" in page

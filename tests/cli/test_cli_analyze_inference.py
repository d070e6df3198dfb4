"""`itemscale analyze` prints the tests between budgets one line each, glossed once; bad
options are clear errors; the report shows the tables and marks the changes that hold."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from itemscale.analysis.measures import GLOSSARY
from itemscale.cli import main


def _run(tmp_path: Path) -> Path:
    """Two sampling phases of one model at 4, 8 and 16 frames, plus the text-only answer; 24
    items on 12 videos."""
    rows = ["model,item_id,video_id,series,config,order,frames,correct,answer"]
    for i in range(24):
        rows.append(f"m,q{i},v{i // 2},linspace,blind,0,0,{int(i % 3 == 0)},A")
        for order, frames in enumerate((4, 8, 16), start=1):
            for series in ("linspace", "centre"):
                right = (i * 7 + order * 5 + (series == "centre") * (i % 2)) % 10 < 3 + 2 * order
                label = f"{frames}f" + ("" if series == "linspace" else "/centre")
                rows.append(
                    f"m,q{i},v{i // 2},{series},{label},{order},{frames},{int(right)},"
                    f"{'A' if right else 'BC'[i % 2]}"
                )
    src = tmp_path / "results.csv"
    src.write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    return run


def test_the_console_prints_each_test_glossed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path)
    capsys.readouterr()
    out_json = tmp_path / "m.json"
    args = ["analyze", str(run), "--bootstrap", "100", "--json", str(out_json)]
    assert main([*args, "--power-target", "5", "--test-pair", "4f,16f"]) == 0
    out = capsys.readouterr().out
    res = json.loads(out_json.read_text())["models"]["m"]
    assert "paired tests (accuracy change, points; clustered McNemar p, Holm over the 2" in out
    for arrow, t in res["paired_tests"]["adjacent"].items():
        verdict = "holds" if t["significant_after_holm"] else "does not hold"
        assert f"{arrow}: " in out and f"Holm {t['holm_p']:.3g} ({verdict})" in out
    assert "requested pairs (Holm over these):" in out and "4f->16f: " in out
    assert res["power"]["target"] == pytest.approx(0.05)
    assert "(5.0 points needs" in out
    assert "additive model (item + budget, no interaction): harmful" in out
    assert "by trajectory, observed vs additive: increasing" in out
    assert "churn series:" in out and "answers " in out
    for term in ("clustered test", "Holm", "minimum detectable effect", "additive model", "churn"):
        assert out.count(GLOSSARY[term]) == 1, term
    # the first appearance carries the gloss
    line = next(x for x in out.splitlines() if x.strip().startswith("minimum detectable effect"))
    assert GLOSSARY["minimum detectable effect"] in line


def test_bad_inference_options_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path)
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", "0", "--test-pair", "4f,64f"]) == 2
    err = capsys.readouterr().err
    assert "--test-pair 4f,64f: no series has both" in err and "16f/centre" in err
    assert main(["analyze", str(run), "--bootstrap", "0", "--power-target", "0"]) == 2
    assert "--power-target" in capsys.readouterr().err
    assert main(["analyze", str(run), "--heterogeneity-draws", "-1"]) == 2
    with pytest.raises(SystemExit):
        main(["analyze", str(run), "--test-pair", "4f"])


def test_the_report_shows_the_tests(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert main(["report", str(run), "--bootstrap", "50"]) == 0
    page = html.unescape((run / "artifact" / "report.html").read_text(encoding="utf-8"))
    assert "Paired tests between adjacent budgets" in page
    assert "Heterogeneity: visual budgets" in page
    assert "Heterogeneity: with the text-only answer as budget 0" in page
    assert "minimum detectable effect (points)" in page
    assert "Churn series:" in page
    measures = json.loads((run / "artifact" / "measures.json").read_text())["models"]["m"]
    tests = measures["paired_tests"]["adjacent"].values()
    held = sum(t["significant_after_holm"] for t in tests)
    assert page.count("<b>holds</b>") >= held  # every change that holds is marked
    assert GLOSSARY["additive model"] in page and GLOSSARY["churn"] in page
    assert main(["verify", str(run / "artifact")]) == 0  # the rerun reproduces the tests


def test_a_handful_of_differences_prints_not_estimable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nine runs of one model whose adjacent budgets differ on a handful of 2,700 answers (as
    public lmms-eval runs at one frame count do): no minimum detectable effect and no video
    count below what the discrete test allows, "not estimable" with the counts instead."""
    rows = ["model,item_id,video_id,config,order,frames,correct"]
    flipped = {1: {5, 800}, 2: {1200, 2201, 2650}}
    for i in range(2700):
        base = int(i % 10 < 6)
        for order, frames in enumerate((8, 16, 32)):
            right = 1 - base if i in flipped.get(order, set()) else base
            rows.append(f"m,q{i},v{i // 3},{frames}f,{order},{frames},{right}")
    src = tmp_path / "results.csv"
    src.write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    assert main(["import", "table", str(src), "-o", str(run)]) == 0
    capsys.readouterr()
    args = ["analyze", str(run), "--bootstrap", "0", "--heterogeneity-draws", "0"]
    assert main([*args, "--json", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "minimum detectable effect" in x)
    assert (
        "axis not estimable (the budgets differ on 2 and 5 of 2,700 items, in 2 and 5 of " in line
    )
    assert "900 videos" in line and "needs" not in line and "points (" not in line
    power = json.loads((tmp_path / "m.json").read_text())["models"]["m"]["power"]
    assert power["axes"]["axis"]["mde"] is None and power["axes"]["axis"]["videos_needed"] is None
    for pair in power["pairs"].values():
        assert pair["mde"] is None and "fewer than 10 videos" in pair["mde_not_estimable"]

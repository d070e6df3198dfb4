"""`itemscale irt`, `itemscale anchors` and `analyze --anchors --irt` on an imported table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from itemscale.analysis.measures import IrtFit, simulate_2pl
from itemscale.cli import main


def _run(tmp_path: Path, name: str, models: tuple[str, ...], seed: int) -> Path:
    """A run of `models` x 3 budgets (+ text-only) x 60 items drawn from a known 2PL."""
    y, *_ = simulate_2pl(4 * len(models), 60, seed=seed)
    rows = ["model,item_id,video_id,config,order,frames,correct,answer"]
    for m, model in enumerate(models):
        for c, frames in enumerate((0, 4, 8, 16)):
            label = "textonly" if frames == 0 else f"{frames}f"
            for i in range(60):
                right = int(y[4 * m + c, i])
                rows.append(
                    f"{model},q{i:02d},v{i // 3},{label},{c},{frames},{right},{'AB'[1 - right]}"
                )
    table = tmp_path / f"{name}.csv"
    table.write_text("\n".join(rows) + "\n")
    run = tmp_path / name
    assert main(["import", "table", str(table), "-o", str(run)]) == 0
    return run


def test_fit_anchors_and_prediction_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, "base", ("m1", "m2", "m3"), seed=7)
    fit_path = tmp_path / "fit.json"
    assert main(["irt", str(run), "--json", str(fit_path)]) == 0
    out = capsys.readouterr().out
    assert "2PL on 12 respondents x 60 items" in out and "test information peaks" in out
    fit = IrtFit.from_json(fit_path.read_text())
    assert len(fit.respondents) == 12 and fit.converged
    anchors = tmp_path / "anchors.txt"
    assert (
        main(["anchors", str(run), "--k", "20", "--irt", str(fit_path), "--out", str(anchors)]) == 0
    )
    ids = [ln for ln in anchors.read_text().splitlines() if ln and not ln.startswith("#")]
    assert len(ids) == 20
    new = _run(tmp_path, "new", ("m4",), seed=8)
    pred = tmp_path / "pred.json"
    argv = ["analyze", str(new), "--anchors", str(anchors), "--irt", str(fit_path)]
    assert main([*argv, "--bootstrap", "50", "--json", str(pred)]) == 0
    out = capsys.readouterr().out
    assert "ESTIMATED from the anchors" in out
    record = json.loads(pred.read_text())
    assert record["anchors"] == 20 and record["items"] == 60
    assert record["schema_version"] == 3  # 2: intervals are {"value", "ci"}; 3: warnings
    assert [c["config_label"] for c in record["configurations"]] == ["textonly", "4f", "8f", "16f"]
    for c in record["configurations"]:
        acc = c["predicted_accuracy"]
        low, high = acc["ci"]
        assert 0.0 <= low <= acc["value"] <= high <= 1.0
    (rates,) = record["rates"]
    assert rates["note"].startswith("estimated")
    h = rates["harmful_rate"]
    assert h["ci"][0] <= h["value"] <= h["ci"][1]
    assert np.isclose(
        rates["oracle_headroom"]["value"], rates["oracle"]["value"] - rates["best_fixed"]["value"]
    )


def test_bad_combinations_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, "base", ("m1", "m2", "m3"), seed=7)
    other = _run(tmp_path, "other", ("m1", "m2", "m3"), seed=9)
    fit_path, other_fit = tmp_path / "fit.json", tmp_path / "other.json"
    assert main(["irt", str(run), "--json", str(fit_path)]) == 0
    assert main(["irt", str(other), "--json", str(other_fit)]) == 0
    anchors = tmp_path / "anchors.txt"
    assert main(["anchors", str(run), "--k", "10", "--out", str(anchors)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(run), "--anchors", str(anchors)]) == 2
    assert "--anchors needs --irt" in capsys.readouterr().err
    assert main(["analyze", str(run), "--anchors", str(anchors), "--irt", str(other_fit)]) == 2
    assert "drawn from another fit" in capsys.readouterr().err
    assert main(["anchors", str(run), "--k", "61", "--out", str(anchors)]) == 2
    assert "--k 61" in capsys.readouterr().err
    assert main(["analyze", str(run), "--anchors", str(anchors), "--irt", "missing.json"]) == 2
    assert "--irt missing.json" in capsys.readouterr().err


@pytest.mark.slow
def test_the_walk_through_on_the_release_covers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/anchors.md's walk-through: the 2PL fitted on four of the release's models, 100
    anchors, Qwen3-VL-8B predicted from its anchor answers alone. Every interval covers its
    accuracy on all 786 items; the predictions all err the same way, as one model's
    configurations share one draw of anchors (docs/anchors.md says why); `irt` says how many
    falling items it did not list."""
    from itemscale.core.responses import read_run
    from itemscale.workflows import release_dir

    data = release_dir()
    key = ["--answer-key", str(data / "V1_short_answer_key.csv")]
    for model in ("InternVL3-8B", "InternVL3.5-8B", "LLaVA-NeXT-Video-7B", "Qwen2.5-VL-7B"):
        argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", model, *key]
        table = str(data / f"{model}_V1_short_predictions_wide.csv")
        assert main([*argv, table, "-o", str(tmp_path / "four")]) == 0
    argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", "Qwen3-VL-8B"]
    table = str(data / "Qwen3-VL-8B_V1_short_predictions_wide.csv")
    assert main([*argv, *key, table, "-o", str(tmp_path / "qwen3")]) == 0
    fit, anchors, pred = tmp_path / "fit.json", tmp_path / "anchors.txt", tmp_path / "p.json"
    capsys.readouterr()
    assert main(["irt", str(tmp_path / "four"), "--json", str(fit)]) == 0
    out = capsys.readouterr().out
    assert (
        "interval): 21: 001-1, 003-1, " in out and f", 292-3 and 1 more (every one in {fit})" in out
    )
    assert (
        main(
            [
                "anchors",
                str(tmp_path / "four"),
                "--k",
                "100",
                "--irt",
                str(fit),
                "--out",
                str(anchors),
            ]
        )
        == 0
    )
    argv = ["analyze", str(tmp_path / "qwen3"), "--anchors", str(anchors), "--irt", str(fit)]
    assert main([*argv, "--json", str(pred)]) == 0
    df, _ = read_run(tmp_path / "qwen3")
    full = df.groupby("config_label")["correct"].mean()
    errors = []
    for c in json.loads(pred.read_text())["configurations"]:
        acc = c["predicted_accuracy"]
        truth = float(full[c["config_label"]])
        assert acc["ci"][0] <= truth <= acc["ci"][1], (c["config_label"], acc, truth)
        errors.append(acc["value"] - truth)
    assert len(errors) == 6 and all(e > 0 for e in errors)  # one draw, one direction
    assert 0.02 < float(np.mean(errors)) < 0.03  # 2.4 points on average (docs/anchors.md)

"""MLVU's generation tasks and AVSD (DSTC7) end to end: the published JSON shapes, generated
H.264 videos, a sweep of the shipped model (`builtin` backend), `analyze` with the oracle gap
per task, and the same answers imported as predictions against the benchmark file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _support.paths import DATA
from _support.sweep import make_video
from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import run_import
from itemscale.collect.items import load_benchmark
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import read_run, rouge_l, token_f1

GEN = DATA / "generation"
CASES = {
    "mlvu_generation": (
        GEN / "mlvu_generation.json",
        ["subPlot_new_all_1.mp4", "subPlot_new_all_2.mp4", "summary_1.mp4"],
        {"subPlot": 2, "summary": 2},
    ),
    "avsd": (GEN / "avsd_dstc7.json", ["QRB9X.mp4", "7UPGT.mp4"], {"dialogue": 5}),
}


def _protocol(tmp_path: Path, kind: str, bench: Path, videos: Path) -> Path:
    text = f"""
output = {json.dumps(str(tmp_path / "run"))}
[[models]]
name = "builtin"
backend = "builtin"
model = "builtin"
dtype = "float32"
[benchmark]
kind = "{kind}"
path = {json.dumps(str(bench))}
videos = {json.dumps(str(videos))}
[grid]
frames = [2, 4]
short_side = [56]
[decoding]
max_new_tokens = 12
"""
    path = tmp_path / "protocol.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def _oracle_gap(rows: pd.DataFrame) -> float:
    """Mean over items of the best visual score minus the best configuration's mean score."""
    visual = rows[rows["frames"] > 0].pivot_table(
        index="item_id", columns="config_label", values="token_f1"
    )
    return float(visual.max(axis=1).mean() - visual.mean(axis=0).max())


@pytest.mark.parametrize("kind", list(CASES))
def test_sweep_and_analyse_a_generation_benchmark(tmp_path: Path, kind: str) -> None:
    bench, names, tasks = CASES[kind]
    videos = tmp_path / "videos"
    for seed, name in enumerate(names):
        make_video(videos / name, n_frames=24, seed=seed, width=96, height=64)
    result = run_sweep(load_protocol(_protocol(tmp_path, kind, bench, videos)), progress=False)
    df = result.table
    items = {i.item_id: i for i in load_benchmark(bench)}
    assert set(df["item_id"]) == set(items)
    assert len(df) == len(items) * 3  # text-only, 2 and 4 frames
    assert set(df["status"]) == {"ok"}
    assert sorted(set(df["frames"])) == [0, 2, 4]
    for row in df.itertuples():
        item = items[str(row.item_id)]
        assert row.task_kind == item.task_kind.value
        assert row.reference == item.references[0]
        assert row.token_f1 == pytest.approx(token_f1(str(row.raw_text), list(item.references)))
        assert row.rouge_l == pytest.approx(rouge_l(str(row.raw_text), list(item.references)))
        assert 0.0 <= row.score <= 1.0
    assert (df["token_f1"] > 0).any()  # the references share words with the model's answers
    out = tmp_path / "measures.json"
    argv = ["analyze", str(tmp_path / "run"), "--bootstrap", "50", "--metric", "token_f1"]
    assert main([*argv, "--json", str(out)]) == 0
    block = json.loads(out.read_text(encoding="utf-8"))["models"]["builtin"]["continuous"]
    assert block["task_attribute"] == "task_type"
    assert {t: b["n_items"] for t, b in block["tasks"].items()} == tasks
    task_of = {i: items[i].attributes["task_type"] for i in items}
    for task, sub in block["tasks"].items():
        rows = df[df["item_id"].map(task_of) == task]
        assert sub["oracle_gap"]["value"] == pytest.approx(_oracle_gap(rows)), task
    assert block["oracle_gap"]["value"] == pytest.approx(_oracle_gap(df))
    # the per-item export holds the open items' score labels
    per_item = tmp_path / "items.csv"
    assert main([*argv, "--per-item", str(per_item)]) == 0
    labels = pd.read_csv(per_item)
    assert set(labels["kind"]) == {"continuous"} and len(labels) == len(items)
    best = df[df["frames"] > 0].groupby("item_id")["token_f1"].max()
    assert np.allclose(labels.set_index("item_id")["best_score"].loc[best.index], best)

    # the same answers, imported as a predictions table against the benchmark file
    preds = df[["model", "item_id", "config_label", "frames", "raw_text"]].rename(
        columns={"config_label": "config", "raw_text": "prediction"}
    )
    preds.to_csv(tmp_path / "preds.csv", index=False)
    summary = run_import(
        "table", [tmp_path / "preds.csv"], run_dir=tmp_path / "imported", benchmark=bench
    )
    assert summary.absent["builtin"]["absent"] == 0
    imported, _ = read_run(tmp_path / "imported")
    key = ["item_id", "frames"]
    both = imported.merge(df, on=key, suffixes=("", "_swept"))
    assert len(both) == len(df)
    assert np.allclose(both["token_f1"], both["token_f1_swept"])
    assert np.allclose(both["rouge_l"], both["rouge_l_swept"])
    assert (both["task_kind"] == both["task_kind_swept"]).all()
    assert (both["video_id"] == both["video_id_swept"]).all()

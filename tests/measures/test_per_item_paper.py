"""`analyze --per-item` gives the seed paper's released per-item labels (`labels/derived.csv`)
item by item: on the shipped V1 short split (with its shipped answer key) and on every other
split whose grid is the text-only answer plus one frame line. The V2 medium and MLVU keys are
written from the release's own labels (`tests/_support/scalegrid.py`), so on those two splits
this checks that the labels agree with one another and with itemscale, not an independent key.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from _support.scalegrid import derived, release_tables, split_key
from itemscale.cli import cmd_analyze, main

PAPER = ["trajectory_class", "is_visually_confused", "is_text_overwritten", "best_config"]
TABLE2 = "textonly,16f_151k,32f_151k,64f_151k"
#: The one released grid that is not one frame line: frame counts at 151k plus pixel variants.
MIXED = ("V1_short", "Qwen2.5-VL-7B")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def _import(split: str, tmp_path: Path, *extra: str) -> Path:
    key = split_key(split, tmp_path / f"{split}_key.csv")
    run = tmp_path / split
    for release in release_tables(split):
        argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", release.model]
        argv += ["--answer-key", str(key), "--absent", "noanswer", *extra, str(release.table)]
        assert main([*argv, "-o", str(run)]) == 0
    return run


def _per_item(run: Path, out: Path, *extra: str) -> pd.DataFrame:
    argv = ["analyze", str(run), "--bootstrap", "0", "--per-item", str(out), *extra]
    assert main(argv) == 0
    return pd.read_csv(out, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("split", ["V1_short", "V1_medium", "V2_medium", "MLVU"])
def test_per_item_labels_are_the_releases(tmp_path: Path, split: str) -> None:
    run = _import(split, tmp_path)
    ours = _per_item(run, tmp_path / "items.csv")
    table2 = _per_item(run, tmp_path / "table2.csv", "--configs", TABLE2)
    released = derived()
    released = released[released["split"] == split]
    merged = released.merge(
        ours, left_on=["model", "sample_id"], right_on=["model", "item_id"], suffixes=("_paper", "")
    )
    assert len(merged) == len(released)  # every released row has its item, and only once
    assert (merged["in_matched_grid"] == "1").all()
    checked = 0
    for model, rows in merged.groupby("model"):
        if (split, model) == MIXED:
            continue  # its order: test_the_mixed_grid_follows_the_papers_config_order
        for column in PAPER:
            differs = rows[rows[f"{column}_paper"] != rows[column]]
            assert differs.empty, (model, column, differs[["sample_id", column]].head())
        checked += 1
    assert checked == len(release_tables(split)) - ((split, "Qwen2.5-VL-7B") == MIXED)
    # matched_grid_best_config: best_config on the Table 2 grid (empty where a model lacks it)
    grid = released.merge(
        table2[["model", "item_id", "matched_grid_best_config"]],
        left_on=["model", "sample_id"],
        right_on=["model", "item_id"],
        how="left",
        suffixes=("_paper", ""),
    ).fillna({"matched_grid_best_config": ""})
    assert (grid["matched_grid_best_config_paper"] == grid["matched_grid_best_config"]).all()


def test_the_mixed_grid_follows_the_papers_config_order(tmp_path: Path) -> None:
    """Qwen2.5-VL-7B's V1 short grid (the 151k frame line plus 32f_302k, 64f_76k ... 128f_76k):
    the release's trajectory_class and best_config follow its JSON's `configs` order (the frame
    line by frames, then the pixel variants in label order), not frames-then-pixels; its
    is_visually_confused follows from no order of the released predictions (docs/measures.md)."""
    (release,) = [r for r in release_tables("V1_short") if r.model == MIXED[1]]
    wide = pd.read_csv(release.table, dtype=str, keep_default_na=False)
    long = wide.melt(id_vars="sample_id", var_name="config", value_name="answer")
    long["order"] = long["config"].map({c: i for i, c in enumerate(release.paper["configs"])})
    long["answer"] = long["answer"].replace("", "NOANSWER")
    long.to_csv(tmp_path / "long.csv", index=False)
    key = split_key("V1_short", tmp_path / "key.csv")
    argv = ["import", "table", "--id-column", "sample_id", "--model", release.model]
    assert (
        main(
            [
                *argv,
                "--answer-key",
                str(key),
                str(tmp_path / "long.csv"),
                "-o",
                str(tmp_path / "run"),
            ]
        )
        == 0
    )
    in_paper_order = _per_item(tmp_path / "run", tmp_path / "a.csv")
    by_frames = _per_item(_import("V1_short", tmp_path), tmp_path / "b.csv")
    released = derived()
    released = released[(released["split"] == "V1_short") & (released["model"] == MIXED[1])]

    def agreement(ours: pd.DataFrame) -> dict[str, float]:
        m = released.merge(ours, left_on=["model", "sample_id"], right_on=["model", "item_id"])
        assert len(m) == 786
        return {c: float((m[f"{c}_x"] == m[f"{c}_y"]).mean()) for c in PAPER}

    paper_order, frames_order = agreement(in_paper_order), agreement(by_frames)
    assert in_paper_order["grid"].iloc[0].split(",") == release.paper["configs"]
    assert paper_order["trajectory_class"] == paper_order["best_config"] == 1.0
    assert paper_order["is_text_overwritten"] == frames_order["is_text_overwritten"] == 1.0
    assert frames_order["trajectory_class"] < 1.0 and frames_order["best_config"] < 1.0
    # still unexplained: if this starts to hold, say so in docs/measures.md
    assert (
        paper_order["is_visually_confused"] < 0.95 and frames_order["is_visually_confused"] < 0.95
    )


def test_one_definition_of_visually_confused_on_every_grid(tmp_path: Path) -> None:
    """The per-item `is_visually_confused` is the item-level harmful rate with the text-only
    answer as budget 0, under the grid's own order: its mean is `grid_with_text`'s harmful rate
    for every model, Qwen2.5-VL-7B's grid of frames x pixels (a partial order) included, and an
    item is visually confused exactly when its trajectory falls somewhere."""
    import json

    run = _import("V1_short", tmp_path)
    items = _per_item(run, tmp_path / "items.csv", "--json", str(tmp_path / "m.json"))
    measures = json.loads((tmp_path / "m.json").read_text())["models"]
    for model, rows in items.groupby("model"):
        confused = rows["is_visually_confused"].astype(int)
        with_text = measures[model]["grid_with_text"]["harmful_rate"]["value"]
        assert confused.mean() == pytest.approx(with_text), model
        assert (confused == rows["harmful_with_text"].astype(int)).all(), model
        falls = rows["trajectory_class"].isin(["monotonic_decreasing", "oscillating"])
        assert (falls == (confused == 1)).all(), model
    qwen = items[items["model"] == MIXED[1]]["is_visually_confused"].astype(int)
    assert round(100 * qwen.mean(), 2) == 25.32  # the release says 30.41 (docs/measures.md)

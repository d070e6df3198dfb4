"""`analyze --per-item`: itemscale's per-item labels and the seed paper's, by hand, and as the
indicators whose means are analyze's rates (property tests, one-axis and frames x pixels)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.tables import table
from itemscale.analysis.measures import (
    PER_ITEM_SCHEMA_VERSION,
    TRAJECTORY_CLASSES,
    analyze_responses,
    paper_labels,
    per_item_labels,
)
from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import run_import
from itemscale.core.responses import normalise_responses

# gold A; text-only answer, then 8f, 16f, 32f
HAND = """model,item_id,video_id,config,frames,answer,gold,status
m,a,v1,text,0,A,A,
m,a,v1,8f,8,A,A,
m,a,v1,16f,16,B,A,
m,a,v1,32f,32,A,A,
m,b,v1,text,0,C,A,
m,b,v1,8f,8,C,A,
m,b,v1,16f,16,D,A,
m,b,v1,32f,32,A,A,
m,c,v2,text,0,B,A,
m,c,v2,8f,8,A,A,
m,c,v2,16f,16,A,A,
m,c,v2,32f,32,B,A,
m,d,v3,text,0,B,A,
m,d,v3,8f,8,B,A,
m,d,v3,16f,16,C,A,
m,d,v3,32f,32,D,A,
m,e,v3,text,0,A,A,
m,e,v3,8f,8,A,A,
m,e,v3,16f,16,A,A,
m,e,v3,32f,32,A,A,
m,f,v4,text,0,A,A,
m,f,v4,8f,8,A,A,
m,f,v4,16f,16,,A,model_error
m,f,v4,32f,32,A,A,
m,g,v4,8f,8,B,A,
m,g,v4,16f,16,A,A,
m,g,v4,32f,32,A,A,
"""

#: item -> (pattern, harmful, beneficial, terminal, oracle, n_right, first_right,
#:          text_only_right, text_overwrite, harmful_with_text)
OURS = {
    "a": ("mixed", 1, 1, 0, 1, 2, "8f", 1, 0, 1),
    "b": ("beneficial", 0, 1, 0, 1, 1, "32f", 0, 0, 0),
    "c": ("harmful", 1, 0, 1, 1, 2, "8f", 0, 1, 1),  # wrong at 32f with the blind answer
    "d": ("always_wrong", 0, 0, 0, 0, 0, None, 0, 0, 0),
    "e": ("always_right", 0, 0, 0, 1, 3, "8f", 1, 0, 0),
    "g": ("beneficial", 0, 1, 0, 1, 2, "16f", None, None, None),  # no text-only answer
}
#: item -> (trajectory_class, is_visually_confused, is_text_overwritten, best_config)
PAPER = {
    "a": ("oscillating", 1, 1, "text"),
    "b": ("monotonic_increasing", 0, 0, "32f"),
    "c": ("oscillating", 1, 0, "8f"),  # 0 -> 1 -> 0 with the text-only answer as budget 0
    "d": ("always_wrong", 0, 0, "text"),  # none right: the first configuration
    "e": ("always_correct", 0, 0, "text"),
    "g": (None, None, None, None),
}


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def _hand_run(tmp_path: Path) -> Path:
    path = tmp_path / "hand.csv"
    path.write_text(HAND, encoding="utf-8")
    run_import("table", [path], run_dir=tmp_path / "run")
    return tmp_path / "run"


def _none(value: object) -> object:
    return None if pd.isna(value) else value  # type: ignore[call-overload]


def test_labels_by_hand(tmp_path: Path) -> None:
    from itemscale.core.responses import read_run

    df, _ = read_run(_hand_run(tmp_path))
    labels = per_item_labels(df).set_index("item_id")
    assert set(labels["schema_version"]) == {PER_ITEM_SCHEMA_VERSION}
    assert set(labels["grid"]) == {"text,8f,16f,32f"}
    names = [
        "pattern",
        "harmful",
        "beneficial",
        "terminal_regression",
        "oracle",
        "n_right",
        "first_right",
        "text_only_right",
        "text_overwrite",
        "harmful_with_text",
    ]
    for item, expected in OURS.items():
        got = tuple(_none(labels.loc[item, n]) for n in names)
        assert got == expected, item
    for item, expected in PAPER.items():
        got = tuple(
            _none(labels.loc[item, n])
            for n in (
                "trajectory_class",
                "is_visually_confused",
                "is_text_overwritten",
                "best_config",
            )
        )
        assert got == expected, item
    # f failed at 16f: a row, out of the matched grid, with its reason
    assert labels.loc["f", "in_matched_grid"] == 0
    assert labels.loc["f", "drop_reason"] == "model_error"
    assert pd.isna(labels.loc["f", "pattern"]) and pd.isna(labels.loc["f", "harmful"])
    assert (labels.drop(index="f")["in_matched_grid"] == 1).all()
    assert labels.loc["a", "video_id"] == "v1" and labels.loc["a", "kind"] == "binary"


def test_the_cli_writes_csv_and_parquet(tmp_path: Path) -> None:
    run = _hand_run(tmp_path)
    csv_out, pq_out = tmp_path / "items.csv", tmp_path / "items.parquet"
    assert main(["analyze", str(run), "--bootstrap", "0", "--per-item", str(csv_out)]) == 0
    assert main(["analyze", str(run), "--bootstrap", "0", "--per-item", str(pq_out)]) == 0
    from_csv = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    assert from_csv.columns[:5].tolist() == ["schema_version", "model", "series", "kind", "item_id"]
    row = from_csv.set_index("item_id").loc["c"]
    assert (row["harmful"], row["trajectory_class"], row["is_visually_confused"]) == (
        "1",
        "oscillating",
        "1",
    )
    assert from_csv.set_index("item_id").loc["g", "trajectory_class"] == ""
    parquet = pq.read_table(pq_out)
    assert parquet.schema.metadata[b"itemscale.per_item_schema_version"] == b"1"
    assert parquet.num_rows == len(from_csv) == 7
    # under --configs the paper's columns are its matched_grid_* values
    sub = tmp_path / "sub.csv"
    argv = ["analyze", str(run), "--bootstrap", "0", "--configs", "text,8f,16f"]
    assert main([*argv, "--per-item", str(sub)]) == 0
    grid = pd.read_csv(sub, dtype=str, keep_default_na=False).set_index("item_id")
    assert "matched_grid_best_config" in grid.columns and "best_config" not in grid.columns
    assert grid.loc["c", "matched_grid_trajectory_class"] == "monotonic_increasing"
    assert grid.loc["f", "in_matched_grid"] == "0"  # its 16f cell still failed
    assert set(grid["grid"]) == {"text,8f,16f"}


def test_a_bad_suffix_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _hand_run(tmp_path)
    assert main(["analyze", str(run), "--per-item", str(tmp_path / "x.xlsx")]) == 2
    assert "must end in .csv or .parquet" in capsys.readouterr().err
    assert not (tmp_path / "x.xlsx").exists()


def test_open_items_have_score_labels() -> None:
    df = table(
        {"q1": [0.2, 0.9, 0.5], "q2": [0.3, 0.3, 0.35]},
        kind="open_qa",
        text={"q1": (0.1, ""), "q2": (0.6, "")},
    )
    labels = per_item_labels(normalise_responses(df), eps=0.1).set_index("item_id")
    assert labels.loc["q1", "kind"] == "continuous"
    assert (labels.loc["q1", "best_score"], labels.loc["q1", "best_score_config"]) == (0.9, "16f")
    assert (labels.loc["q1", "harmful_eps"], labels.loc["q1", "beneficial_eps"]) == (1, 1)
    assert (labels.loc["q2", "harmful_eps"], labels.loc["q2", "beneficial_eps"]) == (0, 0)
    assert labels.loc["q2", "text_score"] == 0.6
    assert labels["trajectory_class"].isna().all() and labels["pattern"].isna().all()


def test_paper_labels_cover_every_class() -> None:
    y = np.array([[1, 1, 1], [0, 0, 0], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 0, 1]])
    got = paper_labels(y, ["t", "a", "b"])
    assert got["trajectory_class"].tolist() == [
        "always_correct",
        "always_wrong",
        "monotonic_increasing",
        "monotonic_decreasing",
        "oscillating",
        "oscillating",
    ]
    assert set(got["trajectory_class"]) == set(TRAJECTORY_CLASSES)
    assert got["best_config"].tolist() == ["t", "t", "b", "t", "a", "t"]
    assert got["is_text_overwritten"].tolist() == [0, 0, 0, 1, 0, 1]
    assert got["is_visually_confused"].tolist() == [0, 0, 0, 1, 1, 1]


def _random_table(data: st.DataObject, multi_axis: bool) -> pd.DataFrame:
    n = data.draw(st.integers(2, 12))
    labels = ["2f@56", "4f@56", "2f@112", "4f@112"] if multi_axis else ["8f", "16f", "32f"]
    k = len(labels)
    bits = st.lists(st.integers(0, 1), min_size=k, max_size=k)
    matrix = {f"i{i}": [float(b) for b in data.draw(bits)] for i in range(n)}
    answers = {
        i: ["A" if y else data.draw(st.sampled_from("BC")) for y in ys] for i, ys in matrix.items()
    }
    text = {}
    for i in matrix:
        if data.draw(st.booleans()):
            right = data.draw(st.booleans())
            text[i] = (float(right), "A" if right else data.draw(st.sampled_from("BC")))
    videos = {i: f"v{int(i[1:]) // 2}" for i in matrix}
    df = table(matrix, labels=labels, answers=answers, text=text, videos=videos)
    if multi_axis:
        spec = {"2f@56": (2, 3136), "4f@56": (4, 3136), "2f@112": (2, 12544), "4f@112": (4, 12544)}
        visual = df["frames"] > 0
        df.loc[visual, "frames"] = df.loc[visual, "config_label"].map(lambda c: spec[c][0])
        df.loc[visual, "pixels"] = df.loc[visual, "config_label"].map(lambda c: spec[c][1])
    return normalise_responses(df)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), multi_axis=st.booleans())
def test_label_means_are_the_rates(data: st.DataObject, multi_axis: bool) -> None:
    df = _random_table(data, multi_axis)
    block = analyze_responses(df, bootstrap=0).to_json()["models"]["m"]
    labels = per_item_labels(df)
    assert len(labels) == df["item_id"].nunique()
    mean = lambda col: float(labels[col].astype(float).mean())  # noqa: E731
    for col, key in (
        ("harmful", "harmful_rate"),
        ("beneficial", "beneficial_rate"),
        ("terminal_regression", "terminal_regression_rate"),
        ("oracle", "oracle"),
    ):
        assert mean(col) == pytest.approx(block[key]["value"]), col
    with_text = labels[labels["text_only_right"].notna()]
    if with_text.empty:
        assert "grid_with_text" not in block
        return
    assert mean("text_only_right") == pytest.approx(block["text_answerable_rate"]["value"])
    g = block["grid_with_text"]
    assert with_text["harmful_with_text"].astype(float).mean() == pytest.approx(
        g["harmful_rate"]["value"]
    )
    assert with_text["is_text_overwritten"].astype(float).mean() == pytest.approx(
        g["overwrite_rate"]["value"]
    )
    harmful_items = with_text["harmful"].astype(float).sum()
    if harmful_items:
        assert with_text["text_overwrite"].astype(float).sum() / harmful_items == pytest.approx(
            block["text_overwrite_item_rate"]["value"]
        )
    if not multi_axis:  # on one axis the paper's confusion is the grid's harmful rate
        assert (with_text["is_visually_confused"] == with_text["harmful_with_text"]).all()
    first = with_text["best_config"]
    right = with_text["oracle"].astype(bool) | with_text["text_only_right"].astype(bool)
    assert (first[~right] == "text-only").all()

"""The memory-saving reads give the same answers: duplicate row keys found from factorized
codes match pandas' own `duplicated`, and a slim read (what `analyze` uses) leaves only the
columns no measure reads empty."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.analysis.measures import analyze_responses
from itemscale.cli import main
from itemscale.core.responses import (
    duplicated_keys,
    normalise_responses,
    read_responses,
    read_run,
    write_responses,
)
from itemscale.core.responses._io import UNUSED_BY_ANALYSIS

KEYS = st.lists(
    st.tuples(
        st.sampled_from(["m", "n", ""]),
        st.text(max_size=3),
        st.sampled_from(["8f", "16f"]),
        st.integers(0, 2),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(KEYS)
def test_duplicate_keys_from_codes_match_pandas(rows: list[tuple[str, str, str, int]]) -> None:
    df = pd.DataFrame(rows, columns=["model", "item_id", "config_id", "repeat"])
    cols = list(df.columns)
    for keep in ("first", False):
        expected = df.duplicated(cols, keep=keep).to_numpy()
        assert (duplicated_keys(df, cols, keep=keep).to_numpy() == expected).all()


def test_a_slim_read_empties_only_the_columns_no_measure_reads(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        "model,item_id,video_id,config,frames,correct,prediction\n"
        "m,q1,v1,8f,8,1,the answer is A\nm,q1,v1,16f,16,0,B\n",
        encoding="utf-8",
    )
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 0
    full, meta = read_run(tmp_path / "run")
    slim, slim_meta = read_run(tmp_path / "run", slim=True)
    assert meta == slim_meta and list(full.columns) == list(slim.columns)
    assert full["raw_text"].notna().all() and full["source"].notna().all()
    for column in full.columns:
        if column in UNUSED_BY_ANALYSIS:
            assert slim[column].isna().all(), column
        elif isinstance(slim[column].dtype, pd.CategoricalDtype):  # the string columns
            assert full[column].dtype == "str", column
            pd.testing.assert_series_equal(full[column], slim[column].astype("str"))
        else:
            pd.testing.assert_series_equal(full[column], slim[column])
    assert isinstance(slim["item_id"].dtype, pd.CategoricalDtype)


def unsorted_run(folder: Path) -> Path:
    """A run whose strings first appear out of sorted order (q10 before q9, `é` last in
    sorted order but not in the file), on two videos, one item missing a configuration."""
    rows = []
    for config, frames in (("8f", 8), ("16f", 16)):
        for i, item in enumerate(["q10", "q9", "q2", "Q1", "é", "q3"]):
            right = (i + frames) % 2
            video = "vb" if i % 2 else "va"
            if (item, config) != ("q2", "8f"):  # left out of the matched grid
                rows.append(f"m,{item},{video},{config},{frames},{right},{'AB'[right]}")
    table = folder / "t.csv"
    table.write_text(
        "model,item_id,video_id,config,frames,correct,answer\n" + "\n".join(rows) + "\n",
        "utf-8",
    )
    run = folder / "run"
    assert main(["import", "table", str(table), "-o", str(run)]) == 0
    return run


def test_a_slim_read_gives_the_same_measures(tmp_path: Path) -> None:
    """The categories are sorted as the strings are, so every measure (its item order, its
    sorted labels) is what the full read of plain strings gives."""
    run = unsorted_run(tmp_path)
    full, _ = read_run(run)
    slim, _ = read_run(run, slim=True)
    for column in ("item_id", "video_id", "config_label", "answer", "status"):
        categories = list(slim[column].cat.categories)
        assert categories == sorted(categories), column
    assert (
        analyze_responses(slim, bootstrap=50, seed=2).to_json()
        == analyze_responses(full, bootstrap=50, seed=2).to_json()
    )


def test_categorical_columns_are_written_as_strings(tmp_path: Path) -> None:
    """A frame holding categoricals (a slim read) writes plain strings, redacted as any."""
    full, _ = read_run(unsorted_run(tmp_path))
    frame = full.assign(
        error=pd.Categorical(["Authorization: Bearer abcdefghijklmnopqrstuvwx"] * len(full)),
        answer=full["answer"].astype("category"),
    )
    write_responses(frame, tmp_path / "again.parquet")
    back = read_responses(tmp_path / "again.parquet")
    assert back["answer"].dtype == "str" and back["error"].dtype == "str"
    pd.testing.assert_series_equal(back["answer"], full["answer"])
    assert not back["error"].str.contains("abcdefghijklmnop").any()


def test_unsorted_categories_are_converted(tmp_path: Path) -> None:
    """Categories not in sorted order would order items by the categories: such a frame is
    converted to plain strings like any other type outside the schema."""
    full, _ = read_run(unsorted_run(tmp_path))
    frame = full.assign(
        item_id=pd.Categorical(
            full["item_id"], categories=["q9", *sorted(set(full["item_id"]) - {"q9"})]
        )
    )
    assert normalise_responses(frame)["item_id"].dtype == "str"
    ordered = full.assign(item_id=full["item_id"].astype("category"))
    assert isinstance(normalise_responses(ordered)["item_id"].dtype, pd.CategoricalDtype)

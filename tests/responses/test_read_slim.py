"""The memory-saving reads give the same answers: duplicate row keys found from factorized
codes match pandas' own `duplicated`, and a slim read (what `analyze` uses) leaves only the
columns no measure reads empty."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.cli import main
from itemscale.responses import duplicated_keys, read_run
from itemscale.responses._io import UNUSED_BY_ANALYSIS

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
        else:
            pd.testing.assert_series_equal(full[column], slim[column])

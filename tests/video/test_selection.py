"""Selection file readers: each format read and detected, every unreadable record located."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.protocol import SamplingPolicy
from itemscale.video import SelectionError, read_selection, sample_indices, selected_frames


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_each_format_is_read_and_detected(tmp_path: Path) -> None:
    aks = _write(tmp_path, "a.json", json.dumps([{"question_id": 7, "frame_idx": [1, 2]}]))
    bolt = _write(tmp_path, "b.json", json.dumps({"vid": [{"question_id": "q", "frames": [0.5]}]}))
    jsonl = _write(tmp_path, "c.jsonl", '{"item_id": "q", "indices": [4, 5]}\n\n')
    csv = _write(tmp_path, "d.csv", 'item_id,indices\nq,"[4 , 5]"\nr,6;7\n')
    a, b, c, d = (read_selection(p) for p in (aks, bolt, jsonl, csv))
    assert (a.format, a.unit, a.entries["7"].values) == ("aks", "index", (1, 2))
    assert (b.format, b.unit, b.entries["q"].values) == ("bolt", "seconds", (0.5,))
    assert (c.format, c.entries["q"].values) == ("table", (4, 5))
    assert (d.format, d.entries["r"].values, d.entries["r"].where) == ("table", (6, 7), "line 3")
    # a named format wins over detection
    with pytest.raises(SelectionError, match="a BOLT selection is a JSON object"):
        read_selection(aks, "bolt")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x.json", "[1, 2", "not JSON"),
        ("x.json", '"a"', "a JSON selection is a list of records"),
        ("x.json", '[{"question_id": "q"}]', "record 0: needs `question_id` and `frame_idx`"),
        ("x.json", '[{"question_id": "q", "frame_idx": [1.5]}]', "1.5 is not a whole number"),
        ("x.json", '[{"question_id": "q", "frame_idx": [-1]}]', "-1 is not a frame index >= 0"),
        ("x.json", '[{"question_id": true, "frame_idx": [1]}]', "no usable question/item id"),
        ("x.json", '{"v": [{"question_id": "q", "frames": ["a"]}]}', "'a' is not a frame"),
        ("x.csv", "id,indices\nq,1\n", "needs an `item_id` column"),
        ("x.csv", "item_id,indices,timestamps\nq,1,2\n", "line 2 (q): give exactly one"),
        ("x.jsonl", '{"item_id": "q", "indices": [1]}\n[1]\n', "line 2: a JSON object per line"),
        (
            "x.json",
            '[{"question_id": "q", "frame_idx": [1]}, {"question_id": "q", "frame_idx": [2]}]',
            "item 'q': given twice (record 0 and record 1)",
        ),
    ],
)
def test_an_unreadable_record_is_located(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(SelectionError) as err:
        read_selection(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match=r"gone\.json: file not found"):
        read_selection(tmp_path / "gone.json")


@given(
    st.lists(st.integers(0, 99), min_size=1, max_size=12),
)
def test_indices_come_back_sorted_unique_with_duplicates_counted(values: list[int]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        path.write_text(json.dumps([{"question_id": "q", "frame_idx": values}]))
        got = selected_frames(
            read_selection(path),
            "q",
            len(values),
            video_frames=100,
            frame_times=np.arange(100) / 25.0,
        )
    assert got.indices.tolist() == sorted(set(values))
    assert got.duplicates == len(values) - len(set(values)) and got.listed == len(values)


def test_the_selection_policy_has_no_formula() -> None:
    policy = SamplingPolicy(name="selection", selection="s")
    assert policy.tag == "selection:s"
    with pytest.raises(ValueError, match="its frames come from its file"):
        sample_indices(policy, 100, 8, fps=25.0)
    with pytest.raises(ValueError, match="needs `selection`"):
        SamplingPolicy(name="selection")
    with pytest.raises(ValueError, match="only allowed with name='selection'"):
        SamplingPolicy(name="linspace", selection="s")

"""Selection file readers: each format read and detected, every unreadable record located."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.collect.protocol import SamplingPolicy
from itemscale.collect.video import SelectionError, read_selection, sample_indices, selected_frames


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


def _in_a_thread(call: Callable[[], object], seconds: float = 10.0) -> BaseException | None:
    """Run `call` in a thread; the error it raised (None when none), or a failure when it has
    not returned within `seconds` (a read that never ends)."""
    import threading

    raised: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # handed back to the test
            raised.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still reading after {seconds} s"
    return raised[0] if raised else None


def test_a_fifo_or_a_device_is_refused_within_seconds(tmp_path: Path) -> None:
    import os

    from itemscale.collect.protocol import selection_file_digest

    fifo = tmp_path / "sel.json"
    os.mkfifo(fifo)
    for call in (lambda: read_selection(fifo), lambda: selection_file_digest(fifo)):
        err = _in_a_thread(call)
        assert isinstance(err, SelectionError) and "not a regular file (a FIFO)" in str(err)
    zero = Path("/dev/zero")
    if zero.exists():
        err = _in_a_thread(lambda: read_selection(zero))
        assert isinstance(err, SelectionError) and "not a regular file (a device)" in str(err)
        err = _in_a_thread(lambda: selection_file_digest(zero))
        assert isinstance(err, SelectionError)


def test_the_bytes_read_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import itemscale.collect.protocol._selection_file as reader

    path = _write(tmp_path, "big.json", json.dumps([{"question_id": "q", "frame_idx": [1]}]))
    monkeypatch.setattr(reader, "MAX_SELECTION_BYTES", 16)
    with pytest.raises(SelectionError, match=r"big\.json: \d+ bytes, more than a selection file"):
        read_selection(path)


def test_deep_nesting_is_a_located_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "deep.json", "[" * 100_000)
    with pytest.raises(SelectionError, match=r"deep\.json: not JSON: nested too deeply"):
        read_selection(path)


def test_a_csv_with_a_utf8_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfitem_id,indices\nq,1 2\n")
    selection = read_selection(path)
    assert selection.entries["q"].values == (1, 2)


def test_integral_float_indices_are_read_as_aks_writes_them(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.json", json.dumps([{"question_id": 3, "frame_idx": [12.0, 0.0]}]))
    assert read_selection(path).entries["3"].values == (12, 0)
    bad = _write(tmp_path, "b.json", json.dumps([{"question_id": 3, "frame_idx": [12.5]}]))
    with pytest.raises(SelectionError, match=r"record 0 \(3\): frame index 12.5 is not a whole"):
        read_selection(bad)


def test_a_bare_list_of_lists_says_to_declare_positional(tmp_path: Path) -> None:
    path = _write(tmp_path, "p.json", "[[1.0, 2.0], [3.0]]")
    with pytest.raises(SelectionError, match='declare format = "positional"'):
        read_selection(path)


def test_a_positional_file_is_matched_by_its_order_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "p.json", "[[1.0, 2.0], [3.0]]")
    lines = _write(tmp_path, "order.txt", "a\nb\n")
    records = _write(tmp_path, "order.json", json.dumps([{"qid": "a"}, {"qid": "b"}]))
    for order, key in ((lines, None), (records, "qid")):
        selection = read_selection(path, "positional", order=order, order_key=key)
        assert selection.entries["a"].values == (1, 2) and selection.entries["b"].values == (3,)
    three = _write(tmp_path, "three.txt", "a\nb\nc\n")
    with pytest.raises(SelectionError, match=r"2 frame lists, but the order file .*three\.txt"):
        read_selection(path, "positional", order=three)
    with pytest.raises(SelectionError, match="needs `order_key`"):
        read_selection(path, "positional", order=records)

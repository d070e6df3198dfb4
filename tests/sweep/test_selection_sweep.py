"""The `selection` sampling policy end to end: a sweep replays a selector's file exactly, records
its digest, and refuses a bad selection with the file, the item and the value named.

Videos are real H.264 files (tests/_support/sweep.py: video vN has 30 + 5N frames at 10 fps);
the selection files are written here, so every expected index is known by hand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from _support.sweep import pixel_factory, write_benchmark
from itemscale.collect.protocol import ProtocolError, load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.collect.video import SelectionError
from itemscale.core.responses import read_run

#: 2-frame AKS selection: source-video frame numbers, one record per question.
AKS_2 = [
    {"question_id": "v0-q0", "frame_idx": [3, 17]},
    {"question_id": "v0-q1", "frame_idx": [29, 0]},  # any order: recorded sorted
    {"question_id": "v1-q0", "frame_idx": [5, 34]},
    {"question_id": "v1-q1", "frame_idx": [12, 12]},  # a duplicate: one frame is used
]
#: 4-frame selection in seconds (a CSV table): 10 fps, so t seconds is frame floor(10 t).
CSV_4 = """item_id,timestamps
v0-q0,"[0.0, 0.55, 1.0, 2.9]"
v0-q1,0.1 0.2 0.3 0.4
v1-q0,0;1;2;3.45
v1-q1,"[3.0, 0.05, 1.5, 2.25]"
"""
EXPECTED = {
    (2, "v0-q0"): [3, 17],
    (2, "v0-q1"): [0, 29],
    (2, "v1-q0"): [5, 34],
    (2, "v1-q1"): [12],
    (4, "v0-q0"): [0, 5, 10, 29],
    (4, "v0-q1"): [1, 2, 3, 4],
    (4, "v1-q0"): [0, 10, 20, 34],
    (4, "v1-q1"): [0, 15, 22, 30],
}


def _protocol(root: Path, model: dict[str, str], selections: str, frames: str = "[2, 4]") -> Path:
    suite = root / "suite"
    if not suite.exists():
        write_benchmark(suite, 2)
    lines = [f'{k} = "{v}"' for k, v in model.items()]
    text = f"""output = "run"
text_only = false
[[models]]
{chr(10).join(lines)}
[benchmark]
kind = "synthetic"
path = "suite"
[grid]
frames = {frames}
sampling = ["linspace", {{ name = "selection", selection = "s" }}]
{selections}
"""
    path = root / "protocol.toml"
    path.write_text(text)
    return path


BUILTIN = {"name": "tiny", "backend": "builtin", "model": "builtin", "dtype": "float32"}
PIXEL = {"name": "pixel", "backend": "hf", "model": "pixel-test"}


def test_a_builtin_sweep_records_exactly_the_selection_files_frames(tmp_path: Path) -> None:
    (tmp_path / "s2.json").write_text(json.dumps(AKS_2))
    (tmp_path / "s4.csv").write_text(CSV_4)
    proto = _protocol(tmp_path, BUILTIN, '[selections.s]\npaths = { 2 = "s2.json", 4 = "s4.csv" }')
    result = run_sweep(load_protocol(proto), progress=False)
    df, prov = read_run(tmp_path / "run")
    assert result.ran == len(df) == 16 and set(df["status"]) == {"ok"}
    chosen = df[df["series"] == "selection:s/cached"]
    assert len(chosen) == 8
    for row in chosen.to_dict("records"):
        assert list(row["frame_indices"]) == EXPECTED[(row["frames"], row["item_id"])]
        assert row["effective_frames"] == len(row["frame_indices"])
        assert row["sampling"] == "selection:s"
        # v1-q1's [12, 12] sends one frame: the 2-frame configuration is a cap
        assert row["config_label"] == (
            "<=2f/selection:s" if row["frames"] == 2 else "4f/selection:s"
        )
    # uniform beside it is untouched
    uniform = df[df["series"] == "linspace/cached"]
    assert {tuple(r) for r in uniform[uniform["video_id"] == "v0"]["frame_indices"]} == {
        (0, 29),
        (0, 9, 19, 29),
    }
    record = prov["sweep"]["selections"]
    for label, name in (("<=2f", "s2.json"), ("4f", "s4.csv")):
        entry = record[f"{label}/selection:s"]
        assert entry["sha256"] == hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        assert entry["format"] == ("aks" if label == "<=2f" else "table")
        assert entry["items_checked"] == 4
    assert record["<=2f/selection:s"]["duplicate_frames_removed"] == 1
    assert record["<=2f/selection:s"]["items_with_duplicates"] == 1
    assert record["<=2f/selection:s"]["frames_listed_min"] == 1
    assert record["4f/selection:s"]["duplicate_frames_removed"] == 0
    (session,) = prov["sessions"]
    assert session["selections"]["<=2f/selection:s"]["sha256"] == entry_digest(tmp_path)


def entry_digest(root: Path) -> str:
    return hashlib.sha256((root / "s2.json").read_bytes()).hexdigest()


def test_the_files_digest_is_part_of_every_cells_identity(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    proto = _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"', frames="[2]")
    first = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert first.ran == 8
    again = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert again.ran == 0  # the same file: every cell done
    changed = [dict(r) for r in AKS_2]
    changed[0]["frame_idx"] = [4, 17]
    (tmp_path / "s.json").write_text(json.dumps(changed))
    rerun = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert rerun.ran == 4  # only the selection's cells are new
    df, _ = read_run(tmp_path / "run", superseded=True)  # the earlier file's cells are kept
    sel = df[df["series"] == "selection:s/cached"]
    assert sel["config_id"].nunique() == 2
    assert sorted(map(tuple, sel[sel["item_id"] == "v0-q0"]["frame_indices"])) == [
        (3, 17),
        (4, 17),
    ]


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (AKS_2[:3], "item 'v1-q1': not in the selection (3 items there)"),
        (
            [*AKS_2[:2], {"question_id": "v1-q0", "frame_idx": [5, 35]}, AKS_2[3]],
            "item 'v1-q0': frame index 35 is past the video's end (35 frames: 0..34)",
        ),
        (
            [*AKS_2[:3], {"question_id": "v1-q1", "frame_idx": [1, 2, 3]}],
            "item 'v1-q1': 3 frames listed (record 3), more than the configuration's 2",
        ),
    ],
)
def test_a_bad_aks_selection_stops_the_sweep_naming_file_item_and_value(
    tmp_path: Path, records: list[dict[str, Any]], message: str
) -> None:
    (tmp_path / "s.json").write_text(json.dumps(records))
    proto = _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"', frames="[2]")
    with pytest.raises(SelectionError) as err:
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert str(err.value) == f"{tmp_path / 's.json'}: {message}"
    assert not (tmp_path / "run" / "responses.parquet").exists()  # before any cell ran


def test_a_timestamp_past_the_duration_is_refused(tmp_path: Path) -> None:
    bolt = {
        "v0": [
            {"question_id": "v0-q0", "frames": [0.0, 1.0]},
            {"question_id": "v0-q1", "frames": [0.5, 3.2]},  # v0 lasts 3.0 s (30 frames)
        ],
        "v1": [
            {"question_id": "v1-q0", "frames": [0.0, 3.45]},
            {"question_id": "v1-q1", "frames": [1.0, 1.0]},
        ],
    }
    (tmp_path / "s.json").write_text(json.dumps(bolt))
    proto = _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"', frames="[2]")
    with pytest.raises(SelectionError, match=r"s\.json: item 'v0-q1': timestamp 3\.2 s is past"):
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    bolt["v0"][1]["frames"] = [0.5, 2.95]
    (tmp_path / "s.json").write_text(json.dumps(bolt))
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert result.selections["<=2f/selection:s"]["format"] == "bolt"  # [1.0, 1.0]: one frame
    assert result.selections["<=2f/selection:s"]["duplicate_frames_removed"] == 1
    df, _ = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"].set_index("item_id")["frame_indices"]
    assert list(sel["v0-q1"]) == [5, 29] and list(sel["v1-q1"]) == [10]


def test_the_protocol_names_a_selection_it_cannot_use(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    with pytest.raises(ProtocolError, match="no file for \\[4\\]"):
        load_protocol(_protocol(tmp_path, PIXEL, '[selections.s]\npaths = { 2 = "s.json" }'))
    with pytest.raises(ProtocolError, match="`path` is one file, but the grid has 2 frame"):
        load_protocol(_protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"'))
    with pytest.raises(ProtocolError, match=r"selection 's' has no \[selections\.s\] table"):
        load_protocol(_protocol(tmp_path, PIXEL, "", frames="[2]"))
    gone = load_protocol(_protocol(tmp_path, PIXEL, '[selections.s]\npath = "gone.json"', "[2]"))
    with pytest.raises(ProtocolError, match=r"\[selections\.s\] \(2 frames\): .*gone\.json: file"):
        run_sweep(gone, progress=False, backend_factory=pixel_factory)
    with pytest.raises(ProtocolError, match="format"):
        load_protocol(
            _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"\nformat = "x"', "[2]")
        )


def test_an_unreadable_video_is_a_media_error_and_its_items_are_still_checked(
    tmp_path: Path,
) -> None:
    write_benchmark(tmp_path / "suite", 2, corrupt=["v1"])
    (tmp_path / "s.json").write_text(json.dumps(AKS_2[:3]))  # v1-q1 missing
    proto = _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"', frames="[2]")
    with pytest.raises(SelectionError, match="item 'v1-q1': not in the selection"):
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    records = [*AKS_2[:3], {"question_id": "v1-q1", "frame_idx": [0, 999]}]
    (tmp_path / "s.json").write_text(json.dumps(records))  # past v1's end, but v1 is unreadable
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    df, _ = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"].set_index("item_id")
    assert set(sel.loc[["v1-q0", "v1-q1"], "status"]) == {"media_error"}
    assert set(sel.loc[["v0-q0", "v0-q1"], "status"]) == {"ok"}
    assert result.selections["2f/selection:s"]["items_checked"] == 2


def test_every_repeat_replays_the_same_frames(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    proto = _protocol(tmp_path, PIXEL, '[selections.s]\npath = "s.json"', frames="[2]")
    proto.write_text(proto.read_text().replace('output = "run"', 'output = "run"\nrepeats = 2'))
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert result.ran == 16
    df, _ = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"]
    assert sorted(sel["repeat"].unique()) == [0, 1]
    for row in sel.to_dict("records"):
        assert list(row["frame_indices"]) == EXPECTED[(2, row["item_id"])]

"""Adaptive selections: a configuration's frame count is a cap under a selection (records list
1..K frames), every cell records exactly its record's frames, and the label says so; a file
with exactly K frames a record keeps the id it had before caps existed.

Videos are real H.264 files (tests/_support/sweep.py: video vN has 30 + 5N frames at 10 fps).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark
from itemscale.analysis.comparison import COMPARE_SCHEMA_VERSION
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import plan_sweep, run_sweep
from itemscale.collect.video import SelectionError
from itemscale.core.responses import read_run

PIXEL = {"name": "pixel", "backend": "hf", "model": "pixel-test"}
AKS_2 = [
    {"question_id": "v0-q0", "frame_idx": [3, 17]},
    {"question_id": "v0-q1", "frame_idx": [29, 0]},
    {"question_id": "v1-q0", "frame_idx": [5, 34]},
    {"question_id": "v1-q1", "frame_idx": [12, 13]},
]

#: 4 to 8 frames per question under an 8-frame configuration.
VARIABLE_8 = [
    {"question_id": "v0-q0", "frame_idx": [0, 4, 8, 12]},
    {"question_id": "v0-q1", "frame_idx": [1, 3, 5, 7, 9, 11, 13, 15]},
    {"question_id": "v1-q0", "frame_idx": [2, 6, 10, 14, 18, 22]},
    {"question_id": "v1-q1", "frame_idx": [0.0, 30.0, 31.0, 32.0, 33.0]},  # AKS writes floats
]


def _protocol(root: Path, selections: str, frames: str) -> Path:
    suite = root / "suite"
    if not suite.exists():
        write_benchmark(suite, 2)
    model = "\n".join(f'{k} = "{v}"' for k, v in PIXEL.items())
    path = root / "protocol.toml"
    path.write_text(
        f"""output = "run"
text_only = false
[[models]]
{model}
[benchmark]
kind = "synthetic"
path = "suite"
[grid]
frames = {frames}
sampling = ["linspace", {{ name = "selection", selection = "s" }}]
{selections}
"""
    )
    return path


def test_records_listing_fewer_frames_than_the_cap_sweep_and_record_exactly_those(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.json").write_text(json.dumps(VARIABLE_8))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', frames="[8]")
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    df, prov = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"].set_index("item_id")
    assert set(sel["status"]) == {"ok"} and len(sel) == 4
    for record in VARIABLE_8:
        row = sel.loc[str(record["question_id"])]
        want = sorted(int(v) for v in record["frame_idx"])
        assert list(row["frame_indices"]) == want
        assert row["effective_frames"] == len(want)
        assert row["frames"] == 8  # the cap stays the budget's place on the axis
        assert row["config_label"] == "<=8f/selection:s"
    entry = result.selections["<=8f/selection:s"]
    assert entry["cap"] is True
    assert (entry["frames_listed_min"], entry["frames_listed_max"]) == (4, 8)
    assert entry["frames_listed_mean"] == pytest.approx((4 + 8 + 6 + 5) / 4)
    assert prov["sweep"]["selections"]["<=8f/selection:s"]["config_id"] == sel["config_id"].iloc[0]


def test_more_frames_than_the_cap_is_still_refused(tmp_path: Path) -> None:
    records = [*VARIABLE_8[:3], {"question_id": "v1-q1", "frame_idx": list(range(9))}]
    (tmp_path / "s.json").write_text(json.dumps(records))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', frames="[8]")
    with pytest.raises(SelectionError, match=r"item 'v1-q1': 9 frames listed \(record 3\), more"):
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)


def test_a_file_with_exactly_k_frames_a_record_keeps_its_id(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    proto = load_protocol(_protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]"))
    (config,) = [c for c in proto.configurations() if c.sampling.name == "selection"]
    digest = hashlib.sha256((tmp_path / "s.json").read_bytes()).hexdigest()
    canonical = {  # the id's canonical form before caps and positional files existed
        "v": 1,
        "frames": 2,
        "max_pixels": None,
        "short_side": None,
        "token_budget": None,
        "sampling": {
            "name": "selection",
            "fps": None,
            "seed": None,
            "phase": 0.0,
            "selection": "s",
            "selection_format": "auto",
            "selection_digest": digest,
        },
        "pipeline": "cached",
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    assert config.config_id == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert config.label == "2f/selection:s"


def test_dry_run_runs_the_same_selection_checks(tmp_path: Path) -> None:
    records = [*AKS_2[:3], {"question_id": "v1-q1", "frame_idx": [0, 999]}]  # past the end
    (tmp_path / "s.json").write_text(json.dumps(records))
    proto = load_protocol(_protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]"))
    with pytest.raises(SelectionError, match="item 'v1-q1': frame index 999 is past the video"):
        plan_sweep(proto)
    (tmp_path / "s.json").write_text(json.dumps(AKS_2[:3]))
    proto = load_protocol(_protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]"))
    with pytest.raises(SelectionError, match="item 'v1-q1': not in the selection"):
        plan_sweep(proto)
    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    proto = load_protocol(_protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]"))
    assert plan_sweep(proto).cells > 0


def test_a_changed_selection_file_supersedes_its_earlier_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli import main

    (tmp_path / "s.json").write_text(json.dumps(AKS_2))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]")
    first = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    (old_id,) = {r["config_id"] for r in first.selections.values()}
    changed = [dict(r) for r in AKS_2]
    changed[0]["frame_idx"] = [4, 17]
    changed[1]["frame_idx"] = [1]  # now a cap: the label becomes <=2f
    (tmp_path / "s.json").write_text(json.dumps(changed))
    again = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    new_id = again.selections["<=2f/selection:s"]["config_id"]
    assert set(again.superseded_selections) == {old_id}
    assert again.superseded_selections[old_id]["superseded_by"] == new_id
    assert any("the file changed since 4 cells" in w for w in again.warnings)
    df, prov = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"]
    assert set(sel["config_id"]) == {new_id} and len(sel) == 4
    everything, _ = read_run(tmp_path / "run", superseded=True)  # still stored, by id
    assert set(everything[everything["series"] == "selection:s/cached"]["config_id"]) == {
        old_id,
        new_id,
    }
    assert old_id in prov["sweep"]["superseded_selections"]
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "run"), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert f"superseded: 2f/selection:s (configuration {old_id}, 4 cells stored)" in out
    assert "2f/selection:s ->" not in out and "-> 2f/selection:s" not in out
    # a third sweep with the file unchanged: still superseded, nothing runs again
    third = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert third.ran == 0 and set(third.superseded_selections) == {old_id}
    # the report measures the current cells, and verify recomputes the same from its copy
    assert main(["report", str(tmp_path / "run"), "--bootstrap", "20"]) == 0
    assert main(["verify", str(tmp_path / "run" / "artifact")]) == 0


def test_compare_shows_the_selector_record_and_charges_frames_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli import main
    from itemscale.workflows import compare

    (tmp_path / "s.json").write_text(json.dumps(VARIABLE_8))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[8]")
    run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    run = tmp_path / "run"
    result = compare(run, series=["linspace/cached", "selection:s/cached"], bootstrap=0)
    assert result.schema_version == COMPARE_SCHEMA_VERSION
    assert result.a.selection is None and result.a.frames_used_mean == pytest.approx(8.0)
    sel = result.b.selection
    assert sel is not None and sel.selection == "s" and sel.cap is True
    assert sel.frames_cap == 8 and (sel.frames_used_min, sel.frames_used_max) == (4, 8)
    assert sel.frames_used_mean == pytest.approx(23 / 4)
    assert sel.sha256 == hashlib.sha256((tmp_path / "s.json").read_bytes()).hexdigest()
    (cost,) = [v for v in result.verdicts if v.key == "cost"]
    assert "A used 8.0 frames per answered item, B 5.8" in cost.sentence
    assert "takes up to 8 frames and used 4-8" in cost.sentence
    assert "unequal cost" in cost.sentence
    capsys.readouterr()
    code = main(
        ["compare", str(run), "--series", "linspace/cached", "--series", "selection:s/cached"]
    )
    assert code == 0
    assert "selector s: " in capsys.readouterr().out


def test_a_positional_file_replays_as_the_same_selection_in_the_aks_shape(tmp_path: Path) -> None:
    """AKS's own published shape: lists of native-frame indices written as floats, matched to
    questions by position in an order file (here a JSON list of records, `order_key`)."""
    (tmp_path / "s.json").write_text(json.dumps(VARIABLE_8))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[8]")
    run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    aks, _ = read_run(tmp_path / "run")
    order = [{"question_id": r["question_id"], "video": "x"} for r in reversed(VARIABLE_8)]
    lists = [[float(v) for v in r["frame_idx"]] for r in reversed(VARIABLE_8)]
    (tmp_path / "videomme.json").write_text(json.dumps(order))
    (tmp_path / "videomme_8.json").write_text(json.dumps(lists))
    table = (
        '[selections.s]\npath = "videomme_8.json"\nformat = "positional"\n'
        'order = "videomme.json"\norder_key = "question_id"'
    )
    proto = _protocol(tmp_path, table, "[8]")
    proto.write_text(proto.read_text().replace('output = "run"', 'output = "run2"'))
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert result.selections["<=8f/selection:s"]["format"] == "positional"
    positional, _ = read_run(tmp_path / "run2")

    def by_item(df: object) -> dict[str, tuple[list[int], str]]:
        sel = df[df["series"] == "selection:s/cached"]  # type: ignore[index]
        return {
            str(r["item_id"]): (list(r["frame_indices"]), str(r["answer"]))
            for r in sel.to_dict("records")
        }

    assert by_item(positional) == by_item(aks) and len(by_item(aks)) == 4
    (tmp_path / "videomme_8.json").write_text(json.dumps(lists[:3]))
    with pytest.raises(SelectionError, match=r"3 frame lists, but the order file .* names 4"):
        load_protocol(proto).configurations()


def _bolt_mlvu(second_question: str = "Which colour is shown in clip 0 part 1?") -> dict:
    """BOLT's MLVU shape: the video name as `question_id`, so ids repeat within a video."""
    return {
        "v0": [
            {
                "question_id": "v0",
                "question": "Which colour is shown in clip 0 part 0?",
                "frames": [0.0, 1.0],
            },
            {"question_id": "v0", "question": second_question, "frames": [0.5]},
        ],
        "v1": [
            {
                "question_id": "v1",
                "question": "Which colour is shown in clip 1 part 0?",
                "frames": [0.0, 3.0],
            },
            {
                "question_id": "v1",
                "question": "Which  colour is shown in clip 1 part 1? ",
                "frames": [1.0],
            },
        ],
    }


def test_a_bolt_file_whose_ids_repeat_is_matched_by_question_text(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(_bolt_mlvu()))
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]")
    result = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    assert result.selections["<=2f/selection:s"]["matched_by"] == "question"
    df, _ = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"].set_index("item_id")["frame_indices"]
    assert {k: list(v) for k, v in sel.items()} == {
        "v0-q0": [0, 10],
        "v0-q1": [5],
        "v1-q0": [0, 30],
        "v1-q1": [10],
    }
    (tmp_path / "s.json").write_text(json.dumps(_bolt_mlvu("What is in clip 9?")))
    with pytest.raises(
        SelectionError, match=r"video 'v0' record 1: question 'What is in clip 9\?'"
    ):
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    bad = _bolt_mlvu()
    del bad["v0"][1]["question"]
    (tmp_path / "s.json").write_text(json.dumps(bad))
    with pytest.raises(SelectionError, match="ids may repeat only when every record carries"):
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)


def test_a_fifo_selection_path_stops_the_sweep_within_seconds(tmp_path: Path) -> None:
    import os
    import threading

    from itemscale.cli import main

    os.mkfifo(tmp_path / "s.json")
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]")
    codes: list[int] = []
    for args in (["sweep", str(proto), "--no-progress"], ["sweep", str(proto), "--dry-run"]):
        thread = threading.Thread(target=lambda a=args: codes.append(main(a)), daemon=True)
        thread.start()
        thread.join(20)
        assert not thread.is_alive(), f"{args} still blocked on the FIFO after 20 s"
    assert codes == [2, 2]
    assert not (tmp_path / "run" / "responses.parquet").exists()


@pytest.mark.parametrize(
    "frames",
    [[1, float("nan")], [-1, 2], [0, 999]],
    ids=["nan", "negative", "past-the-end"],
)
def test_sweep_dry_run_refuses_what_the_sweep_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], frames: list[float]
) -> None:
    from itemscale.cli import main

    records = [*AKS_2[:3], {"question_id": "v1-q1", "frame_idx": frames}]
    (tmp_path / "s.json").write_text(json.dumps(records))  # NaN written as the token NaN
    proto = _protocol(tmp_path, '[selections.s]\npath = "s.json"', "[2]")
    assert main(["sweep", str(proto), "--dry-run"]) == 2
    assert "s.json" in capsys.readouterr().err


BUILTIN = {"name": "tiny", "backend": "builtin", "model": "builtin", "dtype": "float32"}
#: 4 frames a record; v1-q0 lists one frame four times over (by index or by timestamps that
#: all fall on frame 0 of a 10 fps video)
REPEATED_4 = {
    "index": [
        {"question_id": "v0-q0", "frame_idx": [0, 4, 8, 12]},
        {"question_id": "v0-q1", "frame_idx": [1, 3, 5, 7]},
        {"question_id": "v1-q0", "frame_idx": [5, 5, 5, 5]},
        {"question_id": "v1-q1", "frame_idx": [0, 10, 20, 30]},
    ],
    "timestamps": "item_id,timestamps\nv0-q0,0 0.4 0.8 1.2\nv0-q1,0.1 0.3 0.5 0.7\n"
    "v1-q0,0.0 0.01 0.02 0.03\nv1-q1,0 1 2 3\n",
}


@pytest.mark.parametrize("unit", ["index", "timestamps"])
def test_duplicates_that_leave_fewer_frames_than_the_budget_make_it_a_cap(
    tmp_path: Path, unit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """[5, 5, 5, 5] at 4 frames sends 1 frame: the budget is a cap (`<=4f`), run.json counts
    the frames after duplicates are merged, and the sweep says how many records lost frames."""
    from itemscale.cli import main

    data = REPEATED_4[unit]
    name = "s.json" if unit == "index" else "s.csv"
    (tmp_path / name).write_text(json.dumps(data) if unit == "index" else str(data))
    proto = _protocol(tmp_path, f'[selections.s]\npath = "{name}"', frames="[4]")
    if unit == "index":  # through the command, with the built-in model: the printed line
        text = proto.read_text().replace(
            "\n".join(f'{k} = "{v}"' for k, v in PIXEL.items()),
            "\n".join(f'{k} = "{v}"' for k, v in BUILTIN.items()),
        )
        proto.write_text(text)
        assert main(["sweep", str(proto), "--no-progress"]) == 0
        printed = capsys.readouterr().out
        assert "selection <=4f/selection:s: " in printed
        assert "3 duplicate frames removed (1 record(s) lost frames that way)" in printed
        assert "distinct frames 1-4 (mean 3.2)" in printed
    else:
        run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
    df, prov = read_run(tmp_path / "run")
    sel = df[df["series"] == "selection:s/cached"].set_index("item_id")
    assert set(sel["config_label"]) == {"<=4f/selection:s"} and set(sel["status"]) == {"ok"}
    assert list(sel.loc["v1-q0", "frame_indices"]) == [5 if unit == "index" else 0]
    assert sel.loc["v1-q0", "effective_frames"] == 1
    entry = prov["sweep"]["selections"]["<=4f/selection:s"]
    assert entry["cap"] is True
    assert (entry["frames_listed_min"], entry["frames_listed_max"]) == (1, 4)
    assert entry["frames_listed_mean"] == pytest.approx((4 + 4 + 1 + 4) / 4)
    assert (entry["duplicate_frames_removed"], entry["items_with_duplicates"]) == (3, 1)
    assert plan_sweep(load_protocol(proto)).cells > 0  # the dry run plans it too
    if unit == "timestamps":  # a resume finds every cell done, under the same label
        again = run_sweep(load_protocol(proto), progress=False, backend_factory=pixel_factory)
        assert again.ran == 0 and "<=4f/selection:s" in again.selections

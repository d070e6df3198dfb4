"""A new user's first hour (issue 15): files teammates can read, `cascade` writing its file
where the report finds it, and a misspelt `--by` attribute that says what exists."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from itemscale.cli import cmd_analyze, main

HEADER = "model,item_id,video_id,config,frames,correct,confidence,attr_duration"


@pytest.fixture(autouse=True)
def _live_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


@pytest.fixture
def run(tmp_path: Path) -> Path:
    lines = [HEADER]
    for i in range(12):
        lines += [
            f"m,q{i},v{i // 2},8f,8,{i % 2},0.{5 + i % 4}," + ("short" if i < 6 else "long"),
            f"m,q{i},v{i // 2},16f,16,{(i + 1) % 2},0.{6 + i % 3},"
            + ("short" if i < 6 else "long"),
        ]
    table = tmp_path / "t.csv"
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    assert main(["import", "table", str(table), "-o", str(run_dir)]) == 0
    return run_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_written_file_is_readable_by_teammates(run: Path, tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        assert main(["analyze", str(run), "--bootstrap", "0", "--json", str(run / "m.json")]) == 0
        assert main(["cascade", str(run), "--bootstrap", "0"]) == 0
        assert main(["report", str(run), "--bootstrap", "0"]) == 0
    finally:
        os.umask(previous)
    for name in ("responses.parquet", "run.json", "m.json"):
        assert _mode(run / name) == 0o644, name
    artifact = run / "artifact"
    assert _mode(artifact) == 0o755
    for path in artifact.rglob("*"):
        assert _mode(path) == (0o755 if path.is_dir() else 0o644), path


def test_cascade_writes_its_json_into_the_run_by_default(run: Path) -> None:
    assert main(["cascade", str(run), "--bootstrap", "0"]) == 0
    report = json.loads((run / "cascade.json").read_text(encoding="utf-8"))
    assert report["settings"]["bootstrap"] == 0
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    assert (run / "artifact" / "cascade.json").is_file()  # the report found it


def test_a_misspelt_by_attribute_names_the_ones_that_exist(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(run), "--bootstrap", "0", "--by", "durration"]) == 2
    err = capsys.readouterr().err
    assert "no item has attribute(s) 'durration'" in err and "duration" in err
    assert main(["analyze", str(run), "--bootstrap", "0", "--by", "duration"]) == 0


def test_lmms_eval_folders_in_config_mixing_and_the_reported_score(
    tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.core.responses import read_run

    logs = fixtures_dir / "lmms-eval"
    run = tmp_path / "run"
    argv = ["import", "lmms-eval", str(logs / "videomme-uniform16")]
    assert main([*argv, "--config", f"kf8:8={logs / 'videomme-dbfp8'}", "-o", str(run)]) == 0
    out = capsys.readouterr().out
    assert "lmms-eval reported videomme_perception_score 59.44" in out
    assert "re-extracted accuracy 52.50" in out
    assert "warning: kf8 is the same log file as 16f (sha256 " in out  # the two fixture logs
    df, _ = read_run(run)
    frames = df.groupby("config_label")["frames"].first().to_dict()
    assert frames == {"16f": 16, "kf8": 8}
    order = df.groupby("config_label")["axis_order"].first()
    assert order["kf8"] < order["16f"]  # a named run sits at its frame count
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["import", "lmms-eval", "--config", f"x:8={empty}", "-o", str(tmp_path / "r")]) == 2
    assert "no lmms-eval samples files" in capsys.readouterr().err


def _two_axis_table() -> object:
    import pandas as pd

    from itemscale.core.responses import normalise_responses

    grid = [
        ("2f@56", 2, 56 * 84),
        ("2f@112", 2, 112 * 168),
        ("4f@56", 4, 56 * 84),
        ("4f@112", 4, 112 * 168),
    ]
    #          2f@56 2f@112 4f@56 4f@112
    ys = {
        "a": (1, 0, 0, 0),  # harmful on both axes; a terminal regression
        "b": (0, 1, 0, 1),  # harmful only if 2f@112 -> 4f@56 were "more budget": it is not
        "c": (0, 0, 1, 1),  # beneficial along frames
        "d": (1, 1, 1, 1),
    }
    rows = []
    for item, y in ys.items():
        for k, (label, frames, pixels) in enumerate(grid):
            rows.append(
                {
                    "model": "m",
                    "item_id": item,
                    "video_id": f"v{item}",
                    "task_kind": "mcqa",
                    "series": "default",
                    "config_id": label,
                    "config_label": label,
                    "axis_order": float(k),
                    "frames": frames,
                    "pixels": pixels,
                    "repeat": 0,
                    "status": "ok",
                    "correct": float(y[k]),
                }
            )
    return normalise_responses(pd.DataFrame(rows))


def test_a_two_axis_grid_uses_the_partial_order_and_reports_each_chain() -> None:
    from itemscale.analysis.measures import analyze_responses

    block = analyze_responses(_two_axis_table(), bootstrap=0).to_json()["models"]["m"]  # type: ignore[arg-type]
    assert block["order"]["multi_axis"] and block["order"]["axes"] == ["frames", "pixels"]
    assert block["harmful_rate"]["value"] == pytest.approx(1 / 4)  # a only, not b
    assert block["beneficial_rate"]["value"] == pytest.approx(2 / 4)  # b (2f: 56 -> 112), c
    assert block["terminal_regression_rate"]["value"] == pytest.approx(1 / 4)
    assert block["adjacent"] == [
        "2f@56->2f@112",
        "2f@56->4f@56",
        "2f@112->4f@112",
        "4f@56->4f@112",
    ]
    assert "2f@112->4f@56" not in block["flip_down"]  # not comparable: no flip counted
    assert set(block["chains"]) == {"frames@56", "frames@112", "resolution@2f", "resolution@4f"}
    fr112 = block["chains"]["frames@112"]
    assert fr112["axis"] == ["2f@112", "4f@112"]
    assert fr112["harmful_rate"]["value"] == 0.0 and fr112["accuracy"]["4f@112"]["value"] == 0.75
    one = analyze_responses(_two_axis_table(), bootstrap=0, axis="frames@56").to_json()["models"][
        "m"
    ]  # type: ignore[arg-type]
    assert one["axis"] == ["2f@56", "4f@56"] and not one["order"]["multi_axis"]
    with pytest.raises(ValueError, match=r"no budget chain 'frames@999'.*frames@112"):
        analyze_responses(_two_axis_table(), bootstrap=0, axis="frames@999").to_json()  # type: ignore[arg-type]


def test_budget_order_keeps_one_axis_and_allocation_axes_as_they_were() -> None:
    import numpy as np

    from itemscale.analysis.measures import budget_order

    one = budget_order(np.array([8, 16, 32]), np.array([np.nan] * 3), ["8f", "16f", "32f"])
    assert not one.multi_axis and one.adjacent == ((0, 1), (1, 2))
    allocation = budget_order(np.array([8, 16, 32]), np.array([4000, 2000, 1000]), ["a", "b", "c"])
    assert not allocation.multi_axis and allocation.less[0, 2]
    rising = budget_order(np.array([8, 16]), np.array([1000, 2000]), ["a", "b"])
    assert not rising.multi_axis


def test_model_locations_are_explained_before_transformers_speaks(tmp_path: Path) -> None:
    from itemscale.collect.models import BackendError, load_backend
    from itemscale.collect.protocol import ModelEntry

    with pytest.raises(BackendError, match=r"the model folder .*nope does not exist"):
        load_backend(ModelEntry(name="m", backend="hf", model=str(tmp_path / "nope")))
    with pytest.raises(
        BackendError, match="not in the local Hugging Face cache; nothing was downloaded"
    ):
        load_backend(ModelEntry(name="m", backend="hf", model="some-org/some-video-llm"))


def test_dry_run_names_the_missing_video_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from _support.sweep import write_benchmark, write_protocol

    suite = write_benchmark(tmp_path / "suite", 2)
    protocol = write_protocol(tmp_path / "p.toml", suite)
    shutil.rmtree(suite / "videos")
    assert main(["sweep", str(protocol), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "cells have no readable video" in out
    assert f"unreadable in {suite / 'videos'} (the folder does not exist)" in out


def test_audit_cards_read_plainly() -> None:
    from itemscale.report._html import _shown

    assert _shown(None) == "not recorded" and _shown(float("nan"), "not run") == "not run"
    assert _shown(4704.0) == "4704" and _shown("B") == "B"


def test_the_item_explorer_shows_question_gold_and_text_only_answer(run: Path) -> None:
    from itemscale.core.responses import read_run
    from itemscale.report import trajectory_table
    from itemscale.report._explorer import explorer_payload

    df, _ = read_run(run)
    df = df.assign(reference="A")
    payload = explorer_payload(
        trajectory_table(df), df, {"q0": {"question": "Which colour flashes?", "options": ()}}
    )
    f = {name: n for n, name in enumerate(payload["fields"])}
    first = next(r for r in payload["rows"] if r[f["item"]] == "q0")
    assert first[f["question"]] == "Which colour flashes?" and first[f["gold"]] == "A"
    assert len(first[f["values"]]) == len(first[f["answers"]]) == len(payload["labels"])
    assert len(first) == len(payload["fields"])

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
    assert report["settings"]["n_boot"] == 0
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
    from itemscale.responses import read_run

    logs = fixtures_dir / "lmms-eval"
    run = tmp_path / "run"
    argv = ["import", "lmms-eval", str(logs / "videomme-uniform16")]
    assert main([*argv, "--config", f"kf8:8={logs / 'videomme-dbfp8'}", "-o", str(run)]) == 0
    out = capsys.readouterr().out
    assert "lmms-eval reported videomme_perception_score 59.44" in out
    assert "re-extracted accuracy 52.50" in out
    assert "warning: byte-identical sample files" in out  # the two fixture logs are one file
    df, _ = read_run(run)
    frames = df.groupby("config_label")["frames"].first().to_dict()
    assert frames == {"16f": 16, "kf8": 8}
    order = df.groupby("config_label")["axis_order"].first()
    assert order["kf8"] < order["16f"]  # a named run sits at its frame count
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["import", "lmms-eval", "--config", f"x:8={empty}", "-o", str(tmp_path / "r")]) == 2
    assert "no lmms-eval samples files" in capsys.readouterr().err

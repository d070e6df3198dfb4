"""The audit artifact: trajectories, build, manifest and `itemscale verify`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from _support.runs import make_mixed_run, make_run
from itemscale.cli import main
from itemscale.core.responses import MANIFEST_FILE
from itemscale.report import build_artifact, trajectory_table, verify_artifact
from itemscale.report._html import json_for_script
from itemscale.report._trajectories import pattern_of


def test_pattern_of_hand_computed() -> None:
    nan = np.nan
    y = np.array(
        [
            [1, 1, 1],
            [0, 0, 0],
            [1, 0, 0],
            [0, 1, 1],
            [1, 0, 1],
            [0, 1, 0],
            [1, nan, 1],
        ]
    )
    assert pattern_of(y, binary=True).tolist() == [
        "always_right",
        "always_wrong",
        "harmful",
        "beneficial",
        "mixed",
        "mixed",
        "incomplete",
    ]
    s = np.array([[0.5, 0.45, 0.5], [0.9, 0.5, 0.5], [0.2, 0.5, 0.1]])
    assert pattern_of(s, binary=False, eps=0.1).tolist() == ["stable", "harmful", "mixed"]


def test_pattern_follows_the_budget_order_of_the_harmful_rate() -> None:
    """On a frames x resolution grid (2f@56, 2f@112, 4f@56, 4f@112), right at 2f@112 and wrong
    at 4f@56 is no harmful step: the budgets are not comparable. The patterns then agree with
    the harmful and beneficial rates item by item."""
    from itemscale.analysis.measures import beneficial_indicator, budget_order, harmful_indicator

    order = budget_order(
        np.array([2.0, 2.0, 4.0, 4.0]),
        np.array([56.0, 112.0, 56.0, 112.0]),
        ["2f@56", "2f@112", "4f@56", "4f@112"],
    )
    y = np.array([[0, 1, 0, 1], [1, 1, 0, 1], [0, 1, 1, 1], [1, 0, 1, 0]], dtype=float)
    got = pattern_of(y, binary=True, less=order.less).tolist()
    assert got == ["beneficial", "mixed", "beneficial", "harmful"]
    # along the columns' order the first item would have a harmful step (2f@112 -> 4f@56)
    assert pattern_of(y, binary=True).tolist()[0] == "mixed"
    harmful = np.isin(got, ["harmful", "mixed"])
    beneficial = np.isin(got, ["beneficial", "mixed"])
    assert harmful.tolist() == harmful_indicator(y, order.less).tolist()
    assert beneficial.tolist() == beneficial_indicator(y, order.less).tolist()


def test_trajectory_table_is_wide(tmp_path: Path) -> None:
    df, items = make_run(tmp_path / "run", with_audit=False)
    traj = trajectory_table(df)
    assert list(traj.columns) == [
        "model",
        "series",
        "item_id",
        "video_id",
        "kind",
        "pattern",
        "text_only",
        "f8",
        "f16",
        "f32",
    ]
    assert len(traj) == len(items)
    first = traj.iloc[0]
    rows = df[df["item_id"] == first["item_id"]].set_index("config_label")
    for label in ("f8", "f16", "f32"):
        assert first[label] == rows.loc[label, "correct"]
    assert first["text_only"] == rows.loc["text-only", "correct"]


def test_json_for_script_escapes_markup() -> None:
    text = json_for_script({"x": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": "</script><!-- & \u2028"}


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("art") / "run"
    make_run(run)
    return build_artifact(run, bootstrap=50, seed=3)


def _copy(artifact: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(artifact, dst)
    return dst


def test_artifact_contents(artifact: Path) -> None:
    names = {p.relative_to(artifact).as_posix() for p in artifact.rglob("*") if p.is_file()}
    for required in (
        "responses.parquet",
        "trajectories.parquet",
        "measures.json",
        "run.json",
        "provenance.json",
        "README.md",
        "report.html",
        MANIFEST_FILE,
        "audit.parquet",
        "audit.json",
        "annotations.parquet",
        "items.jsonl",
    ):
        assert required in names
    manifest = json.loads((artifact / MANIFEST_FILE).read_text())
    assert set(manifest["files"]) == names - {MANIFEST_FILE}
    measures = json.loads((artifact / "measures.json").read_text())
    assert measures["bootstrap"]["bootstrap"] == 50 and measures["bootstrap"]["seed"] == 3
    prov = json.loads((artifact / "provenance.json").read_text())
    assert prov["tool"]["version"]
    assert prov["measures"] == {
        "function": "itemscale.analysis.measures.analyze_responses",
        "bootstrap": 50,
        "seed": 3,
        "interval": "bca",
    }
    assert len(prov["inputs"]["responses.parquet"]["sha256"]) == 64
    assert prov["inputs"]["items"]["sha256"]
    assert prov["host"]["hostname"]
    readme = (artifact / "README.md").read_text()
    assert "itemscale verify" in readme and "--bootstrap 50 --seed 3" in readme
    meta = pq.read_schema(artifact / "trajectories.parquet").metadata
    assert meta[b"itemscale.schema_version"] == b"2"


def test_verify_passes_untouched(artifact: Path) -> None:
    result = verify_artifact(artifact)
    assert result.ok, result.problems
    assert result.checks == [
        "manifest",
        "trajectories",
        "measures",
        "audit",
        "provenance",
        "sources",
        "report",
    ]
    assert main(["verify", str(artifact)]) == 0


@pytest.mark.parametrize(
    "name",
    [
        "responses.parquet",
        "trajectories.parquet",
        "measures.json",
        "run.json",
        "provenance.json",
        "README.md",
        "report.html",
        "audit.parquet",
        "annotations.parquet",
        "items.jsonl",
    ],
)
def test_verify_names_an_edited_file(
    artifact: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _copy(artifact, tmp_path)
    path = copy / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = verify_artifact(copy, recompute=False)
    assert not result.ok
    assert list(result.bad_files) == [name]
    assert main(["verify", str(copy), "--hashes-only"]) == 1
    assert name in capsys.readouterr().err


def test_verify_recomputes_after_a_regenerated_manifest(artifact: Path, tmp_path: Path) -> None:
    """Editing a measure and rewriting the manifest is still caught by recomputation."""
    from itemscale.report._manifest import write_manifest

    copy = _copy(artifact, tmp_path)
    measures = json.loads((copy / "measures.json").read_text())
    model = next(iter(measures["models"]))
    measures["models"][model]["harmful_rate"]["value"] += 0.01
    (copy / "measures.json").write_text(json.dumps(measures))
    write_manifest(copy)
    result = verify_artifact(copy)
    assert list(result.bad_files) == ["measures.json"]
    assert "harmful_rate" in result.problems[0]


def test_verify_added_missing_and_manifest_edits(artifact: Path, tmp_path: Path) -> None:
    copy = _copy(artifact, tmp_path)
    (copy / "extra.txt").write_text("hello")
    (copy / "README.md").unlink()
    result = verify_artifact(copy, recompute=False)
    assert set(result.bad_files) == {"extra.txt", "README.md"}
    assert "added" in result.bad_files["extra.txt"]
    assert "missing" in result.bad_files["README.md"]

    copy2 = tmp_path / "copy2"
    shutil.copytree(artifact, copy2)
    manifest = json.loads((copy2 / MANIFEST_FILE).read_text())
    manifest["files"]["README.md"]["sha256"] = "0" * 64
    (copy2 / MANIFEST_FILE).write_text(json.dumps(manifest))
    result = verify_artifact(copy2, recompute=False)
    assert MANIFEST_FILE in result.bad_files


def test_report_cli_rebuilds_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=6, with_audit=False)
    assert main(["report", str(run), "--bootstrap", "20", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert str(run / "artifact" / "report.html") in out
    first = json.loads((run / "artifact" / MANIFEST_FILE).read_text())
    assert main(["report", str(run), "--bootstrap", "20", "--seed", "1"]) == 0
    assert verify_artifact(run / "artifact").ok
    second = json.loads((run / "artifact" / MANIFEST_FILE).read_text())
    for stable in ("responses.parquet", "trajectories.parquet", "measures.json"):
        assert first["files"][stable] == second["files"][stable]
    assert not [p for p in run.iterdir() if p.name.startswith(".artifact")]
    assert main(["report", str(tmp_path / "nowhere")]) == 2


def test_report_carries_the_item_file_the_audit_used(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=8, with_audit=False)
    elsewhere = tmp_path / "bench" / "items.jsonl"
    elsewhere.parent.mkdir()
    (run / "items.jsonl").rename(elsewhere)
    assert main(["audit", str(run), "--items", str(elsewhere)]) == 0
    summary = json.loads((run / "audit.json").read_text())
    assert summary["items"]["path"] == str(elsewhere.resolve())
    assert main(["report", str(run), "--bootstrap", "10"]) == 0
    artifact = run / "artifact"
    assert (artifact / "items.jsonl").read_bytes() == elsewhere.read_bytes()
    result = verify_artifact(artifact)
    assert result.ok, result.problems
    assert "audit" in result.checks


def test_artifact_with_failures_and_open_ended_items(tmp_path: Path) -> None:
    """Failed cells, NOANSWER and scored items travel through report and verify."""
    run = tmp_path / "run"
    items = make_mixed_run(run)
    assert main(["audit", str(run)]) == 0
    audit = pd.read_parquet(run / "audit.parquet")
    # both scored items drop by 0.7 from f16 to f32: harmful at eps 0.1
    scored_rows = audit[audit["item_id"].isin([items[3].item_id, items[4].item_id])]
    assert sorted(scored_rows["to_label"]) == ["f32", "f32"]
    assert main(["report", str(run), "--bootstrap", "10"]) == 0
    traj = pq.read_table(run / "artifact" / "trajectories.parquet").to_pandas()
    row = traj.set_index("item_id").loc[items[1].item_id]
    assert np.isnan(row["f16"]) and row["pattern"] == "incomplete"
    assert set(traj.loc[traj["item_id"] == items[3].item_id, "kind"]) == {"continuous"}
    html = (run / "artifact" / "report.html").read_text()
    assert "open-ended" in html and "multiple choice" in html
    assert verify_artifact(run / "artifact").ok

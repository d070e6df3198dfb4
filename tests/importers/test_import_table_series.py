"""`itemscale import table` with several series at one configuration label, and a release's
wide file per model in one call (`--model-from-name`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from _support.paths import SRC
from itemscale.cli import main
from itemscale.collect.importers import ImportInputError, label_config_id, run_import
from itemscale.collect.importers._config_ids import series_config_id
from itemscale.core.responses import read_run, write_run

RELEASE = SRC / "itemscale" / "data" / "scalegrid"
MODELS = ("InternVL3-8B", "InternVL3.5-8B", "LLaVA-NeXT-Video-7B", "Qwen2.5-VL-7B", "Qwen3-VL-8B")

HEADER = "model,item_id,video_id,series,config,frames,correct"
# a control and a frame selector, each at 16f; q3 is answered only by the control
TWO_SERIES = [
    "m,q1,v1,control,16f,16,1",
    "m,q2,v1,control,16f,16,0",
    "m,q3,v2,control,16f,16,1",
    "m,q1,v1,selection:aks,16f,16,0",
    "m,q2,v1,selection:aks,16f,16,1",
]


def write_csv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def test_two_series_at_one_label_are_two_configurations(tmp_path: Path) -> None:
    table = write_csv(tmp_path / "t.csv", TWO_SERIES)
    run = tmp_path / "run"
    summary = run_import("table", [table], run_dir=run)
    df, _ = read_run(run)
    ids = df.groupby("series")["config_id"].unique().map(list).to_dict()
    assert ids == {
        "control": [label_config_id("16f", 16, "control")],
        "selection:aks": [label_config_id("16f", 16, "selection:aks")],
    }
    assert ids["control"] != ids["selection:aks"]
    # q1 and q2 are answered in both series, q3 in one: two items are matched, one left out,
    # each item counted once whatever the number of series
    assert summary.matched_items == {"m": 2} and summary.unmatched_items == {"m": 1}
    assert summary.items_per_config == {"m": {"control: 16f": 3, "selection:aks: 16f": 2}}
    assert "matched grid: 2 items (1 left out)" in summary.format()
    # the same key twice in one series is still refused, naming the series
    with pytest.raises(ImportInputError, match=r"t2\.csv:3: duplicate key \(model='m', "):
        run_import(
            "table", [write_csv(tmp_path / "t2.csv", [*TWO_SERIES[:1], TWO_SERIES[0]])], run_dir=run
        )
    with pytest.raises(ImportInputError, match=r"series='selection:aks', config='16f'"):
        run_import("table", [write_csv(tmp_path / "t3.csv", TWO_SERIES[3:] * 2)], run_dir=run)


def test_a_series_id_is_the_label_id_with_the_series_folded_in() -> None:
    plain = label_config_id("16f", 16)
    assert label_config_id("16f", 16, "default") == plain  # the default series' ids stay
    assert label_config_id("16f", 16, "control") == series_config_id(plain, "control")
    assert series_config_id(plain, "control") != series_config_id(plain, "selection:aks")
    assert len(series_config_id(plain, "control")) == 16


def test_a_run_stored_before_series_counted_takes_the_same_table_again(tmp_path: Path) -> None:
    # one series per file: a run written before series were part of the key could hold these
    table = write_csv(tmp_path / "t.csv", TWO_SERIES[3:])
    run = tmp_path / "run"
    run_import("table", [table], run_dir=run)
    df, prov = read_run(run)
    legacy = label_config_id("16f", 16)
    assert set(df["config_id"]) == {label_config_id("16f", 16, "selection:aks")} != {legacy}
    write_run(run, df.assign(config_id=legacy), prov)  # the id it was stored under then
    again = run_import("table", [table], run_dir=run)
    assert (again.rows_added, again.rows_unchanged) == (0, 2)
    assert set(read_run(run)[0]["config_id"]) == {legacy}


def _release_files() -> list[Path]:
    return [RELEASE / f"{m}_V1_short_predictions_wide.csv" for m in MODELS]


def test_the_releases_five_wide_files_import_in_one_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["import", "table", "--wide", "--id-column", "sample_id"]
    argv += ["--model-from-name", "{model}_V1_short_predictions_wide.csv"]
    argv += ["--answer-key", str(RELEASE / "V1_short_answer_key.csv")]
    assert main([*argv, *map(str, _release_files()), "-o", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.count("matched grid: 786 items (0 left out)") == 5
    df, prov = read_run(run)
    assert sorted(set(df["model"])) == sorted(MODELS)
    (imp,) = prov["imports"]
    assert imp["options"]["model_from_name"] == "{model}_V1_short_predictions_wide.csv"
    for model, path in zip(MODELS, _release_files(), strict=True):
        wide = pd.read_csv(path)
        rows = df[df["model"] == model]
        assert len(rows) == 786 * (len(wide.columns) - 1)
        # every accuracy the paper's own JSON states for this model, to 4 decimals
        paper = json.loads((RELEASE / f"{model}_V1_short.json").read_text())
        accuracy = 100 * rows.groupby("config_label")["correct"].mean()
        for label, stated in paper["accuracy_by_config"].items():
            assert accuracy[label] == pytest.approx(stated, abs=5e-5), (model, label)


def test_one_model_for_several_files_is_said_plainly(tmp_path: Path) -> None:
    files = [str(p) for p in _release_files()[:2]]
    common = {
        "wide": True,
        "id_column": "sample_id",
        "answer_key": str(RELEASE / "V1_short_answer_key.csv"),
        "run_dir": tmp_path / "run",
    }
    with pytest.raises(
        ImportInputError,
        match=r"--model X: InternVL3-8B_V1_short_predictions_wide\.csv and "
        r"InternVL3\.5-8B_V1_short_predictions_wide\.csv both answer item '001-1' .*"
        r"--model-from-name PATTERN instead, e\.g\. '\{model\}_V1_short_predictions_wide\.csv'",
    ):
        run_import("table", files, model="X", **common)
    with pytest.raises(ImportInputError, match="--model-from-name PATTERN"):
        run_import("table", files, **common)
    with pytest.raises(ImportInputError, match="not both"):
        run_import("table", files, model="X", model_from_name="{model}_V1.csv", **common)
    with pytest.raises(ImportInputError, match=r"name the model's place once with \{model\}"):
        run_import("table", files, model_from_name="*_V1.csv", **common)
    with pytest.raises(
        ImportInputError, match=r"InternVL3-8B_V1_short_predictions_wide\.csv: the file name"
    ):
        run_import("table", files, model_from_name="{model}_V2_*.csv", **common)
    assert not (tmp_path / "run").exists()
    # `*` stands for any text; the model is as short as the rest of the pattern allows
    summary = run_import("table", files, model_from_name="{model}_*.csv", **common)
    assert sorted(summary.matched_items) == ["InternVL3-8B", "InternVL3.5-8B"]

"""Items a benchmark or answer key lists but a model's results lack: reported by every import,
left out with `--absent skip`, counted wrong with `--absent noanswer` (marked `error` "absent"),
and with those denominators every per-model accuracy of the seed paper's release comes out."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.paths import DATA, shared
from _support.scalegrid import release_tables, split_key
from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import ABSENT_MARKER, ImportInputError, run_import
from itemscale.core.responses import read_run

KEY = "item_id,gold,video_id,attr_duration\nq1,A,v1,short\nq2,B,v1,short\nq3,C,v2,long\nq4,D,v3,long\n"
# two of the key's four items, at text-only and two budgets (q1 right at 8f only, q2 at both)
TABLE = "item_id,textonly,8f,16f\nq1,B,A,C\nq2,B,B,B\n"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def _files(tmp_path: Path, key: str = KEY, table: str = TABLE) -> tuple[Path, Path]:
    (tmp_path / "key.csv").write_text(key, encoding="utf-8")
    (tmp_path / "wide.csv").write_text(table, encoding="utf-8")
    return tmp_path / "key.csv", tmp_path / "wide.csv"


def _import(tmp_path: Path, absent: str, run: str = "run", **extra: Any) -> Any:
    key, wide = _files(tmp_path)
    return run_import(
        "table",
        [wide],
        run_dir=tmp_path / run,
        wide=True,
        model="m",
        answer_key=key,
        absent=absent,
        **extra,
    )


def _accuracy(run: Path) -> dict[str, float]:
    df, _ = read_run(run)
    return {
        str(label): float(rows["correct"].mean())
        for label, rows in df.groupby("config_label", sort=True)
    }


def test_skip_reports_the_absent_items_and_adds_nothing(tmp_path: Path) -> None:
    summary = _import(tmp_path, "skip")
    assert summary.rows_read == 6 and summary.rows_absent == 0
    gone = summary.absent["m"]
    assert (gone["absent"], gone["key_items"], gone["examples"]) == (2, 4, ["q3", "q4"])
    assert gone["mode"] == "skip" and gone["rows_added"] == 0
    text = summary.format()
    assert "ABSENT: 2 of the 4 items of key.csv have no row (q3, q4)" in text
    assert "left out of every denominator" in text
    assert summary.to_dict()["absent"]["m"]["absent"] == 2
    # the denominators are the table's two items
    assert _accuracy(tmp_path / "run") == {"16f": 0.5, "8f": 1.0, "textonly": 0.5}


def test_noanswer_counts_them_wrong_at_every_configuration(tmp_path: Path) -> None:
    summary = _import(tmp_path, "noanswer")
    assert summary.rows_read == 6 and summary.rows_absent == 6
    assert summary.absent["m"]["rows_added"] == 6
    assert summary.dropped == {"absent item, added as noanswer (--absent noanswer)": 6}
    assert "added as NOANSWER (wrong) at every configuration" in summary.format()
    # hand-computed over the key's four items
    assert _accuracy(tmp_path / "run") == {"16f": 0.25, "8f": 0.5, "textonly": 0.25}
    df, _ = read_run(tmp_path / "run")
    added = df[df["error"] == ABSENT_MARKER].sort_values(["item_id", "frames"])
    assert len(added) == 6
    assert set(added["status"]) == {"noanswer"} and set(added["answer"]) == {"NOANSWER"}
    assert set(added["correct"]) == {0.0}
    assert set(added["source"]) == {"absent:key.csv"}
    assert added["video_id"].tolist() == ["v2"] * 3 + ["v3"] * 3  # the key's videos
    assert added["reference"].tolist() == ["C"] * 3 + ["D"] * 3
    assert {json.loads(a)["duration"] for a in added["attributes"]} == {"long"}
    assert sorted(added["config_label"].unique()) == ["16f", "8f", "textonly"]
    real = df[df["error"] != ABSENT_MARKER]
    assert real["error"].isna().all()  # a real NOANSWER keeps an empty error
    # a second import of the same files adds nothing
    again = _import(tmp_path, "noanswer")
    assert (again.rows_added, again.rows_unchanged) == (0, 12)


def test_analyze_says_how_many_items_were_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _import(tmp_path, "noanswer")
    assert main(["analyze", str(tmp_path / "run"), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "m: 2 items absent from the imported results" in out


def test_noanswer_needs_a_key(tmp_path: Path) -> None:
    _, wide = _files(tmp_path)
    with pytest.raises(ImportInputError, match=r"--absent noanswer needs"):
        run_import("table", [wide], run_dir=tmp_path / "r", wide=True, model="m", absent="noanswer")
    with pytest.raises(ImportInputError, match=r"--absent 'all'"):
        _import(tmp_path, "all")
    assert not (tmp_path / "r").exists()


def test_a_key_that_covers_the_table_reports_none_absent(tmp_path: Path) -> None:
    key, wide = _files(tmp_path, key="item_id,gold\nq1,A\nq2,B\n")
    summary = run_import(
        "table", [wide], run_dir=tmp_path / "r", wide=True, model="m", answer_key=key
    )
    assert summary.absent["m"]["absent"] == 0
    assert "every one of the 2 items of key.csv has a row" in summary.format()


def test_open_ended_absent_items_score_zero(tmp_path: Path) -> None:
    bench = DATA / "generation" / "mlvu_generation.json"
    table = tmp_path / "preds.csv"
    table.write_text(
        "model,item_id,config,frames,prediction\n"
        "m,subPlot_new_all_1,8f,8,a red square slides in from the left\n"
        "m,summary_1,8f,8,shapes cross a grey room\n",
        encoding="utf-8",
    )
    summary = run_import(
        "table", [table], run_dir=tmp_path / "r", benchmark=bench, absent="noanswer"
    )
    assert summary.absent["m"]["examples"] == ["subPlot_new_all_2", "summary_1#2"]
    df, _ = read_run(tmp_path / "r")
    added = df[df["error"] == ABSENT_MARKER]
    assert len(added) == 2 and set(added["task_kind"]) == {"summary"}
    assert set(added["score"]) == {0.0} and set(added["token_f1"]) == {0.0}
    assert added["answer"].isna().all()
    scored = df[df["error"] != ABSENT_MARKER].set_index("item_id")
    assert 0 < scored.loc["subPlot_new_all_1", "token_f1"] < 1


def test_lmms_eval_and_vlmevalkit_report_the_benchmark_items_they_lack(tmp_path: Path) -> None:
    bench = shared("benchmarks/videomme-test.parquet")
    log = shared("lmms-eval/videomme-uniform16")
    summary = run_import("lmms-eval", [log], run_dir=tmp_path / "le", benchmark=bench)
    (gone,) = summary.absent.values()
    df, _ = read_run(tmp_path / "le")
    assert gone["key_items"] == 2700
    assert gone["absent"] == 2700 - df["item_id"].nunique()
    assert gone["mode"] == "skip" and "ABSENT:" in summary.format()
    full = run_import(
        "lmms-eval", [log], run_dir=tmp_path / "le2", benchmark=bench, absent="noanswer"
    )
    df2, run = read_run(tmp_path / "le2")
    assert df2["item_id"].nunique() == 2700 and full.rows_absent == gone["absent"]
    assert run["imports"][0]["options"]["absent"] == "noanswer"
    with pytest.raises(ImportInputError, match=r"needs the items"):
        run_import("lmms-eval", [log], run_dir=tmp_path / "le3", absent="noanswer")
    # VLMEvalKit: one question of its Video-MME.tsv, answered at 8 frames
    q = pd.read_parquet(bench).iloc[0]
    row = {
        "index": 0,
        "video": q["videoID"],
        "question": q["question"],
        "candidates": str(list(q["options"])),
        "answer": q["answer"],
        "prediction": q["answer"],
    }
    tsv = tmp_path / "M_Video-MME_8frame.tsv"
    pd.DataFrame([row]).to_csv(tsv, sep="\t", index=False)
    vk = run_import(
        "vlmevalkit", [tsv], run_dir=tmp_path / "vk", benchmark=bench, absent="noanswer"
    )
    assert vk.absent["M"]["absent"] == 2699 and vk.rows_absent == 2699
    vk_df, _ = read_run(tmp_path / "vk")
    assert vk_df["correct"].sum() == 1 and len(vk_df) == 2700
    assert set(vk_df.loc[vk_df["item_id"] != "001-1", "error"]) == {ABSENT_MARKER}


def test_the_seed_papers_short_table_gets_the_papers_accuracy(tmp_path: Path) -> None:
    """InternVL3-8B's V2 medium table lacks 5 of the split's 2,516 questions: 22.14 without
    them, the paper's 22.10 with them counted wrong."""
    key = split_key("V2_medium", tmp_path / "key.csv")
    (release,) = [r for r in release_tables("V2_medium") if r.model == "InternVL3-8B"]
    expected = release.paper["accuracy_by_config"]["128f_input224"]
    results = {}
    for mode in ("skip", "noanswer"):
        argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", release.model]
        argv += ["--answer-key", str(key), "--absent", mode, str(release.table)]
        assert main([*argv, "-o", str(tmp_path / mode)]) == 0
        out = tmp_path / f"{mode}.json"
        assert main(["analyze", str(tmp_path / mode), "--bootstrap", "0", "--json", str(out)]) == 0
        block = json.loads(out.read_text(encoding="utf-8"))["models"][release.model]
        results[mode] = (block["n_items"], 100 * block["accuracy"]["128f_input224"]["value"])
    assert results["skip"][0] == 2511
    assert results["skip"][1] == pytest.approx(22.14, abs=0.005)
    assert results["skip"][1] != pytest.approx(expected, abs=0.005)
    assert results["noanswer"] == (2516, pytest.approx(expected, abs=0.00005))


@pytest.mark.parametrize("split", ["V1_short", "V1_medium", "V2_medium", "MLVU"])
def test_every_accuracy_of_the_release_with_split_denominators(tmp_path: Path, split: str) -> None:
    key = split_key(split, tmp_path / "key.csv")
    run = tmp_path / "run"
    releases = release_tables(split)
    for release in releases:
        argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", release.model]
        argv += ["--answer-key", str(key), "--absent", "noanswer", str(release.table)]
        assert main([*argv, "-o", str(run)]) == 0
    out = tmp_path / "measures.json"
    assert main(["analyze", str(run), "--bootstrap", "0", "--json", str(out)]) == 0
    models = json.loads(out.read_text(encoding="utf-8"))["models"]
    n_split = len(pd.read_csv(key, dtype=str))
    checked = 0
    for release in releases:
        block = models[release.model]
        grid = block.get("grid_with_text", block)  # text-only as budget 0, as the paper's
        assert grid["n_items"] == release.paper["n"] == n_split
        for config, value in release.paper["accuracy_by_config"].items():
            ours = 100 * grid["accuracy"][config]["value"]
            assert ours == pytest.approx(value, abs=0.00005), (release.model, config)
            checked += 1
    assert checked >= 4 * len(releases) - 4

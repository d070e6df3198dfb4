"""`itemscale import vlmevalkit` on prediction files built with VLMEvalKit's columns."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import ImportInputError
from itemscale.collect.importers._vlmevalkit import (
    read_prediction_file,
    run_vlmevalkit_import,
    split_file_name,
)
from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.core.responses import NOANSWER, read_run


@pytest.fixture(autouse=True)
def _analyze_prints_to_a_live_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """See tests/importers/test_import_table.py: print_summary binds sys.stdout at import time."""
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


# The first three Video-MME questions as VLMEvalKit's Video-MME.tsv lists them.
VIDEOMME = [
    {
        "index": 0,
        "video": "fFjv93ACGo8",
        "video_path": "./video/fFjv93ACGo8.mp4",
        "duration": "short",
        "domain": "Knowledge",
        "candidates": "['A. Apples.', 'B. Candles.', 'C. Berries.', 'D. The three kinds are of the same number.']",
        "sub_category": "Humanity & History",
        "task_type": "Counting Problem",
        "subtitle_path": "./subtitle/fFjv93ACGo8.srt",
        "question": "When demonstrating the Germany modern Christmas tree is initially decorated with apples, candles and berries, which kind of the decoration has the largest number?",
        "answer": "C",
    },
    {
        "index": 1,
        "video": "fFjv93ACGo8",
        "video_path": "./video/fFjv93ACGo8.mp4",
        "duration": "short",
        "domain": "Knowledge",
        "candidates": "['A. It is a news report that introduces the history behind Christmas decorations.', 'B. It is a documentary on the evolution of Christmas holiday recipes.', 'C. It is a travel vlog exploring Christmas markets around the world.', 'D. It is a tutorial on DIY Christmas ornament crafting.']",
        "sub_category": "Humanity & History",
        "task_type": "Information Synopsis",
        "subtitle_path": "./subtitle/fFjv93ACGo8.srt",
        "question": "What is the genre of this video?",
        "answer": "A",
    },
    {
        "index": 2,
        "video": "fFjv93ACGo8",
        "video_path": "./video/fFjv93ACGo8.mp4",
        "duration": "short",
        "domain": "Knowledge",
        "candidates": "['A. 1.', 'B. 4.', 'C. 2.', 'D. 3.']",
        "sub_category": "Humanity & History",
        "task_type": "Counting Problem",
        "subtitle_path": "./subtitle/fFjv93ACGo8.srt",
        "question": "How many red socks are above the fireplace at the end of this video?",
        "answer": "D",
    },
]
# predictions at 8 and 32 frames; VLMEvalKit's own score for the 32-frame file
PRED_8 = ["C. Berries.", "A", "Failed to obtain answer via API."]
PRED_32 = ["B", "The answer is A.", "3"]
SCORE_32 = [0, 1, -1]  # VLMEvalKit could not score "3"; itemscale reads option text "3." = D


def write_files(tmp_path: Path) -> tuple[Path, Path]:
    eight = pd.DataFrame([{**r, "prediction": p} for r, p in zip(VIDEOMME, PRED_8, strict=True)])
    p8 = tmp_path / "Qwen2-VL-7B_Video-MME_8frame.xlsx"
    eight.to_excel(p8, index=False)
    thirty = pd.DataFrame(
        [
            {**r, "prediction": p, "score": s}
            for r, p, s in zip(VIDEOMME, PRED_32, SCORE_32, strict=True)
        ]
    )
    p32 = tmp_path / "Qwen2-VL-7B_Video-MME_32frame_score.tsv"
    thirty.to_csv(p32, sep="\t", index=False)
    return p8, p32


def test_file_names() -> None:
    parts = split_file_name(Path("Qwen2-VL-7B_Video-MME_8frame_score.xlsx"))
    assert (parts.model, parts.dataset, parts.frames, parts.fps) == (
        "Qwen2-VL-7B",
        "Video-MME_8frame",
        8,
        None,
    )
    parts = split_file_name(Path("InternVL2_5-8B_MVBench_MP4_1fps.xlsx"))
    assert (parts.model, parts.dataset, parts.frames, parts.fps) == (
        "InternVL2_5-8B",
        "MVBench_MP4_1fps",
        None,
        1.0,
    )
    parts = split_file_name(Path("llava_video_7b_MLVU_MCQ_64frame_gpt-4o-mini_score.xlsx"))
    assert (parts.model, parts.frames) == ("llava_video_7b", 64)


def test_videomme_predictions_import_and_analyze(tmp_path: Path) -> None:
    p8, p32 = write_files(tmp_path)
    run = tmp_path / "run"
    summary = run_vlmevalkit_import(
        files=[str(p32), str(p8)], configs=[], model=None, benchmark=None, run_dir=run
    )
    df, prov = read_run(run)
    c8 = Configuration(frames=8, sampling=SamplingPolicy(name="interior"))
    c32 = Configuration(frames=32, sampling=SamplingPolicy(name="interior"))
    assert set(df["config_id"]) == {c8.config_id, c32.config_id}
    by = df.set_index(["frames", "item_id"])
    assert by.loc[(8, "Video-MME:0"), "answer"] == "C"
    assert by.loc[(8, "Video-MME:0"), "correct"] == 1.0
    assert by.loc[(8, "Video-MME:2"), "status"] == "model_error"
    assert by.loc[(32, "Video-MME:0"), "correct"] == 0.0
    assert by.loc[(32, "Video-MME:1"), "answer"] == "A"
    assert by.loc[(32, "Video-MME:2"), "answer"] == "D"  # option text "3" -> D
    assert by.loc[(32, "Video-MME:2"), "correct"] == 1.0
    assert by.loc[(8, "Video-MME:0"), "video_id"] == "fFjv93ACGo8"
    assert json.loads(by.loc[(8, "Video-MME:0"), "attributes"])["duration"] == "short"
    assert set(df["model"]) == {"Qwen2-VL-7B"}
    # VLMEvalKit scored -1 where itemscale read D (correct): one disagreement of three
    assert any("disagree on 1 of 3" in n for n in summary.notes)
    assert summary.dropped == {"model_error": 1}
    # item 2 failed at 8 frames: the matched grid keeps 2 of 3
    assert summary.matched_items == {"Qwen2-VL-7B": 2}
    assert [Path(s["path"]).name for s in prov["imports"][0]["sources"]] == [p32.name, p8.name]

    out = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "0", "--json", str(out)]) == 0
    m = json.loads(out.read_text())["models"]["Qwen2-VL-7B"]
    assert m["axis"] == [c8.label, c32.label]
    assert m["n_items"] == 2
    # matched items 0, 1: 8f correct 1, 1; 32f correct 0, 1
    assert m["accuracy"][c8.label]["value"] == pytest.approx(1.0)
    assert m["accuracy"][c32.label]["value"] == pytest.approx(0.5)
    assert m["harmful_rate"]["value"] == pytest.approx(0.5)


def test_benchmark_maps_to_question_ids(fixtures_dir: Path, tmp_path: Path) -> None:
    p8, _ = write_files(tmp_path)
    run = tmp_path / "run"
    run_vlmevalkit_import(
        files=[str(p8)],
        configs=[],
        model=None,
        benchmark=fixtures_dir / "benchmarks" / "videomme-test.parquet",
        run_dir=run,
    )
    df, _ = read_run(run)
    assert sorted(df["item_id"]) == ["001-1", "001-2", "001-3"]


def test_mvbench_json_with_text_answers_and_config_labels(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = [
        {
            "index": i,
            "task_type": "Action Sequence",
            "video": f"clip{i // 2}.mp4",
            "question": f"What happened {i}?",
            "candidates": ["Sat down.", "Stood up.", "Ran away."],
            "answer": ans,
            "prediction": pred,
        }
        for i, (ans, pred) in enumerate(
            [("Stood up.", "(B) Stood up."), ("Ran away.", "I cannot tell."), ("Sat down.", "A")]
        )
    ]
    path = tmp_path / "VideoChat2_MVBench_MP4_1fps.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"no frame count .*1 fps.*--config LABEL:FRAMES"):
        run_vlmevalkit_import(
            files=[str(path)], configs=[], model=None, benchmark=None, run_dir=tmp_path / "x"
        )
    run = tmp_path / "run"
    run_vlmevalkit_import(
        files=[], configs=[f"1fps:60={path}"], model=None, benchmark=None, run_dir=run
    )
    df, _ = read_run(run)
    r = df.set_index("item_id")
    assert r.loc["MVBench_MP4:0", "reference"] == "B" and r.loc["MVBench_MP4:0", "correct"] == 1.0
    assert r.loc["MVBench_MP4:1", "answer"] == NOANSWER
    assert r.loc["MVBench_MP4:2", "correct"] == 1.0
    assert r.loc["MVBench_MP4:2", "video_id"] == "clip1"
    assert set(df["config_label"]) == {"1fps"} and set(df["frames"]) == {60}


def test_bad_inputs(tmp_path: Path) -> None:
    p8, _ = write_files(tmp_path)
    kw: dict[str, Any] = {"configs": [], "benchmark": None}
    unknown = tmp_path / "preds.csv"
    unknown.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"preds\.csv: unknown VLMEvalKit file format"):
        run_vlmevalkit_import(files=[str(unknown)], model="m", run_dir=tmp_path / "r", **kw)
    other = tmp_path / "LLaVA-OV-7B_Video-MME_16frame.xlsx"
    pd.DataFrame([{**VIDEOMME[0], "prediction": "A"}]).to_excel(other, index=False)
    with pytest.raises(ImportInputError, match=r"files of different models"):
        run_vlmevalkit_import(files=[str(p8), str(other)], model=None, run_dir=tmp_path / "r", **kw)
    nopred = tmp_path / "M_Video-MME_4frame.xlsx"
    pd.DataFrame(VIDEOMME).to_excel(nopred, index=False)
    with pytest.raises(ImportInputError, match=r"missing column 'prediction'"):
        run_vlmevalkit_import(files=[str(nopred)], model=None, run_dir=tmp_path / "r", **kw)
    badscore = tmp_path / "M_Video-MME_2frame.tsv"
    pd.DataFrame([{**VIDEOMME[0], "prediction": "A", "score": "n/a?"}]).to_csv(
        badscore, sep="\t", index=False
    )
    with pytest.raises(ImportInputError, match=r"2frame\.tsv:2: column 'score': 'n/a\?'"):
        run_vlmevalkit_import(files=[str(badscore)], model=None, run_dir=tmp_path / "r", **kw)
    assert not (tmp_path / "r").exists()


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p8, p32 = write_files(tmp_path)
    run = tmp_path / "run"
    argv = ["import", "vlmevalkit", str(p8), str(p32), "-o", str(run)]
    argv += ["--summary-json", str(tmp_path / "s.json")]
    assert main(argv) == 0
    assert "matched grid: 2 items (1 left out)" in capsys.readouterr().out
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["rows_added"] == 6
    assert main(["import", "vlmevalkit", str(tmp_path / "nope.xlsx"), "-o", str(run)]) == 2
    assert "nope.xlsx: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("cut", ["last line", "first row", "open quote"])
def test_a_truncated_tsv_names_its_file_and_line(tmp_path: Path, cut: str) -> None:
    """A TSV cut off mid-write: pandas filled the last record with empty fields and imported
    it (or failed with no file or line); each cut is refused where it is."""
    _, p32 = write_files(tmp_path)
    data = p32.read_bytes()
    lines = data.split(b"\n")
    if cut == "last line":
        p32.write_bytes(data[:-60])
        where = r"32frame_score\.tsv:4: \d+ fields where the header has 13; is the file truncated"
    elif cut == "first row":
        p32.write_bytes(b"\n".join(lines[:2])[: len(lines[0]) + 200])
        where = r"32frame_score\.tsv:2: \d+ fields where the header has 13"
    else:
        lines[2] = lines[2].replace(b"\t", b'\t"', 1)
        p32.write_bytes(b"\n".join(lines))
        where = r"32frame_score\.tsv:3: not a readable TSV record \(unexpected end of data\)"
    with pytest.raises(ImportInputError, match=where):
        run_vlmevalkit_import(
            files=[str(p32)], model=None, run_dir=tmp_path / "r", configs=[], benchmark=None
        )
    assert not (tmp_path / "r").exists()


def test_a_tsv_reads_quoted_tabs_newlines_and_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "M_Video-MME_8frame.tsv"
    rows = [
        {**VIDEOMME[0], "prediction": 'C.\tBerries,\nsurely "C"'},
        {**VIDEOMME[1], "prediction": "A"},
    ]
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    records, unit = read_prediction_file(path)
    assert unit == "line" and [r["prediction"] for _, r in records] == [
        'C.\tBerries,\nsurely "C"',
        "A",
    ]
    assert [line for line, _ in records] == [2, 4]  # the first record spans two lines
    path.write_bytes(path.read_bytes().replace(b"Berries", b"Berr\xe9es"))
    with pytest.raises(ImportInputError, match=r"8frame\.tsv:2: not UTF-8"):
        read_prediction_file(path)

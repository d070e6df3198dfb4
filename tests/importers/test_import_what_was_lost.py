"""Imports say what they could not keep: every repeat an lmms-eval log holds is imported, and
the responses a `--repeats` run did not log are counted; items that name no video are counted
as their own bootstrap clusters, and `--video-from-id` (as on `import table`) gives them one on
the lmms-eval and VLMEvalKit importers too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from itemscale.cli import main
from itemscale.collect.importers import ImportInputError
from itemscale.collect.importers._lmms_eval import repeat_texts, run_lmms_eval_import
from itemscale.collect.importers._vlmevalkit import run_vlmevalkit_import
from itemscale.core.responses import read_run

OPTS = "A. yellow\nB. green\nC. blue\nD. red"
GOLD = ["A", "C", "D", "B"]


def _sample(doc_id: int, qid: str, resps: list[Any], filtered: str) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "target": GOLD[doc_id],
        "resps": resps,
        "filtered_resps": filtered,
        "vmme_score": {"question_id": qid, "answer": GOLD[doc_id], "pred_answer": filtered},
        "input": f"What colour is the coat?\n{OPTS}\nAnswer with the option's letter.\n",
    }


def _write(folder: Path, samples: list[dict[str, Any]], *, repeats: int | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20261201_000001_samples_vtask.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8"
    )
    model_args = "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8"
    cli: dict[str, Any] = {"tasks": "vtask", "model_args": model_args}
    if repeats is not None:
        cli["repeats"] = repeats
    results = {
        "results": {"vtask": {"acc,none": 0.5}},
        "config": {"model": "qwen2_5_vl", "model_args": model_args, "resolved_cli_args": cli},
        "lmms_eval_version": "0.7.3",
        "model_name": "Qwen/Qwen2.5-VL-7B-Instruct",
    }
    (folder / "20261201_000001_results.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def test_resps_hold_every_repeat() -> None:
    assert repeat_texts({"resps": [["A", "B", "C"]]}) == ["A", "B", "C"]
    assert repeat_texts({"resps": [[["A"], ["B"]]]}) == ["A", "B"]
    assert repeat_texts({"resps": [["A"]]}) == ["A"]
    assert repeat_texts({"resps": [[[-1.2, False], [-0.3, True]]]}) == []  # option scores
    assert repeat_texts({}) == []


def test_every_logged_repeat_is_imported(tmp_path: Path) -> None:
    answers = [["A", "B", "A"], ["C", "C", "D"], ["B", "D", "D"], ["B", "B", "B"]]
    samples = [_sample(i, f"v{i // 2}-{i}", [list(a)], a[0]) for i, a in enumerate(answers)]
    folder = _write(tmp_path / "logs", samples, repeats=3)
    summary = run_lmms_eval_import(files=[str(folder)], run_dir=tmp_path / "run")
    df, _ = read_run(tmp_path / "run")
    assert len(df) == 12 and sorted(set(df["repeat"])) == [0, 1, 2]
    by = df.set_index(["item_id", "repeat"])
    for i, row in enumerate(answers):
        for r, answer in enumerate(row):
            assert by.loc[(f"v{i // 2}-{i}", r), "answer"] == answer
            assert by.loc[(f"v{i // 2}-{i}", r), "correct"] == float(answer == GOLD[i])
    (note,) = [n for n in summary.notes if "repeats imported" in n]
    assert "4 sample(s) with 3" in note and "the run asked for 3" in note
    assert "lost" not in note
    # the repeat measures run on them
    out = tmp_path / "m.json"
    assert main(["analyze", str(tmp_path / "run"), "--bootstrap", "0", "--json", str(out)]) == 0


def test_repeats_the_log_does_not_hold_are_counted_as_lost(tmp_path: Path) -> None:
    samples = [_sample(i, f"v{i}-1", [[GOLD[i]]], GOLD[i]) for i in range(4)]
    folder = _write(tmp_path / "logs", samples, repeats=3)
    summary = run_lmms_eval_import(files=[str(folder)], run_dir=tmp_path / "run")
    assert set(read_run(tmp_path / "run")[0]["repeat"]) == {0}
    (note,) = [n for n in summary.notes if "repeats imported" in n]
    assert "4 sample(s) with 1" in note
    assert "the run asked for 3 (results.json): 8 of 12 responses are not in the log" in note


def test_items_without_a_video_are_counted_and_can_be_given_one(tmp_path: Path) -> None:
    # ids name a video only by a pattern of their own ("clip7_q2"): nothing reads it unasked
    samples = [_sample(i, f"clip{i // 2}_q{i}", [[GOLD[i]]], GOLD[i]) for i in range(4)]
    folder = _write(tmp_path / "logs", samples, repeats=None)
    summary = run_lmms_eval_import(files=[str(folder)], run_dir=tmp_path / "a")
    (note,) = [n for n in summary.notes if "name no video" in n]
    assert note.startswith("4 of 4 items name no video (e.g. clip0_q0, clip0_q1, clip1_q2)")
    assert "--video-from-id PATTERN" in note
    assert read_run(tmp_path / "a")[0]["video_id"].nunique() == 4
    grouped = run_lmms_eval_import(
        files=[str(folder)], run_dir=tmp_path / "b", video_from_id=r"(?P<video>clip\d+)_q\d+"
    )
    df, run = read_run(tmp_path / "b")
    assert sorted(set(df["video_id"])) == ["clip0", "clip1"]
    assert any("4 items on 2 videos are resampled by video" in n for n in grouped.notes)
    assert not any("name no video" in n for n in grouped.notes)
    assert run["imports"][0]["options"]["video_from_id"] == r"(?P<video>clip\d+)_q\d+"
    # the command line takes it too, and a pattern that matches nothing is refused
    argv = ["import", "lmms-eval", str(folder), "-o", str(tmp_path / "c")]
    assert main([*argv, "--video-from-id", r"(?P<video>clip\d+)_q\d+"]) == 0
    with pytest.raises(ImportInputError, match="no item id matches it"):
        run_lmms_eval_import(files=[str(folder)], run_dir=tmp_path / "d", video_from_id="videomme")


def test_vlmevalkit_takes_video_from_id(tmp_path: Path) -> None:
    rows = [
        {
            "index": f"{v:03d}-{q}",
            "question": f"question {v}-{q}?",
            "candidates": "['A. yes', 'B. no']",
            "answer": "A",
            "prediction": "A" if q == 1 else "B",
        }
        for v in (1, 2)
        for q in (1, 2, 3)
    ]
    path = tmp_path / "Qwen2-VL-7B_Video-MME_8frame.xlsx"
    pd.DataFrame(rows).to_excel(path, index=False)
    plain = run_vlmevalkit_import(files=[str(path)], run_dir=tmp_path / "a")
    assert any(n.startswith("6 of 6 items name no video") for n in plain.notes)
    grouped = run_vlmevalkit_import(
        files=[str(path)], run_dir=tmp_path / "b", video_from_id=r"Video-MME:(?P<video>\d+)-\d+"
    )
    df, _ = read_run(tmp_path / "b")
    assert sorted(set(df["video_id"])) == ["001", "002"]
    assert any("6 items on 2 videos" in n for n in grouped.notes)

"""Control and bidirectional-text characters (NUL, U+202E RIGHT-TO-LEFT OVERRIDE, a zero-width
space, ...) are refused in ids by every importer, naming the file, the column and the character
(docs/import.md); the run folder is left as it was (none, for a first import)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from itemscale.cli import main

BAD = ["\x00", "\u202e", "\u200b", "\x1b", "\u2066", "\x85"]


def _name(char: str) -> str:
    return f"U+{ord(char):04X}"


@pytest.mark.parametrize("char", BAD)
def test_import_table_refuses_them_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        "model,item_id,video_id,config,frames,correct\n"
        f"m,q1,v1,8f,8,1\nm,q{char}2,v1,8f,8,0\nm,q1,v1,16f,16,1\n",
        encoding="utf-8",
    )
    assert main(["import", "table", str(table), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "t.csv:3" in err and _name(char) in err and "bidirectional-text" in err
    assert not (tmp_path / "run").exists()


def _lmms_sample(doc_id: int, qid: str, resp: str) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "target": "0",
        "filtered_resps": resp,
        "lvb_acc": {"id": qid, "duration_group": 600, "answer": "A", "parsed_pred": resp},
        "input": "What colour is the coat?\nA. yellow\nB. green\nAnswer with the letter.\n",
    }


@pytest.mark.parametrize("char", ["\x00", "\u202e"])
def test_import_lmms_eval_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    folder = tmp_path / "k8"
    folder.mkdir()
    samples = [_lmms_sample(0, "vA_0", "A"), _lmms_sample(1, f"vA{char}_1", "B")]
    path = folder / "20260830_001347_samples_longvideobench_val_v.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    results = {
        "results": {"longvideobench_val_v": {"lvb_acc,none": 0.5}},
        "config": {"model": "qwen2_5_vl", "model_args": "pretrained=x,max_num_frames=8"},
        "model_name": "x",
    }
    (folder / "20260830_001347_results.json").write_text(json.dumps(results), encoding="utf-8")
    assert main(["import", "lmms-eval", str(folder), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert _name(char) in err and "'item_id'" in err, err
    assert "samples_longvideobench_val_v.jsonl" in err
    assert not (tmp_path / "run").exists()


def test_import_vlmevalkit_refuses_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {
            "index": i,
            "video": "vid\u202eoem" if i == 1 else "vid",
            "question": "How many?",
            "candidates": "['A. 1.', 'B. 2.']",
            "answer": "A",
            "prediction": "A",
        }
        for i in range(2)
    ]
    path = tmp_path / "M_Video-MME_8frame.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    assert main(["import", "vlmevalkit", str(path), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "U+202E" in err and "'video_id'" in err, err
    assert not (tmp_path / "run").exists()

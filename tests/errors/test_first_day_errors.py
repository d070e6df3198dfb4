"""What a new user's first mistakes get back: the key they meant, the folder that is not there,
the file that is lmms-eval's summary rather than its samples, the flag that writes the samples,
and why lmms-eval's score and itemscale's differ. Each is a typed error (exit 2) naming the
file or key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemscale.cli import main
from itemscale.collect.importers._lmms_eval_results import n_samples_of, score_note
from itemscale.collect.protocol import ProtocolError, parse_protocol
from itemscale.core.errors import did_you_mean

PROTOCOL = {
    "output": "runs/x",
    "models": [{"name": "m", "backend": "builtin", "model": "builtin"}],
    "benchmark": {"kind": "synthetic", "path": "suite"},
    "grid": {"frames": [2, 4]},
}


def test_a_misspelt_protocol_key_gets_the_key_it_meant() -> None:
    bad = json.loads(json.dumps(PROTOCOL))
    bad["grid"]["short_sides"] = [56]
    with pytest.raises(ProtocolError) as caught:
        parse_protocol(bad, source="protocol.toml")
    message = str(caught.value)
    assert (
        "grid.short_sides: Extra inputs are not permitted (did you mean 'short_side'?)" in message
    )
    assert "known keys: frames, max_pixels, short_side" in message
    bad = json.loads(json.dumps(PROTOCOL))
    bad["models"][0]["backnd"] = "hf"
    with pytest.raises(
        ProtocolError,
        match=r"models\[0\]\.backnd: Extra inputs are not permitted \(did you mean 'backend'\?\)",
    ):
        parse_protocol(bad, source="protocol.toml")
    # nothing close: no guess, the keys that exist
    bad = json.loads(json.dumps(PROTOCOL))
    bad["zzz"] = 1
    with pytest.raises(ProtocolError) as caught:
        parse_protocol(bad, source="protocol.toml")
    assert "zzz: Extra inputs are not permitted; known keys: " in str(caught.value)
    assert "did you mean" not in str(caught.value)


def test_did_you_mean_by_hand() -> None:
    assert did_you_mean("short_sides", ["frames", "short_side"]) == " (did you mean 'short_side'?)"
    assert did_you_mean("xyz", ["frames", "short_side"]) == ""


def test_a_wrong_suite_path_says_no_such_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        'output = "runs/x"',
        "[[models]]",
        'name = "m"',
        'backend = "builtin"',
        'model = "builtin"',
        "[benchmark]",
        'kind = "synthetic"',
        'path = "nosuch"',
        "[grid]",
        "frames = [2]",
    ]
    proto = tmp_path / "protocol.toml"
    proto.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["sweep", str(proto), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nosuch'}: no such folder" in err and "itemscale synth" in err
    (tmp_path / "nosuch").mkdir()  # a folder that is there but is no suite says that
    assert main(["sweep", str(proto), "--dry-run"]) == 2
    assert "not a synthetic suite (no items.jsonl)" in capsys.readouterr().err


def _lmms_eval_folder(folder: Path, *, samples: bool) -> Path:
    folder.mkdir(parents=True)
    results = folder / "20260101_000000_results.json"
    results.write_text(
        json.dumps(
            {
                "results": {"videomme": {"videomme_perception_score,none": 59.4}},
                "config": {"model": "llava_vid", "model_args": "pretrained=x,max_frames_num=8"},
                "n-samples": {"videomme": {"original": 2700, "effective": 2700}},
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    if samples:
        line = {
            "doc_id": 0,
            "doc": {"question_id": "001-1", "videoID": "v1", "answer": "A"},
            "target": "A",
            "filtered_resps": ["A"],
        }
        (folder / "20260101_000000_samples_videomme.jsonl").write_text(
            json.dumps(line) + "\n", encoding="utf-8"
        )
    return results


def test_results_json_where_the_samples_belong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _lmms_eval_folder(tmp_path / "logs", samples=True)
    assert main(["import", "lmms-eval", str(results), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "this is lmms-eval's results.json (its summary scores), not a --log_samples" in err
    assert "not valid JSON" not in err
    assert "beside it: 20260101_000000_samples_videomme.jsonl" in err
    assert not (tmp_path / "run").exists()


def test_a_folder_without_samples_names_log_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lmms_eval_folder(tmp_path / "logs", samples=False)
    assert main(["import", "lmms-eval", str(tmp_path / "logs"), "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "no lmms-eval samples files" in err and "only when run with --log_samples" in err


def test_the_score_gap_is_explained() -> None:
    results = {"n-samples": {"videomme": {"original": 2700, "effective": 2700}}}
    assert n_samples_of(results, "videomme") == 2700
    assert n_samples_of({}, "videomme") is None
    rows = [{"correct": 1.0}] * 21 + [{"correct": 0.0}] * 19
    note = score_note(
        Path("x_samples_videomme.jsonl"),
        "videomme",
        {"videomme_perception_score,none": 59.444},
        rows,
        n_samples=2700,
        n_in_file=40,
        disagreements=(2, 40),
    )
    assert note is not None
    assert "lmms-eval reported videomme_perception_score 59.44 over its 2700 samples" in note
    assert "re-extracted accuracy 52.50 on 40 answered items" in note
    assert "this file holds 40 of those 2700 samples, so the two numbers are over different" in note
    assert "the two extractors read 2 of 40 answers apart" in note

"""`compare` on real lmms-eval logs: one model, the same frame-count setting
(`max_frames_num=16` in both results.json files), two frame selections. The command's
identical-answer share, flips both ways and clustered p equal a count made here straight from
the two samples files, without the importer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from scipy.stats import chi2

from _support.paths import shared
from itemscale import compare
from itemscale.cli import main

UNIFORM = "lmms-eval/videomme-uniform16/20251106_202956_samples_videomme.jsonl"
DBFP = "lmms-eval/videomme-dbfp8/20251105_220439_samples_videomme.jsonl"


def _samples(path: Path) -> dict[str, tuple[str, str, str, str]]:
    """question id -> (raw response, letter, gold, video) read from the JSONL itself; every
    response in these files is a bare letter with an optional full stop."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        raw = d["filtered_resps"][0]
        letter = raw.strip().rstrip(".")
        qid = d["videomme_perception_score"]["question_id"]
        out[qid] = (raw, letter, d["target"], qid.split("-")[0])
    return out


def test_two_frame_selections_counted_from_the_files(tmp_path: Path) -> None:
    uniform_file, dbfp_file = shared(UNIFORM), shared(DBFP)
    a, b = _samples(uniform_file), _samples(dbfp_file)
    for label, path, out in (("uniform16", uniform_file, "u"), ("dbfp8", dbfp_file, "d")):
        argv = [
            "import",
            "lmms-eval",
            "--config",
            f"{label}={path.parent}",
            "-o",
            str(tmp_path / out),
        ]
        assert main(argv) == 0
    r = compare(tmp_path / "u", tmp_path / "d", bootstrap=200)

    common = sorted(set(a) & set(b))
    identical_raw = sum(a[q][0] == b[q][0] for q in common)
    identical_letters = sum(a[q][1] == b[q][1] for q in common)
    right_a = {q: a[q][1] == a[q][2] for q in common}
    right_b = {q: b[q][1] == b[q][2] for q in common}
    only_a = sum(right_a[q] and not right_b[q] for q in common)
    only_b = sum(right_b[q] and not right_a[q] for q in common)
    per_video: dict[str, int] = {}
    for q in common:
        per_video[a[q][3]] = per_video.get(a[q][3], 0) + int(right_b[q]) - int(right_a[q])
    den = sum(d * d for d in per_video.values())
    statistic = sum(per_video.values()) ** 2 / den if den else 0.0

    assert r.counts.matched == len(common) == 40
    assert (r.counts.only_a, r.counts.only_b) == (len(set(a) - set(b)), len(set(b) - set(a)))
    assert (r.counts.identical_raw, r.counts.raw_recorded) == (identical_raw, 40)
    assert (r.counts.identical_answers, r.counts.answers_recorded) == (identical_letters, 40)
    assert (r.answers.right_only_a, r.answers.right_only_b) == (only_a, only_b)
    assert r.answers.difference.value == pytest.approx((only_b - only_a) / 40)
    assert r.answers.clustered_statistic == pytest.approx(statistic)
    assert r.answers.clustered_p == pytest.approx(float(chi2.sf(statistic, 1)) if den else 1.0)
    assert r.counts.matched_videos == len(per_video)

    # the set-up: the same recorded frame count and model arguments, only the labels differ
    fields = {f.field: f for f in r.provenance}
    assert fields["frames (asked)"].status == "same"
    assert fields["lmms-eval model_args"].status == "same"
    assert fields["configuration"].status == "differs"
    assert fields["task version"].a == "0.0" and fields["task version"].status == "same"
    assert fields["benchmark digest"].status == "same"
    assert fields["backend"].a == "llava_vid"
    assert fields["prompt template"].status == "same"
    assert fields["sampling formula"].status == "unknown"  # lmms-eval logs do not say
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    digest = hashlib.sha256(uniform_file.read_bytes()).hexdigest()
    if digest == hashlib.sha256(dbfp_file.read_bytes()).hexdigest():
        # these two fixture files are byte for byte one log: named as one file
        assert fields["source file sha256"].status == "same"
        assert sentence.startswith(f"B is the same log file as A, sha256 {digest}")
        assert "was the setting applied?" not in sentence
    elif identical_letters == 40:  # fewer than 50 items: the one rule cannot call it
        assert (
            r.same_input is None
            and "too few" in sentence
            and "was the setting applied?" in sentence
        )


def test_within_one_run_gives_the_same_counts(tmp_path: Path) -> None:
    uniform_file, dbfp_file = shared(UNIFORM), shared(DBFP)
    run = tmp_path / "both"
    argv = ["import", "lmms-eval", "--config", f"uniform16={uniform_file.parent}"]
    argv += ["--config", f"dbfp8:16={dbfp_file.parent}", "-o", str(run)]
    assert main(argv) == 0
    one = compare(run, configs=["uniform16", "dbfp8"], bootstrap=0)
    for label, path, out in (("uniform16", uniform_file, "u"), ("dbfp8", dbfp_file, "d")):
        assert (
            main(
                [
                    "import",
                    "lmms-eval",
                    "--config",
                    f"{label}={path.parent}",
                    "-o",
                    str(tmp_path / out),
                ]
            )
            == 0
        )
    two = compare(tmp_path / "u", tmp_path / "d", bootstrap=0)
    assert one.counts == two.counts
    assert one.answers == two.answers


OPTIONS = "A. red\nB. green\nC. blue\nD. grey"


def _log(
    folder: Path, stamp: str, *, pixels: int, post: str, version: float, task_hash: str
) -> None:
    """A run in the current lmms-eval format (`filtered_resps` a string, LongVideoBench's
    `lvb_acc` payload), with the results.json fields compare reads."""
    task = "longvideobench_val_v"
    folder.mkdir(parents=True)
    lines = []
    for n, (qid, target, reply) in enumerate(
        (("vA_0", 0, "A"), ("vA_1", 2, "B"), ("vB_0", 3, "D"))
    ):
        sample = {
            "doc_id": n,
            "target": str(target),
            "filtered_resps": reply,
            "lvb_acc": {
                "id": qid,
                "duration_group": "600",
                "question_category": "T2A",
                "answer": "ABCD"[target],
                "parsed_pred": reply,
            },
            "input": f"What colour is the coat?\n{OPTIONS}\n{post}",
        }
        lines.append(json.dumps(sample) + "\n")
    (folder / f"{stamp}_samples_{task}.jsonl").write_text("".join(lines), encoding="utf-8")
    results = {
        "results": {task: {"lvb_acc,none": 0.5}},
        "configs": {
            task: {
                "generation_kwargs": {"max_new_tokens": 8},
                "metadata": {"version": version},
                "lmms_eval_specific_kwargs": {"default": {"pre_prompt": "", "post_prompt": post}},
            }
        },
        "versions": {task: "Yaml"},
        "task_hashes": {task: task_hash},
        "config": {
            "model": "qwen2_5_vl",
            "random_seed": 0,
            "model_args": f"pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8,max_pixels={pixels}",
        },
        "model_name": "Qwen/Qwen2.5-VL-7B-Instruct",
    }
    (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")


def test_prompt_pixels_and_task_differences_from_lmms_eval_logs(tmp_path: Path) -> None:
    _log(
        tmp_path / "la",
        "20260830_001347",
        pixels=200704,
        post="Answer with the option's letter.",
        version=1.0,
        task_hash="aaa",
    )
    _log(
        tmp_path / "lb",
        "20260830_123818",
        pixels=401408,
        post="Answer with the letter only.",
        version=2.0,
        task_hash="bbb",
    )
    for log, out in (("la", "a"), ("lb", "b")):
        assert main(["import", "lmms-eval", str(tmp_path / log), "-o", str(tmp_path / out)]) == 0
    r = compare(tmp_path / "a", tmp_path / "b", bootstrap=0)
    fields = {f.field: f for f in r.provenance}
    assert (fields["pixels per frame (asked)"].a, fields["pixels per frame (asked)"].b) == (
        "200704",
        "401408",
    )
    assert fields["pixels per frame"].status == "differs"
    assert (fields["task version"].a, fields["task version"].b) == ("1.0", "2.0")
    assert (fields["benchmark digest"].a, fields["benchmark digest"].b) == ("aaa", "bbb")
    assert fields["backend"].a == "qwen2_5_vl" and fields["model id"].status == "same"
    prompt = fields["prompt template"]
    assert prompt.status == "differs" and prompt.a is not None and prompt.a.startswith("sha256:")
    assert prompt.note == (
        "first differing line 1 of post_prompt: A \"Answer with the option's letter.\" | B 'Answer with the letter only.'"
    )
    assert (
        r.counts.identical_answers == 3
    )  # every answer the same: not the same input below 50 items
    setup = next(v.sentence for v in r.verdicts if v.key == "setup")
    assert "prompt template" in setup and "pixels per frame" in setup


def test_vlmevalkit_dataset_variant(tmp_path: Path) -> None:
    """Two VLMEvalKit prediction files of one model at 8 frames, one on the dataset variant
    with subtitles: the variant is a set-up difference."""
    import pandas as pd

    questions = [
        {
            "index": n,
            "video": f"vid{n // 2}",
            "question": f"Which colour, clip {n}?",
            "candidates": "['A. red', 'B. green', 'C. blue', 'D. grey']",
            "answer": "ABCD"[n % 4],
            "duration": "short",
            "task_type": "Counting Problem",
        }
        for n in range(4)
    ]
    plain = [q["answer"] for q in questions]
    subs = ["A", "B", "A", "D"]  # item 2 turns wrong with subtitles
    for name, preds in (("Video-MME_8frame", plain), ("Video-MME_8frame_subs", subs)):
        frame = pd.DataFrame(
            [{**q, "prediction": p} for q, p in zip(questions, preds, strict=True)]
        )
        folder = tmp_path / name
        folder.mkdir()
        frame.to_csv(folder / f"Qwen2-VL-7B_{name}.tsv", sep="\t", index=False)
        argv = [
            "import",
            "vlmevalkit",
            str(folder / f"Qwen2-VL-7B_{name}.tsv"),
            "-o",
            str(tmp_path / f"run-{name}"),
        ]
        assert main(argv) == 0
    r = compare(
        tmp_path / "run-Video-MME_8frame", tmp_path / "run-Video-MME_8frame_subs", bootstrap=0
    )
    variant = next(f for f in r.provenance if f.field == "VLMEvalKit dataset")
    assert (variant.a, variant.b, variant.status) == (
        "Video-MME_8frame",
        "Video-MME_8frame_subs",
        "differs",
    )
    # without --benchmark the importer names items by dataset and index (`Video-MME_subs:2`),
    # so the two variants share no item: every row is counted on its side, none dropped
    assert (r.counts.matched, r.counts.only_a, r.counts.only_b) == (0, 4, 4)
    assert r.verdicts[0].sentence.startswith("No item was answered on both sides")

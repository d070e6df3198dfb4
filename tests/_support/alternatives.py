"""Nine lmms-eval `--log_samples` runs of one model on a Video-MME-shaped benchmark, all at 16
frames: the shape of public frame-selector studies (a frame-0 control, a uniform run, selectors,
and logs copied under several names). Generated, seeded, in the older lmms-eval format the
real fixture files have (`filtered_resps` a list, `videomme_perception_score` the payload).

What each run is, against the control `zero` (answers of 2,700 questions on 900 videos):

- `uniform`: 5 answers moved (a rerun's worth); its samples file is named
  `..._samples_videomme_aks.jsonl` while its results.json keys the task `videomme`.
- `aks8`: 240 answers moved (a different input), `dbfp1` 300, `dbfp8` 3.
- `dbfp1_16max`, `dbfp1_8max`, `dbfp1_8_td2`, `dbfp1_8_a085_td1`: one log copied four
  times (byte-identical samples files), 6 answers from the control.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

N_VIDEOS = 900
QUESTIONS_PER_VIDEO = 3
LETTERS = "ABCD"
MODEL_PATH = "/home/user/ckpt/LLaVA-NeXT-Video-7B-Qwen2"
MODEL_NAME = "LLaVA-NeXT-Video-7B-Qwen2"
#: the configurations in the order a user passes them (`--config LABEL=DIR`)
LABELS = (
    "zero",
    "uniform",
    "aks8",
    "dbfp1",
    "dbfp8",
    "dbfp1_16max",
    "dbfp1_8max",
    "dbfp1_8_td2",
    "dbfp1_8_a085_td1",
)
#: answers moved from the control's, per run (the copies share one log)
MOVED = {"uniform": 5, "aks8": 240, "dbfp1": 300, "dbfp8": 3, "copied": 6}
COPIES = ("dbfp1_16max", "dbfp1_8max", "dbfp1_8_td2", "dbfp1_8_a085_td1")
PROMPT = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
)


def _results(task: str, stamp: str, accuracy: float) -> dict[str, object]:
    return {
        "results": {task: {"alias": task, "videomme_perception_score,none": accuracy}},
        "configs": {
            task: {
                "task": task,
                "generation_kwargs": {"max_new_tokens": 16, "temperature": 0.0},
                "lmms_eval_specific_kwargs": {
                    "default": {"pre_prompt": "", "post_prompt": "\nThe best answer is:"}
                },
            }
        },
        "config": {
            "model": "llava_vid",
            "model_args": f"pretrained={MODEL_PATH},conv_template=chatml_direct,"
            "video_decode_backend=decord,max_frames_num=16,overwrite=False",
            "batch_size": "1",
            "random_seed": 0,
            "numpy_seed": 1234,
            "torch_seed": 1234,
            "fewshot_seed": 1234,
        },
        "git_hash": "55057fb",
        "date": stamp,
        "model_name": MODEL_PATH,
    }


def _answers(rng: np.random.Generator, targets: np.ndarray) -> np.ndarray:
    """The control's answers: right on about 59% of the questions, else another letter."""
    right = rng.random(targets.size) < 0.594
    wrong = (targets + rng.integers(1, 4, size=targets.size)) % 4
    return np.where(right, targets, wrong)


def _moved(rng: np.random.Generator, answers: np.ndarray, n: int) -> np.ndarray:
    out = answers.copy()
    rows = rng.choice(answers.size, size=n, replace=False)
    out[rows] = (out[rows] + rng.integers(1, 4, size=n)) % 4
    return out


def _samples(targets: np.ndarray, answers: np.ndarray) -> str:
    lines = []
    for doc_id, (target, answer) in enumerate(zip(targets.tolist(), answers.tolist(), strict=True)):
        video, question = divmod(doc_id, QUESTIONS_PER_VIDEO)
        qid = f"{video + 1:03d}-{question + 1}"
        sample = {
            "doc_id": doc_id,
            "target": LETTERS[target],
            "filtered_resps": [f"{LETTERS[answer]}."],
            "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
            "videomme_perception_score": {
                "question_id": qid,
                "duration": ("short", "medium", "long")[video % 3],
                "category": "Knowledge",
                "sub_category": "Humanity & History",
                "task_category": "Counting Problem",
                "pred_answer": LETTERS[answer],
                "answer": LETTERS[target],
            },
            "input": f"{PROMPT}How many objects appear in video {video + 1}, question "
            f"{question + 1}?\nA. One.\nB. Two.\nC. Three.\nD. Four.\nThe best answer is:",
        }
        lines.append(json.dumps(sample) + "\n")
    return "".join(lines)


def write_alternative_runs(root: Path, seed: int = 56) -> dict[str, Path]:
    """The nine run folders under `root`, by label (each holds a samples file and the
    results.json lmms-eval writes beside it)."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 4, size=N_VIDEOS * QUESTIONS_PER_VIDEO)
    control = _answers(rng, targets)
    answers = {"zero": control}
    for label in ("uniform", "aks8", "dbfp1", "dbfp8"):
        answers[label] = _moved(rng, control, MOVED[label])
    copied = _moved(rng, control, MOVED["copied"])
    folders: dict[str, Path] = {}
    for i, label in enumerate(LABELS):
        folder = root / label
        folder.mkdir(parents=True)
        stamp = f"20251106_2000{i:02d}"
        if label in COPIES[1:]:
            first = folders[COPIES[0]]
            for path in first.iterdir():  # the same log, copied under another name
                shutil.copyfile(path, folder / path.name)
            folders[label] = folder
            continue
        mine = copied if label in COPIES else answers[label]
        suffix = "_aks" if label == "uniform" else ""  # a file-name suffix results.json lacks
        (folder / f"{stamp}_samples_videomme{suffix}.jsonl").write_text(
            _samples(targets, mine), encoding="utf-8"
        )
        accuracy = 100 * float(np.mean(mine == targets))
        (folder / f"{stamp}_results.json").write_text(
            json.dumps(_results("videomme", stamp, accuracy)), encoding="utf-8"
        )
        folders[label] = folder
    return folders

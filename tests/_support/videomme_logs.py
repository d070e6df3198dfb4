"""lmms-eval `--log_samples` runs of Video-MME built in the shape of the real ones: the older
format of `../shared/fixtures/lmms-eval` (`filtered_resps` a list, the payload
`videomme_perception_score`), the real `results.json` of the uniform run as the template, the
questions of the published Video-MME file, and answers chosen by the test. Frame selectors
log the same `model_args`, so runs that differ only in their selector are built here as they
are found: one folder per run, all at `max_frames_num=16`."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from _support.paths import shared

RESULTS_TEMPLATE = "lmms-eval/videomme-uniform16/20251106_202956_results.json"
INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video and "
    "the subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
)


def videomme_questions(n: int) -> pd.DataFrame:
    """The first `n` questions of the published Video-MME file (three per video)."""
    frame = pd.read_parquet(shared("benchmarks/videomme-test.parquet"))
    return frame.head(n).reset_index(drop=True)


def answers_right_at(questions: pd.DataFrame, right: np.ndarray) -> list[str]:
    """A response per question: the gold letter where `right`, else the next letter."""
    out = []
    for gold, ok in zip(questions["answer"], right, strict=True):
        out.append(f"{gold}." if ok else f"{'ABCD'[('ABCD'.index(gold) + 1) % 4]}.")
    return out


def write_videomme_log(
    folder: Path,
    questions: pd.DataFrame,
    responses: Sequence[str],
    *,
    stamp: str = "20251106_202956",
    task_in_name: str = "videomme",
    max_frames: int = 16,
) -> Path:
    """One run's folder: `{stamp}_samples_{task_in_name}.jsonl` and `{stamp}_results.json`,
    whose task is `videomme` whatever the samples file is called. Returns the samples file."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    right = 0
    for n, (q, response) in enumerate(zip(questions.itertuples(), responses, strict=True)):
        options = [str(o) for o in q.options]
        pred = response.strip().rstrip(".")
        right += pred == q.answer
        sample = {
            "doc_id": n,
            "target": q.answer,
            "filtered_resps": [response],
            "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
            "videomme_perception_score": {
                "question_id": q.question_id,
                "duration": q.duration,
                "category": q.domain,
                "sub_category": q.sub_category,
                "task_category": q.task_type,
                "pred_answer": pred,
                "answer": q.answer,
            },
            "input": "\n".join([INSTRUCTION, q.question, *options, "The best answer is:"]),
        }
        lines.append(json.dumps(sample))
    samples = folder / f"{stamp}_samples_{task_in_name}.jsonl"
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = json.loads(shared(RESULTS_TEMPLATE).read_text(encoding="utf-8"))
    results["config"]["model_args"] = re.sub(
        r"max_frames_num=\d+", f"max_frames_num={max_frames}", results["config"]["model_args"]
    )
    results["results"]["videomme"]["videomme_perception_score,none"] = 100 * right / len(lines)
    results["n-samples"]["videomme"] = {"original": len(lines), "effective": len(lines)}
    (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
    return samples

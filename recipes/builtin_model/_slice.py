"""The reference slice: a few test items whose exact answers ship beside the weights.

CI does not retrain, so this is how a test knows the shipped weights are the ones that were
scored: it regenerates the slice's videos (a small suite from a seed the model never trained
on, test split only), runs them through the same `hf` backend any user model goes through, and
compares answers, option probabilities and accuracy with `reference_slice.json`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypedDict, cast

import numpy as np

SLICE_FILE = "reference_slice.json"
SLICE_VERSION = 2
#: A seed the shipped model was not trained on (it trained on the seed-0 suite).
SLICE_SEED = 7
#: The suite layout the shipped model was trained on (docs/synthetic-suite.md).
SLICE_LAYOUT: Final = "focus"
#: 40 videos give 8 test videos (16 items: 8 multiple choice, 8 open).
SLICE_SUITE_VIDEOS = 40
#: (frames, short side) budgets of the slice; 0 frames is the text-only baseline.
SLICE_BUDGETS: tuple[tuple[int, int], ...] = ((32, 112), (8, 56), (0, 0))
SLICE_MAX_NEW_TOKENS = 24


@dataclass(frozen=True, slots=True)
class SliceAnswer:
    item_id: str
    task_kind: str
    budget: str
    answer: str | None
    raw_text: str | None
    option_probs: dict[str, float] | None
    correct: float | None
    token_f1: float | None


class SliceAnswerRecord(TypedDict):
    """A `SliceAnswer` as reference_slice.json stores it."""

    item_id: str
    task_kind: str
    budget: str
    answer: str | None
    raw_text: str | None
    option_probs: dict[str, float] | None
    correct: float | None
    token_f1: float | None


class ReferenceSlice(TypedDict):
    """reference_slice.json: the slice's settings, its answers and accuracy per budget."""

    reference_slice_version: int
    seed: int
    layout: Literal["focus"]
    suite_videos: int
    #: (frames, short side) per budget
    budgets: list[list[int]]
    max_new_tokens: int
    #: budget label -> multiple-choice accuracy (NaN without a scored answer)
    mcqa_accuracy: dict[str, float]
    answers: list[SliceAnswerRecord]


def _answer_record(answer: SliceAnswer) -> SliceAnswerRecord:
    """`asdict`, typed: `SliceAnswerRecord` declares the dataclass's fields (a test checks that the
    two agree), so a field added to the dataclass cannot be left out of the file."""
    return cast(SliceAnswerRecord, asdict(answer))


def slice_suite(work_dir: Path) -> Path:
    """Generate the slice's videos and items (test split only) into `work_dir`."""
    from itemscale.collect.synth import generate_suite

    generate_suite(
        work_dir,
        n_videos=SLICE_SUITE_VIDEOS,
        seed=SLICE_SEED,
        only_split="test",
        layout=SLICE_LAYOUT,
    )
    return work_dir


def run_slice(backend: Any, suite_dir: Path) -> list[SliceAnswer]:
    """Every slice item at every slice budget, through `backend` (a loaded `VideoLM`)."""
    from itemscale.collect.items import ITEMS_FILE, read_items_jsonl
    from itemscale.collect.models import DecodingSettings, VideoRequest
    from itemscale.collect.protocol import Configuration
    from itemscale.collect.video import decode_for_configs
    from itemscale.core.responses import TaskKind, token_f1

    items = read_items_jsonl(suite_dir / ITEMS_FILE)
    configs = {
        (frames, side): Configuration.text_only()
        if frames == 0
        else Configuration(frames=frames, short_side=side)
        for frames, side in SLICE_BUDGETS
    }
    answers: list[SliceAnswer] = []
    for video_id in sorted({item.video_id for item in items}):
        group = [item for item in items if item.video_id == video_id]
        path = suite_dir / str(group[0].video_path)
        visual = [c for c in configs.values() if not c.is_text_only]
        framesets = decode_for_configs(path, visual)
        for (frames, side), config in configs.items():
            frame_set = None if frames == 0 else framesets[config.config_id]
            label = "text-only" if frames == 0 else f"{frames}f@{side}"
            requests = [
                VideoRequest(
                    item=item,
                    frames=frame_set,
                    decoding=DecodingSettings(
                        max_new_tokens=1
                        if item.task_kind == TaskKind.MCQA
                        else SLICE_MAX_NEW_TOKENS
                    ),
                )
                for item in group
            ]
            for item, response in zip(group, backend.generate(requests), strict=True):
                mcqa = item.task_kind == TaskKind.MCQA
                text = response.raw_text or ""
                answers.append(
                    SliceAnswer(
                        item_id=item.item_id,
                        task_kind=str(item.task_kind),
                        budget=label,
                        answer=response.answer,
                        raw_text=response.raw_text,
                        option_probs=response.option_probs,
                        correct=float(response.answer == item.answer) if mcqa else None,
                        token_f1=None
                        if mcqa or not item.references
                        else token_f1(text, item.references),
                    )
                )
    return answers


def slice_accuracy(answers: list[SliceAnswer], budget: str) -> float:
    scores = [a.correct for a in answers if a.budget == budget and a.correct is not None]
    return float(np.mean(scores)) if scores else float("nan")


def write_slice(path: Path, answers: list[SliceAnswer]) -> None:
    payload: ReferenceSlice = {
        "reference_slice_version": SLICE_VERSION,
        "seed": SLICE_SEED,
        "layout": SLICE_LAYOUT,
        "suite_videos": SLICE_SUITE_VIDEOS,
        "budgets": [list(b) for b in SLICE_BUDGETS],
        "max_new_tokens": SLICE_MAX_NEW_TOKENS,
        "mcqa_accuracy": {
            label: slice_accuracy(answers, label)
            for label in dict.fromkeys(a.budget for a in answers)
        },
        "answers": [_answer_record(a) for a in answers],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_slice(path: Path) -> ReferenceSlice:
    """The slice `write_slice` recorded beside the shipped model; a file of another version is
    refused (the layout is the version's: a file of this version is taken as written)."""
    payload: ReferenceSlice = json.loads(path.read_text())
    version = payload.get("reference_slice_version")
    if version != SLICE_VERSION:
        raise ValueError(f"{path}: reference slice version {version!r}, expected {SLICE_VERSION}")
    return payload


def _main() -> None:
    """`python -m recipes.builtin_model._slice --model DIR`: record the slice of the model
    in DIR into DIR/reference_slice.json (after training, before shipping)."""
    import argparse
    import tempfile

    import torch

    from itemscale.collect.models import builtin_backend_options, load_backend
    from itemscale.collect.protocol import ModelEntry

    parser = argparse.ArgumentParser(description=_main.__doc__)
    parser.add_argument("--model", type=Path, required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    entry = ModelEntry(
        name="builtin",
        backend="hf",
        model=str(args.model),
        dtype="float32",
        options=builtin_backend_options(args.model),
    )
    backend = load_backend(entry, batch_size=12)
    with tempfile.TemporaryDirectory() as tmp:
        answers = run_slice(backend, slice_suite(Path(tmp) / "slice"))
    write_slice(args.model / SLICE_FILE, answers)
    for label in dict.fromkeys(a.budget for a in answers):
        print(f"{label}: mcqa {slice_accuracy(answers, label):.3f}")


if __name__ == "__main__":
    _main()

"""Scoring the built-in model on the suite's test split at fixed budgets.

This is the model's own report card (training curve and test scores in docs/builtin-model.md,
and the reference slice the tests replay), not the audit: sweeps go through the `hf` backend.
It uses the same prompt, processor and answer rules the backend uses: a multiple-choice answer
is the option letter with the highest next-token probability (or, for a model whose
`builtin_meta.json` asks for option-likelihood scoring, the `hf` backend's own answer), other
answers are greedy text scored by token F1 against the references.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

import numpy as np

from itemscale.collect.items import ITEMS_FILE, Item
from itemscale.collect.models import builtin_backend_options
from itemscale.core.responses import TaskKind, token_f1

from ._data import encode_batch, expand_video_tokens, process_video, render_prompt

if TYPE_CHECKING:
    import torch

    from itemscale.collect.protocol import Configuration
    from itemscale.collect.video import FrameSet


@dataclass(frozen=True, slots=True)
class EvalRecord:
    item_id: str
    video_id: str
    task_kind: str
    question_kind: str
    budget: str
    prediction: str
    correct: float | None  # multiple choice only
    token_f1: float | None  # open answers only
    option_probs: dict[str, float] | None


class EvalRecordFields(TypedDict):
    """An `EvalRecord` as the evaluation's JSON stores it."""

    item_id: str
    video_id: str
    task_kind: str
    question_kind: str
    budget: str
    prediction: str
    correct: float | None
    token_f1: float | None
    option_probs: dict[str, float] | None


def _record_fields(record: EvalRecord) -> EvalRecordFields:
    """`asdict`, typed: `EvalRecordFields` declares the dataclass's fields (a test checks that the
    two agree), so a field added to the dataclass cannot be left out of the file."""
    return cast(EvalRecordFields, asdict(record))


class KindSummary(TypedDict, total=False):
    """One question kind at one budget: the scores it has answers for."""

    mcqa_accuracy: float
    mcqa_n: int
    token_f1: float
    open_n: int


class BudgetSummary(TypedDict):
    """One budget of the evaluation (`summarise`): None where it has no answer of the kind."""

    mcqa_accuracy: float | None
    mcqa_n: int
    token_f1: float | None
    open_n: int
    by_kind: dict[str, KindSummary]


class EvalReport(TypedDict):
    """What `evaluate_suite` writes and returns."""

    builtin_eval_version: int
    model_dir: str
    suite_dir: str
    test_videos: int
    test_items: int
    mcqa_scoring: str
    summary: dict[str, BudgetSummary]
    records: list[EvalRecordFields]


class ForwardInputs(TypedDict):
    """The model's inputs for a batch of one video's items (the video's only with frames)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    mm_token_type_ids: NotRequired[torch.Tensor]
    pixel_values_videos: NotRequired[torch.Tensor]
    video_grid_thw: NotRequired[torch.Tensor]
    second_per_grid_ts: NotRequired[torch.Tensor]


def load_builtin(model_dir: str | Path) -> tuple[Any, Any]:
    """The shipped (or freshly trained) model and processor, loaded the way any user's
    checkpoint loads: `from_pretrained` on a local folder, nothing from a hub."""
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    auto_processor: Any = AutoProcessor
    model_cls: Any = Qwen2_5_VLForConditionalGeneration
    from itemscale.collect.models import no_loading_bars

    processor = auto_processor.from_pretrained(str(model_dir), local_files_only=True)
    with no_loading_bars():  # the sweep's bar already says "loading builtin"
        model = model_cls.from_pretrained(str(model_dir), local_files_only=True, dtype="float32")
    model.eval()
    return model, processor


def question_kind(item: Item) -> str:
    """The suite's question kind (what the item stresses), else its task kind."""
    for key in ("question_kind", "kind", "stress", "category"):
        if key in item.attributes:
            return item.attributes[key]
    return str(item.task_kind)


def evaluate_video(
    model: Any,
    processor: Any,
    items: list[Item],
    frame_set: FrameSet | None,
    budget: Configuration,
    *,
    max_new_tokens: int = 32,
) -> list[EvalRecord]:
    """All `items` of one video at one budget; `frame_set` None is text-only."""
    import torch

    from itemscale.collect.models import source_fps

    text_only = frame_set is None
    inputs = (
        None
        if frame_set is None
        else process_video(
            processor,
            np.asarray(frame_set.array),
            fps=source_fps(frame_set),
            indices=np.asarray(frame_set.indices, dtype=np.int64),
        )
    )
    prompts = []
    for item in items:
        prompt = render_prompt(processor, item, with_video=not text_only)
        if inputs is not None:
            prompt = expand_video_tokens(prompt, inputs.num_tokens)
        prompts.append(prompt)
    batch = encode_batch(processor, prompts, None)
    rows = len(items)
    kwargs: ForwardInputs = {
        "input_ids": batch.input_ids,
        "attention_mask": batch.attention_mask,
    }
    if inputs is not None:
        kwargs["mm_token_type_ids"] = batch.mm_token_type_ids
        kwargs["pixel_values_videos"] = torch.cat([inputs.pixel_values] * rows)
        kwargs["video_grid_thw"] = inputs.grid_thw.repeat(rows, 1)
        kwargs["second_per_grid_ts"] = torch.full((rows,), inputs.second_per_grid)
    tokenizer = processor.tokenizer
    records: list[EvalRecord] = []
    with torch.inference_mode():
        mcqa = [i for i, item in enumerate(items) if item.task_kind == TaskKind.MCQA]
        open_rows = [i for i, item in enumerate(items) if item.task_kind != TaskKind.MCQA]
        probs_by_row: dict[int, dict[str, float]] = {}
        if mcqa:
            logits = model(**kwargs, logits_to_keep=1).logits[:, -1, :].float()
            for row in mcqa:
                letters = items[row].option_letters
                ids = [tokenizer.convert_tokens_to_ids(letter) for letter in letters]
                p = torch.softmax(logits[row, ids], dim=-1).tolist()
                probs_by_row[row] = {letter: float(v) for letter, v in zip(letters, p, strict=True)}
        texts: dict[int, str] = {}
        if open_rows:
            generated = model.generate(
                **kwargs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                pad_token_id=tokenizer.pad_token_id,
            )
            new = generated[:, batch.input_ids.shape[1] :]
            for row in open_rows:
                texts[row] = tokenizer.decode(new[row], skip_special_tokens=True).strip()
    for row, item in enumerate(items):
        if row in probs_by_row:
            probs = probs_by_row[row]
            letter = max(probs, key=lambda k: probs[k])
            records.append(
                _record(
                    item,
                    budget,
                    letter,
                    correct=float(letter == item.answer),
                    option_probs={k: round(v, 6) for k, v in probs.items()},
                )
            )
        else:
            text = texts[row]
            score = token_f1(text, item.references) if item.references else None
            records.append(_record(item, budget, text, token_f1=score))
    return records


def _record(
    item: Item,
    budget: Configuration,
    prediction: str,
    *,
    correct: float | None = None,
    token_f1: float | None = None,
    option_probs: dict[str, float] | None = None,
) -> EvalRecord:
    return EvalRecord(
        item_id=item.item_id,
        video_id=item.video_id,
        task_kind=str(item.task_kind),
        question_kind=question_kind(item),
        budget=budget.label,
        prediction=prediction,
        correct=correct,
        token_f1=token_f1,
        option_probs=option_probs,
    )


def evaluate_through_backend(
    backend: Any, items: list[Item], frame_set: FrameSet | None, budget: Configuration
) -> list[EvalRecord]:
    """Multiple-choice items scored by the `hf` backend itself (used for option-likelihood
    scoring, which this module does not reimplement)."""
    from itemscale.collect.models import DecodingSettings, VideoRequest

    requests = [VideoRequest(item, frame_set, DecodingSettings(max_new_tokens=1)) for item in items]
    return [
        _record(
            item,
            budget,
            response.raw_text or "",
            correct=float(response.answer == item.answer),
            option_probs=response.option_probs,
        )
        for item, response in zip(items, backend.generate(requests), strict=True)
    ]


def evaluate(
    model: Any,
    processor: Any,
    items: list[Item],
    videos: dict[str, Path],
    budgets: list[Configuration],
    *,
    max_new_tokens: int = 32,
    batch_rows: int = 16,
    mcqa_backend: Any | None = None,
) -> list[EvalRecord]:
    """Every item at every budget; each video decoded once for all budgets, as a sweep does.

    `mcqa_backend`: a loaded backend that answers the multiple-choice items instead (the
    model's own `hf` backend with option-likelihood scoring)."""
    from itemscale.collect.video import decode_for_configs

    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.video_id, []).append(item)
    records: list[EvalRecord] = []
    for video_id in sorted(groups):
        visual = [b for b in budgets if not b.is_text_only]
        framesets = decode_for_configs(videos[video_id], visual) if visual else {}
        group = groups[video_id]
        if mcqa_backend is not None:
            choice = [i for i in group if i.task_kind == TaskKind.MCQA]
            group = [i for i in group if i.task_kind != TaskKind.MCQA]
        for budget in budgets:
            frame_set = None if budget.is_text_only else framesets[budget.config_id]
            if mcqa_backend is not None and choice:
                records.extend(evaluate_through_backend(mcqa_backend, choice, frame_set, budget))
            for start in range(0, len(group), batch_rows):
                records.extend(
                    evaluate_video(
                        model,
                        processor,
                        group[start : start + batch_rows],
                        frame_set,
                        budget,
                        max_new_tokens=max_new_tokens,
                    )
                )
    return records


def summarise(records: list[EvalRecord]) -> dict[str, BudgetSummary]:
    """Per budget: MCQA accuracy, mean token F1 of open answers, and per question kind."""
    table: dict[str, BudgetSummary] = {}
    for budget in dict.fromkeys(r.budget for r in records):
        rows = [r for r in records if r.budget == budget]
        mc = [r.correct for r in rows if r.correct is not None]
        f1 = [r.token_f1 for r in rows if r.token_f1 is not None]
        kinds: dict[str, KindSummary] = {}
        for kind in sorted({r.question_kind for r in rows}):
            k_mc = [r.correct for r in rows if r.question_kind == kind and r.correct is not None]
            k_f1 = [r.token_f1 for r in rows if r.question_kind == kind and r.token_f1 is not None]
            entry: KindSummary = {}
            if k_mc:
                entry["mcqa_accuracy"] = round(float(np.mean(k_mc)), 4)
                entry["mcqa_n"] = len(k_mc)
            if k_f1:
                entry["token_f1"] = round(float(np.mean(k_f1)), 4)
                entry["open_n"] = len(k_f1)
            kinds[kind] = entry
        table[budget] = {
            "mcqa_accuracy": round(float(np.mean(mc)), 4) if mc else None,
            "mcqa_n": len(mc),
            "token_f1": round(float(np.mean(f1)), 4) if f1 else None,
            "open_n": len(f1),
            "by_kind": kinds,
        }
    return table


EVAL_VERSION = 1
#: The budgets docs/builtin-model.md reports (frame counts at the suite's three sizes, and
#: none) as (frames, short side): each is evaluated as its `Configuration`, default sampling
#: (endpoint-inclusive linspace), so the scores here are what a sweep of them would record.
REPORT_BUDGETS: tuple[tuple[int, int], ...] = (
    (0, 0),
    *((frames, 112) for frames in (2, 4, 8, 16, 32, 64)),
    *((frames, 56) for frames in (8, 32)),
    *((frames, 84) for frames in (8, 32)),
)


def eval_configuration(frames: int, short_side: int | None = None) -> Configuration:
    """The configuration of a budget given as a frame count and a short side (none or 0:
    native size); 0 frames is the text-only baseline."""
    from itemscale.collect.protocol import Configuration

    if frames == 0:
        return Configuration.text_only()
    return Configuration(frames=frames, short_side=short_side or None)


def evaluate_suite(
    model_dir: Path,
    suite_dir: Path,
    out_path: Path,
    *,
    budgets: tuple[Configuration, ...] | None = None,
    max_videos: int | None = None,
    max_new_tokens: int = 32,
) -> EvalReport:
    """Score the test split (its first `max_videos` videos) and write records + summary JSON."""
    import json
    import os

    from itemscale.collect.items import read_items_jsonl

    items = [i for i in read_items_jsonl(suite_dir / ITEMS_FILE) if i.split == "test"]
    video_ids = sorted({i.video_id for i in items})[:max_videos]
    keep = set(video_ids)
    items = [i for i in items if i.video_id in keep]
    videos = {i.video_id: suite_dir / str(i.video_path) for i in items}
    model, processor = load_builtin(model_dir)
    mcqa_backend = None
    options = builtin_backend_options(model_dir)
    if options.get("mcqa_scoring", "letter") != "letter":
        from itemscale.collect.models import load_backend
        from itemscale.collect.protocol import ModelEntry

        entry = ModelEntry(
            name="builtin", backend="hf", model=str(model_dir), dtype="float32", options=options
        )
        mcqa_backend = load_backend(entry, batch_size=8)
    records = evaluate(
        model,
        processor,
        items,
        videos,
        list(budgets or (eval_configuration(*budget) for budget in REPORT_BUDGETS)),
        max_new_tokens=max_new_tokens,
        mcqa_backend=mcqa_backend,
    )
    payload: EvalReport = {
        "builtin_eval_version": EVAL_VERSION,
        "model_dir": str(model_dir),
        "suite_dir": str(suite_dir),
        "test_videos": len(video_ids),
        "test_items": len(items),
        # "letter", or what the model's backend options set (checked by loading that backend)
        "mcqa_scoring": str(options.get("mcqa_scoring", "letter")),
        "summary": summarise(records),
        "records": [_record_fields(r) for r in records],
    }
    tmp = out_path.with_name(out_path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    os.replace(tmp, out_path)
    return payload


def _main() -> None:
    import argparse

    import torch

    parser = argparse.ArgumentParser(description="score the built-in model on a suite's test split")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--suite", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-videos", type=int, default=None)
    parser.add_argument("--budgets", default=None, help="e.g. 0,8@112,32@112 (default: report)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    budgets = None
    if args.budgets:
        parsed = []
        for part in args.budgets.split(","):
            frames, _, side = part.partition("@")
            parsed.append(eval_configuration(int(frames), int(side or 0)))
        budgets = tuple(parsed)
    payload = evaluate_suite(
        args.model, args.suite, args.out, budgets=budgets, max_videos=args.max_videos
    )
    for label, row in payload["summary"].items():
        print(f"{label:>10}  mcqa {row['mcqa_accuracy']}  f1 {row['token_f1']}")


if __name__ == "__main__":
    _main()

"""Training the built-in tiny Video LLM on the synthetic suite's training split.

Why it is built this way:
- Deterministic: weights from `torch.manual_seed`, data order, budgets and frame phases from one
  `numpy.random.Generator`, a fixed number of steps (wall time only caps a run, and a capped run
  says so in its metadata).
- Cheap enough for 2 CPU cores: each video is decoded once and kept (downscaled) in memory, and
  all questions about one video in a step share a single vision-tower pass.
- Budget-robust: each step draws a frame count, a frame size and a sampling phase, so the model
  sees every budget it will be audited at, and sometimes no video at all (a text-only prior).
  The budget is never written into the text.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..items import Item, read_items_jsonl
from ..responses import TaskKind
from ..synth import COLOURS
from ._builtin_aux import (
    NO_COLOUR_WORD,
    aux_loss,
    caption_rows,
    make_aux_head,
    palette_token_targets,
    region_colour_targets,
    word_alignment_loss,
    word_targets,
)
from ._builtin_build import build_model, build_processor, item_texts, train_tokenizer
from ._builtin_config import BUILTIN_FORMAT_VERSION, BuiltinArchitecture, TrainSettings
from ._builtin_data import (
    DecodedVideo,
    answer_target,
    decode_video,
    encode_batch,
    expand_video_tokens,
    frame_size,
    per_example_loss,
    process_video,
    render_prompt,
    resize_frames,
    segment_indices,
    shared_prefix_logits,
)

TRAIN_LOG_NAME = "train_log.json"
META_NAME = "builtin_meta.json"


class SuiteError(ValueError):
    """The suite folder is missing something training needs; names the file and item."""


@dataclass(frozen=True, slots=True)
class StepRecord:
    step: int
    loss: float
    seconds: float
    items: int
    frames: int
    height: int
    width: int
    text_only: bool


@dataclass(slots=True)
class TrainResult:
    out_dir: Path
    steps_done: int
    stopped_by_time: bool
    seconds: float
    log: list[StepRecord] = field(default_factory=list)


def suite_items(suite_dir: Path) -> list[Item]:
    path = suite_dir / "items.jsonl"
    if not path.is_file():
        raise SuiteError(f"{path}: no items file (is {suite_dir} a suite folder?)")
    return read_items_jsonl(path)


def video_path(suite_dir: Path, item: Item) -> Path:
    if item.video_path is None:
        raise SuiteError(f"{suite_dir / 'items.jsonl'}: item {item.item_id} has no video_path")
    path = Path(item.video_path)
    return path if path.is_absolute() else suite_dir / path


def group_by_video(items: list[Item]) -> dict[str, list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.video_id, []).append(item)
    return groups


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """One step's data, fixed in advance from the seed: which items, which budget, which phase."""

    video_id: str
    item_ids: tuple[str, ...]
    frames: int
    short_side: int
    text_only: bool
    phase_seed: int


def plan_steps(
    groups: dict[str, list[Item]], settings: TrainSettings, rng: np.random.Generator
) -> list[PlannedStep]:
    """The whole run's data order: epochs over videos in a shuffled order, each video's items in
    chunks, each chunk with its own budget. Cheap budgets are drawn more often than
    32 frames at the largest size, which `max_step_pixels` rules out."""
    video_ids = sorted(groups)
    budgets = [
        (frames, side)
        for frames in settings.frame_counts
        for side in settings.short_sides
        if frames * side * side <= settings.max_step_pixels
    ]
    if not budgets:
        raise ValueError("no (frames, short side) pair fits max_step_pixels")
    plan: list[PlannedStep] = []
    while len(plan) < settings.steps:
        for vid in rng.permutation(len(video_ids)):
            video_id = video_ids[int(vid)]
            items = groups[video_id]
            order = rng.permutation(len(items))
            for start in range(0, len(items), settings.items_per_step):
                chunk = tuple(
                    items[int(i)].item_id for i in order[start : start + settings.items_per_step]
                )
                frames, side = budgets[int(rng.integers(len(budgets)))]
                plan.append(
                    PlannedStep(
                        video_id=video_id,
                        item_ids=chunk,
                        frames=frames,
                        short_side=side,
                        text_only=bool(rng.random() < settings.text_only_fraction),
                        phase_seed=int(rng.integers(2**31)),
                    )
                )
                if len(plan) == settings.steps:
                    return plan
    return plan


def learning_rate_factor(step: int, settings: TrainSettings) -> float:
    """Linear warm-up, then cosine decay to 5% over the planned steps (the alignment stage's,
    if any, then the suite's)."""
    total = settings.steps + settings.stage1_steps
    if step < settings.warmup_steps:
        return (step + 1) / settings.warmup_steps
    progress = (step - settings.warmup_steps) / max(1, total - settings.warmup_steps)
    return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def step_loss(
    model: Any,
    processor: Any,
    items: list[Item],
    video: DecodedVideo | None,
    planned: PlannedStep,
    aux_head: Any | None = None,
    aux_weight: float = 0.0,
    caption_weight: float = 0.0,
    mcqa_weight: float = 1.0,
    word_align_weight: float = 0.0,
    teacher_mix: float = 0.0,
    captions_only: bool = False,
) -> tuple[Any, int, int, int]:
    """Mean per-example loss of one step (plus the weighted auxiliary colour loss when a head
    is given, and the word-alignment loss when weighted), and the frame count and size it used.

    `teacher_mix` in [0, 1]: how much of what the language model sees in place of each visual
    token is its word-alignment target rather than the tower's output (see `TrainSettings`)."""
    import torch

    targets = [answer_target(item) for item in items]
    if video is None or planned.text_only:
        prompts = [render_prompt(processor, item, with_video=False) for item in items]
        batch = encode_batch(processor, prompts, targets)
        out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
        return per_example_loss(out.logits, batch.labels).mean(), 0, 0, 0
    phase_rng = np.random.default_rng(planned.phase_seed)
    jitter = phase_rng if phase_rng.random() < 0.5 else None
    indices = segment_indices(video.num_frames, planned.frames, jitter)
    height, width = frame_size(
        int(video.frames.shape[1]), int(video.frames.shape[2]), planned.short_side
    )
    frames = resize_frames(video.frames[indices], (height, width))
    inputs = process_video(processor, frames, fps=video.fps, indices=indices)
    video_id = items[0].video_id
    if captions_only and caption_weight > 0:
        items, targets = [], []
    real_rows = len(items)
    if caption_weight > 0:
        captions = [
            Item(
                item_id=f"{video_id}-caption-{n}",
                video_id=video_id,
                task_kind=TaskKind.OPEN_QA,
                question=question,
                references=(answer,),
            )
            for n, (question, answer) in enumerate(caption_rows(frames, COLOURS))
        ]
        items = [*items, *captions]
        targets = [*targets, *(answer_target(c) for c in captions)]
    prompts = [
        expand_video_tokens(render_prompt(processor, item, with_video=True), inputs.num_tokens)
        for item in items
    ]
    features = model.model.get_video_features(
        inputs.pixel_values, inputs.grid_thw, return_dict=True
    )
    (tokens,) = features.pooler_output
    alignment = None
    if word_align_weight > 0:
        presence = palette_token_targets(frames, COLOURS)
        colour_words, none_word, scale = colour_word_embeddings(model, processor)
        alignment = word_alignment_loss(tokens, presence, colour_words, none_word, scale)
        if teacher_mix > 0:
            teacher = word_targets(presence, colour_words.detach(), none_word.detach())
            # Straight through: the language model sees the mix, the tower gets its gradient.
            shown = teacher_mix * teacher + (1 - teacher_mix) * tokens
            shown = shown + teacher_mix * (tokens - tokens.detach())
            features.pooler_output = (shown,)
    logits, labels = shared_prefix_logits(
        model, processor, inputs, prompts, targets, video_features=features
    )
    per_example = per_example_loss(logits, labels)
    if real_rows == 0:  # a captions-only step
        loss = caption_weight * per_example.mean()
        if alignment is not None:
            loss = loss + word_align_weight * alignment
        return loss, planned.frames, height, width
    if mcqa_weight == 1.0:
        loss = per_example[:real_rows].mean()
    else:
        weights = torch.tensor(
            [mcqa_weight if i.task_kind == TaskKind.MCQA else 1.0 for i in items[:real_rows]]
        )
        loss = (per_example[:real_rows] * weights).sum() / weights.sum()
    if caption_weight > 0:
        loss = loss + caption_weight * per_example[real_rows:].mean()
    if aux_head is not None and aux_weight > 0:
        loss = loss + aux_weight * aux_loss(aux_head, tokens, region_colour_targets(frames))
    if alignment is not None:
        loss = loss + word_align_weight * alignment
    return loss, planned.frames, height, width


def colour_word_embeddings(model: Any, processor: Any) -> tuple[Any, Any, Any]:
    """The language model's input embeddings of the palette's colour words and of "none" (the
    first token of each, as an answer spells it), and the squared mean embedding norm that
    scales distances to them."""
    tokenizer = processor.tokenizer
    table = model.model.language_model.embed_tokens.weight

    def first_token(word: str) -> int:
        return int(tokenizer(word, add_special_tokens=False)["input_ids"][0])

    colour_ids = [first_token(name) for name in COLOURS]
    scale = table.detach().norm(dim=-1).mean() ** 2
    return table[colour_ids], table[first_token(NO_COLOUR_WORD)], scale


def teacher_mix(step: int, total: int, settings: TrainSettings) -> float:
    """The teacher-token share at suite step `step` of `total` (see `TrainSettings`)."""
    if settings.teacher_until <= 0:
        return 0.0
    start, end = settings.teacher_until * total, settings.teacher_anneal_until * total
    if step < start:
        return 1.0
    if step >= end:
        return 0.0
    return 1.0 - (step - start) / (end - start)


def as_open_item(item: Item) -> Item:
    """A multiple-choice training item asked open-ended and answered with the correct option's
    text (the `option_text` target, for option-likelihood scoring)."""
    if item.task_kind != TaskKind.MCQA:
        return item
    if item.answer is None:
        raise ValueError(f"item {item.item_id}: a training mcqa item needs its answer")
    correct = item.options[item.option_letters.index(item.answer)]
    return item.model_copy(
        update={
            "task_kind": TaskKind.OPEN_QA,
            "options": (),
            "answer": None,
            "references": (correct,),
        }
    )


def stage1_loss(
    model: Any, processor: Any, settings: TrainSettings, step: int, rng: np.random.Generator
) -> tuple[Any, int, int]:
    """Mean answer loss over one alignment step's generated videos (`_builtin_stage1`)."""
    import torch

    from ._builtin_stage1 import alignment_video

    start_fill, end_fill = settings.stage1_fill
    progress = step / max(1, settings.stage1_steps - 1)
    fill = start_fill + (end_fill - start_fill) * progress
    height, width = frame_size(120, 160, settings.stage1_short_side)
    indices = np.linspace(0, 119, settings.stage1_frames).round().astype(np.int64)
    losses = []
    for _ in range(settings.stage1_videos_per_step):
        video = alignment_video(
            rng, frames=settings.stage1_frames, height=height, width=width, fill=fill
        )
        inputs = process_video(processor, video.frames, fps=10.0, indices=indices)
        items = list(video.items)
        prompts = [
            expand_video_tokens(render_prompt(processor, item, with_video=True), inputs.num_tokens)
            for item in items
        ]
        targets = [answer_target(item) for item in items]
        features = model.model.get_video_features(
            inputs.pixel_values, inputs.grid_thw, return_dict=True
        )
        logits, labels = shared_prefix_logits(
            model, processor, inputs, prompts, targets, video_features=features
        )
        losses.append(per_example_loss(logits, labels).mean())
    return torch.stack(losses).mean(), height, width


def save_folder(out_dir: Path, model: Any, processor: Any, meta: dict[str, Any]) -> None:
    """Write weights, processor and metadata to a sibling temp folder, then swap it in, so an
    interrupted save never leaves a half-written model where a loader would find it."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(out_dir.name + ".tmp-save")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save_pretrained(tmp, safe_serialization=True)
    processor.save_pretrained(tmp)
    (tmp / META_NAME).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    keep = [p for p in out_dir.iterdir() if p.name not in _MODEL_FILES] if out_dir.is_dir() else []
    for extra in keep:  # files beside the model (e.g. the reference slice) survive a re-save
        target = tmp / extra.name
        if target.exists() or extra.name.endswith((".tmp-save", ".old-save")):
            continue
        if extra.is_file():
            shutil.copy2(extra, target)
        elif extra.is_dir():
            shutil.copytree(extra, target)
    old = out_dir.with_name(out_dir.name + ".old-save")
    if out_dir.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    if old.exists():
        shutil.rmtree(old)


_MODEL_FILES = frozenset(
    {
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "processor_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "special_tokens_map.json",
        "preprocessor_config.json",
        "video_preprocessor_config.json",
        META_NAME,
    }
)


CHECKPOINT_DIR = "checkpoint"
TRAINER_STATE = "trainer_state.pt"
TRAINER_STATE_VERSION = 1


def _save_checkpoint(
    out_dir: Path,
    *,
    step: int,
    model: Any,
    processor: Any,
    optimizer: Any,
    aux_head: Any | None,
    stage1_rng: np.random.Generator,
    result: TrainResult,
    meta: dict[str, Any],
) -> None:
    """OUT/checkpoint: the model folder plus everything the loop needs to continue bit for bit
    (weights, optimiser moments, RNG states, the step and the log so far)."""
    import torch

    folder = out_dir / CHECKPOINT_DIR
    save_folder(folder, model, processor, meta)
    state = {
        "trainer_state_version": TRAINER_STATE_VERSION,
        "step": step,
        "train_settings": meta["train_settings"],
        "architecture": meta["architecture"],
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "aux_head": aux_head.state_dict() if aux_head is not None else None,
        "torch_rng": torch.get_rng_state(),
        "stage1_rng": stage1_rng.bit_generator.state,
        "log": [asdict(r) for r in result.log],
    }
    tmp = folder / (TRAINER_STATE + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, folder / TRAINER_STATE)


def _load_checkpoint(
    folder: Path, settings: TrainSettings, arch: BuiltinArchitecture
) -> dict[str, Any]:
    import torch

    path = folder / TRAINER_STATE
    if not path.is_file():
        raise SuiteError(f"--resume {folder}: no {TRAINER_STATE} (not a training checkpoint)")
    state: dict[str, Any] = torch.load(path, weights_only=False)
    if state.get("trainer_state_version") != TRAINER_STATE_VERSION:
        raise SuiteError(f"{path}: trainer state version {state.get('trainer_state_version')!r}")
    ours = settings.model_dump(mode="json")
    theirs = dict(state["train_settings"])
    # runtime-only settings may differ between the sessions of one run
    for key in ("minutes", "threads", "log_every", "checkpoint_every"):
        ours.pop(key, None)
        theirs.pop(key, None)
    if ours != theirs or arch.model_dump(mode="json") != state["architecture"]:
        changed = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
        raise SuiteError(
            f"--resume {folder}: the checkpoint was made with another recipe "
            f"(differs in {', '.join(changed) or 'architecture'}); resume with the same one"
        )
    return state


def train_builtin(
    suite_dir: str | Path,
    out_dir: str | Path,
    settings: TrainSettings | None = None,
    arch: BuiltinArchitecture | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    resume: str | Path | None = None,
    stop_at: int | None = None,
) -> TrainResult:
    """Train the tiny model on `suite_dir`'s training split and save it to `out_dir`.

    `resume`: a checkpoint folder (`OUT/checkpoint`, written every `checkpoint_every` steps
    and when `stop_at` is reached) to continue from; the run continues bit for bit as if it had
    never stopped (same recipe, same thread count). `stop_at`: stop after this global step
    with a checkpoint, so a long recipe can run as several sessions.
    """
    import torch

    settings = settings or TrainSettings()
    arch = arch or BuiltinArchitecture()
    if stop_at is not None and stop_at <= settings.stage1_steps:
        raise SuiteError(f"stop_at {stop_at}: a run can stop only after its alignment stage")
    suite_dir = Path(suite_dir)
    out_dir = Path(out_dir)
    say = progress or (lambda _msg: None)

    train_items = [i for i in suite_items(suite_dir) if i.split == "train"]
    if not train_items:
        raise SuiteError(f"{suite_dir / 'items.jsonl'}: no items with split 'train'")
    for item in train_items:
        answer_target(item)  # refuse unlabelled items before spending any time
    if settings.mcqa_target == "option_text":
        train_items = [as_open_item(item) for item in train_items]
    groups = group_by_video(train_items)
    by_id = {item.item_id: item for item in train_items}

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        torch.manual_seed(settings.seed)
        rng = np.random.default_rng(settings.seed)
        tokenizer = train_tokenizer(item_texts(train_items), arch.vocab_size)
        processor = build_processor(tokenizer)
        model = build_model(arch, tokenizer)
        model.train()

        plan = plan_steps(groups, settings, rng)

        aux_head = (
            make_aux_head(arch.text_hidden, settings.seed + 1) if settings.aux_weight else None
        )
        state = _load_checkpoint(Path(resume), settings, arch) if resume is not None else None
        if state is not None:
            model.load_state_dict(state["model"])
            if aux_head is not None and state["aux_head"] is not None:
                aux_head.load_state_dict(state["aux_head"])
        vision = [p for n, p in model.named_parameters() if n.startswith("model.visual.")]
        if aux_head is not None:
            vision += list(aux_head.parameters())
        other = [p for n, p in model.named_parameters() if not n.startswith("model.visual.")]
        optimizer = torch.optim.AdamW(
            [
                {"params": vision, "lr": settings.vision_learning_rate},
                {"params": other, "lr": settings.learning_rate},
            ],
            weight_decay=settings.weight_decay,
            betas=(0.9, 0.98),
            eps=settings.adam_eps,
        )
        base_lrs = [settings.vision_learning_rate, settings.learning_rate]
        params = [p for group in optimizer.param_groups for p in group["params"]]

        def optimise(step: int, loss: Any) -> float:
            """One optimiser step on `loss` at the learning rate of global step `step`."""
            factor = learning_rate_factor(step, settings)
            for group, base in zip(optimizer.param_groups, base_lrs, strict=True):
                group["lr"] = base * factor
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            return float(loss.detach())

        say(
            f"training {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters for "
            f"{settings.steps} steps on {len(train_items)} items"
        )

        start = time.monotonic()
        result = TrainResult(out_dir=out_dir, steps_done=0, stopped_by_time=False, seconds=0.0)
        window: list[float] = []
        stage1_rng = np.random.default_rng([settings.seed, 1])
        first_step = 0
        if state is not None:
            optimizer.load_state_dict(state["optimizer"])
            torch.set_rng_state(state["torch_rng"])
            stage1_rng.bit_generator.state = state["stage1_rng"]
            result.log = [StepRecord(**r) for r in state["log"]]
            first_step = result.steps_done = int(state["step"])
            start -= result.log[-1].seconds if result.log else 0.0
            say(f"resumed from {resume} at step {first_step}")

        def checkpoint(step: int) -> None:
            _save_checkpoint(
                out_dir,
                step=step,
                model=model,
                processor=processor,
                optimizer=optimizer,
                aux_head=aux_head,
                stage1_rng=stage1_rng,
                result=result,
                meta=_meta(settings, arch, result, groups, model),
            )

        for step in range(first_step, settings.stage1_steps):
            loss, height, width = stage1_loss(model, processor, settings, step, stage1_rng)
            value = optimise(step, loss)
            result.log.append(
                StepRecord(
                    step=step,
                    loss=value,
                    seconds=round(time.monotonic() - start, 3),
                    items=6 * settings.stage1_videos_per_step,
                    frames=settings.stage1_frames,
                    height=height,
                    width=width,
                    text_only=False,
                )
            )
            window.append(value)
            if (step + 1) % settings.log_every == 0:
                say(
                    f"stage 1 step {step + 1}/{settings.stage1_steps} loss "
                    f"{sum(window) / len(window):.4f} ({time.monotonic() - start:.0f}s)"
                )
                window = []
        window = []
        offset = settings.stage1_steps
        for suite_step, planned in enumerate(plan):
            step = suite_step + offset
            if step < first_step:
                continue
            if stop_at is not None and step >= stop_at:
                checkpoint(step)
                say(f"stopped at step {step}; resume with --resume {out_dir / CHECKPOINT_DIR}")
                break
            if time.monotonic() - start > settings.minutes * 60:
                result.stopped_by_time = True
                checkpoint(step)
                say(
                    f"stopping at step {step}: the {settings.minutes} minute cap was reached; "
                    f"resume with --resume {out_dir / CHECKPOINT_DIR}"
                )
                break
            items = [by_id[i] for i in planned.item_ids]
            # Decoding per step (a 12 s clip at 160x120 takes milliseconds) keeps memory flat
            # whatever the suite's size.
            video = None if planned.text_only else decode_video(video_path(suite_dir, items[0]))
            loss, frames, height, width = step_loss(
                model,
                processor,
                items,
                video,
                planned,
                aux_head,
                settings.aux_weight,
                settings.caption_weight,
                settings.mcqa_weight,
                settings.word_align_weight,
                teacher_mix(suite_step, settings.steps, settings),
                suite_step < settings.captions_only_until * settings.steps,
            )
            value = optimise(step, loss)
            result.log.append(
                StepRecord(
                    step=step,
                    loss=value,
                    seconds=round(time.monotonic() - start, 3),
                    items=len(items),
                    frames=frames,
                    height=height,
                    width=width,
                    text_only=frames == 0,
                )
            )
            result.steps_done = step + 1
            window.append(value)
            if settings.checkpoint_every and (step + 1) % settings.checkpoint_every == 0:
                save_folder(out_dir, model, processor, _meta(settings, arch, result, groups, model))
                write_train_log(out_dir / TRAIN_LOG_NAME, result.log)
                checkpoint(step + 1)
            if (step + 1) % settings.log_every == 0:
                say(
                    f"step {step + 1}/{settings.steps + offset} loss {sum(window) / len(window):.4f} "
                    f"({time.monotonic() - start:.0f}s)"
                )
                window = []
        result.seconds = time.monotonic() - start
        model.eval()
        save_folder(out_dir, model, processor, _meta(settings, arch, result, groups, model))
        write_train_log(out_dir / TRAIN_LOG_NAME, result.log)
        say(f"saved to {out_dir} after {result.steps_done} steps ({result.seconds:.0f}s)")
        return result
    finally:
        torch.set_num_threads(previous_threads)


TRAIN_LOG_VERSION = 1


def _meta(
    settings: TrainSettings,
    arch: BuiltinArchitecture,
    result: TrainResult,
    groups: dict[str, list[Item]],
    model: Any,
) -> dict[str, Any]:
    return {
        "builtin_format_version": BUILTIN_FORMAT_VERSION,
        "architecture": arch.model_dump(mode="json"),
        "train_settings": settings.model_dump(mode="json"),
        "steps_done": result.steps_done,
        "stopped_by_time": result.stopped_by_time,
        "train_seconds": round(result.log[-1].seconds if result.log else 0.0, 1),
        "train_items": sum(len(v) for v in groups.values()),
        "train_videos": len(groups),
        "parameters": sum(p.numel() for p in model.parameters()),
        # How the `builtin` shortcut asks this model: trained on option texts, it is scored by
        # option likelihood.
        "backend_options": (
            {"mcqa_scoring": "likelihood"} if settings.mcqa_target == "option_text" else {}
        ),
    }


def write_train_log(path: Path, log: list[StepRecord]) -> None:
    tmp = path.with_suffix(".tmp")
    payload = {"train_log_version": TRAIN_LOG_VERSION, "steps": [asdict(r) for r in log]}
    tmp.write_text(json.dumps(payload) + "\n")
    os.replace(tmp, path)

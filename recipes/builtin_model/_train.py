"""Training the built-in tiny Video LLM on the synthetic suite's training split.

Why it is built this way:
- Deterministic: weights from `torch.manual_seed`, data order, budgets and frame phases from one
  `numpy.random.Generator`, a fixed number of steps (wall time only caps a run, and a capped run
  says so in its metadata).
- Cheap enough for 2 CPU cores: a step decodes only its own small video (milliseconds), and
  all questions about one video in a step share a single vision-tower pass.
- Budget-robust: each step draws a frame count, a frame size and a sampling phase, so the model
  sees every budget it will be audited at, and sometimes no video at all (a text-only prior).
  The budget is never written into the text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from itemscale.collect.items import ITEMS_FILE, Item
from itemscale.collect.synth import SuiteError

from ._aux import make_aux_head
from ._build import build_model, build_processor, item_texts, train_tokenizer
from ._checkpoint import (
    CHECKPOINT_DIR,
    TRAIN_LOG_NAME,
    BuiltinMeta,
    StepRecord,
    load_checkpoint,
    save_checkpoint,
    save_folder,
    write_train_log,
)
from ._config import BUILTIN_FORMAT_VERSION, BuiltinArchitecture, TrainSettings
from ._data import answer_target, decode_video
from ._loss import stage1_loss, step_loss
from ._plan import (
    PlannedStep,
    as_open_item,
    group_by_video,
    learning_rate_factor,
    plan_steps,
    suite_items,
    teacher_mix,
    video_path,
)


@dataclass(slots=True)
class TrainResult:
    out_dir: Path
    steps_done: int
    stopped_by_time: bool
    seconds: float
    log: list[StepRecord] = field(default_factory=list)


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

    train_items = _training_items(suite_dir, settings)
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
        state = load_checkpoint(Path(resume), settings, arch) if resume is not None else None
        if state is not None:
            model.load_state_dict(state["model"])
            if aux_head is not None and state["aux_head"] is not None:
                aux_head.load_state_dict(state["aux_head"])
        optimizer = _optimizer(model, aux_head, settings)

        say(
            f"training {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters for "
            f"{settings.steps} steps on {len(train_items)} items"
        )

        start = time.monotonic()
        result = TrainResult(out_dir=out_dir, steps_done=0, stopped_by_time=False, seconds=0.0)
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

        run = _Run(
            settings=settings,
            arch=arch,
            out_dir=out_dir,
            model=model,
            processor=processor,
            aux_head=aux_head,
            optimizer=optimizer,
            params=[p for group in optimizer.param_groups for p in group["params"]],
            stage1_rng=stage1_rng,
            result=result,
            groups=groups,
            start=start,
            say=say,
        )
        _stage1(run, first_step)
        _suite_steps(run, plan, by_id, suite_dir, first_step, stop_at)
        result.seconds = time.monotonic() - start
        model.eval()
        save_folder(out_dir, model, processor, _meta(settings, arch, result, groups, model))
        write_train_log(out_dir / TRAIN_LOG_NAME, result.log)
        say(f"saved to {out_dir} after {result.steps_done} steps ({result.seconds:.0f}s)")
        return result
    finally:
        torch.set_num_threads(previous_threads)


def _training_items(suite_dir: Path, settings: TrainSettings) -> list[Item]:
    """The suite's training split, checked before any time is spent, as the recipe asks for
    its targets (option texts turn multiple-choice items into open ones)."""
    train_items = [i for i in suite_items(suite_dir) if i.split == "train"]
    if not train_items:
        raise SuiteError(f"{suite_dir / ITEMS_FILE}: no items with split 'train'")
    for item in train_items:
        answer_target(item)  # refuse unlabelled items before spending any time
    if settings.mcqa_target == "option_text":
        train_items = [as_open_item(item) for item in train_items]
    return train_items


def _optimizer(model: Any, aux_head: Any, settings: TrainSettings) -> Any:
    """AdamW with the vision tower (and the auxiliary head) at its own learning rate."""
    import torch

    vision = [p for n, p in model.named_parameters() if n.startswith("model.visual.")]
    if aux_head is not None:
        vision += list(aux_head.parameters())
    other = [p for n, p in model.named_parameters() if not n.startswith("model.visual.")]
    return torch.optim.AdamW(
        [
            {"params": vision, "lr": settings.vision_learning_rate},
            {"params": other, "lr": settings.learning_rate},
        ],
        weight_decay=settings.weight_decay,
        betas=(0.9, 0.98),
        eps=settings.adam_eps,
    )


@dataclass(slots=True)
class _Run:
    """What one training run carries from step to step."""

    settings: TrainSettings
    arch: BuiltinArchitecture
    out_dir: Path
    model: Any
    processor: Any
    aux_head: Any
    optimizer: Any
    params: list[Any]
    stage1_rng: np.random.Generator
    result: TrainResult
    groups: dict[str, list[Item]]
    #: `time.monotonic()` at step 0 (a resumed run's start moved back by its time so far)
    start: float
    say: Callable[[str], None]

    def optimise(self, step: int, loss: Any) -> float:
        """One optimiser step on `loss` at the learning rate of global step `step`."""
        import torch

        factor = learning_rate_factor(step, self.settings)
        base_lrs = [self.settings.vision_learning_rate, self.settings.learning_rate]
        for group, base in zip(self.optimizer.param_groups, base_lrs, strict=True):
            group["lr"] = base * factor
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        return float(loss.detach())

    def record(
        self, step: int, loss: float, *, items: int, frames: int, height: int, width: int
    ) -> None:
        self.result.log.append(
            StepRecord(
                step=step,
                loss=loss,
                seconds=round(time.monotonic() - self.start, 3),
                items=items,
                frames=frames,
                height=height,
                width=width,
                text_only=frames == 0,
            )
        )

    def meta(self) -> BuiltinMeta:
        return _meta(self.settings, self.arch, self.result, self.groups, self.model)

    def checkpoint(self, step: int) -> None:
        save_checkpoint(
            self.out_dir,
            step=step,
            model=self.model,
            processor=self.processor,
            optimizer=self.optimizer,
            aux_head=self.aux_head,
            stage1_rng=self.stage1_rng,
            log=self.result.log,
            meta=self.meta(),
        )


def _stage1(run: _Run, first_step: int) -> None:
    """The alignment stage: words to colours and shapes, on frames drawn for it alone."""
    settings = run.settings
    window: list[float] = []
    for step in range(first_step, settings.stage1_steps):
        loss, height, width = stage1_loss(run.model, run.processor, settings, step, run.stage1_rng)
        value = run.optimise(step, loss)
        run.record(
            step,
            value,
            items=6 * settings.stage1_videos_per_step,
            frames=settings.stage1_frames,
            height=height,
            width=width,
        )
        window.append(value)
        if (step + 1) % settings.log_every == 0:
            run.say(
                f"stage 1 step {step + 1}/{settings.stage1_steps} loss "
                f"{sum(window) / len(window):.4f} ({time.monotonic() - run.start:.0f}s)"
            )
            window = []


def _suite_steps(
    run: _Run,
    plan: list[PlannedStep],
    by_id: dict[str, Item],
    suite_dir: Path,
    first_step: int,
    stop_at: int | None,
) -> None:
    """The planned steps on the suite's videos, until the plan ends, `stop_at` or the time cap
    (both of which leave a checkpoint to resume from)."""
    settings, result = run.settings, run.result
    window: list[float] = []
    offset = settings.stage1_steps
    for suite_step, planned in enumerate(plan):
        step = suite_step + offset
        if step < first_step:
            continue
        if stop_at is not None and step >= stop_at:
            run.checkpoint(step)
            run.say(f"stopped at step {step}; resume with --resume {run.out_dir / CHECKPOINT_DIR}")
            return
        if time.monotonic() - run.start > settings.minutes * 60:
            result.stopped_by_time = True
            run.checkpoint(step)
            run.say(
                f"stopping at step {step}: the {settings.minutes} minute cap was reached; "
                f"resume with --resume {run.out_dir / CHECKPOINT_DIR}"
            )
            return
        items = [by_id[i] for i in planned.item_ids]
        # Decoding per step (a 12 s clip at 160x120 takes milliseconds) keeps memory flat
        # whatever the suite's size.
        video = None if planned.text_only else decode_video(video_path(suite_dir, items[0]))
        loss, frames, height, width = step_loss(
            run.model,
            run.processor,
            items,
            video,
            planned,
            run.aux_head,
            settings.aux_weight,
            settings.caption_weight,
            settings.mcqa_weight,
            settings.word_align_weight,
            teacher_mix(suite_step, settings.steps, settings),
            suite_step < settings.captions_only_until * settings.steps,
        )
        value = run.optimise(step, loss)
        run.record(step, value, items=len(items), frames=frames, height=height, width=width)
        result.steps_done = step + 1
        window.append(value)
        if settings.checkpoint_every and (step + 1) % settings.checkpoint_every == 0:
            save_folder(run.out_dir, run.model, run.processor, run.meta())
            write_train_log(run.out_dir / TRAIN_LOG_NAME, result.log)
            run.checkpoint(step + 1)
        if (step + 1) % settings.log_every == 0:
            run.say(
                f"step {step + 1}/{settings.steps + offset} loss {sum(window) / len(window):.4f} "
                f"({time.monotonic() - run.start:.0f}s)"
            )
            window = []


def _meta(
    settings: TrainSettings,
    arch: BuiltinArchitecture,
    result: TrainResult,
    groups: dict[str, list[Item]],
    model: Any,
) -> BuiltinMeta:
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

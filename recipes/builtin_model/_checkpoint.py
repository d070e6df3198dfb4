"""What a run writes: the model folder, the training log and the resumable checkpoint.

Every write goes to a temporary name first and is swapped in, so an interrupted run never leaves
a half-written model, log or trainer state where a loader or `--resume` would find it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

import numpy as np

from itemscale.collect.models import BUILTIN_META_FILE
from itemscale.collect.synth import SuiteError

from ._config import BuiltinArchitecture, TrainSettings

if TYPE_CHECKING:
    import torch
    from torch.optim.optimizer import StateDict

TRAIN_LOG_NAME = "train_log.json"


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One step of `train_log.json`; checkpoints carry the log so far, so a resumed run's log
    is the whole run's."""

    step: int
    loss: float
    seconds: float
    items: int
    frames: int
    height: int
    width: int
    text_only: bool


class StepFields(TypedDict):
    """A `StepRecord` as the log and the trainer state store it."""

    step: int
    loss: float
    seconds: float
    items: int
    frames: int
    height: int
    width: int
    text_only: bool


def step_fields(record: StepRecord) -> StepFields:
    """`asdict`, typed: `StepFields` declares the dataclass's fields (a test checks that the
    two agree), so a field added to the dataclass cannot be left out of the file."""
    return cast(StepFields, asdict(record))


class AskedOptions(TypedDict, total=False):
    """The backend options a trained model asks to be run with (`builtin_meta.json`)."""

    mcqa_scoring: Literal["letter", "likelihood"]


class BuiltinMeta(TypedDict):
    """`builtin_meta.json`, beside a trained model's weights."""

    builtin_format_version: int
    #: `BuiltinArchitecture` and `TrainSettings` as JSON
    architecture: dict[str, object]
    train_settings: dict[str, object]
    steps_done: int
    stopped_by_time: bool
    train_seconds: float
    train_items: int
    train_videos: int
    parameters: int
    backend_options: AskedOptions


class TrainerState(TypedDict):
    """`checkpoint/trainer_state.pt`: what `--resume` needs to continue bit for bit."""

    trainer_state_version: int
    step: int
    train_settings: dict[str, object]
    architecture: dict[str, object]
    model: dict[str, torch.Tensor]
    #: torch's optimizer state (its own `StateDict`)
    optimizer: StateDict
    aux_head: dict[str, torch.Tensor] | None
    torch_rng: torch.Tensor
    #: numpy's bit generator state
    stage1_rng: Mapping[str, Any]
    log: list[StepFields]


def save_folder(out_dir: Path, model: Any, processor: Any, meta: BuiltinMeta) -> None:
    """Write weights, processor and metadata to a sibling temp folder, then swap it in, so an
    interrupted save never leaves a half-written model where a loader would find it."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(out_dir.name + ".tmp-save")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save_pretrained(tmp, safe_serialization=True)
    processor.save_pretrained(tmp)
    (tmp / BUILTIN_META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
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
        BUILTIN_META_FILE,
    }
)


CHECKPOINT_DIR = "checkpoint"
TRAINER_STATE = "trainer_state.pt"
TRAINER_STATE_VERSION = 1


def save_checkpoint(
    out_dir: Path,
    *,
    step: int,
    model: Any,
    processor: Any,
    optimizer: Any,
    aux_head: Any | None,
    stage1_rng: np.random.Generator,
    log: list[StepRecord],
    meta: BuiltinMeta,
) -> None:
    """OUT/checkpoint: the model folder plus everything the loop needs to continue bit for bit
    (weights, optimiser moments, RNG states, the step and the log so far)."""
    import torch

    folder = out_dir / CHECKPOINT_DIR
    save_folder(folder, model, processor, meta)
    state: TrainerState = {
        "trainer_state_version": TRAINER_STATE_VERSION,
        "step": step,
        "train_settings": meta["train_settings"],
        "architecture": meta["architecture"],
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "aux_head": aux_head.state_dict() if aux_head is not None else None,
        "torch_rng": torch.get_rng_state(),
        "stage1_rng": stage1_rng.bit_generator.state,
        "log": [step_fields(r) for r in log],
    }
    tmp = folder / (TRAINER_STATE + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, folder / TRAINER_STATE)


def load_checkpoint(
    folder: Path, settings: TrainSettings, arch: BuiltinArchitecture
) -> TrainerState:
    import torch

    path = folder / TRAINER_STATE
    if not path.is_file():
        raise SuiteError(f"--resume {folder}: no {TRAINER_STATE} (not a training checkpoint)")
    state: TrainerState = torch.load(path, weights_only=False)
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


TRAIN_LOG_VERSION = 1


def write_train_log(path: Path, log: list[StepRecord]) -> None:
    tmp = path.with_suffix(".tmp")
    payload = {"train_log_version": TRAIN_LOG_VERSION, "steps": [asdict(r) for r in log]}
    tmp.write_text(json.dumps(payload) + "\n")
    os.replace(tmp, path)

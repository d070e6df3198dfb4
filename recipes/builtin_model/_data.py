"""Turning suite items and their videos into the tiny model's inputs, for training and scoring.

The prompt is exactly what the `hf` backend renders: `build_messages(item)` through the
processor's chat template, the video part at the start of the first user message, generation
prompt appended. The answer target is the option letter for multiple choice (so the next-token
distribution over letters is the model's option distribution) and the first reference otherwise.
Nothing about the budget (frame count, resolution) enters the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

from itemscale.collect.items import Item
from itemscale.collect.models import ChatTemplateMessage, ContentPart, build_messages
from itemscale.collect.protocol import IMAGE_FACTOR
from itemscale.collect.video import MediaError
from itemscale.core.responses import TaskKind


@dataclass(frozen=True, slots=True)
class DecodedVideo:
    """All frames of one video, decoded once and kept for every budget drawn from it."""

    array: npt.NDArray[np.uint8]  # [N, H, W, 3] RGB
    fps: float

    @property
    def video_frames(self) -> int:
        """The video's length in frames (`frames` is a budget's count)."""
        return int(self.array.shape[0])


def decode_video(path: str | Path, short_side: int | None = None) -> DecodedVideo:
    """Decode every frame with PyAV, optionally downscaled so the short side is `short_side`
    (training keeps a reduced copy in memory; frames are resized again per budget)."""
    import av

    frames: list[npt.NDArray[np.uint8]] = []
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate
            fps = float(rate) if rate else 0.0
            for frame in container.decode(stream):
                if short_side is not None:
                    height, width = frame.height, frame.width
                    scale = short_side / min(height, width)
                    if scale < 1:
                        frame = frame.reformat(
                            width=max(1, round(width * scale)),
                            height=max(1, round(height * scale)),
                        )
                frames.append(np.asarray(frame.to_ndarray(format="rgb24"), dtype=np.uint8))
    except (OSError, av.error.FFmpegError) as exc:
        raise MediaError("decode_error", str(path), f"cannot decode video ({exc})") from exc
    if not frames:
        raise MediaError("decode_error", str(path), "the video has no frames")
    return DecodedVideo(array=np.stack(frames), fps=fps if fps > 0 else 24.0)


def segment_indices(
    video_frames: int, frames: int, rng: np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    """`frames` frame indices of a video of `video_frames`, one per equal segment: its centre,
    or (given `rng`) a uniformly drawn frame of it, which teaches the model not to depend on one
    sampling phase."""
    edges = np.arange(frames + 1, dtype=np.float64) * video_frames / frames
    if rng is None:
        positions = (edges[:-1] + edges[1:]) / 2
    else:
        positions = edges[:-1] + rng.random(frames) * (edges[1:] - edges[:-1])
    return np.clip(positions.astype(np.int64), 0, video_frames - 1)


def frame_size(height: int, width: int, short_side: int) -> tuple[int, int]:
    """(height, width) with the short side near `short_side`, both multiples of 28."""
    scale = short_side / min(height, width)

    def snap(x: float) -> int:
        return max(IMAGE_FACTOR, round(x / IMAGE_FACTOR) * IMAGE_FACTOR)

    return snap(height * scale), snap(width * scale)


def resize_frames(frames: npt.NDArray[np.uint8], size: tuple[int, int]) -> npt.NDArray[np.uint8]:
    """Area-averaged (antialiased) resize of a frame stack to (height, width)."""
    import torch
    import torch.nn.functional as F

    if frames.shape[1:3] == size:
        return frames
    tensor = torch.from_numpy(frames).permute(0, 3, 1, 2).float()
    out = F.interpolate(tensor, size=size, mode="bilinear", antialias=True, align_corners=False)
    result: npt.NDArray[np.uint8] = (
        out.round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()
    )
    return result


def chat_messages(item: Item, *, with_video: bool) -> list[ChatTemplateMessage]:
    """`build_messages(item)` in the processor's format, the video first in the first message."""
    messages: list[ChatTemplateMessage] = []
    for index, message in enumerate(build_messages(item)):
        content: list[ContentPart] = [{"type": "text", "text": message["text"]}]
        if index == 0 and with_video:
            content.insert(0, {"type": "video"})
        messages.append({"role": message["role"], "content": content})
    return messages


def render_prompt(processor: Any, item: Item, *, with_video: bool) -> str:
    text: str = processor.apply_chat_template(
        chat_messages(item, with_video=with_video), add_generation_prompt=True, tokenize=False
    )
    return text


def answer_target(item: Item) -> str:
    """What the model learns to say: the option letter, or the first reference answer."""
    if item.task_kind == TaskKind.MCQA:
        if item.answer is None:
            raise ValueError(f"item {item.item_id}: a training mcqa item needs its answer")
        return item.answer
    if not item.references:
        raise ValueError(f"item {item.item_id}: a training item needs a reference answer")
    return item.references[0]


class EncoderOutputs(TypedDict):
    """The vision tower's output for the video, already computed (a torch tensor)."""

    video: Any


class VisualInputs(TypedDict, total=False):
    """The visual keyword argument of the prefix's forward pass: the pixels, or the vision
    tower's output when the caller already ran it (one of the two)."""

    pixel_values_videos: Any
    mm_encoder_outputs: EncoderOutputs


@dataclass(frozen=True, slots=True)
class VideoInputs:
    """One processed frame set, shared by every item of the video in a batch."""

    pixel_values: Any  # torch.Tensor [patches, C*T*P*P]
    grid_thw: Any  # torch.LongTensor [1, 3]
    second_per_grid: float
    num_tokens: int


def process_video(
    processor: Any,
    frames: npt.NDArray[np.uint8],
    *,
    fps: float,
    indices: npt.NDArray[np.int64],
) -> VideoInputs:
    """Run the real video processor once, with the metadata the `hf` backend passes for the
    same frames (its own `video_metadata`), so the 3D rotary positions during training are the
    ones the backend produces at audit time."""
    from transformers.video_utils import VideoMetadata

    from itemscale.collect.models import Frames, video_metadata, writable

    video_processor = processor.video_processor
    described = video_metadata(
        Frames(
            array=frames,
            indices=tuple(int(i) for i in indices),
            timestamps=tuple(float(i) / fps for i in indices),
        )
    )
    metadata = VideoMetadata(**described)
    sampled_fps = metadata.sampled_fps
    out = video_processor(  # cached frames are read-only: a writable copy
        videos=[writable(frames)],
        return_tensors="pt",
        do_sample_frames=False,
        video_metadata=[metadata],
    )
    grid = out["video_grid_thw"]
    merge = int(video_processor.merge_size)
    return VideoInputs(
        pixel_values=out["pixel_values_videos"],
        grid_thw=grid,
        second_per_grid=float(video_processor.temporal_patch_size) / sampled_fps,
        num_tokens=int(grid.prod().item()) // (merge * merge),
    )


def expand_video_tokens(prompt: str, num_tokens: int) -> str:
    """Replace the single video placeholder with one token per merged visual patch."""
    if prompt.count("<|video_pad|>") != 1:
        raise ValueError("expected exactly one video placeholder in the prompt")
    return prompt.replace("<|video_pad|>", "<|video_pad|>" * num_tokens)


@dataclass(frozen=True, slots=True)
class TextBatch:
    input_ids: Any
    attention_mask: Any
    mm_token_type_ids: Any
    labels: Any | None


def encode_batch(
    processor: Any, prompts: list[str], targets: list[str] | None, im_end: str = "<|im_end|>"
) -> TextBatch:
    """Tokenise prompt (+ target + end-of-turn) per row, left-padded; labels cover only the
    target and its end-of-turn token."""
    import torch

    tokenizer = processor.tokenizer
    rows: list[list[int]] = []
    label_rows: list[list[int]] = []
    for index, prompt in enumerate(prompts):
        prompt_ids: list[int] = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        if targets is None:
            rows.append(prompt_ids)
            continue
        target_ids: list[int] = tokenizer(targets[index] + im_end, add_special_tokens=False)[
            "input_ids"
        ]
        rows.append(prompt_ids + target_ids)
        label_rows.append([-100] * len(prompt_ids) + target_ids)
    width = max(len(r) for r in rows)
    pad = int(tokenizer.pad_token_id)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long) if targets else None
    for r, row in enumerate(rows):
        ids[r, width - len(row) :] = torch.tensor(row, dtype=torch.long)
        mask[r, width - len(row) :] = 1
        if labels is not None:
            labels[r, width - len(row) :] = torch.tensor(label_rows[r], dtype=torch.long)
    video_id = int(tokenizer.convert_tokens_to_ids("<|video_pad|>"))
    image_id = int(tokenizer.convert_tokens_to_ids("<|image_pad|>"))
    types = torch.zeros_like(ids, dtype=torch.int32)
    types[ids == image_id] = 1
    types[ids == video_id] = 2
    return TextBatch(input_ids=ids, attention_mask=mask, mm_token_type_ids=types, labels=labels)


def per_example_loss(logits: Any, labels: Any) -> Any:
    """Mean next-token cross-entropy over each row's target tokens: one number per example, so
    a long summary does not outweigh a one-letter answer."""
    import torch.nn.functional as F

    shift_logits = logits[:, :-1, :].float()
    shift_labels = labels[:, 1:]
    token_loss = F.cross_entropy(
        shift_logits.reshape(-1, shift_logits.shape[-1]),
        shift_labels.reshape(-1),
        ignore_index=-100,
        reduction="none",
    ).view(shift_labels.shape)
    counts = (shift_labels != -100).sum(dim=1).clamp(min=1)
    return token_loss.sum(dim=1) / counts


VISION_END = "<|vision_end|>"


def split_shared_prefix(prompt: str) -> tuple[str, str]:
    """(system + first user header + video, the rest). Every item of a video shares the first
    part, because the video opens the first user message; a special token ends it, so tokenising
    the two parts apart gives the same tokens as tokenising the whole."""
    cut = prompt.index(VISION_END) + len(VISION_END)
    return prompt[:cut], prompt[cut:]


def shared_prefix_logits(
    model: Any,
    processor: Any,
    video: VideoInputs,
    prompts: list[str],
    targets: list[str],
    im_end: str = "<|im_end|>",
    video_features: Any | None = None,
) -> tuple[Any, Any]:
    """Logits and labels for `prompts` (+ targets) that all open with the same video prefix.

    `video_features`: the vision tower's output for `video`, when the caller already ran it.

    The prefix (system prompt, user header, visual tokens) runs once; its key/value cache is
    shared by every row, so a step over 12 questions about one video costs one pass over the
    visual tokens instead of twelve. Gradients flow through the shared cache into the vision
    tower. Rows are right-padded after the prefix; causal attention keeps padding invisible to
    the real tokens. Same numbers as the standard left-padded forward (a test checks it).
    """
    import torch

    tokenizer = processor.tokenizer
    prefixes = {split_shared_prefix(p)[0] for p in prompts}
    if len(prefixes) != 1:
        raise ValueError("shared_prefix_logits needs prompts that share one video prefix")
    prefix_text = prefixes.pop()
    prefix_ids = torch.tensor(
        [tokenizer(prefix_text, add_special_tokens=False)["input_ids"]], dtype=torch.long
    )
    video_id = int(tokenizer.convert_tokens_to_ids("<|video_pad|>"))
    types = (prefix_ids == video_id).to(torch.int32) * 2
    visual: VisualInputs = (
        {"pixel_values_videos": video.pixel_values}
        if video_features is None
        else {"mm_encoder_outputs": {"video": video_features}}
    )
    prefix_out = model.model(
        input_ids=prefix_ids,
        attention_mask=torch.ones_like(prefix_ids),
        mm_token_type_ids=types,
        **visual,
        video_grid_thw=video.grid_thw,
        second_per_grid_ts=torch.tensor([video.second_per_grid]),
        use_cache=True,
    )
    rows: list[list[int]] = []
    label_rows: list[list[int]] = []
    for prompt, target in zip(prompts, targets, strict=True):
        rest = split_shared_prefix(prompt)[1]
        rest_ids: list[int] = tokenizer(rest, add_special_tokens=False)["input_ids"]
        target_ids: list[int] = tokenizer(target + im_end, add_special_tokens=False)["input_ids"]
        rows.append(rest_ids + target_ids)
        label_rows.append([-100] * len(rest_ids) + target_ids)
    batch, width = len(rows), max(len(r) for r in rows)
    ids = torch.full((batch, width), int(tokenizer.pad_token_id), dtype=torch.long)
    labels = torch.full((batch, width), -100, dtype=torch.long)
    mask = torch.zeros((batch, prefix_ids.shape[1] + width), dtype=torch.long)
    mask[:, : prefix_ids.shape[1]] = 1
    for r, row in enumerate(rows):
        ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
        labels[r, : len(row)] = torch.tensor(label_rows[r], dtype=torch.long)
        mask[r, prefix_ids.shape[1] : prefix_ids.shape[1] + len(row)] = 1
    # Positions of each row's text exactly as the model's own rope index numbers the whole
    # sequence (text after a video does not simply continue from the largest video position).
    prefix_len = prefix_ids.shape[1]
    text_positions = torch.zeros((3, batch, width), dtype=torch.long)
    for r, row in enumerate(rows):
        whole = torch.cat([prefix_ids, torch.tensor([row], dtype=torch.long)], dim=1)
        whole_types = torch.cat([types, torch.zeros((1, len(row)), dtype=torch.int32)], dim=1)
        positions, _ = model.model.get_rope_index(
            whole,
            mm_token_type_ids=whole_types,
            video_grid_thw=video.grid_thw,
            second_per_grid_ts=torch.tensor([video.second_per_grid]),
            attention_mask=torch.ones_like(whole),
        )
        text_positions[:, r, : len(row)] = positions[:, 0, prefix_len:]
        if len(row) < width:  # padding continues the count; it is masked out anyway
            last = int(positions[0, 0, -1])
            text_positions[:, r, len(row) :] = torch.arange(1, width - len(row) + 1) + last
    cache = prefix_out.cache
    cache.batch_repeat_interleave(batch)
    out = model.model.language_model(
        input_ids=ids,
        attention_mask=mask,
        position_ids=text_positions,
        cache=cache,
        use_cache=True,
    )
    logits = model.lm_head(out.last_hidden_state)
    # The first suffix token is predicted from the prefix's last position.
    first = model.lm_head(prefix_out.last_hidden_state[:, -1:, :]).expand(batch, -1, -1)
    full_logits = torch.cat([first, logits], dim=1)
    full_labels = torch.cat([torch.full((batch, 1), -100, dtype=torch.long), labels], dim=1)
    return full_logits, full_labels

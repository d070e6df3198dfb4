"""Settings of the built-in tiny Video LLM: its architecture and how the recipe trains it.

The architecture is a real `Qwen2_5_VLForConditionalGeneration`, only small, so the shipped model
exercises the same processor, chat template, 3D rotary positions and loading path as a user's
Qwen2.5-VL checkpoint; the `hf` backend cannot tell it apart from one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Version of the shipped folder's layout (weights, processor, `builtin_meta.json`).
BUILTIN_FORMAT_VERSION = 1

#: The special tokens the Qwen2.5-VL processor and chat template look up by name.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

#: Qwen2-VL's chat template (system prompt added when absent; `add_vision_id` supported).
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class BuiltinArchitecture(BaseModel):
    """Sizes of the tiny model. Defaults keep the fp32 weights well under the 20 MB the package
    may ship, and one training step on 2 CPU cores well under a second."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vocab_size: int = Field(default=1024, ge=300)
    text_hidden: int = Field(default=192, ge=32)
    text_layers: int = Field(default=4, ge=1)
    text_heads: int = Field(default=6, ge=1)
    text_kv_heads: int = Field(default=2, ge=1)
    text_intermediate: int = Field(default=576, ge=32)
    vision_hidden: int = Field(default=128, ge=32)
    vision_depth: int = Field(default=4, ge=1)
    vision_heads: int = Field(default=4, ge=1)
    vision_intermediate: int = Field(default=320, ge=32)
    #: Frames per second of video time that one temporal rotary step stands for.
    tokens_per_second: int = Field(default=2, ge=1)
    #: Rotary base of the language model. With 32-dimensional heads the 3D sections give the
    #: frame's width only the slowest frequencies (at 10,000: 0.003 to 0.0002 rad per token
    #: step), so the model cannot tell columns apart by position; a small base (e.g. 4) spreads
    #: every section over 1 to 0.27 rad per step (docs/research/builtin-model-notebook.md).
    rope_theta: float = Field(default=10000.0, gt=1.0)

    @model_validator(mode="after")
    def _heads_divide(self) -> BuiltinArchitecture:
        if self.text_hidden % self.text_heads or self.text_heads % self.text_kv_heads:
            raise ValueError("text_hidden must divide into text_heads, and those into kv heads")
        if (self.text_hidden // self.text_heads) % 8:
            raise ValueError("the text head size must be a multiple of 8 (3D rotary sections)")
        if self.vision_hidden % self.vision_heads:
            raise ValueError("vision_hidden must divide into vision_heads")
        return self

    @property
    def mrope_section(self) -> list[int]:
        """Rotary frequencies split over (time, height, width), in Qwen2.5-VL's 1:1.5:1.5 ratio."""
        half = self.text_hidden // self.text_heads // 2
        time = half // 4
        height = (half - time) // 2
        return [time, height, half - time - height]


class TrainSettings(BaseModel):
    """How the recipe trains. Steps, not wall time, define the run, so a run is
    reproducible; `minutes` is only a safety cap (a run stopped by it says so)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    steps: int = Field(default=1600, ge=1)
    minutes: float = Field(default=30.0, gt=0)
    learning_rate: float = Field(default=1.5e-3, gt=0)
    vision_learning_rate: float = Field(default=1.5e-3, gt=0)
    weight_decay: float = Field(default=0.01, ge=0)
    adam_eps: float = Field(default=1e-8, gt=0)
    #: Weight of the auxiliary per-region colour loss on the vision tower (0: off); see
    #: `_aux` for why the tiny model needs it.
    aux_weight: float = Field(default=1.0, ge=0)
    #: Weight of the auxiliary caption row ("which colours appear?", answered from the pixels)
    #: added to every video step (0: off); see `_aux.colours_present`.
    caption_weight: float = Field(default=1.0, ge=0)
    warmup_steps: int = Field(default=60, ge=0)
    #: Frame counts drawn per step (even: the vision tower groups frames in pairs).
    frame_counts: tuple[int, ...] = (2, 4, 8, 12, 16, 24, 32, 48, 64)
    #: Short sides (pixels) drawn per step; the long side follows the video's aspect ratio
    #: (the suite is 160x120, so 120 is its native size, served as 112x168).
    short_sides: tuple[int, ...] = (56, 84, 112, 120)
    #: Largest frames x pixels a step may use: 64 frames only at the smaller sizes.
    max_step_pixels: int = Field(default=32 * 112 * 168, gt=0)
    #: Fraction of steps trained without the video (the text-only prior every Video LLM has).
    text_only_fraction: float = Field(default=0.08, ge=0, lt=1)
    #: Items of one video trained together on one vision pass (more are split over steps).
    items_per_step: int = Field(default=12, ge=1)
    #: Torch threads for training only. 2 on a quiet 2-core machine; on a shared, busy one a
    #: single thread is several times faster (threads spin waiting for each other).
    threads: int = Field(default=2, ge=1)
    log_every: int = Field(default=10, ge=1)
    #: Save the model every this many steps (0: only at the end), so a stopped run keeps one.
    checkpoint_every: int = Field(default=200, ge=0)
    #: Steps of the alignment stage run before the suite (0: none). Each step shows
    #: `stage1_videos_per_step` generated videos of one large shape (`_stage1`), asked
    #: about its colour and shape in the suite's wording; the shape's share of the frame's short
    #: side shrinks linearly from `stage1_fill[0]` to `stage1_fill[1]` over the stage.
    stage1_steps: int = Field(default=0, ge=0)
    stage1_videos_per_step: int = Field(default=4, ge=1)
    stage1_frames: int = Field(default=2, ge=2)
    stage1_short_side: int = Field(default=56, ge=28)
    stage1_fill: tuple[float, float] = (0.9, 0.4)
    #: Weight of a multiple-choice row relative to an open row in a suite step's answer loss.
    mcqa_weight: float = Field(default=1.0, gt=0)
    #: What a multiple-choice training item teaches: `letter` (the option letter, for the `hf`
    #: backend's default letter scoring) or `option_text` (the item asked open-ended and
    #: answered with the correct option's text, for `mcqa_scoring = "likelihood"`, which the
    #: saved model then asks for in `builtin_meta.json`).
    mcqa_target: Literal["letter", "option_text"] = "letter"
    #: Weight of the word-alignment loss (0: off; `_aux.word_alignment_loss`): each
    #: visual token is pulled towards the language model's embedding of the palette colour
    #: words present in its region (or of "none"), read off the pixels.
    word_align_weight: float = Field(default=0.0, ge=0)
    #: Teacher visual tokens: until this fraction of the suite steps, the language model is
    #: shown the word-alignment targets in place of the tower's tokens (gradients still reach
    #: the tower straight through); from then to `teacher_anneal_until` the mix moves linearly
    #: to the tower's own tokens, which alone are used after it and at inference. 0: off.
    teacher_until: float = Field(default=0.0, ge=0, le=1)
    teacher_anneal_until: float = Field(default=0.0, ge=0, le=1)
    #: Until this fraction of the suite steps, a video step trains only its caption rows (the
    #: colours in the whole video and in each region, read off the pixels), not the suite's
    #: questions: reading places in the frame first. 0: off.
    captions_only_until: float = Field(default=0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _even_frames(self) -> TrainSettings:
        if self.teacher_anneal_until < self.teacher_until:
            raise ValueError("teacher_anneal_until must not come before teacher_until")
        if self.teacher_until > 0 and self.word_align_weight == 0:
            raise ValueError("teacher tokens are the word-alignment targets: set word_align_weight")
        if self.captions_only_until > 0 and self.caption_weight == 0:
            raise ValueError("captions_only_until trains the caption rows: set caption_weight")
        if not self.frame_counts or any(k < 2 or k % 2 for k in self.frame_counts):
            raise ValueError(f"frame_counts must be even and at least 2, got {self.frame_counts}")
        if not self.short_sides or any(s < 28 for s in self.short_sides):
            raise ValueError(f"short_sides must be at least 28 pixels, got {self.short_sides}")
        return self

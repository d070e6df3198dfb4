"""What the transformers backend hands to transformers, as typed dictionaries: only the keys
this package passes; the processor's output and the model's own keyword arguments stay untyped
(transformers declares them per model).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class VideoPart(TypedDict):
    """Where the chat template puts the video's tokens (the frames travel as `videos=`)."""

    type: Literal["video"]


ContentPart = TextPart | VideoPart


class ChatTemplateMessage(TypedDict):
    """One message of a conversation in the processors' chat-template format."""

    role: Literal["system", "user", "assistant"]
    content: list[ContentPart]


class VideoMetadataFields(TypedDict):
    """transformers' `VideoMetadata` fields for frames we already chose (`video_metadata`)."""

    total_num_frames: int
    fps: float
    width: int
    height: int
    duration: float
    frames_indices: list[int]


class PixelBounds(TypedDict):
    """A pixel-range processor's resize bounds (the whole clip's for Qwen3-VL)."""

    shortest_edge: int
    longest_edge: int


class ResizeKwargs(TypedDict):
    """What our pixel budget becomes for a pixel-range family's processor call."""

    size: PixelBounds
    cap_pixels_per_frame: bool


class ProcessorKwargs(TypedDict):
    """The processor call of a batch (`HFBackend.processor_inputs`)."""

    text: list[str]
    padding: bool
    return_tensors: Literal["pt"]
    #: per request with frames: its frames, writable copies of the cached arrays
    videos: NotRequired[list[Any]]
    do_sample_frames: NotRequired[bool]
    video_metadata: NotRequired[list[VideoMetadataFields]]
    size: NotRequired[PixelBounds]
    cap_pixels_per_frame: NotRequired[bool]


class GenerateKwargs(TypedDict):
    """`model.generate`'s settings beside the processor's tensors."""

    max_new_tokens: int
    return_dict_in_generate: bool
    output_logits: bool
    pad_token_id: int | None
    do_sample: NotRequired[bool]
    temperature: NotRequired[float]
    top_p: NotRequired[float]


class PretrainedKwargs(TypedDict):
    """`from_pretrained`'s settings for the config and the processor."""

    local_files_only: bool
    revision: NotRequired[str]


class ModelPretrainedKwargs(PretrainedKwargs):
    """The model's `from_pretrained`: the same, with its dtype (`"auto"` or a `torch.dtype`,
    which this module does not import) and attention implementation."""

    dtype: Any
    attn_implementation: NotRequired[str]

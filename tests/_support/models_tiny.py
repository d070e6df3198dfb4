"""Tiny randomly initialised Video LLMs of every supported family, built offline for the tests.

Each builder trains a small byte-level BPE tokenizer with the family's special tokens, wraps it
with the family's real image/video processors and a chat template in the family's format, builds
the model from a few-layer config, and saves everything to a folder that `load_backend` then
loads through the real `AutoProcessor`/`AutoModelForImageTextToText` path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

CORPUS = [
    "Answer with the option's letter from the given choices directly.",
    "Answer the question with a short phrase.",
    "List the events of the video in order.",
    "What colour is the ball? A. red B. blue C. green D. yellow E. white",
    "Which way does the square move? left right up down The answer is A B C D",
    "user assistant system Frame frame seconds",
]

# A generic chat template in the ChatML layout most of these families use; `{video}` is replaced
# by the family's video placeholder.
CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'video' %}VIDEO{% elif part['type'] == 'image' %}IMAGE"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def chat_template(video: str, image: str) -> str:
    return CHATML.replace("VIDEO", video).replace("IMAGE", image)


def train_tokenizer(specials: list[str], **special_attrs: Any) -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<unk>", *specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS * 4, trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", **special_attrs
    )
    return wrapped


def _ids(tokenizer: PreTrainedTokenizerFast, tokens: list[str]) -> dict[str, int]:
    return {t: int(tokenizer.convert_tokens_to_ids(t)) for t in tokens}


def _chat_tokenizer(
    specials: list[str], **special_attrs: Any
) -> tuple[PreTrainedTokenizerFast, dict[str, int]]:
    """A tokenizer padding with `<|endoftext|>` and ending turns with `<|im_end|>`, as every
    family here does, and the ids of its special tokens."""
    tokenizer = train_tokenizer(
        specials, pad_token="<|endoftext|>", eos_token="<|im_end|>", **special_attrs
    )
    return tokenizer, _ids(tokenizer, specials)


QWEN_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
QWEN_TEMPLATE = chat_template(
    "<|vision_start|><|video_pad|><|vision_end|>", "<|vision_start|><|image_pad|><|vision_end|>"
)


def _qwen_vision_tokens(ids: dict[str, int]) -> dict[str, Any]:
    return dict(
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )


def _save(folder: Path, model: Any, processor: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    processor.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


def _tiny_text(vocab: int, ids: dict[str, int], **extra: Any) -> dict[str, Any]:
    return dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        **extra,
    )


def build_qwen2_vl(folder: Path, *, version: str = "2") -> Path:
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(QWEN_SPECIALS)
    text = _tiny_text(
        len(tokenizer), ids, rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]}
    )
    tokens = _qwen_vision_tokens(ids)
    torch.manual_seed(0)
    if version == "2":
        vision = dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2)
        config: Any = Qwen2VLConfig(text_config=text, vision_config=vision, **tokens)
        model: Any = Qwen2VLForConditionalGeneration(config)
        processor_class: Any = Qwen2VLProcessor
    else:
        vision = dict(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=32,
            fullatt_block_indexes=[0],
            window_size=56,
        )
        config = Qwen2_5_VLConfig(text_config=text, vision_config=vision, **tokens)
        model = Qwen2_5_VLForConditionalGeneration(config)
        processor_class = Qwen2_5_VLProcessor
    processor = processor_class(
        image_processor=Qwen2VLImageProcessor(),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE,
    )
    return _save(folder, model.eval(), processor)


def build_qwen3_vl(folder: Path) -> Path:
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(QWEN_SPECIALS)
    text = _tiny_text(
        len(tokenizer),
        ids,
        head_dim=8,
        rope_scaling={
            "rope_type": "default",
            "mrope_section": [1, 1, 2],
            "mrope_interleaved": True,
        },
    )
    vision = dict(
        depth=2,
        hidden_size=32,
        intermediate_size=64,
        num_heads=2,
        out_hidden_size=32,
        patch_size=16,
        num_position_embeddings=64,
        deepstack_visual_indexes=[1],
    )
    config = Qwen3VLConfig(text_config=text, vision_config=vision, **_qwen_vision_tokens(ids))
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(config)
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(patch_size=16),
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE,
    )
    return _save(folder, model.eval(), processor)


LLAVA_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]


def _tiny_vision(image_size: Any, patch_size: Any, **extra: Any) -> dict[str, Any]:
    """A two-layer vision tower config (the LLaVA, InternVL and SmolVLM families)."""
    return dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=image_size,
        patch_size=patch_size,
        **extra,
    )


#: LLaVA tiny vision tower: 32x32 input, 8x8 patches -> 4x4 patch grid per frame.
LLAVA_IMAGE = 32
LLAVA_PATCH = 8
#: Tokens per frame after 2x2 pooling of that grid (LLaVA-NeXT-Video, InternVL, SmolVLM).
POOLED_TOKENS = (LLAVA_IMAGE // LLAVA_PATCH) ** 2 // 4


def build_llava_onevision(folder: Path) -> Path:
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(LLAVA_SPECIALS)
    size = {"height": LLAVA_IMAGE, "width": LLAVA_IMAGE}
    config = LlavaOnevisionConfig(
        text_config=dict(model_type="qwen2", **_tiny_text(len(tokenizer), ids)),
        vision_config=_tiny_vision(LLAVA_IMAGE, LLAVA_PATCH, model_type="siglip_vision_model"),
        image_token_index=ids["<image>"],
        video_token_index=ids["<video>"],
        vision_feature_layer=-1,
        vision_feature_select_strategy="full",
        image_grid_pinpoints=[[LLAVA_IMAGE, LLAVA_IMAGE]],
    )
    torch.manual_seed(0)
    model = LlavaOnevisionForConditionalGeneration(config)
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(
            size=size, image_grid_pinpoints=[[LLAVA_IMAGE, LLAVA_IMAGE]]
        ),
        tokenizer=tokenizer,
        video_processor=LlavaOnevisionVideoProcessor(size=size),
        num_image_tokens=(LLAVA_IMAGE // LLAVA_PATCH) ** 2,
        vision_feature_select_strategy="full",
        chat_template=chat_template("<video>", "<image>"),
    )
    return _save(folder, model.eval(), processor)


def build_llava_next_video(folder: Path) -> Path:
    from transformers import (
        LlavaNextImageProcessor,
        LlavaNextVideoConfig,
        LlavaNextVideoForConditionalGeneration,
        LlavaNextVideoProcessor,
        LlavaNextVideoVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(LLAVA_SPECIALS)
    vision = _tiny_vision(
        LLAVA_IMAGE, LLAVA_PATCH, model_type="clip_vision_model", projection_dim=32
    )
    config = LlavaNextVideoConfig(
        text_config=dict(model_type="llama", **_tiny_text(len(tokenizer), ids)),
        vision_config=vision,
        image_token_index=ids["<image>"],
        video_token_index=ids["<video>"],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
        image_grid_pinpoints=[[LLAVA_IMAGE, LLAVA_IMAGE]],
        spatial_pool_stride=2,
        image_seq_length=(LLAVA_IMAGE // LLAVA_PATCH) ** 2,
        video_seq_length=POOLED_TOKENS,
    )
    torch.manual_seed(0)
    model = LlavaNextVideoForConditionalGeneration(config)
    crop = {"height": LLAVA_IMAGE, "width": LLAVA_IMAGE}
    processor = LlavaNextVideoProcessor(
        video_processor=LlavaNextVideoVideoProcessor(
            size={"shortest_edge": LLAVA_IMAGE}, crop_size=crop
        ),
        image_processor=LlavaNextImageProcessor(
            size={"shortest_edge": LLAVA_IMAGE},
            crop_size=crop,
            image_grid_pinpoints=[[LLAVA_IMAGE, LLAVA_IMAGE]],
        ),
        tokenizer=tokenizer,
        patch_size=LLAVA_PATCH,
        vision_feature_select_strategy="default",
        chat_template=chat_template("<video>", "<image>"),
    )
    return _save(folder, model.eval(), processor)


INTERNVL_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<img>",
    "</img>",
    "<IMG_CONTEXT>",
    "<video>",
    "<image>",
]


def build_internvl(folder: Path) -> Path:
    from transformers import (
        GotOcr2ImageProcessor,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(
        INTERNVL_SPECIALS,
        extra_special_tokens={
            "start_image_token": "<img>",
            "end_image_token": "</img>",
            "context_image_token": "<IMG_CONTEXT>",
            "video_token": "<video>",
        },
    )
    vision = _tiny_vision([LLAVA_IMAGE, LLAVA_IMAGE], [LLAVA_PATCH, LLAVA_PATCH])
    per_frame = POOLED_TOKENS
    config = InternVLConfig(
        text_config=dict(model_type="qwen2", **_tiny_text(len(tokenizer), ids)),
        vision_config=vision,
        image_token_id=ids["<IMG_CONTEXT>"],
        image_seq_length=per_frame,
        downsample_ratio=0.5,
    )
    torch.manual_seed(0)
    model = InternVLForConditionalGeneration(config)
    size = {"height": LLAVA_IMAGE, "width": LLAVA_IMAGE}
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size=size, crop_to_patches=False),
        tokenizer=tokenizer,
        video_processor=InternVLVideoProcessor(size=size),
        image_seq_length=per_frame,
        chat_template=chat_template("<video>\n", "<image>\n"),
    )
    return _save(folder, model.eval(), processor)


SMOLVLM_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<fake_token_around_image>",
    "<image>",
    "<global-img>",
    "<end_of_utterance>",
    "<video>",
]


def build_smolvlm2(folder: Path) -> Path:
    from transformers import (
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessor,
        SmolVLMProcessor,
        SmolVLMVideoProcessor,
    )

    tokenizer, ids = _chat_tokenizer(SMOLVLM_SPECIALS)
    vision = _tiny_vision(LLAVA_IMAGE, LLAVA_PATCH)
    per_frame = POOLED_TOKENS
    config = SmolVLMConfig(
        text_config=dict(model_type="llama", **_tiny_text(len(tokenizer), ids)),
        vision_config=vision,
        image_token_id=ids["<image>"],
        scale_factor=2,
        pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(0)
    model = SmolVLMForConditionalGeneration(config)
    edge = {"longest_edge": LLAVA_IMAGE}
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(
            size=edge, max_image_size=edge, do_image_splitting=False
        ),
        tokenizer=tokenizer,
        video_processor=SmolVLMVideoProcessor(size=edge, max_image_size=edge),
        image_seq_len=per_frame,
        chat_template=chat_template("<video>", "<image>"),
    )
    return _save(folder, model.eval(), processor)


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "qwen2-vl": lambda folder: build_qwen2_vl(folder, version="2"),
    "qwen2.5-vl": lambda folder: build_qwen2_vl(folder, version="2.5"),
    "qwen3-vl": build_qwen3_vl,
    "llava-onevision": build_llava_onevision,
    "llava-next-video": build_llava_next_video,
    "internvl": build_internvl,
    "smolvlm2": build_smolvlm2,
}

"""Building the untrained tiny Video LLM: tokenizer, processor and model from config alone.

Nothing can come from a model hub, so the tokenizer is trained here (byte-level BPE, like
Qwen's, so any text still encodes) on the training split's own language plus the fixed prompt
wording, and the processor is assembled from transformers' own Qwen2-VL image and video
processors, so `AutoProcessor.from_pretrained` loads the saved folder like any checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from itemscale.collect.items import Item
from itemscale.collect.models import MCQA_INSTRUCTION, OPEN_QA_INSTRUCTION, SUMMARY_INSTRUCTION
from itemscale.collect.protocol import PIXELS_PER_VISUAL_TOKEN

from ._config import CHAT_TEMPLATE, SPECIAL_TOKENS, BuiltinArchitecture

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

#: Per-frame pixel bounds of the shipped processor: it never enlarges a small frame past what
#: the sweep chose (one visual token is the least it keeps), and caps a frame handed over at
#: native size.
PROCESSOR_MIN_PIXELS = PIXELS_PER_VISUAL_TOKEN
PROCESSOR_MAX_PIXELS = 448 * 448


def item_texts(items: Iterable[Item]) -> Iterator[str]:
    """Every piece of language the model reads or writes for these items."""
    yield "You are a helpful assistant."
    yield from (MCQA_INSTRUCTION, OPEN_QA_INSTRUCTION, SUMMARY_INSTRUCTION)
    for item in items:
        yield item.question
        yield from item.options
        yield from item.references
        for turn in item.history:
            yield turn.text


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer with Qwen2.5-VL's special tokens, wrapped for transformers.

    Option letters stay single tokens (the byte alphabet holds them), so the next-token
    distribution over "A".."J" is the model's option distribution.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(texts), trainer)
    tokenizer_cls: Any = PreTrainedTokenizerFast
    fast = tokenizer_cls(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(SPECIAL_TOKENS[1:]),
        model_max_length=32768,
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_processor(tokenizer: PreTrainedTokenizerBase) -> Any:
    """A real `Qwen2_5_VLProcessor` around the trained tokenizer."""
    from transformers import Qwen2_5_VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    image_processor = Qwen2VLImageProcessor(
        min_pixels=PROCESSOR_MIN_PIXELS, max_pixels=PROCESSOR_MAX_PIXELS
    )
    video_processor = Qwen2VLVideoProcessor(
        min_pixels=PROCESSOR_MIN_PIXELS,
        max_pixels=PROCESSOR_MAX_PIXELS,
        do_sample_frames=False,
        cap_pixels_per_frame=False,
    )
    processor_cls: Any = Qwen2_5_VLProcessor
    return processor_cls(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )


def build_model(arch: BuiltinArchitecture, tokenizer: PreTrainedTokenizerBase) -> Any:
    """A randomly initialised `Qwen2_5_VLForConditionalGeneration` of the tiny size."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    def token_id(token: str) -> int:
        value = tokenizer.convert_tokens_to_ids(token)
        if not isinstance(value, int) or value == tokenizer.unk_token_id:
            raise ValueError(f"tokenizer lacks the special token {token}")
        return value

    vocab = len(tokenizer)
    eos = token_id("<|im_end|>")
    pad = token_id("<|endoftext|>")
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": vocab,
            "hidden_size": arch.text_hidden,
            "intermediate_size": arch.text_intermediate,
            "num_hidden_layers": arch.text_layers,
            "num_attention_heads": arch.text_heads,
            "num_key_value_heads": arch.text_kv_heads,
            "max_position_embeddings": 8192,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": arch.rope_theta,
                "mrope_section": arch.mrope_section,
            },
            "bos_token_id": None,
            "eos_token_id": eos,
            "pad_token_id": pad,
            "tie_word_embeddings": True,
        },
        vision_config={
            "depth": arch.vision_depth,
            "hidden_size": arch.vision_hidden,
            "intermediate_size": arch.vision_intermediate,
            "num_heads": arch.vision_heads,
            "out_hidden_size": arch.text_hidden,
            "fullatt_block_indexes": list(range(1, arch.vision_depth, 2)),
            "window_size": 112,
            "tokens_per_second": arch.tokens_per_second,
        },
        image_token_id=token_id("<|image_pad|>"),
        video_token_id=token_id("<|video_pad|>"),
        vision_start_token_id=token_id("<|vision_start|>"),
        vision_end_token_id=token_id("<|vision_end|>"),
        tie_word_embeddings=True,
    )
    model = Qwen2_5_VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    model.generation_config.bos_token_id = None
    return model

"""transformers backend: open Video LLMs through `AutoProcessor` and the model's chat template.

The video goes in as a video (one `{"type": "video"}` part at the start of the first user
message), not a bag of images, so each family's own video path runs (temporal patches, frame
timestamps, per-frame pooling). Processors would otherwise resample and resize on their own;
every call turns frame sampling off (`do_sample_frames=False`) and passes the frames' real
positions as `video_metadata`, so the frames we chose are the frames the model sees and
timestamp-aware families (Qwen2.5-VL, Qwen3-VL) get the true times. Our one pixel budget becomes
the resize bounds of the families that resize by pixel count (the Qwen families); the others
resize to a fixed size, which the response records as the pixels actually used.

Multiple-choice confidence is read from the first generated position's logits: the
probability mass of each option letter's tokens (`"A"` and `" A"` are pooled, as tokenizers
differ) renormalised over the options.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ...core.responses import Status, TaskKind
from ._answers import completed_response
from ._base import BaseVideoLM
from ._contract import Serving
from ._hf_families import (
    FAMILIES,
    fill_temporal_patch,
    resize_kwargs,
    video_metadata,
)
from ._hf_support import (
    BYTES_PER_VISUAL_TOKEN_WIDTHS,
    DEFAULT_ATTENTION,
    check_model_location,
    no_loading_bars,
    resolve_dtype,
    writable,
)
from ._hf_wire import (
    ChatTemplateMessage,
    ContentPart,
    GenerateKwargs,
    ModelPretrainedKwargs,
    PretrainedKwargs,
    ProcessorKwargs,
)
from ._prompts import build_messages
from ._types import (
    BackendError,
    BackendSpec,
    LoadSettings,
    ModelEntryLike,
    SettingValue,
    VideoRequest,
    VideoResponse,
    parse_backend_options,
)

if TYPE_CHECKING:
    import torch

DTYPES = ("auto", "float32", "bfloat16", "float16")


class HFOptions(BaseModel):
    """Options of an `hf`/`builtin` model entry (docs/backends.md). `min_pixels`: lower resize
    bound of the pixel-range families. `mcqa_scoring`: `letter` (lmms-eval's and VLMEvalKit's
    way) lists the options and reads the letter; `likelihood` asks open-ended and scores each
    option's text as the reply (lm-evaluation-harness's way), the probabilities the softmax of
    those log-likelihood sums."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_pixels: int | None = Field(default=None, ge=1)
    mcqa_scoring: Literal["letter", "likelihood"] = "letter"
    attn_implementation: Literal["eager", "sdpa", "flash_attention_2"] | None = None
    local_files_only: StrictBool = True


def parse_options(options: Mapping[str, object], model_name: str) -> HFOptions:
    return parse_backend_options(HFOptions, options, model_name)


def local_revision(folder: Path) -> str:
    """A fingerprint of a local checkpoint: config and processor files by content, weights by
    name and size (hashing gigabytes of weights on every load would cost minutes)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        digest.update(path.name.encode())
        if path.suffix in (".json", ".jinja", ".txt", ".model"):
            digest.update(path.read_bytes())
        else:
            digest.update(str(path.stat().st_size).encode())
    return "local-" + digest.hexdigest()[:16]


def letter_token_ids(tokenizer: Any, letters: str) -> dict[str, list[int]]:
    """Token ids that spell each letter alone, with and without a leading space."""
    ids: dict[str, list[int]] = {}
    for letter in letters:
        found: list[int] = []
        for spelling in (letter, " " + letter):
            encoded = tokenizer.encode(spelling, add_special_tokens=False)
            if len(encoded) == 1 and encoded[0] not in found:
                found.append(int(encoded[0]))
        if not found:
            raise BackendError(f"the tokenizer has no single token for option letter {letter!r}")
        ids[letter] = found
    return ids


class HFBackend(BaseVideoLM):
    """Requests run in left-padded batches that share frame geometry and decoding settings."""

    def __init__(
        self,
        *,
        spec: BackendSpec,
        family: str,
        model: Any,
        processor: Any,
        options: HFOptions,
        device: str,
        batch_size: int,
    ) -> None:
        self._spec = spec
        self.family = family
        self._model = model
        self._processor = processor
        self._options = options
        self._device = device
        self._batch_size = batch_size
        self._tokenizer = processor.tokenizer
        self._tokenizer.padding_side = "left"
        if self._tokenizer.pad_token is None:  # batches need one; it is masked out anyway
            self._tokenizer.pad_token = self._tokenizer.eos_token
        self._visual_ids = self._visual_token_ids()
        self._letter_ids: dict[str, dict[str, list[int]]] = {}

    @classmethod
    def load(
        cls,
        entry: ModelEntryLike,
        model: str,
        options: Mapping[str, object],
        settings: LoadSettings,
    ) -> HFBackend:
        """Load `entry` from `model` (a folder or a hub id) with the merged `options`."""
        import torch
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor

        name, revision, backend, device = entry.name, entry.revision, entry.backend, settings.device
        parsed = parse_options(options, name)
        dtype = entry.dtype or "auto"
        if dtype not in DTYPES:
            raise BackendError(f"model {name!r}: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        load_kwargs: PretrainedKwargs = {"local_files_only": parsed.local_files_only}
        if revision is not None and not Path(model).is_dir():
            load_kwargs["revision"] = revision
        check_model_location(name, model, parsed.local_files_only)
        try:
            config = AutoConfig.from_pretrained(model, **load_kwargs)
        except (OSError, ValueError) as exc:
            hint = (
                " (local_files_only: only the local cache is read)"
                if parsed.local_files_only
                else ""
            )
            raise BackendError(
                f"model {name!r}: cannot read the config of {model!r}{hint}: {exc}"
            ) from exc
        family = FAMILIES.get(str(config.model_type))
        if family is None:
            raise BackendError(
                f"model {name!r}: model type {config.model_type!r} is not a supported video "
                f"family (supported: {', '.join(sorted(FAMILIES))})"
            )
        torch_dtype = getattr(torch, resolve_dtype(dtype, device, builtin=backend == "builtin"))
        model_kwargs: ModelPretrainedKwargs = {
            "local_files_only": parsed.local_files_only,
            "dtype": torch_dtype,
        }
        if "revision" in load_kwargs:
            model_kwargs["revision"] = load_kwargs["revision"]
        # sdpa unless the entry names another: never what happens to be installed
        model_kwargs["attn_implementation"] = parsed.attn_implementation or DEFAULT_ATTENTION
        try:
            processor: Any = AutoProcessor.from_pretrained(model, **load_kwargs)  # type: ignore[no-untyped-call]
            with no_loading_bars():  # the sweep's own bar already says "loading <model>"
                network: Any = AutoModelForImageTextToText.from_pretrained(model, **model_kwargs)
        except (OSError, ValueError) as exc:
            raise BackendError(f"model {name!r}: cannot load {model!r}: {exc}") from exc
        network.to(device).eval()
        if revision is None:
            revision = (
                local_revision(Path(model))
                if Path(model).is_dir()
                else getattr(config, "_commit_hash", None)
            )
        spec = BackendSpec(
            backend="builtin" if backend == "builtin" else "hf",
            name=name,
            model=model,
            revision=revision,
            dtype=str(network.dtype).removeprefix("torch."),
            processor=processor_settings(family, processor, parsed),
        )
        return cls(
            spec=spec,
            family=family,
            model=network,
            processor=processor,
            options=parsed,
            device=device,
            batch_size=settings.batch_size,
        )

    @property
    def spec(self) -> BackendSpec:
        return self._spec

    @property
    def serving(self) -> Serving:
        return Serving(bytes_per_visual_token=self._bytes_per_visual_token())

    def _bytes_per_visual_token(self) -> int | None:
        """`BYTES_PER_VISUAL_TOKEN_WIDTHS` hidden vectors of the language model in its dtype
        per visual token: measured on Qwen2.5-VL-7B in bf16 (about 230 KiB a token, the KV
        cache and the transient activations of both towers; docs/performance.md)."""
        config = getattr(self._model, "config", None)
        text = getattr(config, "text_config", None) or config
        hidden = getattr(text, "hidden_size", None)
        if not isinstance(hidden, int) or self._model is None:
            return None
        itemsize = int(getattr(self._model.dtype, "itemsize", 4))
        return BYTES_PER_VISUAL_TOKEN_WIDTHS * hidden * itemsize

    def close(self) -> None:
        self._model = None
        if self._device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    # -- batching -----------------------------------------------------------------------------

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        results: list[VideoResponse | None] = [None] * len(requests)
        groups: dict[tuple[Any, ...], list[int]] = {}
        for position, request in enumerate(requests):
            groups.setdefault(self._batch_key(request), []).append(position)
        for positions in groups.values():
            # Sampled decoding runs one request at a time, seeded, so its result does not depend
            # on which other requests shared its batch (a resumed sweep batches differently).
            size = self._batch_size if requests[positions[0]].decoding.greedy else 1
            for start in range(0, len(positions), size):
                chunk = positions[start : start + size]
                for position, response in zip(
                    chunk, self._run_isolating([requests[p] for p in chunk]), strict=True
                ):
                    results[position] = response
        return [r for r in results if r is not None]

    def _batch_key(self, request: VideoRequest) -> tuple[Any, ...]:
        shape = None if request.frames is None else tuple(request.frames.array.shape)
        decoding = request.decoding
        if decoding.greedy:  # the seed cannot change a greedy result: batch across seeds
            decoding = decoding.model_copy(update={"seed": 0})
        return (shape, request.max_pixels, decoding, request.item.task_kind)

    def _run_isolating(self, batch: list[VideoRequest]) -> list[VideoResponse]:
        """Run a batch; if it fails, run its requests one by one so only the bad one fails.
        Running out of memory is raised instead: the sweep halves the batch and says so."""
        try:
            return self._run_batch(batch)
        except Exception as exc:
            if type(exc).__name__ == "OutOfMemoryError":
                raise
            if len(batch) == 1:
                return [VideoResponse.failure(Status.MODEL_ERROR, f"{type(exc).__name__}: {exc}")]
        return [self._run_isolating([request])[0] for request in batch]

    # -- one batch ----------------------------------------------------------------------------

    def _conversation(
        self, request: VideoRequest, *, cloze: bool = False
    ) -> list[ChatTemplateMessage]:
        conversation: list[ChatTemplateMessage] = []
        for position, message in enumerate(build_messages(request.item, cloze=cloze)):
            parts: list[ContentPart] = []
            if position == 0 and request.frames is not None:
                parts.append({"type": "video"})
            parts.append({"type": "text", "text": message["text"]})
            conversation.append({"role": message["role"], "content": parts})
        return conversation

    def processor_inputs(
        self, batch: Sequence[VideoRequest], texts: Sequence[str] | None = None
    ) -> Any:
        """The processor's output for a batch (public so tests can check what the model sees);
        `texts`: one rendered text per request instead of the generation prompts."""
        if texts is None:
            texts = [
                self._processor.apply_chat_template(
                    self._conversation(request), add_generation_prompt=True, tokenize=False
                )
                for request in batch
            ]
        kwargs: ProcessorKwargs = {"text": list(texts), "padding": True, "return_tensors": "pt"}
        videos = [
            fill_temporal_patch(self.family, self._processor, r.frames)
            for r in batch
            if r.frames is not None
        ]
        if videos:
            # decoded frames are shared read-only, which torch warns about: writable copies.
            # One [F, H, W, 3] array per video: a list of frame arrays costs the processor
            # about a third more time (128 frames of 448x336)
            kwargs["videos"] = [writable(np.asarray(frame_set.array)) for frame_set in videos]
            kwargs["do_sample_frames"] = False
            kwargs["video_metadata"] = [video_metadata(frame_set) for frame_set in videos]
            bounds = resize_kwargs(self.family, self._processor, batch[0], self._options.min_pixels)
            if bounds is not None:
                kwargs["size"] = bounds["size"]
                kwargs["cap_pixels_per_frame"] = bounds["cap_pixels_per_frame"]
        return self._processor(**kwargs)

    def _to_device(self, inputs: Any) -> Any:
        inputs = inputs.to(self._device)
        for key in [k for k in inputs if k.startswith("pixel_values")]:
            # Pixels in the model's dtype (a half-precision vision tower on GPU would refuse
            # float32); timing tensors such as `second_per_grid_ts` keep full precision.
            if inputs[key].is_floating_point():
                inputs[key] = inputs[key].to(self._model.dtype)
        return inputs

    def _run_batch(self, batch: list[VideoRequest]) -> list[VideoResponse]:
        import torch

        if self._options.mcqa_scoring == "likelihood" and batch[0].item.task_kind == TaskKind.MCQA:
            return self._run_likelihood_batch(batch)
        start = time.perf_counter()
        inputs = self._to_device(self.processor_inputs(batch))
        decoding = batch[0].decoding
        generate_kwargs: GenerateKwargs = {
            "max_new_tokens": decoding.max_new_tokens,
            "return_dict_in_generate": True,
            "output_logits": True,
            "pad_token_id": self._tokenizer.pad_token_id,
        }
        if decoding.greedy:
            generate_kwargs["do_sample"] = False
        else:
            torch.manual_seed(decoding.seed)
            generate_kwargs["do_sample"] = True
            generate_kwargs["temperature"] = decoding.temperature
            generate_kwargs["top_p"] = decoding.top_p
        with torch.inference_mode():
            output = self._model.generate(**inputs, **generate_kwargs)
        prompt_length = inputs["input_ids"].shape[1]
        first_logits = output.logits[0].float()
        latency = (time.perf_counter() - start) / len(batch)
        visual = self.visual_token_counts(inputs)
        pixels = self._pixels(inputs)
        responses = []
        for row, request in enumerate(batch):
            text = self._tokenizer.decode(
                output.sequences[row, prompt_length:], skip_special_tokens=True
            ).strip()
            probs = None
            if request.item.task_kind == TaskKind.MCQA and decoding.score_options:
                probs = self._option_probs(first_logits[row], request.item.option_letters)
            responses.append(
                completed_response(
                    request,
                    text,
                    probs,
                    latency_s=latency,
                    visual_tokens=visual[row],
                    pixels=pixels if request.frames is not None else None,
                )
            )
        return responses

    def _run_likelihood_batch(self, batch: list[VideoRequest]) -> list[VideoResponse]:
        """Option-likelihood scoring (`mcqa_scoring = "likelihood"`): one forward pass over
        every (request, option) row, no generation. Each row is the chat template rendered with
        the option as the assistant's reply; the reply's tokens are the last ones of the
        left-padded row, so their log-probabilities are read from the end."""
        import torch

        start = time.perf_counter()
        rows: list[VideoRequest] = []
        texts: list[str] = []
        reply_lengths: list[int] = []
        for request in batch:
            conversation = self._conversation(request, cloze=True)
            prompt = self._processor.apply_chat_template(
                conversation, add_generation_prompt=True, tokenize=False
            )
            prompt_tokens = len(self._tokenizer(prompt, add_special_tokens=False)["input_ids"])
            for option in request.item.options:
                reply: ChatTemplateMessage = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": option}],
                }
                text = self._processor.apply_chat_template(
                    [*conversation, reply], add_generation_prompt=False, tokenize=False
                ).rstrip()
                if not text.startswith(prompt):
                    raise BackendError(
                        f"{self.family}: the chat template does not render a reply after the "
                        "generation prompt, so options cannot be scored by likelihood"
                    )
                length = len(self._tokenizer(text, add_special_tokens=False)["input_ids"])
                rows.append(request)
                texts.append(text)
                reply_lengths.append(length - prompt_tokens)
        if min(reply_lengths) < 1:
            raise BackendError(f"{self.family}: an option's reply encodes to no tokens")
        inputs = self._to_device(self.processor_inputs(rows, texts))
        keep = max(reply_lengths) + 1
        with torch.inference_mode():
            logits = self._model(**inputs, logits_to_keep=keep).logits[:, -keep:].float()
        log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
        targets = inputs["input_ids"][:, -(keep - 1) :]
        token_scores = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        latency = (time.perf_counter() - start) / len(batch)
        visual = self.visual_token_counts(inputs)
        pixels = self._pixels(inputs)
        responses = []
        row = 0
        for request in batch:
            item = request.item
            scores = []
            for offset in range(len(item.options)):
                length = reply_lengths[row + offset]
                scores.append(float(token_scores[row + offset, -length:].sum()))
            probs = _softmax(scores)
            choice = _choose(probs, request)
            letters = item.option_letters
            responses.append(
                completed_response(
                    request,
                    item.options[choice],
                    dict(zip(letters, probs, strict=True)),
                    latency_s=latency,
                    visual_tokens=visual[row],
                    pixels=pixels if request.frames is not None else None,
                    chosen=letters[choice],
                )
            )
            row += len(item.options)
        return responses

    # -- reading what the processor produced --------------------------------------------------

    def _visual_token_ids(self) -> list[int]:
        ids: list[int] = []
        for attribute in ("image_token", "video_token"):
            token = getattr(self._processor, attribute, None)
            if isinstance(token, str):
                token_id = self._tokenizer.convert_tokens_to_ids(token)
                if isinstance(token_id, int) and token_id != self._tokenizer.unk_token_id:
                    ids.append(token_id)
        if not ids:
            raise BackendError(f"{self.family}: the processor names no image or video token")
        return sorted(set(ids))

    def visual_token_counts(self, inputs: Any) -> list[int]:
        import torch

        input_ids = inputs["input_ids"]
        is_visual = torch.isin(input_ids, torch.tensor(self._visual_ids, device=input_ids.device))
        if "attention_mask" in inputs:
            is_visual &= inputs["attention_mask"].bool()
        return [int(n) for n in is_visual.sum(dim=1).tolist()]

    def _pixels(self, inputs: Any) -> int | None:
        """Pixels per frame after the processor's resizing."""
        if "video_grid_thw" in inputs:
            grid = inputs["video_grid_thw"][0]
            patch = int(self._processor.video_processor.patch_size)
            return int(grid[1]) * int(grid[2]) * patch * patch
        for key in ("pixel_values_videos", "pixel_values"):
            if key in inputs:
                shape = inputs[key].shape
                return int(shape[-1]) * int(shape[-2])
        return None

    def _option_probs(self, logits: torch.Tensor, letters: str) -> dict[str, float]:
        import torch

        ids = self._letter_ids.get(letters)
        if ids is None:
            ids = self._letter_ids[letters] = letter_token_ids(self._tokenizer, letters)
        probabilities = torch.softmax(logits, dim=-1)
        mass = {letter: float(probabilities[token_ids].sum()) for letter, token_ids in ids.items()}
        total = sum(mass.values())
        if total <= 0.0:
            return {letter: 1.0 / len(letters) for letter in letters}
        return {letter: value / total for letter, value in mass.items()}


def _softmax(scores: list[float]) -> list[float]:
    top = max(scores)
    weights = [float(np.exp(score - top)) for score in scores]
    total = sum(weights)
    return [weight / total for weight in weights]


def _choose(probs: list[float], request: VideoRequest) -> int:
    """The most likely option, or under sampled decoding a draw from the option probabilities
    tempered by the temperature, seeded by the request's seed and item (so a repeat is
    reproducible and items do not share one draw)."""
    decoding = request.decoding
    if decoding.greedy:
        return int(np.argmax(probs))
    tempered = np.exp(np.log(np.maximum(probs, 1e-300)) / decoding.temperature)
    tempered /= tempered.sum()
    key = int.from_bytes(hashlib.sha256(request.item.item_id.encode()).digest()[:8], "big")
    rng = np.random.default_rng([decoding.seed, key])
    return int(rng.choice(len(probs), p=tempered))


def processor_settings(family: str, processor: Any, options: HFOptions) -> dict[str, SettingValue]:
    """The processor settings that change what the model sees, for the spec."""
    settings: dict[str, SettingValue] = {"family": family}
    video = getattr(processor, "video_processor", None)
    for attribute in (
        "patch_size",
        "merge_size",
        "temporal_patch_size",
        "size",
        "crop_size",
        "max_image_size",
    ):
        value = getattr(video, attribute, None)
        if value is None:
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        elif hasattr(value, "to_dict"):
            value = value.to_dict()
        if isinstance(value, dict):
            value = json.dumps({k: v for k, v in value.items() if v is not None}, sort_keys=True)
        if isinstance(value, str | int | float | bool):
            settings[f"video.{attribute}"] = value
    if options.min_pixels is not None:
        settings["min_pixels"] = options.min_pixels
    if options.mcqa_scoring != "letter":  # absent at the default, so existing cells keep their ids
        settings["mcqa_scoring"] = options.mcqa_scoring
    template = getattr(processor, "chat_template", None) or ""
    settings["chat_template_sha"] = hashlib.sha256(str(template).encode()).hexdigest()[:16]
    return settings

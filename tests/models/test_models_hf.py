"""The `hf` backend on tiny randomly initialised models of every supported family.

Each model is built offline (tests/_support/models_tiny.py), saved, and loaded back through
`load_backend`, so the real loading, chat-template, processor and generation code runs.
Expected visual token counts are computed by hand from each tiny family's geometry.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from _support.models_tiny import BUILDERS, LLAVA_IMAGE, LLAVA_PATCH
from itemscale.collect.items import DialogueTurn, Item
from itemscale.collect.models import (
    BackendError,
    DecodingSettings,
    Frames,
    VideoLM,
    VideoRequest,
    load_backend,
)
from itemscale.collect.models._hf import HFBackend
from itemscale.collect.protocol import ModelEntry
from itemscale.collect.video import FrameSet
from itemscale.core.responses import Status, TaskKind

pytestmark = pytest.mark.slow  # the tiny models take a few seconds to build and load

FAMILIES = sorted(BUILDERS)
HEIGHT, WIDTH = 64, 96  # frames as the video pipeline would hand them over

ITEMS = [
    Item(
        item_id="q1",
        video_id="v1",
        question="What colour is the ball?",
        options=("red", "blue", "green", "yellow"),
        answer="A",
    ),
    Item(
        item_id="q2",
        video_id="v1",
        question="Which way does the square move?",
        options=("left", "right", "up"),
        answer="B",
    ),
    Item(
        item_id="q3",
        video_id="v2",
        question="What colour?",
        options=("red", "blue"),
        history=(
            DialogueTurn(role="user", text="Look at the video."),
            DialogueTurn(role="assistant", text="I see a ball."),
        ),
    ),
]
OPEN = Item(
    item_id="o1",
    video_id="v1",
    task_kind=TaskKind.OPEN_QA,
    question="What happens?",
    references=("a ball rolls",),
)


def frames(count: int, seed: int = 0, height: int = HEIGHT, width: int = WIDTH) -> Frames:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(count, height, width, 3), dtype=np.uint8)
    indices = tuple(range(0, 12 * count, 12))
    return Frames(pixels, indices, tuple(i / 24 for i in indices))


def visual_tokens_expected(family: str, count: int) -> int:
    """Hand-computed visual tokens for `count` frames of HEIGHT x WIDTH."""
    if family in ("qwen2-vl", "qwen2.5-vl"):
        # 64x96 rounds to 56x84 on the 28-pixel grid; 2x2 patches of 14 merge into one token;
        # two frames make one temporal patch.
        return math.ceil(count / 2) * (56 // 28) * (84 // 28)
    if family == "qwen3-vl":
        # 16-pixel patches, 2x2 merge: a 32-pixel grid, which 64x96 already fits.
        return math.ceil(count / 2) * (64 // 32) * (96 // 32)
    per_frame_patches = (LLAVA_IMAGE // LLAVA_PATCH) ** 2
    if family == "llava-onevision":
        # bilinear 2x pooling per frame, plus one newline token for the whole video
        return count * math.ceil(math.sqrt(per_frame_patches) / 2) ** 2 + 1
    # LLaVA-NeXT-Video (2x2 average pool), InternVL (pixel shuffle 0.5), SmolVLM2 (scale 2)
    return count * per_frame_patches // 4


def pixels_expected(family: str) -> int:
    return {"qwen2-vl": 56 * 84, "qwen2.5-vl": 56 * 84, "qwen3-vl": 64 * 96}.get(
        family, LLAVA_IMAGE * LLAVA_IMAGE
    )


class TinyModels:
    """Builds each family's tiny model on first use (once per test session) and loads it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dirs: dict[str, Path] = {}
        self.loaded: dict[str, VideoLM] = {}

    def folder(self, family: str) -> Path:
        if family not in self.dirs:
            if family == "smolvlm2":
                # transformers' SmolVLM processor spells frame counts with num2words.
                pytest.importorskip("num2words", reason="SmolVLM2's processor needs num2words")
            self.dirs[family] = BUILDERS[family](self.root / family)
        return self.dirs[family]

    def __getitem__(self, family: str) -> VideoLM:
        if family not in self.loaded:
            self.loaded[family] = load_backend(
                hf_entry(self.folder(family), name=family), batch_size=4
            )
        return self.loaded[family]


def hf_entry(folder: Path, name: str = "tiny", **kwargs: Any) -> ModelEntry:
    return ModelEntry(name=name, backend="hf", model=str(folder), dtype="float32", **kwargs)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyModels:
    return TinyModels(tmp_path_factory.mktemp("tiny_models"))


@pytest.fixture(scope="session")
def backends(tiny: TinyModels) -> TinyModels:
    return tiny


@pytest.fixture(scope="session")
def model_dirs(tiny: TinyModels) -> Any:
    class Folders:
        def __getitem__(self, family: str) -> Path:
            return tiny.folder(family)

    return Folders()


@pytest.mark.parametrize("family", FAMILIES)
def test_loads_the_family_through_auto_classes(family: str, backends: TinyModels) -> None:
    backend = backends[family]
    assert isinstance(backend, HFBackend) and backend.family == family
    spec = backend.spec
    assert spec.backend == "hf" and spec.dtype == "float32"
    assert spec.processor["family"] == family
    assert spec.revision is not None and spec.revision.startswith("local-")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_visual_tokens_and_pixels_are_what_the_processor_produced(
    family: str, count: int, backends: TinyModels
) -> None:
    [response] = backends[family].generate(
        [VideoRequest(ITEMS[0], frames(count), DecodingSettings(max_new_tokens=1))]
    )
    assert response.status in (Status.OK, Status.NOANSWER), response.error
    assert response.visual_tokens == visual_tokens_expected(family, count)
    assert response.pixels == pixels_expected(family)
    assert response.effective_frames == count


@pytest.mark.parametrize("family", FAMILIES)
def test_option_probabilities_sum_to_one_and_score_mode_answers_argmax(
    family: str, backends: TinyModels
) -> None:
    requests = [VideoRequest(item, frames(2), DecodingSettings(max_new_tokens=1)) for item in ITEMS]
    for item, response in zip(ITEMS, backends[family].generate(requests), strict=True):
        assert response.status == Status.OK
        probs = response.option_probs
        assert probs is not None and list(probs) == list(item.option_letters)
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)
        assert all(0.0 <= p <= 1.0 for p in probs.values())
        assert response.answer == max(probs, key=lambda k: probs[k])
        assert response.confidence == pytest.approx(probs[response.answer])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_batch_gives_the_same_results_as_single_requests(
    family: str, backends: TinyModels, model_dirs: Any
) -> None:
    # Different prompt lengths (left padding) and different frames in one batch.
    requests = [
        VideoRequest(item, frames(4, seed=i), DecodingSettings(max_new_tokens=3))
        for i, item in enumerate(ITEMS)
    ]
    batched = backends[family].generate(requests)
    single_backend = load_backend(hf_entry(model_dirs[family], name=family), batch_size=1)
    single = single_backend.generate(requests)
    assert single_backend.spec.spec_id == backends[family].spec.spec_id
    for one, many in zip(single, batched, strict=True):
        assert many.raw_text == one.raw_text
        assert many.visual_tokens == one.visual_tokens
        assert one.option_probs is not None and many.option_probs is not None
        for letter, p in one.option_probs.items():
            assert many.option_probs[letter] == pytest.approx(p, abs=1e-4)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_frames_given_are_the_frames_the_model_sees(family: str, backends: TinyModels) -> None:
    # Six frames at irregular times from a 10 fps video: no resampling may change their number,
    # and timestamp-aware processors must print our times.
    indices = (0, 25, 70, 100, 130, 170)
    rng = np.random.default_rng(5)
    given = Frames(
        rng.integers(0, 256, size=(6, HEIGHT, WIDTH, 3), dtype=np.uint8),
        indices,
        tuple(i / 10 for i in indices),
    )
    backend = backends[family]
    assert isinstance(backend, HFBackend)
    inputs = backend.processor_inputs([VideoRequest(ITEMS[0], given)])
    if "video_grid_thw" in inputs:
        temporal = backend.spec.processor["video.temporal_patch_size"]
        assert int(inputs["video_grid_thw"][0][0]) * int(temporal) == 6
    elif "pixel_values_videos" in inputs:  # [videos, frames, C, H, W]
        assert inputs["pixel_values_videos"].shape[1] == 6
    elif family == "internvl":  # frames flattened: [frames, C, H, W]
        assert inputs["pixel_values"].shape[0] == 6
    else:  # SmolVLM2: [videos, frames, C, H, W]
        assert inputs["pixel_values"].shape[1] == 6
    prompt = backend._tokenizer.decode(inputs["input_ids"][0])
    if family == "qwen3-vl":  # one time per temporal patch: the mean of its two frames
        assert "<1.2 seconds>" in prompt and "<8.5 seconds>" in prompt
        assert "<15.0 seconds>" in prompt
    if family == "smolvlm2":
        for stamp in ("00:00", "00:02", "00:07", "00:10", "00:13", "00:17"):
            assert f"Frame from {stamp}" in prompt
    if family == "qwen2.5-vl":  # two frames per temporal patch, 3.4 s apart on average
        assert float(inputs["second_per_grid_ts"][0]) == pytest.approx(6.8, rel=1e-3)


def test_frames_change_the_model_input(backends: TinyModels) -> None:
    backend = backends["qwen2-vl"]
    assert isinstance(backend, HFBackend)
    a = backend.processor_inputs([VideoRequest(ITEMS[0], frames(2, seed=1))])
    b = backend.processor_inputs([VideoRequest(ITEMS[0], frames(2, seed=2))])
    assert torch.equal(a["input_ids"], b["input_ids"])
    assert not torch.equal(a["pixel_values_videos"], b["pixel_values_videos"])


@pytest.mark.parametrize("family", ["qwen2-vl", "qwen2.5-vl", "qwen3-vl"])
def test_the_pixel_budget_bounds_the_processor_resize(family: str, backends: TinyModels) -> None:
    budget = 40 * 40
    [response] = backends[family].generate(
        [VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1), max_pixels=budget)]
    )
    assert response.status == Status.OK and response.pixels is not None
    assert response.pixels <= budget
    factor = 32 if family == "qwen3-vl" else 28
    assert response.visual_tokens == response.pixels // (factor * factor)


@pytest.mark.parametrize("family", FAMILIES)
def test_text_only_requests_have_no_visual_tokens(family: str, backends: TinyModels) -> None:
    [response, with_video] = backends[family].generate(
        [
            VideoRequest(ITEMS[0], None, DecodingSettings(max_new_tokens=1)),
            VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1)),
        ]
    )
    assert response.status == Status.OK
    assert response.visual_tokens == 0 and response.pixels is None
    assert response.effective_frames is None
    assert with_video.visual_tokens == visual_tokens_expected(family, 2)


def test_open_ended_items_are_generated_without_option_scores(
    backends: TinyModels,
) -> None:
    decoding = DecodingSettings(max_new_tokens=5)
    [response] = backends["qwen2-vl"].generate([VideoRequest(OPEN, frames(2), decoding)])
    assert response.status == Status.OK
    assert response.answer is None and response.option_probs is None
    assert response.confidence is None and isinstance(response.raw_text, str)


def test_generation_mode_reads_the_answer_from_the_text(backends: TinyModels) -> None:
    [response] = backends["qwen2.5-vl"].generate(
        [VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=4))]
    )
    from itemscale.core.responses import extract_choice

    assert response.answer == extract_choice(response.raw_text, ITEMS[0].options)
    assert response.option_probs is not None
    if response.answer in response.option_probs:
        assert response.confidence == pytest.approx(response.option_probs[response.answer])
    else:
        assert response.status == Status.NOANSWER and response.confidence is None


def test_seeded_sampling_is_reproducible(backends: TinyModels) -> None:
    decoding = DecodingSettings(max_new_tokens=6, temperature=1.0, seed=7)
    request = VideoRequest(OPEN, frames(2), decoding)
    first = backends["qwen2-vl"].generate([request])[0].raw_text
    again = backends["qwen2-vl"].generate([request])[0].raw_text
    assert first == again


def test_sampled_results_do_not_depend_on_batch_company(backends: TinyModels) -> None:
    def sampled(seed: int) -> VideoRequest:
        return VideoRequest(
            OPEN, frames(2), DecodingSettings(max_new_tokens=6, temperature=1.0, seed=seed)
        )

    mixed = backends["qwen2-vl"].generate([sampled(1), sampled(2), sampled(1)])
    alone = backends["qwen2-vl"].generate([sampled(1)])
    assert mixed[0].raw_text == mixed[2].raw_text == alone[0].raw_text


def test_a_failing_request_fails_alone(backends: TinyModels) -> None:
    # An aspect ratio over 200 is refused by the Qwen processor.
    bad = Frames(np.zeros((2, 28, 28 * 210, 3), dtype=np.uint8), (0, 1), (0.0, 0.1))
    good = VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1))
    responses = backends["qwen2-vl"].generate([good, VideoRequest(ITEMS[1], bad), good])
    assert [r.status for r in responses] == [Status.OK, Status.MODEL_ERROR, Status.OK]
    failed = responses[1]
    assert failed.answer is None and failed.error is not None and "aspect ratio" in failed.error


def test_video_pipeline_frame_sets_are_accepted(backends: TinyModels) -> None:
    pixels = frames(2).array
    frame_set = FrameSet(
        array=pixels,
        indices=np.array([0, 12]),
        timestamps=np.array([0.0, 0.5]),
        width=WIDTH,
        height=HEIGHT,
        effective_frames=2,
    )
    [response] = backends["llava-onevision"].generate(
        [VideoRequest(ITEMS[0], frame_set, DecodingSettings(max_new_tokens=1))]
    )
    assert response.status == Status.OK
    assert response.visual_tokens == visual_tokens_expected("llava-onevision", 2)


def test_spec_changes_with_dtype_not_with_batch_size(model_dirs: Any) -> None:
    folder = model_dirs["qwen2-vl"]
    float32 = load_backend(hf_entry(folder), batch_size=1).spec
    batched = load_backend(hf_entry(folder), batch_size=8).spec
    bf16_backend = load_backend(
        ModelEntry(name="tiny", backend="hf", model=str(folder), dtype="bfloat16")
    )
    assert float32.spec_id == batched.spec_id
    assert bf16_backend.spec.dtype == "bfloat16"
    assert bf16_backend.spec.spec_id != float32.spec_id
    [response] = bf16_backend.generate(
        [VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1))]
    )
    assert response.status == Status.OK and response.option_probs is not None
    assert json.loads(float32.model_dump_json())["processor"]["family"] == "qwen2-vl"


def test_bad_options_and_dtypes_name_the_key(model_dirs: Any) -> None:
    folder = model_dirs["qwen2-vl"]
    with pytest.raises(BackendError, match="'min_pixel'"):
        load_backend(hf_entry(folder, options={"min_pixel": 4}))
    with pytest.raises(BackendError, match="dtype 'float8'"):
        load_backend(ModelEntry(name="m", backend="hf", model=str(folder), dtype="float8"))


def test_unsupported_or_missing_models_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(BackendError, match="not a supported video family"):
        load_backend(hf_entry(tmp_path))
    with pytest.raises(BackendError, match=r"the model folder .* does not exist"):
        load_backend(hf_entry(tmp_path / "missing"))


def test_builtin_loads_the_packaged_folder_or_says_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model_dirs: Any
) -> None:
    import itemscale.collect.models._load as load_module

    entry = ModelEntry(name="builtin", backend="builtin", model="builtin", dtype="float32")
    monkeypatch.setattr(load_module, "builtin_model_dir", lambda: tmp_path / "absent")
    with pytest.raises(BackendError, match="built-in model is not installed"):
        load_backend(entry)
    monkeypatch.setattr(load_module, "builtin_model_dir", lambda: model_dirs["smolvlm2"])
    backend = load_backend(entry)
    assert backend.spec.backend == "builtin"
    [response] = backend.generate(
        [VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1))]
    )
    assert response.status == Status.OK


def test_option_probabilities_pool_both_letter_spellings_from_the_logits(
    backends: TinyModels,
) -> None:
    backend = backends["qwen2-vl"]
    assert isinstance(backend, HFBackend)
    tokenizer = backend._tokenizer
    # The tiny byte-level BPE has both "A" and " A" (ĠA) as single tokens: two spellings.
    spellings = {
        letter: [tokenizer.convert_tokens_to_ids(t) for t in (letter, "Ġ" + letter)]
        for letter in "ABCD"
    }
    assert all(tokenizer.unk_token_id not in ids for ids in spellings.values())
    request = VideoRequest(ITEMS[0], frames(2), DecodingSettings(max_new_tokens=1))
    with torch.inference_mode():
        logits = backend._model(**backend.processor_inputs([request])).logits[0, -1]
    probs = torch.softmax(logits.double(), dim=-1)
    mass = {letter: float(probs[ids].sum()) for letter, ids in spellings.items()}
    total = sum(mass.values())
    [response] = backend.generate([request])
    assert response.option_probs is not None
    for letter in "ABCD":
        assert response.option_probs[letter] == pytest.approx(mass[letter] / total, abs=1e-6)


def _reply_log_likelihood(backend: HFBackend, request: VideoRequest, option: str) -> float:
    """Independent check of option-likelihood scoring: one unpadded row, full logits, the
    reply's tokens located by the prompt's own processed length."""
    conversation = backend._conversation(request, cloze=True)
    processor = backend._processor
    prompt = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
    reply = {"role": "assistant", "content": [{"type": "text", "text": option}]}
    full = processor.apply_chat_template(
        [*conversation, reply], add_generation_prompt=False, tokenize=False
    ).rstrip()
    prompt_ids = backend.processor_inputs([request], [prompt])["input_ids"][0]
    inputs = backend.processor_inputs([request], [full])
    with torch.inference_mode():
        logits = backend._model(**inputs).logits[0].double()
    ids = inputs["input_ids"][0]
    start = len(prompt_ids)
    assert torch.equal(ids[:start], prompt_ids)  # the reply only appends tokens
    log_probs = torch.log_softmax(logits[start - 1 : -1], dim=-1)
    return float(log_probs.gather(-1, ids[start:].unsqueeze(-1)).sum())


@pytest.mark.parametrize("family", ["qwen2.5-vl", "llava-onevision", "internvl"])
def test_likelihood_scoring_is_the_softmax_of_each_options_reply_log_likelihood(
    family: str, model_dirs: Any
) -> None:
    backend = load_backend(
        hf_entry(model_dirs[family], name=family, options={"mcqa_scoring": "likelihood"}),
        batch_size=4,
    )
    assert isinstance(backend, HFBackend)
    assert backend.spec.processor["mcqa_scoring"] == "likelihood"
    requests = [
        VideoRequest(item, frames(2, seed=i) if i != 1 else None, DecodingSettings())
        for i, item in enumerate(ITEMS)
    ]
    responses = backend.generate(requests)
    for request, response in zip(requests, responses, strict=True):
        item = request.item
        assert response.status == Status.OK, response.error
        scores = [_reply_log_likelihood(backend, request, option) for option in item.options]
        top = max(scores)
        expected = [math.exp(s - top) for s in scores]
        expected = [e / sum(expected) for e in expected]
        probs = response.option_probs
        assert probs is not None and list(probs) == list(item.option_letters)
        assert list(probs.values()) == pytest.approx(expected, abs=1e-4)
        best = int(np.argmax(scores))
        assert response.answer == item.option_letters[best]
        assert response.raw_text == item.options[best]
        assert response.confidence == pytest.approx(expected[best], abs=1e-4)
    assert responses[1].visual_tokens == 0 and responses[0].visual_tokens


def test_likelihood_scoring_batches_like_single_requests_and_keys_the_spec(
    model_dirs: Any,
) -> None:
    folder = model_dirs["qwen2-vl"]
    letter = load_backend(hf_entry(folder), batch_size=1)
    single = load_backend(hf_entry(folder, options={"mcqa_scoring": "likelihood"}), batch_size=1)
    batched = load_backend(hf_entry(folder, options={"mcqa_scoring": "likelihood"}), batch_size=3)
    assert "mcqa_scoring" not in letter.spec.processor  # default: existing cells keep their ids
    assert single.spec.spec_id == batched.spec.spec_id != letter.spec.spec_id
    requests = [VideoRequest(item, frames(4, seed=3), DecodingSettings()) for item in ITEMS]
    alone = [single.generate([r])[0] for r in requests]
    together = batched.generate(requests)
    for a, b in zip(alone, together, strict=True):
        assert a.answer == b.answer and a.raw_text == b.raw_text
        assert a.option_probs is not None and b.option_probs is not None
        assert list(a.option_probs.values()) == pytest.approx(
            list(b.option_probs.values()), abs=1e-5
        )
    # Open items still generate text.
    [open_response] = batched.generate([VideoRequest(OPEN, frames(2), DecodingSettings())])
    assert open_response.status == Status.OK and open_response.option_probs is None


def test_likelihood_scoring_samples_reproducibly_per_item_and_seed(model_dirs: Any) -> None:
    backend = load_backend(
        hf_entry(model_dirs["qwen2-vl"], options={"mcqa_scoring": "likelihood"}), batch_size=2
    )
    items = [
        Item(item_id=f"s{n}", video_id="v", question="Which?", options=("red", "blue"))
        for n in range(40)
    ]

    def answers(seed: int, temperature: float) -> list[str | None]:
        decoding = DecodingSettings(temperature=temperature, seed=seed)
        return [
            r.answer for r in backend.generate([VideoRequest(i, None, decoding) for i in items])
        ]

    assert answers(1, 5.0) == answers(1, 5.0)
    assert answers(1, 5.0) != answers(2, 5.0)  # 40 near-even draws: a tie is ~1e-12
    greedy = answers(0, 0.0)
    assert len(set(greedy)) == 1  # the same question text: the same most likely option
    with pytest.raises(BackendError, match="'mcqa_scoring'"):
        load_backend(hf_entry(model_dirs["qwen2-vl"], options={"mcqa_scoring": "cloze"}))

"""The built-in tiny Video LLM's recipe: tokenizer, processor, prompts, training loop, CLI.

Everything runs on a real (tiny) Qwen2.5-VL model over real H.264 videos from the synthetic
suite; the shipped weights are checked in test_builtin_shipped.py.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _support.builtin_tiny import TINY, first_video_step  # noqa: E402
from itemscale.collect.items import Item, read_items_jsonl  # noqa: E402
from itemscale.collect.models import DecodingSettings, Frames, VideoRequest, load_backend  # noqa: E402
from itemscale.collect.protocol import ModelEntry  # noqa: E402
from recipes.builtin_model import (  # noqa: E402
    TrainSettings,
    main,
    train_builtin,
)
from recipes.builtin_model._build import (  # noqa: E402
    build_model,
    build_processor,
    item_texts,
    train_tokenizer,
)
from recipes.builtin_model._config import SPECIAL_TOKENS  # noqa: E402
from recipes.builtin_model._data import (  # noqa: E402
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
from recipes.builtin_model._loss import step_loss  # noqa: E402
from recipes.builtin_model._plan import (  # noqa: E402
    group_by_video,
    learning_rate_factor,
    plan_steps,
)


@pytest.fixture(scope="module")
def suite(small_synthetic_suite: Path) -> Path:
    """The session's 3-video suite (tests/conftest.py), read only."""
    return small_synthetic_suite


@pytest.fixture(scope="module")
def items(suite: Path) -> list[Item]:
    return read_items_jsonl(suite / "items.jsonl")


@pytest.fixture(scope="module")
def built(items: list[Item]) -> tuple[Any, Any]:
    torch.manual_seed(0)
    tokenizer = train_tokenizer(item_texts(items), TINY.vocab_size)
    processor = build_processor(tokenizer)
    model = build_model(TINY, tokenizer)
    return model, processor


def _video_inputs(suite: Path, item: Item, processor: Any, frames: int, side: int) -> Any:
    video = decode_video(suite / str(item.video_path))
    indices = segment_indices(video.video_frames, frames)
    size = frame_size(*(int(x) for x in video.array.shape[1:3]), side)
    return process_video(
        processor, resize_frames(video.array[indices], size), fps=video.fps, indices=indices
    )


def test_tokenizer_keeps_qwen_special_tokens_and_single_letter_options(built: Any) -> None:
    _, processor = built
    tok = processor.tokenizer
    for token in SPECIAL_TOKENS:
        ids = tok.encode(token, add_special_tokens=False)
        assert len(ids) == 1 and ids[0] != tok.unk_token_id, token
    for letter in "ABCD":
        assert len(tok.encode(letter, add_special_tokens=False)) == 1
    text = "How many times does the yellow square appear?"
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
    # a word the suite never uses still encodes (byte-level fallback), losslessly
    assert tok.decode(tok.encode("zebra", add_special_tokens=False)) == "zebra"


def test_saved_folder_loads_with_auto_classes(built: Any, tmp_path: Path) -> None:
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model, processor = built
    model.save_pretrained(tmp_path)
    processor.save_pretrained(tmp_path)
    loaded_processor = AutoProcessor.from_pretrained(tmp_path, local_files_only=True)
    loaded = AutoModelForImageTextToText.from_pretrained(tmp_path, local_files_only=True)
    assert type(loaded_processor).__name__ == "Qwen2_5_VLProcessor"
    assert type(loaded).__name__ == "Qwen2_5_VLForConditionalGeneration"
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name]), name


def test_prompt_is_the_hf_backends_prompt(built: Any, suite: Path, items: list[Item]) -> None:
    """What training sees is token for token what the `hf` backend feeds the model."""
    import tempfile

    model, processor = built
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        processor.save_pretrained(tmp)
        backend = load_backend(ModelEntry(name="t", backend="hf", model=tmp, dtype="float32"))
        video = decode_video(suite / str(items[0].video_path))
        indices = segment_indices(video.video_frames, 4)
        frames = resize_frames(video.array[indices], frame_size(120, 160, 56))
        frame_set = Frames(
            array=frames,
            indices=tuple(int(i) for i in indices),
            timestamps=tuple(float(i) / video.fps for i in indices),
        )
        dialogue = next(i for i in items if i.history)
        for item in (items[0], dialogue):
            request = VideoRequest(item=item, frames=frame_set, decoding=DecodingSettings())
            theirs = backend.processor_inputs([request])
            mine = process_video(processor, frames, fps=video.fps, indices=indices)
            prompt = expand_video_tokens(
                render_prompt(processor, item, with_video=True), mine.num_tokens
            )
            batch = encode_batch(processor, [prompt], None)
            assert batch.input_ids.tolist() == theirs["input_ids"].tolist()
            assert torch.equal(mine.pixel_values, theirs["pixel_values_videos"])
            assert mine.grid_thw.tolist() == theirs["video_grid_thw"].tolist()
            assert mine.second_per_grid == pytest.approx(float(theirs["second_per_grid_ts"][0]))


def test_budget_never_reaches_the_text(built: Any, items: list[Item]) -> None:
    _, processor = built
    for item in items:
        small = expand_video_tokens(render_prompt(processor, item, with_video=True), 6)
        large = expand_video_tokens(render_prompt(processor, item, with_video=True), 480)
        assert small.replace("<|video_pad|>", "") == large.replace("<|video_pad|>", "")
        blind = render_prompt(processor, item, with_video=False)
        assert "<|video_pad|>" not in blind
        assert blind.replace("<|im_start|>user\n", "", 1) == small.replace(
            "<|vision_start|>" + "<|video_pad|>" * 6 + "<|vision_end|>", ""
        ).replace("<|im_start|>user\n", "", 1)


def test_answer_targets_are_letters_or_references(items: list[Item]) -> None:
    for item in items:
        target = answer_target(item)
        if item.task_kind == "mcqa":
            assert target == item.answer and target in "ABCD"
        else:
            assert target == item.references[0]


def test_shared_prefix_forward_equals_the_standard_forward(
    built: Any, suite: Path, items: list[Item]
) -> None:
    """One vision pass shared by all questions gives the numbers of one full pass per question."""
    model, processor = built
    group = [i for i in items if i.video_id == items[0].video_id]
    video = _video_inputs(suite, group[0], processor, 8, 56)
    prompts = [
        expand_video_tokens(render_prompt(processor, i, with_video=True), video.num_tokens)
        for i in group
    ]
    targets = [answer_target(i) for i in group]
    with torch.no_grad():
        logits, labels = shared_prefix_logits(model, processor, video, prompts, targets)
        shared = per_example_loss(logits, labels)
        for row in (0, 5, len(group) - 1):
            batch = encode_batch(processor, prompts[row : row + 1], targets[row : row + 1])
            out = model(
                input_ids=batch.input_ids,
                attention_mask=batch.attention_mask,
                mm_token_type_ids=batch.mm_token_type_ids,
                pixel_values_videos=video.pixel_values,
                video_grid_thw=video.grid_thw,
                second_per_grid_ts=torch.tensor([video.second_per_grid]),
            )
            alone = per_example_loss(out.logits, batch.labels)
            assert float(shared[row]) == pytest.approx(float(alone[0]), abs=1e-4)


def test_a_few_steps_lower_the_loss(items: list[Item], suite: Path) -> None:
    model, processor, group, video, planned = first_video_step(items, suite)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(8):
        loss, frames, height, width = step_loss(model, processor, group, video, planned)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert (frames, height, width) == (4, 56, 84)
    assert losses[-1] < 0.75 * losses[0], losses
    assert all(b < a for a, b in itertools.pairwise(losses)), losses


def test_plan_is_seeded_and_stays_in_budget(items: list[Item]) -> None:
    groups = group_by_video([i for i in items if i.split == "train"])
    cfg = TrainSettings(steps=7, items_per_step=5)
    a = plan_steps(groups, cfg, np.random.default_rng(4))
    b = plan_steps(groups, cfg, np.random.default_rng(4))
    c = plan_steps(groups, cfg, np.random.default_rng(5))
    assert a == b and a != c and len(a) == 7
    for step in a:
        assert step.frames in cfg.frame_counts and step.short_side in cfg.short_sides
        assert step.frames * step.short_side**2 <= cfg.max_step_pixels
        assert 1 <= len(step.item_ids) <= 5
    # the first epoch covers every training item exactly once (12 items per video: 3 chunks)
    first_epoch = [i for step in a[:6] for i in step.item_ids]
    assert sorted(first_epoch) == sorted(i.item_id for g in groups.values() for i in g)


def test_learning_rate_warms_up_then_decays() -> None:
    cfg = TrainSettings(steps=110, warmup_steps=10)
    assert learning_rate_factor(0, cfg) == pytest.approx(0.1)
    assert learning_rate_factor(9, cfg) == pytest.approx(1.0)
    assert learning_rate_factor(10, cfg) == pytest.approx(1.0)
    assert learning_rate_factor(60, cfg) == pytest.approx(0.05 + 0.95 * 0.5)
    assert learning_rate_factor(110, cfg) == pytest.approx(0.05)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=400),
    k=st.integers(min_value=1, max_value=64),
    seed=st.integers(0, 2**16),
)
def test_segment_indices_one_per_segment(n: int, k: int, seed: int) -> None:
    for rng in (None, np.random.default_rng(seed)):
        idx = segment_indices(n, k, rng)
        assert idx.shape == (k,)
        assert (idx >= 0).all() and (idx < n).all()
        assert (np.diff(idx) >= 0).all()
        edges = np.arange(k + 1) * n / k
        assert (idx >= np.floor(edges[:-1]) - 1e-9).all()
        assert (idx <= np.maximum(np.floor(edges[:-1]), np.ceil(edges[1:]) - 1)).all()


def test_frame_size_snaps_to_the_patch_grid() -> None:
    assert frame_size(120, 160, 112) == (112, 140)
    assert frame_size(120, 160, 120) == (112, 168)
    assert frame_size(120, 160, 56) == (56, 84)


def test_train_builtin_is_deterministic_and_saves_a_loadable_model(
    suite: Path, tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    cfg = TrainSettings(steps=3, threads=1, warmup_steps=1, frame_counts=(4,), short_sides=(56,))
    runs = []
    for name in ("a", "b"):
        result = train_builtin(suite, tmp_path / name, cfg, TINY)
        assert result.steps_done == 3 and not result.stopped_by_time
        runs.append(load_file(str(tmp_path / name / "model.safetensors")))
    assert runs[0].keys() == runs[1].keys()
    for key in runs[0]:
        assert torch.equal(runs[0][key], runs[1][key]), key
    meta = json.loads((tmp_path / "a" / "builtin_meta.json").read_text())
    assert meta["builtin_format_version"] == 1 and meta["steps_done"] == 3
    assert meta["train_items"] == 24 and meta["train_videos"] == 2
    log = json.loads((tmp_path / "a" / "train_log.json").read_text())
    assert log["train_log_version"] == 1 and [s["step"] for s in log["steps"]] == [0, 1, 2]
    backend = load_backend(
        ModelEntry(name="t", backend="hf", model=str(tmp_path / "a"), dtype="float32")
    )
    assert backend.spec.dtype == "float32"


def test_cli_reports_a_missing_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--suite", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "not a folder" in capsys.readouterr().err


def test_cli_reports_a_folder_without_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--suite", str(tmp_path), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "items.jsonl" in capsys.readouterr().err


def test_cli_rejects_bad_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--suite", str(tmp_path), "--out", str(tmp_path / "o"), "--steps", "0"])
    assert code == 2
    assert "--steps" in capsys.readouterr().err


def test_region_colour_targets_follow_the_merged_token_order() -> None:
    from recipes.builtin_model._aux import AUX_CLASSES, HUE_BINS, region_colour_targets

    frames = np.zeros((4, 56, 84, 3), dtype=np.uint8)
    frames[:, 0:20, 28:50] = (225, 30, 30)  # red, top-middle region, every frame
    frames[2:, 30:50, 60:80] = (245, 245, 245)  # paper, bottom-right region, second pair only
    frames[0, 40:43, 0:2] = (40, 80, 235)  # 6 blue pixels in one frame: just present
    frames[1, 40:42, 0:2] = (40, 80, 235)  # + 4 more in the pair's other frame
    targets = region_colour_targets(frames)
    assert tuple(targets.shape) == (2 * 2 * 3, AUX_CLASSES)
    blue_bin = int((225 / 360) * HUE_BINS)  # hue of (40, 80, 235) is about 228 degrees
    expected = {(1, 0), (7, 0), (11, HUE_BINS), (3, blue_bin)}
    assert {tuple(x) for x in targets.nonzero().tolist()} == expected
    # odd frame counts repeat the last frame, as the processor does
    assert tuple(region_colour_targets(frames[:3]).shape) == (12, AUX_CLASSES)

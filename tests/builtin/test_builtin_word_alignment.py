"""The opt-in word-alignment recipe of the built-in model: pixel-derived colour-word targets per
visual token, the alignment loss, teacher tokens and their schedule, option-text targets, and
the `backend_options` a model trained for option-likelihood scoring asks the loader for.

Why the recipe exists is in docs/research/builtin-model-notebook.md ("Third attempt").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _support.paths import REPO

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _support.builtin_tiny import TINY as BASE_TINY  # noqa: E402
from _support.builtin_tiny import first_video_step  # noqa: E402
from itemscale.collect.items import Item, read_items_jsonl  # noqa: E402
from itemscale.collect.models import DecodingSettings, VideoRequest, load_backend  # noqa: E402
from itemscale.collect.protocol import ModelEntry  # noqa: E402
from itemscale.collect.synth import COLOURS  # noqa: E402
from itemscale.core.responses import Status, TaskKind  # noqa: E402
from recipes.builtin_model import BuiltinArchitecture, TrainSettings, train_builtin  # noqa: E402
from recipes.builtin_model._aux import (  # noqa: E402
    palette_token_targets,
    word_alignment_loss,
    word_targets,
)
from recipes.builtin_model._loss import step_loss  # noqa: E402
from recipes.builtin_model._plan import as_open_item, teacher_mix  # noqa: E402

TINY = BASE_TINY.model_copy(update={"rope_theta": 4.0})
RECIPE = {
    "mcqa_target": "option_text",
    "word_align_weight": 3.0,
    "teacher_until": 0.4,
    "teacher_anneal_until": 0.8,
    "aux_weight": 0.0,
}


@pytest.fixture(scope="module")
def suite(small_synthetic_suite: Path) -> Path:
    """The session's 3-video suite (tests/conftest.py), read only."""
    return small_synthetic_suite


def test_palette_targets_mark_each_tokens_colours_in_merged_token_order() -> None:
    frames = np.zeros((4, 56, 84, 3), dtype=np.uint8)
    frames[:, 0:20, 28:50] = COLOURS["red"]  # top-middle region, every frame
    frames[2:, 30:50, 60:80] = COLOURS["cyan"]  # bottom-right region, second pair only
    frames[0, 40:43, 0:2] = COLOURS["blue"]  # 6 blue pixels in one frame: just present
    frames[1, 40:41, 30:35] = COLOURS["green"]  # 5 green pixels: too few
    frames[3, 0:10, 0:10] = (128, 128, 128)  # grey is no palette colour
    presence = palette_token_targets(frames, COLOURS)
    names = list(COLOURS)
    assert tuple(presence.shape) == (2 * 2 * 3, len(names))
    expected = {
        (1, names.index("red")),
        (7, names.index("red")),
        (11, names.index("cyan")),
        (3, names.index("blue")),
    }
    assert {tuple(x) for x in presence.nonzero().tolist()} == expected
    # odd frame counts repeat the last frame, as the processor does
    assert tuple(palette_token_targets(frames[:3], COLOURS).shape) == (12, len(names))
    with pytest.raises(ValueError, match="not a multiple of 28"):
        palette_token_targets(frames[:, :50], COLOURS)


def test_word_targets_average_the_present_words_or_say_none() -> None:
    words = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    none = torch.tensor([-1.0, -1.0])
    presence = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    targets = word_targets(presence, words, none)
    assert targets.tolist() == [[1.0, 0.0], [0.5, 0.5], [-1.0, -1.0]]


def test_alignment_loss_is_lowest_at_the_targets_and_reaches_tokens_and_words() -> None:
    generator = torch.Generator().manual_seed(0)
    words = torch.randn(7, 16, generator=generator).requires_grad_()
    none = torch.randn(16, generator=generator)
    presence = torch.zeros(10, 7)
    presence[0, 2] = presence[3, 5] = presence[3, 1] = presence[8, 0] = 1.0
    scale = words.detach().norm(dim=-1).mean() ** 2
    exact = word_targets(presence, words.detach(), none).clone().requires_grad_()
    at_targets = word_alignment_loss(exact, presence, words, none, scale)
    shuffled = exact.detach()[torch.randperm(10, generator=generator)]
    with torch.no_grad():
        worse = float(word_alignment_loss(shuffled, presence, words, none, scale))
    assert float(at_targets.detach()) < worse
    at_targets.backward()
    assert exact.grad is not None and words.grad is not None
    assert float(words.grad.abs().sum()) > 0  # the softmax term pushes the words apart


def test_teacher_mix_holds_then_anneals_to_the_towers_own_tokens() -> None:
    cfg = TrainSettings(**RECIPE)  # type: ignore[arg-type]
    assert [teacher_mix(s, 10, cfg) for s in (0, 3, 4, 5, 6, 7, 8, 9)] == pytest.approx(
        [1.0, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    )
    assert teacher_mix(0, 10, TrainSettings()) == 0.0
    with pytest.raises(ValueError, match="teacher_anneal_until"):
        TrainSettings(word_align_weight=1.0, teacher_until=0.5, teacher_anneal_until=0.2)
    with pytest.raises(ValueError, match="word_align_weight"):
        TrainSettings(teacher_until=0.5, teacher_anneal_until=0.6)


def test_option_text_target_asks_the_question_open_ended(suite: Path) -> None:
    items = read_items_jsonl(suite / "items.jsonl")
    mcqa = next(i for i in items if i.task_kind == TaskKind.MCQA)
    assert mcqa.answer is not None
    converted = as_open_item(mcqa)
    assert converted.task_kind == TaskKind.OPEN_QA and converted.question == mcqa.question
    assert converted.references == (mcqa.options["ABCD".index(mcqa.answer)],)
    assert converted.options == () and converted.answer is None
    assert converted.attributes == mcqa.attributes
    open_item = next(i for i in items if i.task_kind == TaskKind.OPEN_QA)
    assert as_open_item(open_item) is open_item
    unlabelled = Item(item_id="u", video_id="v", question="Which?", options=("a", "b"))
    with pytest.raises(ValueError, match="needs its answer"):
        as_open_item(unlabelled)


def test_teacher_steps_lower_the_loss_and_train_the_tower(suite: Path) -> None:
    items = [as_open_item(i) for i in read_items_jsonl(suite / "items.jsonl")]
    model, processor, group, video, planned = first_video_step(items, suite, TINY)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    patch = model.model.visual.patch_embed.proj.weight
    before = patch.detach().clone()
    losses = []
    for _ in range(8):
        loss, *_ = step_loss(
            model, processor, group, video, planned, word_align_weight=3.0, teacher_mix=1.0
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    # The alignment targets move with the word embeddings, so the loss need not fall every
    # step; over eight it must.
    assert losses[-1] < 0.75 * losses[0], losses
    assert min(losses[4:]) < min(losses[:4]), losses
    assert not torch.equal(before, patch.detach())  # straight-through gradients reach the tower


def test_a_model_trained_on_option_texts_is_asked_by_option_likelihood(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import itemscale.collect.models._load as load_module

    cfg = TrainSettings(
        steps=3, threads=1, warmup_steps=1, frame_counts=(4,), short_sides=(56,), **RECIPE
    )  # type: ignore[arg-type]
    train_builtin(suite, tmp_path / "m", cfg, TINY)
    meta = json.loads((tmp_path / "m" / "builtin_meta.json").read_text())
    assert meta["backend_options"] == {"mcqa_scoring": "likelihood"}
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["text_config"]["rope_parameters"]["rope_theta"] == 4.0
    monkeypatch.setattr(load_module, "builtin_model_dir", lambda: tmp_path / "m")
    entry = ModelEntry(name="builtin", backend="builtin", model="builtin", dtype="float32")
    backend = load_backend(entry)
    assert backend.spec.processor["mcqa_scoring"] == "likelihood"
    item = next(i for i in read_items_jsonl(suite / "items.jsonl") if i.task_kind == TaskKind.MCQA)
    [response] = backend.generate([VideoRequest(item, None, DecodingSettings())])
    assert response.status == Status.OK and response.raw_text in item.options
    from itemscale.collect.protocol import Configuration
    from recipes.builtin_model._eval import evaluate_suite

    budgets = (Configuration.text_only(), Configuration(frames=4, short_side=56))
    payload = evaluate_suite(tmp_path / "m", suite, tmp_path / "eval.json", budgets=budgets)
    assert payload["mcqa_scoring"] == "likelihood"
    by_id = {i.item_id: i for i in read_items_jsonl(suite / "items.jsonl")}
    choices = [r for r in payload["records"] if r["task_kind"] == "mcqa"]
    assert len(choices) == 2 * 5  # one test video, five MCQA items, two budgets
    for record in choices:
        assert record["prediction"] in by_id[record["item_id"]].options
        assert sum(record["option_probs"].values()) == pytest.approx(1.0)
    # A protocol's own options win over the model's.
    letter = load_backend(entry.model_copy(update={"options": {"mcqa_scoring": "letter"}}))
    assert "mcqa_scoring" not in letter.spec.processor
    (tmp_path / "m" / "builtin_meta.json").write_text('{"backend_options": 3}')
    with pytest.raises(Exception, match="backend_options must be a table"):
        load_backend(entry)


def test_cli_recipe_file_trains_the_opt_in_recipe_and_names_bad_keys(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recipes.builtin_model import main

    recipe = tmp_path / "recipe.json"
    train = {"steps": 2, "warmup_steps": 1, "frame_counts": [4], "short_sides": [56], **RECIPE}
    recipe.write_text(json.dumps({"train": train, "architecture": TINY.model_dump()}))
    args = ["--suite", str(suite), "--threads", "1", "--recipe", str(recipe)]
    assert main([*args, "--out", str(tmp_path / "m")]) == 0
    meta = json.loads((tmp_path / "m" / "builtin_meta.json").read_text())
    assert meta["train_settings"]["word_align_weight"] == 3.0 and meta["steps_done"] == 2
    assert meta["architecture"]["rope_theta"] == 4.0
    capsys.readouterr()
    recipe.write_text(json.dumps({"train": {"word_align_weigth": 1.0}}))
    assert main([*args, "--out", str(tmp_path / "n")]) == 2
    assert f"--recipe {recipe}: train.word_align_weigth" in capsys.readouterr().err
    recipe.write_text(json.dumps({"architecture": {"text_layers": 0}}))
    assert main([*args, "--out", str(tmp_path / "n")]) == 2
    assert "architecture.text_layers" in capsys.readouterr().err
    recipe.write_text(json.dumps({"architecture": {"text_heads": 5}}))  # a whole-model check
    assert main([*args, "--out", str(tmp_path / "n")]) == 2
    assert f"--recipe {recipe}: architecture: " in capsys.readouterr().err
    recipe.write_text(json.dumps({"train": {"teacher_until": 0.5, "teacher_anneal_until": 0.6}}))
    assert main([*args, "--out", str(tmp_path / "n")]) == 2
    assert "word_align_weight" in capsys.readouterr().err
    recipe.write_text("{not json")
    assert main([*args, "--out", str(tmp_path / "n")]) == 2
    assert "cannot read it as JSON" in capsys.readouterr().err
    assert not (tmp_path / "n").exists()


@pytest.mark.parametrize("name", ["word-alignment-v1.json", "word-alignment-v2-captions3x.json"])
def test_the_documented_recipe_files_are_valid_recipes(name: str) -> None:
    path = REPO / "recipes" / "builtin_model" / name
    payload = json.loads(path.read_text())
    train = TrainSettings.model_validate(payload["train"])
    arch = BuiltinArchitecture.model_validate(payload["architecture"])
    assert train.mcqa_target == "option_text" and train.word_align_weight > 0
    assert 0 < train.teacher_until < train.teacher_anneal_until <= 1
    assert arch.rope_theta == 4.0


def test_captions_only_steps_train_the_caption_rows_alone(suite: Path) -> None:
    items = read_items_jsonl(suite / "items.jsonl")
    model, processor, group, video, planned = first_video_step(items, suite, TINY)
    relabelled = [i.model_copy(update={"references": ("zzz",)}) for i in group]
    with torch.no_grad():
        first = step_loss(
            model, processor, group, video, planned, caption_weight=1.0, captions_only=True
        )
        second = step_loss(
            model, processor, relabelled, video, planned, caption_weight=1.0, captions_only=True
        )
        with_suite = step_loss(model, processor, group, video, planned, caption_weight=1.0)
    assert float(first[0]) == pytest.approx(float(second[0]))  # the suite's answers play no part
    assert float(first[0]) != pytest.approx(float(with_suite[0]))
    with pytest.raises(ValueError, match="caption_weight"):
        TrainSettings(caption_weight=0.0, captions_only_until=0.3)
